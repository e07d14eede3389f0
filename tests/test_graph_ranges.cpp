// The shared-ranges pass (graph/ranges.hpp): a Concat's inputs written straight into their
// channel ranges of its output, a Slice's outputs read from their ranges of its input; where the
// ranges cannot be shared (another axis, another pack, a graph input, one blob twice) the layers
// copy. Every plan is checked for buffers that share bytes while both hold live values.
#include <catch2/catch.hpp>
#include <infer/graph.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/memory_data.hpp>
#include <infer/layers/slice.hpp>

#include "support/graph_layers.hpp"
#include "support/plan_checks.hpp"

using namespace infer;
using graph::from;
using graph::input;
using graph::node;
using graph::output;
using graph::to;
using test::AddOne;
using test::check_no_overlap;
using test::Subtract;
using test::Twice;

namespace {

/// A Mat of `shape` whose value depends on channel and position.
Mat ramp(Shape shape) {
  Mat m(shape);
  for (int q = 0; q < m.c(); ++q) {
    float* p = static_cast<float*>(m.channel_data(q));
    for (int i = 0; i < shape.w * shape.h * shape.d; ++i) p[i] = float(q * 100 + i % 7) * 0.25f;
  }
  return m;
}
float at(const Mat& m, int q, int i) { return static_cast<const float*>(m.channel_data(q))[i]; }

/// The buffer of the step running node `type` (first match), input or output `k`.
struct StepBuffers {
  std::vector<int> in, out;
};
StepBuffers step_of(const graph::Plan& p, std::string_view type) {
  for (const auto& s : p.steps)
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].type == type)
      return {s.in, s.out};
  FAIL("no step runs " << type);
  return {};
}

constexpr Shape kIn = Shape::of(5, 3, 16);

// a = 2 (in + 1), b = 2 in; Concat(a, b) sliced back into x, y; d = x - y. a and b are written
// into the Concat's output, x and y read from it.
static constexpr auto packed_net =
    graph::make_graph(input("in", kIn), node(AddOne{}, "in", "a0"), node(Twice{}, "a0", "a"),
                      node(Twice{}, "in", "b"), node(layers::Concat{0}, from("a", "b"), "cat"),
                      node(layers::Slice{{16, -233}}, "cat", to("x", "y")),
                      node(Subtract{}, from("x", "y"), "d"), output("d"));

}  // namespace

TEST_CASE("Concat inputs and Slice outputs share their channel ranges", "[graph][ranges]") {
  for (const int max_pack : {1, 4, 16}) {
    INFO("max pack " << max_pack);
    const graph::Plan p = max_pack == 1 ? graph::StaticGraph<packed_net, {.max_pack = 1}>::plan()
                          : max_pack == 4
                              ? graph::StaticGraph<packed_net, {.max_pack = 4}>::plan()
                              : graph::StaticGraph<packed_net, {.max_pack = 16}>::plan();
    REQUIRE(p.error.ok());
    INFO(graph::format_plan(p));
    check_no_overlap(p);
    const StepBuffers cat = step_of(p, "Concat"), slice = step_of(p, "Slice");
    const int whole = cat.out[0];
    const auto& w = p.buffers[std::size_t(whole)];
    REQUIRE(w.pack == max_pack);
    const std::size_t group_bytes = packed_layout(w.shape, w.type, w.pack).cstep * 4 * w.pack;
    // Both inputs live in the output, at channel 0 and 16.
    for (int k = 0; k < 2; ++k) {
      const int b = cat.in[std::size_t(k)];
      CHECK(graph::root_of(p, b) == graph::root_of(p, whole));
      CHECK(p.buffers[std::size_t(b)].offset ==
            w.offset + std::size_t(16 * k / w.pack) * group_bytes);
    }
    // The Slice reads the Concat's output; its parts are ranges of it.
    REQUIRE(slice.in[0] == whole);
    for (int k = 0; k < 2; ++k) {
      const int b = slice.out[std::size_t(k)];
      CHECK(p.buffers[std::size_t(b)].alias == whole);
      CHECK(p.buffers[std::size_t(b)].offset ==
            w.offset + std::size_t(16 * k / w.pack) * group_bytes);
    }
  }
  // Without in-place execution every blob has memory of its own.
  const graph::Plan apart =
      graph::StaticGraph<packed_net, {.max_pack = 16, .inplace = false}>::plan();
  for (const auto& b : apart.buffers) CHECK(b.alias == -1);

  // The values: x = 2 (in + 1), y = 2 in, d = x - y = 2 everywhere.
  graph::StaticGraph<packed_net, {.max_pack = 16}> g;
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(kIn);
  for (int r = 0; r < 2; ++r) {  // twice: nothing may depend on what the arena held before
    REQUIRE(g.forward(in).ok());
    const Mat& d = g.output();
    REQUIRE(d.shape() == kIn);
    for (int q = 0; q < 16; ++q)
      for (int i = 0; i < 15; ++i) REQUIRE(at(d, q, i) == 2.f);
  }
}

