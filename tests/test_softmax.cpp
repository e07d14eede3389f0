// Softmax along every axis (positive and negative) of 1-D to 4-D inputs, in every float type and
// pack, in place and not; along the packing axis the lanes of a packed element are one softmax.
#include <cmath>
#include <infer/layers/softmax.hpp>

#include "support/layer_tester.hpp"

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Softmax;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// RefTensor's values are row-major over the extents outer first (c, d, h, w), so axis k of a
// dims-D tensor steps by the product of the extents after it.
RefTensor softmax_ref(const RefTensor& in, int axis) {
  const Shape s = in.shape;
  const int dims = s.dims;
  const int a = axis < 0 ? axis + dims : axis;
  const std::array<int, 4> e = s.outer_first();
  std::size_t inner = 1, outer = 1;
  for (int k = a + 1; k < dims; ++k) inner *= std::size_t(e[std::size_t(k)]);
  for (int k = 0; k < a; ++k) outer *= std::size_t(e[std::size_t(k)]);
  const std::size_t len = std::size_t(e[std::size_t(a)]);
  RefTensor out(s);
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < inner; ++i) {
      const std::size_t base = o * len * inner + i;
      double m = -INFINITY, sum = 0;
      for (std::size_t k = 0; k < len; ++k) m = std::max(m, double(in.v[base + k * inner]));
      for (std::size_t k = 0; k < len; ++k) sum += std::exp(double(in.v[base + k * inner]) - m);
      for (std::size_t k = 0; k < len; ++k)
        out.v[base + k * inner] = float(std::exp(double(in.v[base + k * inner]) - m) / sum);
    }
  }
  return out;
}

const std::vector<std::vector<Shape>> kByDims = {
    {Shape::of(1), Shape::of(7), Shape::of(48), Shape::of(1001)},
    {Shape::of(5, 1), Shape::of(1, 12), Shape::of(9, 16), Shape::of(3, 20), Shape::of(300, 8)},
    {Shape::of(1, 1, 1), Shape::of(5, 7, 3), Shape::of(1, 9, 16), Shape::of(13, 1, 20),
     Shape::of(17, 3, 24), Shape::of(67, 45, 48)},
    {Shape::of(3, 4, 2, 12), Shape::of(5, 1, 3, 16), Shape::of(2, 3, 5, 7),
     Shape::of(40, 9, 3, 32)}};

}  // namespace

TEST_CASE("Softmax", "[layer][softmax]") {
  for (int dims = 1; dims <= 4; ++dims) {
    for (int axis = -dims; axis < dims; ++axis) {
      LayerTester(Softmax{axis}, fmt::format("Softmax axis={} ({}-D)", axis, dims))
          .reference([axis](const std::vector<RefTensor>& in) {
            return std::vector<RefTensor>{softmax_ref(in[0], axis)};
          })
          .shapes(kByDims[std::size_t(dims - 1)])
          .run();
    }
  }
}

TEST_CASE("Softmax subtracts the maximum (large inputs)", "[layer][softmax]") {
  // exp(100) overflows f32: without the max subtracted every output would be NaN.
  for (int dims = 1; dims <= 4; ++dims) {
    for (int axis = 0; axis < dims; ++axis) {
      LayerTester(Softmax{axis}, fmt::format("Softmax axis={} ({}-D) inputs +-100", axis, dims))
          .reference([axis](const std::vector<RefTensor>& in) {
            return std::vector<RefTensor>{softmax_ref(in[0], axis)};
          })
          .shapes(kByDims[std::size_t(dims - 1)])
          .input_range(-100.f, 100.f)
          .run();
    }
  }
}

TEST_CASE("Softmax rejects axes the input lacks", "[layer][softmax]") {
  const struct {
    Shape in;
    int axis;
    const char* message;
  } bad[] = {
      {Shape::of(8), 1, "axis 1 is out of range for a 1-D input (expected -1 to 0)"},
      {Shape::of(8), -2, "axis -2 is out of range for a 1-D input"},
      {Shape::of(6, 4), 2, "axis 2 is out of range for a 2-D input (expected -2 to 1)"},
      {Shape::of(3, 6, 4), 3, "axis 3 is out of range for a 3-D input (expected -3 to 2)"},
      {Shape::of(3, 6, 4), -4, "axis -4 is out of range for a 3-D input"},
      {Shape::of(2, 3, 6, 4), 4, "axis 4 is out of range for a 4-D input (expected -4 to 3)"},
  };
  for (const auto& b : bad) {
    for (Placement pl : {Placement::out_of_place, Placement::in_place}) {
      Mat in(b.in);
      in.fill(1.f);
      Mat out;
      auto st = infer::run_layer<float>(Softmax{b.axis}, in, out, 4, pl, Option{});
      REQUIRE_FALSE(st.ok());
      REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Softmax"));
    }
  }
}
