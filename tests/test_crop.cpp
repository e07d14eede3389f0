// Crop against a scalar reference: the per-axis form (offset + size, -233 sizes, tail offsets) on
// every axis of 1-D to 4-D blobs, and the numpy form (starts/ends/axes, negative values, -233,
// ncnn's end <= 0) over every type and pack, crops of the packing axis included; then the errors
// for crops outside the blob and for bad parameters.
#include <algorithm>
#include <array>
#include <infer/layers/crop.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Crop;
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

// [begin, end) along each ncnn axis, as operators.md and ncnn's crop.cpp define the parameters.
std::array<std::pair<int, int>, 4> crop_range(const Crop& p, const Shape& s) {
  const int dims = s.dims;
  const Coord e = s.outer_first();
  std::array<std::pair<int, int>, 4> r;
  for (int a = 0; a < 4; ++a) r[a] = {0, e[a]};
  if (!p.starts.empty()) {
    for (std::size_t i = 0; i < p.starts.size(); ++i) {
      int a = p.axes.empty() ? int(i) : p.axes[i];
      if (a < 0) a += dims;
      const int n = e[a], start = p.starts[i], end = p.ends[i];
      const int b = start == -233 ? 0 : start < 0 ? n + start : start;
      const int f = end == -233 ? n : end <= 0 ? n + end : std::min(end, n);
      r[a] = {b, f};
    }
    return r;
  }
  // Parameter slots c, d, h, w; a blob of fewer dims drops the outer ones.
  const std::array<int, 4> begin{p.coffset, p.doffset, p.hoffset, p.woffset};
  const std::array<int, 4> tail{p.coffset2, p.doffset2, p.hoffset2, p.woffset2};
  const std::array<int, 4> size{p.outc, p.outd, p.outh, p.outw};
  static constexpr int slot[5][4] = {{}, {3}, {2, 3}, {0, 2, 3}, {0, 1, 2, 3}};
  for (int a = 0; a < dims; ++a) {
    const int k = slot[dims][a];
    int end = e[a] - tail[k];
    if (size[k] != -233) end = std::min(end, begin[k] + size[k]);
    r[a] = {begin[k], end};
  }
  return r;
}

infer::test::Reference crop_reference(Crop p) {
  return [p](const std::vector<RefTensor>& in) {
    RefTensor src = in[0];
    const auto r = crop_range(p, src.shape);
    Coord e;
    for (int a = 0; a < 4; ++a) e[a] = r[a].second - r[a].first;
    RefTensor out(Shape::from_outer_first(src.shape.dims, e));
    for_each_coord(out.shape, [&](Coord c) {
      Coord s = c;
      for (int a = 0; a < 4; ++a) s[a] += r[a].first;
      at(out, c) = at(src, s);
    });
    return std::vector<RefTensor>{out};
  };
}

// Crop only moves values: every type must come back bit for bit.
LayerTester<Crop> exact_tester(Crop layer, std::string what) {
  return LayerTester(layer, std::move(what))
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0);
}

void check(const Crop& layer, const std::string& what, const std::vector<Shape>& shapes) {
  exact_tester(layer, what).reference(crop_reference(layer)).shapes(shapes).run();
}

Crop per_axis(Coord offset, Coord size, Coord tail) {  // slots c, d, h, w
  Crop p;
  p.coffset = offset[0], p.doffset = offset[1], p.hoffset = offset[2], p.woffset = offset[3];
  p.outc = size[0], p.outd = size[1], p.outh = size[2], p.outw = size[3];
  p.coffset2 = tail[0], p.doffset2 = tail[1], p.hoffset2 = tail[2], p.woffset2 = tail[3];
  return p;
}

Crop numpy(std::vector<int> starts, std::vector<int> ends, std::vector<int> axes) {
  Crop p;
  p.starts = std::move(starts);
  p.ends = std::move(ends);
  p.axes = std::move(axes);
  return p;
}

constexpr int kRest = -233;

}  // namespace

