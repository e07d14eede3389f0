// The composer's passes and the static graph's execution, on small layers whose outputs a test
// can predict (tests/support/graph_layers.hpp). Layer-specific graphs (fusion into convolutions,
// folding BatchNorm) are in test_graph_fusion.cpp.
#include <catch2/catch.hpp>
#include <infer/graph.hpp>
#include <infer/layers/binary_op.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/split.hpp>

#include "support/graph_layers.hpp"
#include "support/heap_count.hpp"
#include "support/plan_checks.hpp"

using namespace infer;
using graph::from;
using graph::input;
using graph::node;
using graph::output;
using test::AddOne;
using test::Subtract;
using test::Twice;

namespace {

/// A Mat of `shape` whose value at flat index i is f(i).
Mat ramp(Shape shape) {
  Mat m(shape);
  float* p = m.data_as<float>();
  for (int q = 0; q < m.c(); ++q)
    for (int i = 0; i < shape.w * shape.h * shape.d; ++i)
      p[std::size_t(q) * m.cstep() + std::size_t(i)] = float(q * 100 + i % 7) * 0.25f;
  return m;
}

float at(const Mat& m, int q, int i) { return m.data_as<const float>()[q * m.cstep() + i]; }

constexpr Shape kShape = Shape::of(5, 3, 16);

// in -> Twice -> AddOne (f32 pack 1 only) -> Twice
static constexpr auto chain_net = graph::chain(input("in", kShape), Twice{}, AddOne{}, Twice{});

// A DAG with a shortcut and a join: d = (2 * in + 1) - 2 * in ... written out of order.
static constexpr auto dag_net =
    graph::make_graph(input("in", kShape), node(Subtract{}, from("b", "a"), "d"),
                      node(AddOne{}, "a", "b"), node(Twice{}, "in", "a"), output("d"), output("a"));

}  // namespace

// The passes run at compile time: their results are constants.
static_assert(graph::StaticGraph<chain_net>::arena_bytes > 0);
static_assert(graph::StaticGraph<chain_net>::lower_bound <=
              graph::StaticGraph<chain_net>::arena_bytes);
static_assert(graph::StaticGraph<chain_net>::plan().steps.size() == 7);

// The layers' traits reach their descriptions.
static_assert(infer::graph::describe_layer(infer::layers::Convolution{}).vulkan_any_out_pack);
static_assert(!infer::graph::describe_layer(infer::layers::ConvolutionDepthWise{}).vulkan_any_out_pack);
// A grouped convolution tells the placement which groups it runs packed: 4 a group unpacked at
// stride 1, packed at stride 2 (the pack-1 test in test_graph_gpu.cpp places such nodes).
static_assert(infer::graph::describe_layer(infer::layers::ConvolutionDepthWise{.group = 16})
                  .packed_group_min == 8);
static_assert(infer::graph::describe_layer(infer::layers::ConvolutionDepthWise{.stride_w = 2})
                  .packed_group_min == 4);
static_assert(infer::graph::describe_layer(infer::layers::ReLU{}).elementwise);
static_assert(infer::graph::describe_layer(infer::layers::BinaryOp{}).elementwise);
static_assert(infer::graph::describe_layer(infer::layers::Eltwise{}).elementwise);
static_assert(!infer::graph::describe_layer(infer::layers::Convolution{}).elementwise);
static_assert(infer::graph::describe_layer(infer::layers::Split{}).shares_input);

TEST_CASE("a pack-1-only layer in a packed chain gets one unpack before and one pack after",
          "[graph]") {
  using G = graph::StaticGraph<chain_net, graph::Target{ElemType::f32, 16}>;
  const graph::Plan p = G::plan();
  REQUIRE(p.error.ok());
  INFO(graph::format_plan(p));
  int layer_index = -1;
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].kind == graph::StepDesc::layer &&
        p.desc.nodes[std::size_t(p.steps[i].node)].type == "AddOne")
      layer_index = int(i);
  REQUIRE(layer_index > 0);
  const auto& before = p.steps[std::size_t(layer_index - 1)];
  const auto& after = p.steps[std::size_t(layer_index + 1)];
  CHECK(before.kind == graph::StepDesc::repack);
  CHECK(before.pack == 1);
  CHECK(after.kind == graph::StepDesc::repack);
  CHECK(after.pack == 16);
  int repacks = 0;
  for (const auto& s : p.steps) repacks += s.kind == graph::StepDesc::repack;
  CHECK(repacks == 4);  // in: 1 -> 16; around AddOne; out: 16 -> 1
  // Twice runs in place where its input dies.
  CHECK(p.steps[1].inplace);

  G g;
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(kShape);
  REQUIRE(g.forward(in).ok());
  const Mat& out = g.output();
  REQUIRE(out.shape() == kShape);
  REQUIRE(out.elempack() == 1);
  for (int q = 0; q < kShape.c; ++q)
    for (int i = 0; i < 15; ++i) REQUIRE(at(out, q, i) == 2.f * (2.f * at(in, q, i) + 1.f));
}

