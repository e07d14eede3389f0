// BinaryOp against a scalar reference of ncnn's broadcasting rule: every op type, every pairing of
// ranks 1-D to 4-D in both operand orders, axes of extent 1 on either side, the scalar form, and
// the errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <infer/layers/binary_op.hpp>
#include <vector>

#include "support/layer_tester.hpp"

namespace {

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::StorageElement;
using infer::layers::BinaryOp;
using infer::test::LayerTester;
using infer::test::RefTensor;

// The runner calls the one-blob members of any layer that has them, while BinaryOp is one-blob
// only when with_scalar=1; each of these shows the runner one of its two forms.
struct TwoInputs {
  BinaryOp layer;
  using storage = BinaryOp::storage;
  using packs = BinaryOp::packs;
  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    return layer.forward<T, Pack>(bottoms, tops, opt);
  }
};

struct ScalarForm {
  BinaryOp layer;
  using storage = BinaryOp::storage;
  using packs = BinaryOp::packs;
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    return layer.forward<T, Pack>(bottom, top, opt);
  }
  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return layer.forward_inplace<T, Pack>(blob, opt);
  }
};

const char* const kOpNames[] = {"add", "sub",  "mul",  "div",  "max",   "min",
                                "pow", "rsub", "rdiv", "rpow", "atan2", "ratan2"};

float apply(int op, float a, float b) {
  switch (op) {
    case 0:
      return a + b;
    case 1:
      return a - b;
    case 2:
      return a * b;
    case 3:
      return a / b;
    case 4:
      return std::max(a, b);
    case 5:
      return std::min(a, b);
    case 6:
      return std::pow(a, b);
    case 7:
      return b - a;
    case 8:
      return b / a;
    case 9:
      return std::pow(b, a);
    case 10:
      return std::atan2(a, b);
    default:
      return std::atan2(b, a);
  }
}

// ncnn's rank expansion as logical extents {w, h, d, c}: a 1-D operand lies along the outer axis
// when its length equals the other operand's extent there (h for 2-D, c for 3-D/4-D), else along
// w; a 2-D or 3-D operand moves outward so that its first axis (w) is broadcast.
std::array<int, 4> expanded(const Shape& s, int dims, const Shape& other) {
  if (s.dims == dims) return {s.w, s.h, s.d, s.c};
  if (s.dims == 1) {
    const int outer = dims == 2 ? other.h : other.c;
    if (s.w != outer) return {s.w, 1, 1, 1};
    return dims == 2 ? std::array<int, 4>{1, s.w, 1, 1} : std::array<int, 4>{1, 1, 1, s.w};
  }
  if (s.dims == 2) {
    return dims == 3 ? std::array<int, 4>{1, s.w, 1, s.h} : std::array<int, 4>{1, 1, s.w, s.h};
  }
  return {1, s.w, s.h, s.c};
}

// The expansion only reshapes, so an operand's values keep their order; a broadcast axis (extent
// 1) is read at index 0.
std::vector<RefTensor> reference(int op, const std::vector<RefTensor>& in) {
  const RefTensor& a = in[0];
  const RefTensor& b = in[1];
  const int dims = std::max(a.shape.dims, b.shape.dims);
  const std::array<int, 4> ea = expanded(a.shape, dims, b.shape);
  const std::array<int, 4> eb = expanded(b.shape, dims, a.shape);
  std::array<int, 4> e{};
  for (int i = 0; i < 4; ++i) e[i] = std::max(ea[i], eb[i]);
  const Shape out = dims == 1   ? Shape::of(e[0])
                    : dims == 2 ? Shape::of(e[0], e[1])
                    : dims == 3 ? Shape::of(e[0], e[1], e[3])
                                : Shape::of(e[0], e[1], e[2], e[3]);
  const auto value = [](const RefTensor& t, const std::array<int, 4>& ext, int x, int y, int z,
                        int c) {
    x = ext[0] == 1 ? 0 : x;
    y = ext[1] == 1 ? 0 : y;
    z = ext[2] == 1 ? 0 : z;
    c = ext[3] == 1 ? 0 : c;
    return t.v[((std::size_t(c) * ext[2] + z) * ext[1] + y) * ext[0] + x];
  };
  RefTensor r(out);
  for (int c = 0; c < e[3]; ++c)
    for (int z = 0; z < e[2]; ++z)
      for (int y = 0; y < e[1]; ++y)
        for (int x = 0; x < e[0]; ++x)
          r.v[((std::size_t(c) * e[2] + z) * e[1] + y) * e[0] + x] =
              apply(op, value(a, ea, x, y, z, c), value(b, eb, x, y, z, c));
  return {r};
}

