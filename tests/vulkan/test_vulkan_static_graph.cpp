// A static graph on the Vulkan device: the same compile-time graph value composed for the CPU and
// for a Vulkan target (f32 and f16 GPU storage), the same weights, outputs compared; the Vulkan
// plan keeps every layer on the GPU; a context per caller runs it again.
#include <catch2/catch.hpp>
#include <infer/graph/vulkan.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/binary_op.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/hardsigmoid.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/softmax.hpp>
#include <random>

#include "support/model_compare.hpp"
#include "vulkan/support.hpp"

namespace {

namespace L = infer::layers;
using infer::Shape;

constexpr L::Convolution conv(int in, int out, int k, int stride, int pad, int act) {
  L::Convolution c;
  c.num_output = out;
  c.kernel_w = k;
  c.stride_w = stride;
  c.pad_left = pad;
  c.bias_term = 1;
  c.weight_data_size = out * in * k * k;
  c.activation.type = act;
  return c;
}
constexpr L::ConvolutionDepthWise dwconv(int c, int stride) {
  L::ConvolutionDepthWise d;
  d.num_output = c;
  d.kernel_w = 3;
  d.stride_w = stride;
  d.pad_left = 1;
  d.bias_term = 1;
  d.group = c;
  d.weight_data_size = c * 9;
  d.activation.type = 1;
  return d;
}
constexpr L::Pooling max_pool() {
  L::Pooling p;
  p.pooling_type = 0;
  p.kernel_w = 2;
  p.stride_w = 2;
  return p;
}
constexpr L::Pooling global_avg() {
  L::Pooling p;
  p.pooling_type = 1;
  p.global_pooling = 1;
  return p;
}
constexpr L::InnerProduct fc(int in, int out) {
  L::InnerProduct f;
  f.num_output = out;
  f.bias_term = 1;
  f.weight_data_size = in * out;
  return f;
}

static constexpr auto kNet = infer::graph::chain(
    infer::graph::input("image", Shape::of(19, 17, 3)), conv(3, 16, 3, 1, 1, 1), dwconv(16, 2),
    max_pool(), conv(16, 24, 1, 1, 0, 0), L::ReLU{0.1f}, global_avg(), fc(24, 10),
    L::Softmax{0});

constexpr infer::graph::Target vulkan_target(infer::ElemType storage) {
  infer::graph::Target t;
  t.device = infer::graph::Device::vulkan;
  t.gpu_storage = storage;
  return t;
}

/// The same random weights for every node of graph `g`.
template <class G>
void fill_weights(G& g) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-0.5f, 0.5f);
  g.for_each_layer([&](auto& layer) {
    if constexpr (requires { layer.weight_data; }) {
      layer.weight_data.resize(std::size_t(layer.weight_data_size));
      for (float& w : layer.weight_data) w = d(rng);
      layer.bias_data.resize(std::size_t(layer.num_output));
      for (float& b : layer.bias_data) b = d(rng);
    }
  });
}

/// A squeeze-excitation block (mobilenet_v3's: global pooling, InnerProduct + ReLU, InnerProduct
/// + HardSigmoid, the multiply and a ReLU) and the 1x1 projection reading it, whose GPU GEMM
/// gathers the multiply (a plan step of its own on the CPU).
constexpr L::BinaryOp mul() {
  L::BinaryOp b;
  b.op_type = 2;
  return b;
}
constexpr L::InnerProduct fc_relu(int in, int out) {
  L::InnerProduct f = fc(in, out);
  f.activation.type = 1;
  return f;
}
static constexpr auto kSe = infer::graph::make_graph(
    infer::graph::input("image", Shape::of(15, 11, 24)),
    infer::graph::node(dwconv(24, 1), "image", "m"),
    infer::graph::node(global_avg(), "m", "p"), infer::graph::node(fc_relu(24, 6), "p", "f1"),
    infer::graph::node(fc(6, 24), "f1", "f2"),
    infer::graph::node(L::HardSigmoid{1.f / 6, 0.5f}, "f2", "g"),
    infer::graph::node(mul(), infer::graph::from("m", "g"), "x"),
    infer::graph::node(L::ReLU{}, "x", "y"),
    infer::graph::node(conv(24, 20, 1, 1, 0, 0), "y", "out"), infer::graph::output("out"));

