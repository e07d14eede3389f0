// Slice against a scalar reference: every dims (1-D to 4-D), every axis, positive and negative,
// slice lists with and without -233 and index lists with negative indices, over every type and
// pack (parts that do not fit the input's pack come out narrower); then the errors for bad axes
// and slices that do not add up.
#include <array>
#include <infer/layers/slice.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Slice;
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

// Part sizes as ncnn documents them: -233 is an even share of the rest; indices are part starts.
std::vector<int> part_sizes(const Slice& p, int n, int outputs) {
  std::vector<int> sizes;
  if (!p.indices.empty()) {
    std::vector<int> starts{0};
    for (int i : p.indices) starts.push_back(i < 0 ? n + i : i);
    starts.push_back(n);
    for (int i = 0; i < outputs; ++i) sizes.push_back(starts[i + 1] - starts[i]);
    return sizes;
  }
  int rest = n;
  for (int i = 0; i < outputs; ++i) {
    const int s = p.slices[i] == -233 ? rest / (outputs - i) : p.slices[i];
    sizes.push_back(s);
    rest -= s;
  }
  return sizes;
}

infer::test::Reference slice_reference(Slice p, int outputs) {
  return [p, outputs](const std::vector<RefTensor>& in) {
    RefTensor src = in[0];
    const int dims = src.shape.dims;
    const int a = p.axis < 0 ? p.axis + dims : p.axis;
    std::vector<RefTensor> out;
    int first = 0;
    for (int n : part_sizes(p, src.shape.outer_first()[a], outputs)) {
      Coord e = src.shape.outer_first();
      e[a] = n;
      RefTensor t(Shape::from_outer_first(dims, e));
      for_each_coord(t.shape, [&](Coord c) {
        Coord s = c;
        s[a] += first;
        at(t, c) = at(src, s);
      });
      out.push_back(t);
      first += n;
    }
    return out;
  };
}

// Slice only moves values: every type must come back bit for bit.
LayerTester<Slice> exact_tester(Slice layer, std::string what) {
  return LayerTester(layer, std::move(what))
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0);
}

}  // namespace

TEST_CASE("Slice every dims axis and slice list", "[layer][slice]") {
  struct Parts {
    std::vector<int> slices, indices;
    int outputs;
  };
  const std::vector<Parts> lists = {
      {{-233, -233, -233}, {}, 3},  // even thirds, the last one taking the remainder
      {{5, -233}, {}, 2},
      {{1, 3, -233}, {}, 3},
      {{1, 4, -233}, {}, 3},  // at pack 4, a part of pack 4 that starts inside a group
      {{-233}, {}, 1},        // the whole axis
      {{}, {4, -3}, 3},
      {{}, {-7}, 2},
  };
  // Extents in ncnn axis order; the sliced axis takes each of `extents` in turn (48 and 16 run at
  // pack 16, 24 at 8, 12 at 4, 9 at 1; parts of 5, 3 or 1 force narrower packs).
  const std::vector<int> extents = {48, 24, 16, 12, 9};
  const std::vector<std::pair<int, std::vector<Coord>>> bases = {
      {1, {{1, 1, 1, 1}}},
      {2, {{16, 5, 1, 1}, {3, 1, 1, 1}}},
      {3, {{16, 3, 5, 1}, {5, 1, 2, 1}}},
      {4, {{16, 2, 3, 4}, {5, 1, 2, 1}}},
  };
  for (const auto& [dims, shapes] : bases) {
    for (int axis = -dims; axis < dims; ++axis) {
      const int a = axis < 0 ? axis + dims : axis;
      for (const Parts& l : lists) {
        const Slice layer{l.slices, axis, l.indices};
        auto tester =
            exact_tester(layer, fmt::format("Slice {}-D axis={} slices={} indices={}", dims, axis,
                                            fmt::join(l.slices, ","), fmt::join(l.indices, ",")));
        tester.reference(slice_reference(layer, l.outputs)).outputs(l.outputs);
        for (const Coord& base : shapes) {
          for (int n : extents) {
            Coord e = base;
            e[a] = n;
            tester.inputs({Shape::from_outer_first(dims, e)});
          }
        }
        tester.run();
      }
    }
  }
}

TEST_CASE("Slice large", "[layer][slice]") {
  const Slice by_c{{16, -233, -233}, 0, {}};
  exact_tester(by_c, "Slice large c")
      .reference(slice_reference(by_c, 3))
      .outputs(3)
      .inputs({Shape::of(67, 45, 48)})
      .run();
  const Slice by_w{{}, -1, {30}};
  exact_tester(by_w, "Slice large w")
      .reference(slice_reference(by_w, 2))
      .outputs(2)
      .inputs({Shape::of(67, 45, 48)})
      .run();
}

TEST_CASE("Slice errors", "[layer][slice]") {
  Option opt;
  const Mat in(Shape::of(5, 4, 8));
  auto run = [&](Slice layer, int outputs) {
    std::vector<Mat> tops(static_cast<std::size_t>(outputs));
    return infer::run_layer<float>(layer, std::span<const Mat>(&in, 1), tops, 1,
                                   Placement::out_of_place, opt);
  };
  auto fails_with = [&](Slice layer, int outputs, const char* what) {
    Status st = run(std::move(layer), outputs);
    INFO(what);
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(what));
  };
  fails_with({{-233, -233}, 3, {}}, 2, "axis 3 is out of range for a 3-D input");
  fails_with({{-233, -233}, -4, {}}, 2, "axis -4 is out of range");
  fails_with({{3, 3}, 0, {}}, 2, "slices add up to 6 but the axis extent is 8");
  fails_with({{6, 6}, 0, {}}, 2, "slice 1 is 6");
  fails_with({{0, -233}, 0, {}}, 2, "slice 0 is 0");
  fails_with({{-233, -233}, 0, {}}, 3, "2 slices given for 3 outputs");
  fails_with({{}, 0, {}}, 2, "neither slices nor indices");
  fails_with({{}, 0, {2, 5}}, 2, "2 indices give 3 outputs, but 2 outputs");
  fails_with({{}, 0, {5, 2}}, 3, "output 1 would span [5, 2)");
  fails_with({{}, 0, {-9}}, 2, "output 0 would span [0, -1)");
  fails_with({{}, 0, {8}}, 2, "output 1 would span [8, 8)");
}
