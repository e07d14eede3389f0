// Padding against a scalar reference: constant, replicate and reflect on every padded axis of 1-D
// to 4-D blobs (w, h, c of 3-D via front/behind, d of 4-D), per-channel constants, pads that
// change the packing axis's pack, over every type and pack; the i8 constant's rounding; then the
// errors for bad types, negative pads and reflect pads as large as the extent.
#include <algorithm>
#include <array>
#include <infer/layers/padding.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Padding;
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

// Source index of output position i along an axis of extent n padded by `before`, or -1 for the
// constant: replicate repeats the edge, reflect mirrors about it (the edge is not repeated).
int source(int type, int i, int before, int n) {
  int j = i - before;
  if (type == 0) return j < 0 || j >= n ? -1 : j;
  if (type == 1) return std::clamp(j, 0, n - 1);
  while (j < 0 || j >= n) j = j < 0 ? -j : 2 * (n - 1) - j;
  return j;
}

infer::test::Reference padding_reference(Padding p) {
  return [p](const std::vector<RefTensor>& in) {
    RefTensor src = in[0];
    const int dims = src.shape.dims;
    // Pads before/after each ncnn axis: w is left/right, h top/bottom, then c (3-D) or d (4-D)
    // front/behind; a 4-D blob's c is never padded.
    Coord before{}, after{};
    const int w = dims - 1;
    before[w] = p.left, after[w] = p.right;
    if (dims >= 2) before[w - 1] = p.top, after[w - 1] = p.bottom;
    if (dims >= 3) before[w - 2] = p.front, after[w - 2] = p.behind;
    const Coord e = src.shape.outer_first();
    Coord oe = e;
    for (int a = 0; a < dims; ++a) oe[a] += before[a] + after[a];
    RefTensor out(Shape::from_outer_first(dims, oe));
    for_each_coord(out.shape, [&](Coord c) {
      Coord s{};
      bool constant = false;
      for (int a = 0; a < dims; ++a) {
        s[a] = source(p.type, c[a], before[a], e[a]);
        constant = constant || s[a] < 0;
      }
      float v = p.value;
      if (dims >= 3 && p.per_channel_pad_data_size) v = p.per_channel_pad_data[c[0]];
      at(out, c) = constant ? v : at(src, s);
    });
    return std::vector<RefTensor>{out};
  };
}

// Padding only moves values (the constants are integers, exact in every type): every type must
// come back bit for bit.
LayerTester<Padding> exact_tester(Padding layer, std::string what) {
  return LayerTester(layer, std::move(what))
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0);
}

void check(const Padding& layer, const std::string& what, const std::vector<Shape>& shapes) {
  exact_tester(layer, what).reference(padding_reference(layer)).shapes(shapes).run();
}

Padding pads(int type, int top, int bottom, int left, int right, int front = 0, int behind = 0,
             float value = 0.f) {
  Padding p;
  p.top = top, p.bottom = bottom, p.left = left, p.right = right;
  p.front = front, p.behind = behind;
  p.type = type, p.value = value;
  return p;
}

}  // namespace

TEST_CASE("Padding every type and axis", "[layer][padding]") {
  // Every extent is at least 3 so reflect pads of 2 fit; channel counts 16, 12 and 20 run at
  // packs 16, 4 and 4, and padding c by 1 + 3 moves 16 to 20 (pack 4) and 12 to 16.
  const std::vector<Shape> d1 = {Shape::of(3), Shape::of(16), Shape::of(1001)};
  const std::vector<Shape> d2 = {Shape::of(3, 16), Shape::of(5, 12), Shape::of(4, 3)};
  const std::vector<Shape> d3 = {Shape::of(3, 4, 16), Shape::of(5, 3, 12), Shape::of(4, 5, 3),
                                 Shape::of(67, 45, 48)};
  const std::vector<Shape> d4 = {Shape::of(3, 4, 3, 16), Shape::of(5, 3, 4, 12),
                                 Shape::of(4, 3, 5, 3)};
  for (int type : {0, 1, 2}) {
    const float v = type == 0 ? -2.f : 0.f;
    const std::string t = fmt::format("Padding type={}", type);
    check(pads(type, 0, 0, 2, 1, 0, 0, v), t + " 1-D left=2 right=1", d1);
    check(pads(type, 1, 2, 0, 0, 0, 0, v), t + " 1-D top/bottom are ignored", d1);
    check(pads(type, 0, 0, 0, 2, 0, 0, v), t + " 1-D right=2 (pack changes)", d1);
    check(pads(type, 2, 1, 0, 0, 0, 0, v), t + " 2-D top=2 bottom=1", d2);
    check(pads(type, 0, 0, 1, 2, 0, 0, v), t + " 2-D left=1 right=2", d2);
    check(pads(type, 2, 2, 1, 1, 3, 3, v), t + " 2-D all sides, front/behind ignored", d2);
    check(pads(type, 0, 0, 0, 0, 1, 2, v), t + " 3-D front=1 behind=2", d3);
    check(pads(type, 0, 0, 0, 0, 2, 2, v), t + " 3-D front=2 behind=2 (12 -> 16)", d3);
    check(pads(type, 1, 2, 2, 1, 0, 0, v), t + " 3-D h and w", d3);
    check(pads(type, 2, 1, 1, 2, 1, 2, v), t + " 3-D every axis", d3);
    check(pads(type, 0, 0, 0, 0, 2, 1, v), t + " 4-D front=2 behind=1 pad d", d4);
    check(pads(type, 1, 2, 2, 1, 1, 1, v), t + " 4-D every axis", d4);
  }
  check(pads(0, 1, 1, 1, 1, 1, 3, 7.f), "Padding 3-D constant 7 front=1 behind=3 (16 -> 20)",
        {Shape::of(3, 4, 16), Shape::of(5, 3, 12)});
}