TEST_CASE("Crop per-axis form", "[layer][crop]") {
  // Every extent is at least 6 so each parameter set fits each shape of its dims.
  const std::vector<Shape> d1 = {Shape::of(6), Shape::of(48), Shape::of(1001)};
  const std::vector<Shape> d2 = {Shape::of(6, 16), Shape::of(7, 20), Shape::of(9, 48)};
  const std::vector<Shape> d3 = {Shape::of(6, 7, 16), Shape::of(9, 6, 20), Shape::of(7, 8, 48),
                                 Shape::of(67, 45, 48)};
  const std::vector<Shape> d4 = {Shape::of(6, 7, 6, 16), Shape::of(7, 6, 8, 12),
                                 Shape::of(6, 6, 6, 32)};

  check(per_axis({0, 0, 0, 2}, {0, 0, 0, 3}, {}), "Crop 1-D w=[2,5)", d1);
  check(per_axis({0, 0, 0, 1}, {0, 0, 0, kRest}, {0, 0, 0, 2}),
        "Crop 1-D w: 1 from the front, 2 from the back", d1);
  check(per_axis({0, 0, 0, 0}, {0, 0, 0, 4}, {}), "Crop 1-D w=[0,4) (narrower pack)", d1);
  check(per_axis({0, 0, 0, 0}, {0, 0, 0, 100}, {0, 0, 0, 1}), "Crop 1-D outw above what is left",
        d1);

  check(per_axis({0, 0, 4, 0}, {0, 0, 2, kRest}, {}), "Crop 2-D h=[4,6)", d2);
  check(per_axis({0, 0, 0, 1}, {0, 0, kRest, 3}, {}), "Crop 2-D w=[1,4)", d2);
  check(per_axis({0, 0, 1, 2}, {0, 0, kRest, kRest}, {0, 0, 3, 1}), "Crop 2-D both, tail offsets",
        d2);
  check(per_axis({0, 0, 0, 0}, {0, 0, 4, kRest}, {}), "Crop 2-D h=[0,4) (pack 4)", d2);

  check(per_axis({4, 0, 0, 0}, {8, 0, kRest, kRest}, {}), "Crop 3-D c=[4,12)", d3);
  check(per_axis({1, 0, 0, 0}, {kRest, 0, kRest, kRest}, {2, 0, 0, 0}),
        "Crop 3-D c from 1 to 2 before the end", d3);
  check(per_axis({0, 0, 0, 0}, {4, 0, kRest, kRest}, {}), "Crop 3-D c=[0,4)", d3);
  check(per_axis({0, 0, 2, 1}, {kRest, 0, 3, 4}, {}), "Crop 3-D h=[2,5) w=[1,5)", d3);
  check(per_axis({3, 0, 1, 2}, {5, 0, kRest, kRest}, {1, 0, 2, 1}), "Crop 3-D every axis", d3);

  check(per_axis({0, 2, 0, 0}, {kRest, 3, kRest, kRest}, {}), "Crop 4-D d=[2,5)", d4);
  check(per_axis({4, 0, 0, 0}, {8, kRest, kRest, kRest}, {}), "Crop 4-D c=[4,12)", d4);
  check(per_axis({1, 1, 2, 3}, {kRest, kRest, kRest, kRest}, {2, 1, 1, 1}),
        "Crop 4-D every axis by tails", d4);
  check(per_axis({0, 1, 1, 0}, {kRest, 2, 3, 1}, {}), "Crop 4-D w=1", d4);
}