TEST_CASE("a DAG written out of order runs in dependency order, with several outputs", "[graph]") {
  auto check = [](auto graph_type) {
    using G = typename decltype(graph_type)::type;
    G g;
    REQUIRE(g.finalize().ok());
    const Mat in = ramp(kShape);
    REQUIRE(g.forward(in).ok());
    for (int q = 0; q < kShape.c; ++q) {
      for (int i = 0; i < 15; ++i) {
        REQUIRE(at(g.output(0), q, i) == 1.f);  // (2x + 1) - 2x
        REQUIRE(at(g.output(1), q, i) == 2.f * at(in, q, i));
      }
    }
  };
  check(std::type_identity<graph::StaticGraph<dag_net, graph::Target{ElemType::f32, 1}>>{});
  check(std::type_identity<graph::StaticGraph<dag_net, graph::Target{ElemType::f32, 4}>>{});
  check(std::type_identity<graph::StaticGraph<dag_net, graph::Target{ElemType::f32, 16}>>{});
}

TEST_CASE("f16 and bf16 targets cast once at the borders and agree with f32", "[graph]") {
  graph::StaticGraph<chain_net, graph::Target{ElemType::f16, 16}> h;
  graph::StaticGraph<chain_net, graph::Target{ElemType::bf16, 8}> b;
  REQUIRE(h.finalize().ok());
  REQUIRE(b.finalize().ok());
  const Mat in = ramp(kShape);
  REQUIRE(h.forward(in).ok());
  REQUIRE(b.forward(in).ok());
  for (int q = 0; q < kShape.c; ++q) {
    for (int i = 0; i < 15; ++i) {
      const float want = 2.f * (2.f * at(in, q, i) + 1.f);
      REQUIRE(std::fabs(at(h.output(), q, i) - want) <= 2e-3f * std::fabs(want) + 1e-3f);
      REQUIRE(std::fabs(at(b.output(), q, i) - want) <= 1.6e-2f * std::fabs(want) + 8e-3f);
    }
  }
  // AddOne is f32 only: the f16 graph casts to f32 before it and back after it.
  const graph::Plan p = graph::StaticGraph<chain_net, graph::Target{ElemType::f16, 16}>::plan();
  int casts = 0;
  for (const auto& s : p.steps) casts += s.kind == graph::StepDesc::cast;
  INFO(graph::format_plan(p));
  CHECK(casts == 4);  // in -> f16, f16 -> f32 before AddOne, f32 -> f16 after, out -> f32
}

TEST_CASE("forward makes no heap allocation once the graph is ready", "[graph][memory]") {
  CountingAllocator counting;
  Option opt;
  opt.num_threads = 2;
  opt.blob_allocator = &counting;
  opt.workspace_allocator = &counting;
  graph::StaticGraph<dag_net> g(opt);
  CHECK(counting.allocations() == 1);  // the arena
  CHECK(counting.peak_bytes() >= graph::StaticGraph<dag_net>::arena_bytes);
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(kShape);
  REQUIRE(g.forward(in).ok());  // a first pass may fill the workspace pool
  const std::size_t news = test::heap_allocations(), allocs = counting.allocations();
  for (int r = 0; r < 3; ++r) REQUIRE(g.forward(in).ok());
  CHECK(test::heap_allocations() == news);
  CHECK(counting.allocations() == allocs);
}

TEST_CASE("the memory plan never overlaps buffers that are live together", "[graph][memory]") {
  for (const graph::Plan& p :
       {graph::StaticGraph<chain_net>::plan(), graph::StaticGraph<dag_net>::plan()}) {
    REQUIRE(p.arena_bytes >= p.lower_bound);
    test::check_no_overlap(p);
  }
}

TEST_CASE("the plan prints one line per step and as DOT", "[graph][print]") {
  const graph::Plan p = graph::StaticGraph<chain_net, graph::Target{ElemType::f32, 16}>::plan();
  const std::string text = graph::format_plan(p);
  CHECK(std::count(text.begin(), text.end(), '\n') == long(p.steps.size()) + 1);
  CHECK_THAT(text, Catch::Contains("AddOne 'chain:2'"));
  CHECK_THAT(text, Catch::Contains("(in place)"));
  CHECK_THAT(text, Catch::Contains("arena "));
  const std::string dot = graph::to_dot(p);
  CHECK_THAT(dot, Catch::StartsWith("digraph infer {"));
  CHECK_THAT(dot, Catch::Contains("repack -> p1"));
}