TEST_CASE("Padding per-channel constants", "[layer][padding]") {
  Padding p3 = pads(0, 1, 0, 0, 2, 2, 2);
  p3.per_channel_pad_data_size = 20;
  for (int q = 0; q < 20; ++q) p3.per_channel_pad_data.push_back(float(q % 7 - 3));
  check(p3, "Padding 3-D per-channel constants", {Shape::of(3, 4, 16), Shape::of(5, 1, 12)});

  Padding p4 = pads(0, 1, 1, 1, 0, 1, 2);
  p4.per_channel_pad_data_size = 16;
  for (int q = 0; q < 16; ++q) p4.per_channel_pad_data.push_back(float(5 - q));
  check(p4, "Padding 4-D per-channel constants", {Shape::of(3, 2, 2, 16), Shape::of(2, 3, 1, 12)});
}

TEST_CASE("Padding i8 constant rounds as float2int8", "[layer][padding]") {
  Option opt;
  Mat in(Shape::of(2, 2, 4), ElemType::f32, 1);
  in.fill(1.f);
  for (const auto& [value, want] : {std::pair{2.6f, 3}, {-2.5f, -3}, {300.f, 127}}) {
    Mat out;
    Status st = infer::run_layer<infer::i8>(pads(0, 0, 0, 1, 0, 0, 0, value), in, out, 4,
                                            Placement::out_of_place, opt);
    REQUIRE(st.ok());
    REQUIRE(out.type() == ElemType::i8);
    const RefTensor got = infer::test::from_mat(out);
    CHECK(got.at(0, 0, 0, 3) == float(want));
    CHECK(got.at(1, 1, 0, 3) == 1.f);
  }
}

TEST_CASE("Padding errors", "[layer][padding]") {
  Option opt;
  const Mat in3(Shape::of(5, 4, 8));
  auto fails_with = [&](const Padding& layer, const char* what) {
    Mat out;
    Status st = infer::run_layer<float>(layer, in3, out, 1, Placement::out_of_place, opt);
    INFO(what);
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(what));
  };
  fails_with(pads(3, 1, 1, 1, 1), "type 3 is not 0 (constant), 1 (replicate) or 2 (reflect)");
  fails_with(pads(0, -1, 0, 0, 0), "h (top/bottom) pads -1 and 0 must not be negative");
  fails_with(pads(1, 0, 0, 0, -2), "w (left/right) pads 0 and -2 must not be negative");
  fails_with(pads(2, 0, 0, 5, 0),
             "reflect pads 5 and 0 on w (left/right) need an extent above them, got 5");
  fails_with(pads(2, 0, 4, 0, 0), "reflect pads 0 and 4 on h (top/bottom)");
  fails_with(pads(2, 0, 0, 0, 0, 8, 0), "reflect pads 8 and 0 on c (front/behind)");
  fails_with(pads(0, -233, -233, -233, -233), "two-blob form");
  Padding per = pads(0, 0, 0, 1, 1, 1, 1);
  per.per_channel_pad_data_size = 8;
  per.per_channel_pad_data.assign(8, 0.f);
  fails_with(per, "per_channel_pad_data_size is 8 with 8 values, but the output has 10 channels");
}
