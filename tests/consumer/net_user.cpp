// A consumer's infer::Net: a .param held in memory, random weights, one run at the reference
// target and one at the default; both must agree. Links infer::runtime (no kernel is compiled
// here).
#include <cmath>
#include <cstdio>
#include <infer/net.hpp>

namespace {

constexpr const char* kParam =
    "7767517\n"
    "4 4\n"
    "Input data 0 1 data 0=9 1=6 2=5\n"
    "Convolution conv 1 1 data conv 0=16 1=3 4=1 5=1 6=720 9=1\n"
    "ConvolutionDepthWise dw 1 1 conv dw 0=16 1=3 3=2 4=1 5=1 6=144 7=16\n"
    "Pooling pool 1 1 dw pool 0=1 4=1\n";

infer::Result<infer::Mat> run(const infer::graph::Target& target, const infer::Mat& in) {
  infer::Net net(target);
  INFER_TRY(net.load_param_text(kParam, "consumer.param"));
  INFER_TRY(net.load_random_weights(7));
  return net.run(in);
}

}  // namespace

int main() {
  infer::Mat in(infer::Shape::of(9, 6, 5));
  in.fill(0.25f);
  auto ref = run({infer::ElemType::f32, 1, false, false}, in);
  auto fast = run({}, in);
  if (!ref.ok() || !fast.ok()) {
    std::fprintf(stderr, "%s\n", (ref.ok() ? fast : ref).error().message.c_str());
    return 1;
  }
  if (ref->shape().total() != 16 || !(ref->shape() == fast->shape())) return 1;
  const auto* a = static_cast<const float*>(ref->data());
  const auto* b = static_cast<const float*>(fast->data());
  for (int i = 0; i < 16; ++i)
    if (std::fabs(a[i] - b[i]) > 1e-4f * (1.f + std::fabs(a[i]))) {
      std::fprintf(stderr, "output %d: %g (reference) vs %g\n", i, a[i], b[i]);
      return 1;
    }
  std::printf("net_user: infer::Net from infer::runtime, both targets agree\n");
  return 0;
}
