// Flatten: every shape becomes 1-D with its values in logical order, bit for bit, in every type
// and pack (the output pack falls back when the total is not a multiple of the input's).
#include <infer/layers/flatten.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Shape;
using infer::layers::Flatten;
using infer::test::awkward_shapes;
using infer::test::LayerTester;
using infer::test::RefTensor;

TEST_CASE("Flatten", "[layer][flatten]") {
  std::vector<Shape> shapes = awkward_shapes();
  shapes.push_back(Shape::of(3, 5, 16));     // 240 values: a 1-D pack 16 output
  shapes.push_back(Shape::of(1, 3, 1, 16));  // 48 values from a 4-D blob
  LayerTester(Flatten{}, "Flatten")
      .reference([](const std::vector<RefTensor>& in) {
        // RefTensor's values are already in logical (c, d, h, w) order.
        RefTensor out(Shape::of(static_cast<int>(in[0].shape.total())));
        out.v = in[0].v;
        return std::vector<RefTensor>{out};
      })
      .shapes(shapes)
      .input_range(-100.f, 100.f)
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0)
      .run();
}

TEST_CASE("Flatten copies even a 1-D input", "[layer][flatten]") {
  Mat in(Shape::of(12));
  in.fill(2.f);
  Mat out;
  REQUIRE(Flatten{}.forward<float, 4>(in, out, {}).ok());
  REQUIRE(out.shape() == Shape::of(12));
  REQUIRE(out.data() != in.data());
  REQUIRE(out.data_as<float>()[11] == 2.f);
}
