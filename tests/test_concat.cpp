// Concat against a scalar reference: every dims (1-D to 4-D), every axis, positive and negative,
// 1 to 3 inputs whose extents along the axis do and do not fit the packs, over every type and
// pack; then the errors for bad axes and mismatched inputs.
#include <array>
#include <infer/layers/concat.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Concat;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

using Coord = std::array<int, 4>;  // ncnn axis order, axis 0 outermost; unused axes are 0

// The value at ncnn-axis coordinates `a` (the definition of ncnn's axis numbering).
float& at(RefTensor& t, const Coord& a) {
  switch (t.shape.dims) {
    case 1:
      return t.at(a[0]);
    case 2:
      return t.at(a[1], a[0]);
    case 3:
      return t.at(a[2], a[1], 0, a[0]);
    default:
      return t.at(a[3], a[2], a[1], a[0]);
  }
}

template <class F>
void for_each_coord(const Shape& s, F f) {
  const Coord e = s.outer_first();
  for (int i = 0; i < e[0]; ++i)
    for (int j = 0; j < e[1]; ++j)
      for (int k = 0; k < e[2]; ++k)
        for (int l = 0; l < e[3]; ++l) f(Coord{i, j, k, l});
}

infer::test::Reference concat_reference(int axis) {
  return [axis](const std::vector<RefTensor>& in) {
    const int dims = in[0].shape.dims;
    const int a = axis < 0 ? axis + dims : axis;
    Coord e = in[0].shape.outer_first();
    e[a] = 0;
    for (const RefTensor& t : in) e[a] += t.shape.outer_first()[a];
    RefTensor out(Shape::from_outer_first(dims, e));
    int offset = 0;
    for (RefTensor t : in) {
      for_each_coord(t.shape, [&](Coord c) {
        Coord o = c;
        o[a] += offset;
        at(out, o) = at(t, c);
      });
      offset += t.shape.outer_first()[a];
    }
    return std::vector<RefTensor>{out};
  };
}

// Concat only moves values: every type must come back bit for bit.
LayerTester<Concat> exact_tester(Concat layer, std::string what) {
  return LayerTester(layer, std::move(what))
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0);
}

}  // namespace

TEST_CASE("Concat every dims and axis", "[layer][concat]") {
  // Base extents in ncnn axis order; the concatenated axis takes each of `parts` in turn. A
  // packing axis of 16 lets pack 16 run, 20 and 5 force narrower packs.
  const std::vector<std::vector<int>> parts = {{16, 32}, {4, 12, 8}, {3, 5, 1}, {7}, {1, 1}};
  const std::vector<std::pair<int, std::vector<Coord>>> bases = {
      {1, {{1, 1, 1, 1}}},
      {2, {{16, 5, 1, 1}, {20, 1, 1, 1}, {5, 3, 1, 1}}},
      {3, {{16, 3, 5, 1}, {20, 1, 7, 1}, {5, 2, 1, 1}}},
      {4, {{16, 2, 3, 4}, {12, 3, 1, 2}, {5, 1, 2, 3}}},
  };
  for (const auto& [dims, shapes] : bases) {
    for (int axis = -dims; axis < dims; ++axis) {
      const int a = axis < 0 ? axis + dims : axis;
      auto tester = exact_tester(Concat{axis}, fmt::format("Concat {}-D axis={}", dims, axis));
      tester.reference(concat_reference(axis));
      for (const Coord& base : shapes) {
        for (const std::vector<int>& p : parts) {
          std::vector<Shape> in;
          for (int n : p) {
            Coord e = base;
            e[a] = n;
            in.push_back(Shape::from_outer_first(dims, e));
          }
          tester.inputs(in);
        }
      }
      tester.run();
    }
  }
}

TEST_CASE("Concat large", "[layer][concat]") {
  exact_tester(Concat{0}, "Concat large channels")
      .reference(concat_reference(0))
      .inputs({Shape::of(67, 45, 32), Shape::of(67, 45, 16), Shape::of(67, 45, 48)})
      .run();
  exact_tester(Concat{-1}, "Concat large w")
      .reference(concat_reference(-1))
      .inputs({Shape::of(67, 45, 48), Shape::of(13, 45, 48)})
      .run();
}

TEST_CASE("Concat errors", "[layer][concat]") {
  Option opt;
  auto run = [&](Concat layer, std::vector<Mat> in) {
    std::vector<Mat> tops(1);
    return infer::run_layer<float>(layer, std::span<const Mat>(in), tops, 1,
                                   Placement::out_of_place, opt);
  };
  const Mat a(Shape::of(5, 4, 8)), b(Shape::of(5, 4, 3)), c(Shape::of(6, 4, 8)), d(Shape::of(5, 4));

  Status st = run(Concat{3}, {a, a});
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("axis 3 is out of range for 3-D inputs"));
  st = run(Concat{-4}, {a, a});
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("axis -4 is out of range"));

  st = run(Concat{0}, {a, c});  // w differs but the axis is c
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("input 1 has extent 6 on axis 2 but input 0 has 5"));
  st = run(Concat{2}, {a, b});  // c differs but the axis is w
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("input 1 has extent 3 on axis 0 but input 0 has 8"));

  st = run(Concat{0}, {a, d});
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("input 1 is 2-D but input 0 is 3-D"));

  st = run(Concat{0}, {});
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("at least 1 input"));
}