using Pair = std::vector<Shape>;

// Shape pairs for every broadcast ncnn's BinaryOp supports; each pairing appears in both orders.
std::vector<Pair> broadcast_pairs() {
  const std::vector<Pair> one_way = {
      // same rank, an operand of one value
      {Shape::of(1), Shape::of(7)},
      {Shape::of(1), Shape::of(48)},
      {Shape::of(1, 1), Shape::of(9, 16)},
      {Shape::of(1, 1, 1), Shape::of(5, 7, 3)},
      {Shape::of(1, 1, 1, 1), Shape::of(3, 4, 2, 12)},
      // 1-D of one value with every rank
      {Shape::of(1), Shape::of(9, 16)},
      {Shape::of(1), Shape::of(8, 8, 32)},
      {Shape::of(1), Shape::of(2, 3, 5, 7)},
      // 1-D along the outer axis (per row / per channel) and along w
      {Shape::of(16), Shape::of(9, 16)},
      {Shape::of(9), Shape::of(9, 16)},
      {Shape::of(12), Shape::of(12, 12)},  // both match: the outer axis wins
      {Shape::of(20), Shape::of(3, 20)},
      {Shape::of(32), Shape::of(8, 8, 32)},
      {Shape::of(24), Shape::of(17, 3, 24)},
      {Shape::of(17), Shape::of(17, 3, 24)},
      {Shape::of(3), Shape::of(3, 4, 2, 3)},  // both match: the outer axis wins
      {Shape::of(12), Shape::of(3, 4, 2, 12)},
      {Shape::of(3), Shape::of(3, 4, 2, 12)},
      {Shape::of(16), Shape::of(16, 2, 3, 8)},  // along w with packed channels
      {Shape::of(16), Shape::of(16, 5, 32)},
      // 2-D with 3-D: rows become channels, columns become rows
      {Shape::of(5, 16), Shape::of(9, 5, 16)},
      {Shape::of(1, 16), Shape::of(9, 5, 16)},
      {Shape::of(5, 1), Shape::of(9, 5, 16)},
      {Shape::of(7, 3), Shape::of(1, 7, 3)},
      // 2-D with 4-D: rows become channels, columns become depth
      {Shape::of(2, 12), Shape::of(3, 4, 2, 12)},
      {Shape::of(1, 12), Shape::of(3, 4, 2, 12)},
      {Shape::of(5, 7), Shape::of(2, 3, 5, 7)},
      // 3-D with 4-D: channels stay, rows become depth, columns become rows
      {Shape::of(4, 2, 12), Shape::of(3, 4, 2, 12)},
      {Shape::of(1, 2, 12), Shape::of(3, 4, 2, 12)},
      {Shape::of(4, 1, 12), Shape::of(3, 4, 2, 12)},
      {Shape::of(4, 2, 1), Shape::of(3, 4, 2, 12)},
      {Shape::of(3, 5, 7), Shape::of(2, 3, 5, 7)},
      // same rank, extent-1 axes on one side
      {Shape::of(1, 16), Shape::of(9, 16)},
      {Shape::of(9, 1), Shape::of(9, 16)},
      {Shape::of(1, 1, 16), Shape::of(5, 7, 16)},
      {Shape::of(5, 7, 1), Shape::of(5, 7, 16)},
      {Shape::of(1, 7, 16), Shape::of(5, 7, 16)},
      {Shape::of(5, 1, 16), Shape::of(5, 7, 16)},
      {Shape::of(1, 1, 1, 16), Shape::of(3, 4, 2, 16)},
      {Shape::of(3, 4, 2, 1), Shape::of(3, 4, 2, 16)},
      {Shape::of(3, 1, 2, 16), Shape::of(3, 4, 2, 16)},
      {Shape::of(3, 4, 1, 16), Shape::of(3, 4, 2, 16)},
      {Shape::of(1, 4, 2, 16), Shape::of(3, 4, 2, 16)},
      // same rank, extent-1 axes on both sides
      {Shape::of(1, 5, 16), Shape::of(7, 1, 16)},
      {Shape::of(1, 8), Shape::of(6, 1)},
      {Shape::of(3, 1, 2, 1), Shape::of(1, 4, 1, 8)},
  };
  std::vector<Pair> pairs;
  for (const Pair& p : one_way) {
    pairs.push_back(p);
    pairs.push_back({p[1], p[0]});
  }
  return pairs;
}