template <infer::graph::Target T, const auto& Net = kNet>
infer::Mat run_graph(const infer::Mat& in) {
  infer::Option opt;
  opt.vulkan_device = int(infer::vk::test::g_ctx->info().index);
  auto g = std::make_unique<infer::graph::StaticGraph<Net, T>>(opt);
  fill_weights(*g);
  const infer::Status fin = g->finalize();
  INFO((fin.ok() ? std::string() : fin.message()));
  REQUIRE(fin.ok());
  const infer::Status st = g->forward(in);
  INFO((st.ok() ? std::string() : st.message()));
  REQUIRE(st.ok());
  infer::Mat out;
  REQUIRE(out.create(g->output().shape(), infer::ElemType::f32, 1).ok());
  g->output().copy_to(out);
  // A second context of the same graph gives the same values.
  auto ctx = g->make_context(opt);
  REQUIRE(g->forward(ctx, in).ok());
  CHECK(infer::test::relative_error(ctx.output(), out) == 0.0);
  return out;
}

}  // namespace

TEST_CASE("Vulkan static graph: the same graph value on the GPU matches the CPU",
          "[vulkan][static_graph]") {
  const infer::Mat in = infer::test::make_model_input(Shape::of(19, 17, 3));
  const infer::Mat want = run_graph<infer::graph::Target{}>(in);
  const infer::Mat f32 = run_graph<vulkan_target(infer::ElemType::f32)>(in);
  CHECK(infer::test::relative_error(f32, want) < 1e-5);
  if (infer::vk::test::g_ctx->info().fp16_storage) {
    const infer::Mat f16 = run_graph<vulkan_target(infer::ElemType::f16)>(in);
    CHECK(infer::test::relative_error(f16, want) < 1e-2);
  }
  // Every layer of the graph runs on the GPU.
  const infer::graph::Plan plan =
      infer::graph::StaticGraph<kNet, vulkan_target(infer::ElemType::f16)>::plan();
  for (const auto& s : plan.steps)
    if (s.kind == infer::graph::StepDesc::layer) CHECK(s.device == infer::graph::Device::vulkan);
}

TEST_CASE("Vulkan static graph: a squeeze-excitation multiply is gathered by its convolution",
          "[vulkan][static_graph]") {
  using infer::graph::StaticGraph;
  constexpr infer::graph::Target f16 = vulkan_target(infer::ElemType::f16);
  constexpr infer::graph::Target f32 = vulkan_target(infer::ElemType::f32);
  // The compile-time plan: the convolution reads the map and the gate, the multiply and its ReLU
  // are no steps; the CPU's plan keeps the multiply.
  static_assert([] {
    const infer::graph::Plan p = StaticGraph<kSe, f16>::plan();
    int gated = 0, muls = 0;
    for (const auto& s : p.steps) {
      if (s.kind != infer::graph::StepDesc::layer) continue;
      const auto& d = p.desc.nodes[std::size_t(s.node)];
      gated += s.gate_node >= 0 && d.type == "Convolution" && s.in.size() == 2 &&
               s.gate_act.type == 1;
      muls += d.type == "BinaryOp";
    }
    return gated == 1 && muls == 0;
  }());
  static_assert([] {
    int muls = 0;
    const infer::graph::Plan p = StaticGraph<kSe, infer::graph::Target{}>::plan();
    for (const auto& s : p.steps)
      muls += s.kind == infer::graph::StepDesc::layer && s.gate_node < 0 &&
              p.desc.nodes[std::size_t(s.node)].type == "BinaryOp";
    return muls == 1;
  }());
  const infer::Mat in = infer::test::make_model_input(Shape::of(15, 11, 24));
  const infer::Mat want = run_graph<infer::graph::Target{}, kSe>(in);
  CHECK(infer::test::relative_error(run_graph<f32, kSe>(in), want) < 1e-5);
  if (infer::vk::test::g_ctx->info().fp16_storage)
    CHECK(infer::test::relative_error(run_graph<f16, kSe>(in), want) < 4e-3);
}
