// The element-wise activation layers against their scalar definitions (libm), over every type,
// pack and placement each declares.
#include <algorithm>
#include <cmath>
#include <infer/layers/clip.hpp>
#include <infer/layers/elu.hpp>
#include <infer/layers/gelu.hpp>
#include <infer/layers/hardsigmoid.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/mish.hpp>
#include <infer/layers/sigmoid.hpp>
#include <infer/layers/swish.hpp>
#include <infer/layers/tanh.hpp>

#include "support/layer_tester.hpp"

namespace L = infer::layers;
using infer::test::awkward_shapes;
using infer::test::elementwise;
using infer::test::LayerTester;

namespace {
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

TEST_CASE("Clip", "[layer][clip]") {
  LayerTester(L::Clip{-1.5f, 2.25f}, "Clip -1.5..2.25")
      .reference(elementwise([](float x) { return std::min(std::max(x, -1.5f), 2.25f); }))
      .shapes(awkward_shapes())
      .run();
  LayerTester(L::Clip{0.f, 6.f}, "Clip 0..6 (ReLU6)")
      .reference(elementwise([](float x) { return std::min(std::max(x, 0.f), 6.f); }))
      .shapes(awkward_shapes())
      .input_range(-10.f, 10.f)
      .run();
}

TEST_CASE("Sigmoid", "[layer][sigmoid]") {
  LayerTester(L::Sigmoid{}, "Sigmoid")
      .reference(elementwise([](float x) { return float(sigmoid(x)); }))
      .shapes(awkward_shapes())
      .input_range(-20.f, 20.f)
      .run();
}

TEST_CASE("TanH", "[layer][tanh]") {
  LayerTester(L::TanH{}, "TanH")
      .reference(elementwise([](float x) { return float(std::tanh(double(x))); }))
      .shapes(awkward_shapes())
      .input_range(-6.f, 6.f)
      .run();
}

TEST_CASE("Swish", "[layer][swish]") {
  LayerTester(L::Swish{}, "Swish")
      .reference(elementwise([](float x) { return float(x * sigmoid(x)); }))
      .shapes(awkward_shapes())
      .input_range(-12.f, 12.f)
      .run();
}

TEST_CASE("Mish", "[layer][mish]") {
  LayerTester(L::Mish{}, "Mish")
      .reference(elementwise(
          [](float x) { return float(x * std::tanh(std::log1p(std::exp(double(x))))); }))
      .shapes(awkward_shapes())
      .input_range(-30.f, 30.f)
      .run();
}

TEST_CASE("HardSigmoid", "[layer][hardsigmoid]") {
  for (auto [alpha, beta] : {std::pair{0.2f, 0.5f}, std::pair{1.f / 6, 0.5f}}) {
    LayerTester(L::HardSigmoid{alpha, beta}, fmt::format("HardSigmoid {} {}", alpha, beta))
        .reference(elementwise(
            [a = alpha, b = beta](float x) { return std::min(1.f, std::max(0.f, a * x + b)); }))
        .shapes(awkward_shapes())
        .input_range(-5.f, 5.f)
        .run();
  }
}

TEST_CASE("HardSwish", "[layer][hardswish]") {
  for (auto [alpha, beta] : {std::pair{0.2f, 0.5f}, std::pair{1.f / 6, 0.5f}}) {
    LayerTester(L::HardSwish{alpha, beta}, fmt::format("HardSwish {} {}", alpha, beta))
        .reference(elementwise(
            [a = alpha, b = beta](float x) { return x * std::min(1.f, std::max(0.f, a * x + b)); }))
        .shapes(awkward_shapes())
        .input_range(-5.f, 5.f)
        .run();
  }
}

TEST_CASE("ELU", "[layer][elu]") {
  for (float alpha : {0.1f, 1.f}) {
    LayerTester(L::ELU{alpha}, fmt::format("ELU alpha={}", alpha))
        .reference(elementwise(
            [alpha](float x) { return x < 0 ? float(alpha * std::expm1(double(x))) : x; }))
        .shapes(awkward_shapes())
        .input_range(-8.f, 4.f)
        .run();
  }
}

TEST_CASE("GELU", "[layer][gelu]") {
  LayerTester(L::GELU{false}, "GELU erf")
      .reference(elementwise(
          [](float x) { return float(0.5 * x * (1 + std::erf(double(x) / std::sqrt(2.0)))); }))
      .shapes(awkward_shapes())
      .input_range(-6.f, 6.f)
      .run();
  LayerTester(L::GELU{true}, "GELU fast (tanh)")
      .reference(elementwise([](float x) {
        const double k = std::sqrt(2.0 / 3.14159265358979323846);
        return float(0.5 * x * (1 + std::tanh(k * (x + 0.044715 * double(x) * x * x))));
      }))
      .shapes(awkward_shapes())
      .input_range(-6.f, 6.f)
      .run();
}

TEST_CASE("activation functors at known points", "[layer][activation]") {
  // Values every definition agrees on, independent of the sweeps' references.
  CHECK(infer::act::Sigmoid{}(0.f) == Approx(0.5f));
  CHECK(infer::act::TanH{}(0.f) == Approx(0.f).margin(1e-7));
  CHECK(infer::act::Swish{}(0.f) == Approx(0.f).margin(1e-7));
  CHECK(infer::act::HardSwish{}(-3.f) == Approx(0.f).margin(1e-7));  // alpha 0.2, beta 0.5
  CHECK(infer::act::HardSwish{}(3.f) == Approx(3.f));
  CHECK(infer::act::Clip{-1.f, 1.f}(5.f) == 1.f);
  CHECK(infer::act::ELU{1.f}(-100.f) == Approx(-1.f));
  CHECK(infer::act::Mish{}(0.f) == Approx(0.f).margin(1e-7));
}