// Same-shape pairs, which take the flat path.
std::vector<Pair> same_shape_pairs() {
  std::vector<Pair> pairs;
  for (const Shape& s : infer::test::awkward_shapes())
    if (s.total() < 100000) pairs.push_back({s, s});
  return pairs;
}

// Where each op's results stay finite and well conditioned (both inputs share the range).
void set_range(LayerTester<TwoInputs>& t, int op) {
  if (op == 3 || op == 8) t.input_range(0.5f, 3.f);
  if (op == 6 || op == 9) t.input_range(0.25f, 2.f);
}

}  // namespace

TEST_CASE("BinaryOp two inputs, every op and broadcast", "[layer][binaryop]") {
  for (int op = 0; op < 12; ++op) {
    DYNAMIC_SECTION(kOpNames[op]) {
      LayerTester<TwoInputs> t(TwoInputs{BinaryOp{op, 0, 0.f}},
                               fmt::format("BinaryOp op_type={} ({})", op, kOpNames[op]));
      t.reference([op](const std::vector<RefTensor>& in) { return reference(op, in); });
      set_range(t, op);
      for (const Pair& p : broadcast_pairs()) t.inputs(p);
      for (const Pair& p : same_shape_pairs()) t.inputs(p);
      t.run();
    }
  }
}

TEST_CASE("BinaryOp two inputs, large blobs", "[layer][binaryop]") {
  for (int op : {0, 6, 11}) {
    DYNAMIC_SECTION(kOpNames[op]) {
      LayerTester<TwoInputs> t(TwoInputs{BinaryOp{op, 0, 0.f}},
                               fmt::format("BinaryOp op_type={} ({}) large", op, kOpNames[op]));
      t.reference([op](const std::vector<RefTensor>& in) { return reference(op, in); });
      set_range(t, op);
      t.inputs({Shape::of(67, 45, 48), Shape::of(67, 45, 48)})
          .inputs({Shape::of(48), Shape::of(67, 45, 48)})
          .inputs({Shape::of(67, 45, 48), Shape::of(45, 48)})
          .inputs({Shape::of(1, 45, 48), Shape::of(67, 1, 48)})
          .inputs({Shape::of(20000), Shape::of(20000)})
          .inputs({Shape::of(300, 64), Shape::of(300, 64)});
      t.run();
    }
  }
}

TEST_CASE("BinaryOp pow of negative bases gives NaN as powf does", "[layer][binaryop]") {
  for (int op : {6, 9}) {
    LayerTester<TwoInputs> t(TwoInputs{BinaryOp{op, 0, 0.f}},
                             fmt::format("BinaryOp op_type={} negative bases", op));
    t.reference([op](const std::vector<RefTensor>& in) { return reference(op, in); })
        .input_range(-2.f, 2.f)
        .inputs({Shape::of(9, 16), Shape::of(9, 16)})
        .inputs({Shape::of(32), Shape::of(8, 8, 32)})
        .run();
  }
}

TEST_CASE("BinaryOp with_scalar, every op", "[layer][binaryop]") {
  for (int op = 0; op < 12; ++op) {
    DYNAMIC_SECTION(kOpNames[op]) {
      const float s = op == 6 ? 1.5f : 0.75f;
      LayerTester<ScalarForm> t(ScalarForm{BinaryOp{op, 1, s}},
                                fmt::format("BinaryOp op_type={} ({}) b={}", op, kOpNames[op], s));
      t.reference(infer::test::elementwise([op, s](float x) {
         return apply(op, x, s);
       })).shapes(infer::test::awkward_shapes());
      if (op == 3 || op == 8) t.input_range(0.5f, 3.f);
      if (op == 6 || op == 9) t.input_range(0.25f, 2.f);
      t.run();
    }
  }
}

