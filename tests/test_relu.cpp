// ReLU and leaky ReLU against the scalar definition, over every type, pack and placement.
#include <infer/layers/relu.hpp>

#include "support/layer_tester.hpp"

using infer::layers::ReLU;
using infer::test::awkward_shapes;
using infer::test::elementwise;
using infer::test::LayerTester;

TEST_CASE("ReLU", "[layer][relu]") {
  LayerTester(ReLU{}, "ReLU")
      .reference(elementwise([](float x) { return x > 0 ? x : 0.f; }))
      .shapes(awkward_shapes())
      .run();
}

TEST_CASE("ReLU leaky", "[layer][relu]") {
  LayerTester(ReLU{0.1f}, "ReLU slope=0.1")
      .reference(elementwise([](float x) { return x > 0 ? x : x * 0.1f; }))
      .shapes(awkward_shapes())
      .input_range(-100.f, 100.f)
      .run();
}

TEST_CASE("ReLU's functor on scalars, as the fused epilogues use it", "[layer][relu]") {
  // The same act::ReLU the layer passes to its kernel, checked at a few points directly.
  const auto relu = ReLU{}.op();
  const auto leaky = ReLU{0.1f}.op();
  CHECK(relu(-2.f) == 0.f);
  CHECK(relu(3.f) == 3.f);
  CHECK(leaky(-2.f) == Approx(-0.2f));
  CHECK(leaky(3.f) == 3.f);
}