TEST_CASE("Crop numpy form", "[layer][crop]") {
  const std::vector<Shape> d1 = {Shape::of(6), Shape::of(48), Shape::of(1001)};
  const std::vector<Shape> d2 = {Shape::of(6, 16), Shape::of(7, 20), Shape::of(9, 48)};
  const std::vector<Shape> d3 = {Shape::of(6, 7, 16), Shape::of(9, 6, 20), Shape::of(67, 45, 48)};
  const std::vector<Shape> d4 = {Shape::of(6, 7, 6, 16), Shape::of(7, 6, 8, 12)};

  check(numpy({1}, {-1}, {}), "Crop 1-D [1:-1]", d1);
  check(numpy({-5}, {kRest}, {0}), "Crop 1-D [-5:]", d1);
  check(numpy({2}, {0}, {-1}), "Crop 1-D [2:0], ncnn's end 0 = to the end", d1);
  check(numpy({1}, {1000000}, {}), "Crop 1-D end past the extent", d1);

  check(numpy({4, 1}, {-1, 3}, {}), "Crop 2-D both axes", d2);
  check(numpy({kRest}, {4}, {0}), "Crop 2-D h=[0,4)", d2);
  check(numpy({2}, {-2}, {-1}), "Crop 2-D w by axis -1", d2);

  check(numpy({4}, {12}, {0}), "Crop 3-D c=[4,12)", d3);
  check(numpy({-3}, {kRest}, {-3}), "Crop 3-D last 3 channels", d3);
  check(numpy({1, 2}, {-1, 5}, {-1, 1}), "Crop 3-D w and h", d3);
  check(numpy({0, 1, 1}, {8, -1, -1}, {}), "Crop 3-D every axis", d3);

  check(numpy({2}, {-1}, {1}), "Crop 4-D d", d4);
  check(numpy({1, 3}, {5, -1}, {0, -2}), "Crop 4-D c and h", d4);
  check(numpy({0, 1, 2, 3}, {4, -1, kRest, 4}, {}), "Crop 4-D every axis", d4);
}

TEST_CASE("Crop that keeps everything shares the input", "[layer][crop]") {
  Mat in(Shape::of(5, 7, 16));
  in.fill(2.f);
  Mat out;
  Option opt;
  Status st = infer::run_layer<float>(per_axis({}, {kRest, kRest, kRest, kRest}, {}), in, out, 1,
                                      Placement::out_of_place, opt);
  REQUIRE(st.ok());
  CHECK(out.data() == in.data());
}

TEST_CASE("Crop errors", "[layer][crop]") {
  Option opt;
  const Mat in3(Shape::of(5, 4, 8));
  auto fails_with = [&](const Crop& layer, const char* what) {
    Mat out;
    Status st = infer::run_layer<float>(layer, in3, out, 1, Placement::out_of_place, opt);
    INFO(what);
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(what));
  };
  fails_with(Crop{}, "ncnn's two-blob form");
  fails_with(per_axis({0, 0, 0, 6}, {kRest, 0, kRest, kRest}, {}),
             "woffset 6, woffset2 0 and outw -233 leave -1");
  fails_with(per_axis({0, 0, -1, 0}, {kRest, 0, 2, kRest}, {}), "hoffset -1");
  fails_with(per_axis({0, 0, 0, 0}, {kRest, 0, kRest, kRest}, {9, 0, 0, 0}),
             "coffset2 9 and outc -233 leave -1");
  fails_with(per_axis({5, 0, 0, 0}, {kRest, 0, kRest, kRest}, {3, 0, 0, 0}),
             "leave 0 of an extent of 8");
  fails_with(per_axis({0, 0, 0, 0}, {kRest, 0, 0, kRest}, {}), "outh 0 leave 0");
  fails_with(numpy({1}, {3}, {3}), "axis 3 is out of range for a 3-D input");
  fails_with(numpy({1}, {3}, {-4}), "axis -4 is out of range");
  fails_with(numpy({1}, {}, {0}), "1 starts but 0 ends");
  fails_with(numpy({1, 1}, {3, 3}, {}), "2 starts/ends without axes for a 3-D input");
  fails_with(numpy({1, 1}, {3, 3}, {0}), "1 axes for 2 starts/ends");
  fails_with(numpy({1, 1}, {3, 3}, {0, -3}), "axis 0 is listed twice");
  fails_with(numpy({8}, {kRest}, {0}), "select [8, 8) of an extent of 8");
  fails_with(numpy({-9}, {kRest}, {0}), "select [-1, 8)");
  fails_with(numpy({3}, {2}, {-1}), "select [3, 2)");
}