namespace {

// Runs a layer on f32 inputs through the runner and returns its status.
template <class L>
Status run_f32(const L& layer, const std::vector<Shape>& shapes) {
  std::vector<Mat> mats;
  for (const Shape& s : shapes) {
    mats.emplace_back(s);
    mats.back().fill(1.f);
  }
  std::vector<Mat> tops(1);
  return infer::run_layer<float>(layer, std::span<const Mat>(mats), tops, 16,
                                 Placement::out_of_place, Option{});
}

}  // namespace

TEST_CASE("BinaryOp errors", "[layer][binaryop]") {
  SECTION("shapes that do not broadcast") {
    const std::vector<Pair> bad = {
        {Shape::of(5, 7, 3), Shape::of(4, 7, 3)},
        {Shape::of(5), Shape::of(9, 16)},  // neither h nor w
        {Shape::of(5), Shape::of(7)},
        {Shape::of(3, 16), Shape::of(9, 5, 16)},  // 2-D w lands on h: 3 against 5
        {Shape::of(4, 3, 12), Shape::of(3, 4, 2, 12)},
        {Shape::of(7, 8), Shape::of(3, 8)},
    };
    for (const Pair& p : bad) {
      for (int order = 0; order < 2; ++order) {
        const Pair shapes = order ? Pair{p[1], p[0]} : p;
        INFO(infer::test::shape_string(shapes[0])
             << " with " << infer::test::shape_string(shapes[1]));
        Status st = run_f32(TwoInputs{BinaryOp{}}, shapes);
        REQUIRE(!st.ok());
        REQUIRE_THAT(st.message(), Catch::Contains("do not broadcast"));
      }
    }
  }
  SECTION("op_type out of range") {
    for (int op : {-1, 12}) {
      Status st = run_f32(TwoInputs{BinaryOp{op, 0, 0.f}}, {Shape::of(4), Shape::of(4)});
      REQUIRE(!st.ok());
      REQUIRE_THAT(st.message(), Catch::Contains("op_type must be 0 to 11"));
      st = run_f32(ScalarForm{BinaryOp{op, 1, 0.f}}, {Shape::of(4)});
      REQUIRE(!st.ok());
      REQUIRE_THAT(st.message(), Catch::Contains("op_type must be 0 to 11"));
    }
  }
  SECTION("the form that with_scalar does not select") {
    Status st = run_f32(TwoInputs{BinaryOp{0, 1, 2.f}}, {Shape::of(4), Shape::of(4)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("the two-input forward needs with_scalar=0"));
    st = run_f32(ScalarForm{BinaryOp{0, 0, 2.f}}, {Shape::of(4)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("the one-blob forward needs with_scalar=1"));
    Mat m(Shape::of(4));
    st = BinaryOp{}.forward_inplace<float, 1>(m, Option{});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("with_scalar=1"));
    REQUIRE(BinaryOp{0, 1, 0.f}.takes_one_blob());
    REQUIRE(!BinaryOp{}.takes_one_blob());
  }
  SECTION("input count and packing") {
    Status st = run_f32(TwoInputs{BinaryOp{}}, {Shape::of(4)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("takes 2 inputs, got 1"));
    st = run_f32(TwoInputs{BinaryOp{}}, {Shape::of(4), Shape::of(4), Shape::of(4)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("takes 2 inputs, got 3"));

    // Called directly with inputs of two packs: the layer says which one is wrong.
    std::vector<Mat> mats = {Mat(Shape::of(2, 3, 8), infer::ElemType::f32, 4),
                             Mat(Shape::of(2, 3, 8), infer::ElemType::f32, 1)};
    std::vector<Mat> tops(1);
    st = BinaryOp{}.forward<float, 4>(std::span<const Mat>(mats), std::span<Mat>(tops), Option{});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(),
                 Catch::Contains("input 1") && Catch::Contains("expected f32 pack 4"));
  }
}