namespace {
// Ranges that cannot be shared: one blob twice, another axis, parts whose channels do not fill
// whole packs, and a graph input.
static constexpr auto unshared_net = graph::make_graph(
    input("in", Shape::of(5, 3, 12)), node(Twice{}, "in", "a"),
    node(layers::Concat{0}, from("a", "a"), "cat"), node(layers::Concat{1}, from("a", "a"), "rows"),
    node(layers::Slice{{4, 6, 14}}, "cat", to("x", "y", "z")),
    node(layers::Concat{0}, from("in", "a"), "cat2"), output("x"), output("y"), output("z"),
    output("rows"), output("cat2"));

/// The step of the node named `name`.
const graph::StepDesc& named_step(const graph::Plan& p, std::string_view name) {
  for (const auto& s : p.steps)
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == name)
      return s;
  FAIL("no step runs " << name);
  return p.steps[0];
}
}  // namespace

TEST_CASE("ranges that cannot be shared are copied", "[graph][ranges]") {
  using G = graph::StaticGraph<unshared_net, {.max_pack = 4}>;
  const graph::Plan p = G::plan();
  REQUIRE(p.error.ok());
  INFO(graph::format_plan(p));
  check_no_overlap(p);
  auto root = [&](int b) { return graph::root_of(p, b); };
  // Concat(a, a) at pack 4: the first a is placed in the output, the second copied from there.
  const graph::StepDesc& cat = named_step(p, "cat");
  REQUIRE(cat.pack == 4);
  REQUIRE(cat.in[0] == cat.in[1]);
  CHECK(root(cat.in[0]) == root(cat.out[0]));
  CHECK(p.buffers[std::size_t(cat.in[0])].offset == p.buffers[std::size_t(cat.out[0])].offset);
  // Along rows: nothing shared.
  const graph::StepDesc& rows = named_step(p, "rows");
  CHECK(root(rows.out[0]) == rows.out[0]);
  // Slice (4, 6, 14) of 24 channels at pack 4: only the first part fills whole packs.
  const graph::StepDesc& slice = named_step(p, "x");
  REQUIRE(slice.pack == 4);
  CHECK(p.buffers[std::size_t(slice.out[0])].alias == slice.in[0]);
  CHECK(p.buffers[std::size_t(slice.out[1])].alias == -1);
  CHECK(p.buffers[std::size_t(slice.out[2])].alias == -1);
  // Concat(in, a) runs at the input's pack 1: a's repacked buffer is placed, the graph input not.
  const graph::StepDesc& cat2 = named_step(p, "cat2");
  REQUIRE(cat2.pack == 1);
  CHECK(root(cat2.in[0]) == cat2.in[0]);
  CHECK(root(cat2.in[1]) == root(cat2.out[0]));

  G g;
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(Shape::of(5, 3, 12));
  REQUIRE(g.forward(in).ok());
  const Mat &x = g.output(0), &y = g.output(1), &z = g.output(2), &rows_out = g.output(3),
            &cat2_out = g.output(4);
  REQUIRE(x.shape() == Shape::of(5, 3, 4));
  REQUIRE(y.shape() == Shape::of(5, 3, 6));
  REQUIRE(z.shape() == Shape::of(5, 3, 14));
  REQUIRE(rows_out.shape() == Shape::of(5, 6, 12));
  REQUIRE(cat2_out.shape() == Shape::of(5, 3, 24));
  auto a = [&](int q, int i) { return 2.f * at(in, q % 12, i); };
  for (int i = 0; i < 15; ++i) {
    for (int q = 0; q < 4; ++q) REQUIRE(at(x, q, i) == a(q, i));
    for (int q = 0; q < 6; ++q) REQUIRE(at(y, q, i) == a(q + 4, i));
    for (int q = 0; q < 14; ++q) REQUIRE(at(z, q, i) == a(q + 10, i));
    for (int q = 0; q < 24; ++q) REQUIRE(at(cat2_out, q, i) == (q < 12 ? at(in, q, i) : a(q, i)));
  }
  for (int q = 0; q < 12; ++q)
    for (int i = 0; i < 30; ++i) REQUIRE(at(rows_out, q, i) == a(q, i % 15));
}

namespace {
// A node without inputs (MemoryData) among the steps a plan prints, beside a shared Concat.
static constexpr auto memory_net = graph::make_graph(
    input("in", Shape::of(5, 3, 16)),
    node(layers::MemoryData{.w = 5, .h = 3, .c = 16}, from(), "m"), node(Twice{}, "in", "t"),
    node(layers::Concat{0}, from("t", "m"), "cat"), output("cat"));
}  // namespace

TEST_CASE("a printed plan marks shared parts, beside steps without inputs", "[graph][ranges]") {
  const graph::Plan p = graph::StaticGraph<memory_net, {.max_pack = 16}>::plan();
  REQUIRE(p.error.ok());
  check_no_overlap(p);
  const std::string text = graph::format_plan(p);
  CHECK_THAT(text, Catch::Contains("MemoryData 'm'"));
  CHECK_THAT(text, Catch::Contains("(2 of 2 parts shared)"));
}
