// Dropout (inference: a scale) and Noop (blobs pass through in place).
#include <infer/layers/dropout.hpp>
#include <infer/layers/noop.hpp>

#include "support/layer_tester.hpp"

namespace L = infer::layers;
using infer::test::awkward_shapes;
using infer::test::elementwise;
using infer::test::LayerTester;
using infer::test::RefTensor;

TEST_CASE("Dropout", "[layer][dropout]") {
  LayerTester(L::Dropout{}, "Dropout scale=1")
      .reference(elementwise([](float x) { return x; }))
      .shapes(awkward_shapes())
      .input_range(-100.f, 100.f)
      .run();
  LayerTester(L::Dropout{0.75f}, "Dropout scale=0.75")
      .reference(elementwise([](float x) { return x * 0.75f; }))
      .shapes(awkward_shapes())
      .input_range(-100.f, 100.f)
      .run();
}

TEST_CASE("Noop", "[layer][noop]") {
  static_assert(infer::InplaceLayer<L::Noop> && !infer::OneBlobLayer<L::Noop>);
  LayerTester(L::Noop{}, "Noop")
      .reference([](const std::vector<RefTensor>& in) { return in; })
      .shapes(awkward_shapes())
      .input_range(-100.f, 100.f)
      .tolerance(infer::ElemType::f16, 0, 0)
      .tolerance(infer::ElemType::bf16, 0, 0)
      .tolerance(infer::ElemType::f32, 0, 0)
      .run();
  LayerTester(L::Noop{}, "Noop two blobs")
      .reference([](const std::vector<RefTensor>& in) { return in; })
      .inputs({infer::Shape::of(5, 3, 8), infer::Shape::of(4, 12)})
      .outputs(2)
      .tolerance(infer::ElemType::f32, 0, 0)
      .run();
}
