// A user layer, written here as a templated struct, inside a packed network. It supports only f32
// at pack 1, and says so; the composer gives it exactly that, adding an unpack before it and a
// pack after it, and the printed plan shows both.
#include <fmt/format.h>

#include <cmath>
#include <infer/graph.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/relu.hpp>

using namespace infer;

/// y = x / (1 + |x|) ("softsign"), a layer infer does not ship.
struct SoftSign {
  // Capabilities are declared by what the struct provides: f32 storage, pack 1, one blob, in
  // place (forward_inplace) and out of place (forward).
  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  /// The composer plans shapes with this, at compile time.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return same_shape(in, out);
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option&) const {
    for (int q = 0; q < blob.c(); ++q) {
      float* p = static_cast<float*>(blob.channel_data(q));
      for (int i = 0; i < blob.w() * blob.h() * blob.d(); ++i)
        p[i] = p[i] / (1.f + std::fabs(p[i]));
    }
    return {};
  }
};

// The contract is checked at compile time: a claim without its member is a one-line error.
static_assert(check_layer<SoftSign>());
static_assert(InplaceLayer<SoftSign> && !PackingLayer<SoftSign>);

namespace {

constexpr layers::Convolution conv3x3(int in, int out) {
  layers::Convolution c;
  c.num_output = out;
  c.kernel_w = 3;
  c.pad_left = 1;
  c.weight_data_size = out * in * 9;
  return c;
}

static constexpr auto net =
    graph::chain(graph::input("image", Shape::of(16, 16, 16)), conv3x3(16, 32), layers::ReLU{},
                 SoftSign{}, conv3x3(32, 32));

}  // namespace

int main() {
  using Net = graph::StaticGraph<net>;
  const graph::Plan plan = Net::plan();
  fmt::print("== custom_layer: SoftSign (f32, pack 1 only) between packed convolutions\n{}",
             graph::format_plan(plan));

  // Find SoftSign and show the conversions around it.
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& s = plan.steps[i];
    if (s.kind != graph::StepDesc::layer || plan.desc.nodes[std::size_t(s.node)].type != "SoftSign")
      continue;
    const auto& before = plan.steps[i - 1];
    const auto& after = plan.steps[i + 1];
    const bool ok = before.kind == graph::StepDesc::repack && before.pack == 1 &&
                    after.kind == graph::StepDesc::repack && after.pack > 1;
    fmt::print("SoftSign runs at pack {}, after '{}' and before '{}': {}\n", s.pack,
               graph::detail::step_title(plan, before), graph::detail::step_title(plan, after),
               ok ? "one unpack before, one pack after" : "UNEXPECTED");
    if (!ok) return 1;
  }

  // Weights from memory: set on the graph's own copies of the layers, then finalize.
  Net g;
  auto& c1 = g.layer<0>();
  auto& c2 = g.layer<3>();
  c1.weight_data.assign(std::size_t(c1.weight_data_size), 0.01f);
  c2.weight_data.assign(std::size_t(c2.weight_data_size), 0.02f);
  if (Status s = g.finalize(); !s.ok()) {
    fmt::print(stderr, "finalize: {}\n", s.message());
    return 1;
  }
  Mat in(Shape::of(16, 16, 16));
  in.fill(1.f);
  if (Status s = g.forward(in); !s.ok()) {
    fmt::print(stderr, "forward: {}\n", s.message());
    return 1;
  }
  // Centre pixel: conv1 = 16 * 9 * 0.01 = 1.44 -> relu -> softsign 1.44 / 2.44; conv2 sums
  // 32 * 9 of those times 0.02.
  const float want = 32 * 9 * 0.02f * (1.44f / 2.44f);
  const float got = g.output().data_as<const float>()[8 * 16 + 8];
  fmt::print("output centre {:.5f}, expected {:.5f}: {}\n", got, want,
             std::fabs(got - want) < 1e-4f ? "OK" : "MISMATCH");
  return std::fabs(got - want) < 1e-4f ? 0 : 1;
}
