// A small CNN written by hand as a static graph: convolutions with BatchNorm and activations, a
// depthwise convolution, a residual shortcut, an Inception-style concat, pooling, an inner
// product and a softmax. The composer plans it while this file compiles (fusion, placement,
// in-place, memory plan); the program prints the plan, loads weights from an ncnn-style .bin
// image (fp32 and fp16-tagged buffers), runs it, and checks the output against the same graph
// composed plainly: no fusion, no folding, pack 1.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <infer/graph.hpp>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/softmax.hpp>
#include <random>
#include <vector>

using namespace infer;
using namespace infer::layers;
using graph::from;
using graph::input;
using graph::node;
using graph::output;

namespace {

constexpr Convolution conv(int in, int out, int k, int stride = 1, int pad = 0) {
  Convolution c;
  c.num_output = out;
  c.kernel_w = k;
  c.stride_w = stride;
  c.pad_left = pad;
  c.bias_term = 1;
  c.weight_data_size = out * in * k * k;
  return c;
}
constexpr ConvolutionDepthWise depthwise(int channels, int k, int pad) {
  ConvolutionDepthWise c;
  c.num_output = channels;
  c.kernel_w = k;
  c.pad_left = pad;
  c.group = channels;
  c.bias_term = 1;
  c.weight_data_size = channels * k * k;
  return c;
}
constexpr Pooling pool(int type, int k, int stride, int pad, bool global = false) {
  Pooling p;
  p.pooling_type = type;
  p.kernel_w = k;
  p.stride_w = stride;
  p.pad_left = pad;
  p.global_pooling = global;
  return p;
}
constexpr InnerProduct fc(int in, int out) {
  InnerProduct f;
  f.num_output = out;
  f.bias_term = true;
  f.weight_data_size = in * out;
  return f;
}
constexpr BatchNorm bn(int channels) {
  BatchNorm b;
  b.channels = channels;
  b.eps = 1e-5f;
  return b;
}

// 32x32x3 in, 10 class probabilities out. Blob names are the edges.
static constexpr auto net = graph::make_graph(
    input("data", Shape::of(32, 32, 3)), node(conv(3, 16, 3, 1, 1), "data", "conv1"),
    node(bn(16), "conv1", "bn1"), node(ReLU{}, "bn1", "relu1"),
    node(depthwise(16, 3, 1), "relu1", "dw2"), node(ReLU{}, "dw2", "relu2"),
    node(conv(16, 16, 1), "relu2", "pw2"),
    node(Eltwise{1}, from("pw2", "relu1"), "res2"),  // the shortcut
    node(conv(16, 8, 1), "res2", "branch_a"), node(ReLU{0.1f}, "branch_a", "branch_a_act"),
    node(pool(0, 3, 1, 1), "res2", "branch_b_pool"),
    node(conv(16, 8, 1), "branch_b_pool", "branch_b"),
    node(HardSwish{}, "branch_b", "branch_b_act"),
    node(Concat{0}, from("branch_a_act", "branch_b_act"), "cat3"),
    node(pool(0, 2, 2, 0), "cat3", "pool3"), node(conv(16, 32, 3, 2, 1), "pool3", "conv4"),
    node(ReLU{}, "conv4", "relu4"), node(pool(1, 0, 1, 0, true), "relu4", "gap"),
    node(fc(32, 10), "gap", "fc5"), node(Softmax{0}, "fc5", "prob"), output("prob"));

using Fast = graph::StaticGraph<net>;  // f32 at this machine's widest pack, fused
using Plain = graph::StaticGraph<net, graph::Target{ElemType::f32, 1, false}>;

/// Writes weight buffers as ncnn's .bin does: tagged buffers (fp32 or fp16) and raw fp32 ones,
/// each padded to 4 bytes.
struct BinWriter {
  std::vector<std::byte> bytes;
  void raw(const std::vector<float>& v) { put(v.data(), v.size() * 4); }
  void tagged_f32(const std::vector<float>& v) {
    put32(io::kTagF32);
    raw(v);
  }
  void tagged_f16(const std::vector<float>& v) {
    put32(io::kTagF16);
    std::vector<std::uint16_t> h;
    for (float x : v) h.push_back(f32_to_f16(x).bits);
    put(h.data(), h.size() * 2);
  }
  void put32(std::uint32_t x) { put(&x, 4); }
  void put(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes.insert(bytes.end(), b, b + n);
    while (bytes.size() % 4) bytes.push_back(std::byte{0});
  }
};

std::vector<float> random_values(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/// Weights for `net` in its node order: conv/fc weight (tagged; fp16 for the 1x1 convolutions to
/// show both kinds) then bias (raw); BatchNorm slope, mean, var, bias (raw).
std::vector<std::byte> make_weights() {
  std::mt19937 rng(7);
  BinWriter w;
  auto conv_weights = [&](int in, int out, int k, bool fp16) {
    const float scale = 1.f / std::sqrt(float(in * k * k));
    const auto weight = random_values(rng, std::size_t(out * in * k * k), -scale, scale);
    fp16 ? w.tagged_f16(weight) : w.tagged_f32(weight);
    w.raw(random_values(rng, std::size_t(out), -0.1f, 0.1f));
  };
  conv_weights(3, 16, 3, false);                            // conv1
  w.raw(random_values(rng, 16, 0.5f, 1.5f));                // bn1 slope
  w.raw(random_values(rng, 16, -0.2f, 0.2f));               // bn1 mean
  w.raw(random_values(rng, 16, 0.5f, 2.0f));                // bn1 var
  w.raw(random_values(rng, 16, -0.1f, 0.1f));               // bn1 bias
  w.tagged_f32(random_values(rng, 16 * 9, -0.33f, 0.33f));  // dw2
  w.raw(random_values(rng, 16, -0.1f, 0.1f));
  conv_weights(16, 16, 1, true);                           // pw2
  conv_weights(16, 8, 1, true);                            // branch_a
  conv_weights(16, 8, 1, true);                            // branch_b
  conv_weights(16, 32, 3, false);                          // conv4
  w.tagged_f32(random_values(rng, 32 * 10, -0.2f, 0.2f));  // fc5
  w.raw(random_values(rng, 10, -0.1f, 0.1f));
  return w.bytes;
}

template <class G>
Status run(G& g, const std::vector<std::byte>& weights, const Mat& in) {
  io::ModelBinFromMemory mb(weights, "example weights");
  INFER_TRY(g.load(mb));
  if (mb.offset() != weights.size())
    return make_error("weights: {} of {} bytes used", mb.offset(), weights.size());
  return g.forward(in);
}

}  // namespace

int main(int argc, char** argv) {
  fmt::print("== static_graph: the composed plan ({} steps, arena {} bytes, lower bound {})\n",
             Fast::step_count, Fast::arena_bytes, Fast::lower_bound);
  fmt::print("{}", graph::format_plan(Fast::plan()));
  fmt::print("\n== the plain reference plan: no fusion, pack 1 ({} steps, arena {} bytes)\n",
             Plain::step_count, Plain::arena_bytes);
  fmt::print("{}", graph::format_plan(Plain::plan()));
  if (argc > 1) {  // a path: write the composed graph as Graphviz DOT there
    std::ofstream(argv[1]) << graph::to_dot(Fast::plan());
    fmt::print("\nwrote {}\n", argv[1]);
  }

  const std::vector<std::byte> weights = make_weights();
  Mat in(Shape::of(32, 32, 3));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int q = 0; q < 3; ++q)
    for (int i = 0; i < 32 * 32; ++i) static_cast<float*>(in.channel_data(q))[i] = d(rng);

  Option opt;
  opt.num_threads = 2;
  Fast fast(opt);
  Plain plain(opt);
  if (Status s = run(fast, weights, in); !s.ok()) {
    fmt::print(stderr, "composed graph failed: {}\n", s.message());
    return 1;
  }
  if (Status s = run(plain, weights, in); !s.ok()) {
    fmt::print(stderr, "reference graph failed: {}\n", s.message());
    return 1;
  }
  const float* got = fast.output().data_as<const float>();
  const float* want = plain.output().data_as<const float>();
  float max_diff = 0.f, sum = 0.f;
  fmt::print("\n== output (class probabilities)\n");
  for (int k = 0; k < 10; ++k) {
    fmt::print("  class {}: {:.6f} (reference {:.6f})\n", k, got[k], want[k]);
    max_diff = std::max(max_diff, std::fabs(got[k] - want[k]));
    sum += got[k];
  }
  const bool ok = max_diff <= 1e-5f && std::fabs(sum - 1.f) <= 1e-5f;
  fmt::print("max |composed - reference| = {:.3g}, sum = {:.6f}: {}\n", max_diff, sum,
             ok ? "OK" : "MISMATCH");
  return ok ? 0 : 1;
}
