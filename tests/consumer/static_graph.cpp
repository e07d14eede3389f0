// A consumer's static graph, header-only (infer::infer alone): a convolution with a fused ReLU and
// a max pooling, planned by the compiler at the default target and at the scalar reference one;
// both load the same .bin bytes and must agree.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <infer/graph.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/relu.hpp>
#include <vector>

namespace {

constexpr infer::layers::Convolution conv() {
  infer::layers::Convolution c;
  c.num_output = 16;
  c.kernel_w = 3;
  c.pad_left = 1;
  c.bias_term = 1;
  c.weight_data_size = 16 * 5 * 9;
  return c;
}
constexpr infer::layers::Pooling pool() {
  infer::layers::Pooling p;
  p.kernel_w = 2;
  p.stride_w = 2;
  return p;
}

static constexpr auto net = infer::graph::make_graph(
    infer::graph::input("data", infer::Shape::of(9, 6, 5)),
    infer::graph::node(conv(), "data", "conv"),
    infer::graph::node(infer::layers::ReLU{}, "conv", "relu"),
    infer::graph::node(pool(), "relu", "pool"), infer::graph::output("pool"));

template <class G>
const infer::Mat* run(G& g, const std::vector<std::byte>& bin, const infer::Mat& in) {
  infer::io::ModelBinFromMemory mb(bin);
  if (!g.load(mb).ok() || !g.forward(in).ok()) return nullptr;
  return &g.output();
}

}  // namespace

int main() {
  std::vector<std::byte> bin(4 + (16 * 5 * 9 + 16) * 4);  // f32 tag 0, weights, bias
  for (std::size_t i = 0; i < 16 * 5 * 9 + 16; ++i) {
    const float v = float(int(i % 17) - 8) / 16.f;
    std::memcpy(bin.data() + 4 + i * 4, &v, 4);
  }
  infer::Mat in(infer::Shape::of(9, 6, 5));
  in.fill(0.5f);
  infer::graph::StaticGraph<net> fast;
  infer::graph::StaticGraph<net, infer::graph::Target{infer::ElemType::f32, 1, false, false}> ref;
  const infer::Mat* a = run(ref, bin, in);
  const infer::Mat* b = run(fast, bin, in);
  if (!a || !b || !(a->shape() == b->shape())) return 1;
  for (int c = 0; c < a->shape().c; ++c)
    for (int i = 0; i < a->shape().w * a->shape().h; ++i) {
      const float x = static_cast<const float*>(a->channel_data(c))[i];
      const float y = static_cast<const float*>(b->channel_data(c))[i];
      if (std::fabs(x - y) > 1e-4f * (1.f + std::fabs(x))) {
        std::fprintf(stderr, "output %d of channel %d: %g (reference) vs %g\n", i, c, x, y);
        return 1;
      }
    }
  std::printf("static_graph: header-only static graph, both targets agree\n");
  return 0;
}
