// infer::Net in header-only mode (INFER_HEADER_ONLY, no infer::runtime): the whole network code and
// layer table compile in this file. A 3x3 convolution with a fused ReLU and a max pooling, read
// from .param text with weights as .bin bytes, against a plain-loop reference, at the scalar
// reference target and at the default (packed, fused) one. Built at -O1: it checks that the mode
// compiles and runs, not how fast.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <infer/net.hpp>
#include <vector>

namespace {

constexpr int kW = 7, kH = 5, kC = 3, kOut = 4;

constexpr const char* kParam =
    "7767517\n"
    "3 3\n"
    "Input data 0 1 data 0=7 1=5 2=3\n"
    "Convolution conv 1 1 data conv 0=4 1=3 4=1 5=1 6=108 9=1\n"
    "Pooling pool 1 1 conv pool 0=0 1=2 2=2\n";

void put(std::vector<std::byte>& bin, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  bin.insert(bin.end(), b, b + n);
}

float input_at(int c, int y, int x) { return float((c * 7 + y * 3 + x * 5) % 11) / 11.f - 0.4f; }

int check(const infer::graph::Target& target, std::string_view what) {
  std::vector<float> weights(std::size_t(kOut * kC * 9)), bias(kOut);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = float(int(i % 13) - 6) / 10.f;
  for (int o = 0; o < kOut; ++o) bias[std::size_t(o)] = 0.1f * float(o) - 0.15f;
  std::vector<std::byte> bin;
  const std::uint32_t f32_tag = 0;
  put(bin, &f32_tag, 4);
  put(bin, weights.data(), weights.size() * 4);
  put(bin, bias.data(), bias.size() * 4);

  infer::Net net(target);
  infer::Status st = net.load_param_text(kParam, "header_only.param");
  if (st.ok()) st = net.load_model(std::span<const std::byte>(bin), "header_only.bin");
  if (!st.ok()) {
    fmt::print(stderr, "{}: {}\n", what, st.message());
    return 1;
  }
  infer::Mat in(infer::Shape::of(kW, kH, kC));
  for (int c = 0; c < kC; ++c)
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x)
        static_cast<float*>(in.channel_data(c))[y * kW + x] = input_at(c, y, x);
  auto out = net.run(in);
  if (!out.ok()) {
    fmt::print(stderr, "{}: {}\n", what, out.error().message);
    return 1;
  }
  // Reference: convolution (pad 1) + bias + ReLU, then 2x2 max pooling, stride 2 (ncnn pads the
  // last window: 7x5 -> 4x3).
  auto conv = [&](int o, int y, int x) {
    float s = bias[std::size_t(o)];
    for (int c = 0; c < kC; ++c)
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) {
          const int iy = y + ky - 1, ix = x + kx - 1;
          if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
          s += weights[std::size_t(((o * kC + c) * 3 + ky) * 3 + kx)] * input_at(c, iy, ix);
        }
    return std::max(s, 0.f);
  };
  const infer::Shape want = infer::Shape::of(4, 3, kOut);
  if (!(out->shape() == want)) {
    fmt::print(stderr, "{}: output is {}, expected 4x3x4\n", what, out->describe());
    return 1;
  }
  int bad = 0;
  for (int o = 0; o < kOut; ++o)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) {
        float m = -INFINITY;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx)
            if (2 * y + dy < kH && 2 * x + dx < kW) m = std::max(m, conv(o, 2 * y + dy, 2 * x + dx));
        const float got = static_cast<const float*>(out->channel_data(o))[y * 4 + x];
        if (std::fabs(got - m) > 1e-5f) {
          if (bad++ < 5)
            fmt::print(stderr, "{}: output ({}, {}, {}) is {}, expected {}\n", what, x, y, o, got,
                       m);
        }
      }
  return bad ? 1 : 0;
}

}  // namespace

int main() {
  int failed = check({infer::ElemType::f32, 1, false, false}, "reference target");
  failed += check({}, "default target");
  if (failed == 0) fmt::print("header-only infer::Net: both targets match the reference\n");
  return failed ? 1 : 0;
}