TEST_CASE("forward rejects inputs that do not match the composed graph", "[graph][errors]") {
  graph::StaticGraph<chain_net> g;
  const Mat in = ramp(kShape);
  Status st = g.forward(in);
  REQUIRE(!st.ok());
  CHECK_THAT(st.message(), Catch::Contains("finalize"));
  REQUIRE(g.finalize().ok());
  st = g.forward(ramp(Shape::of(5, 3, 8)));
  REQUIRE(!st.ok());
  CHECK_THAT(st.message(), Catch::Contains("input 'in'"));
  CHECK_THAT(st.message(), Catch::Contains("composed for"));
}

TEST_CASE("the passes run at load time too and report errors with names", "[graph][errors]") {
  // The same constexpr passes on a description built at run time, as a .param reader will.
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("data"));
  d.input_shapes.push_back(kShape);
  graph::NodeDesc n;
  n.type = "Twice";
  n.name = "t1";
  n.in = {d.blob_id("nowhere")};
  n.out = {d.blob_id("t1")};
  n.storage = 1u;
  n.packs = 1u;
  n.one_blob = true;
  d.nodes.push_back(n);
  d.outputs.push_back(d.blob_id("t1"));
  const graph::Plan p = graph::compose(
      d, {},
      [](int, std::span<const Shape> in, std::span<Shape> out) { return same_shape(in, out); });
  REQUIRE(!p.error.ok());
  CHECK(graph::describe(p) ==
        "node 0 (Twice 't1') reads blob 'nowhere', which no node or input produces");
}

namespace {
// Library multi-blob layers in a graph: Split fans out, Concat joins, BinaryOp takes two inputs.
static constexpr auto split_net = graph::make_graph(
    input("in", Shape::of(3, 2, 8)), node(layers::Split{}, "in", graph::to("s0", "s1", "s2")),
    node(Twice{}, "s1", "t"), node(layers::Concat{0}, from("s0", "t"), "cat"),
    node(layers::BinaryOp{0}, from("s2", "s2"), "sum"), output("cat"), output("sum"));
}  // namespace

TEST_CASE("multi-output and multi-input library layers compose", "[graph]") {
  graph::StaticGraph<split_net> g;
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(Shape::of(3, 2, 8));
  INFO(fmt::format("{}", graph::StaticGraph<split_net>::plan()));
  const Status st = g.forward(in);
  INFO((st.ok() ? std::string("ok") : st.message()));
  REQUIRE(st.ok());
  REQUIRE(g.output(0).shape() == Shape::of(3, 2, 16));
  REQUIRE(g.output(1).shape() == Shape::of(3, 2, 8));
  for (int q = 0; q < 8; ++q) {
    for (int i = 0; i < 6; ++i) {
      REQUIRE(at(g.output(0), q, i) == at(in, q, i));
      REQUIRE(at(g.output(0), q + 8, i) == 2.f * at(in, q, i));
      REQUIRE(at(g.output(1), q, i) == 2.f * at(in, q, i));
    }
  }
}

namespace {
// A Concat whose inputs arrive at pack 1 (AddOne has no packed form) though their channels
// would allow pack 4: it only moves values, so it runs at pack 1 with no repack of its inputs.
static constexpr auto join_net = graph::make_graph(
    input("in", Shape::of(5, 3, 12)), node(AddOne{}, "in", "a"),
    node(layers::Concat{0}, from("a", "a"), "cat"), node(Twice{}, "cat", "t"), output("t"));
}  // namespace

TEST_CASE("a layer that only moves values runs at the pack its inputs arrive in", "[graph]") {
  using G = graph::StaticGraph<join_net, graph::Target{ElemType::f32, 16}>;
  const graph::Plan p = G::plan();
  REQUIRE(p.error.ok());
  INFO(graph::format_plan(p));
  int repacks = 0;
  for (const auto& s : p.steps) {
    repacks += s.kind == graph::StepDesc::repack;
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].type == "Concat")
      CHECK(s.pack == 1);
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].type == "Twice")
      CHECK(s.pack == 8);
  }
  CHECK(repacks == 2);  // cat: 1 -> 8 for Twice; out: 8 -> 1

  G g;
  REQUIRE(g.finalize().ok());
  const Mat in = ramp(Shape::of(5, 3, 12));
  REQUIRE(g.forward(in).ok());
  const Mat& out = g.output();
  REQUIRE(out.shape() == Shape::of(5, 3, 24));
  for (int q = 0; q < 24; ++q)
    for (int i = 0; i < 15; ++i) REQUIRE(at(out, q, i) == 2.f * (at(in, q % 12, i) + 1.f));
}
