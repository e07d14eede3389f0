// Reduction: every operation over all axes, and every non-empty set of axes of 1-D to 4-D inputs
// (positive and negative numbering) with and without keepdims, with coeff, in every float type;
// plus the errors for bad operations and axes.
#include <cmath>
#include <infer/layers/reduction.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Reduction;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// Plain loops over every input value: its output position keeps the coordinates of the axes not
// reduced. Accumulates in double.
RefTensor reduction_ref(const RefTensor& in, const Reduction& p) {
  const Shape s = in.shape;
  const int dims = s.dims;
  // Reduced flags by ncnn axis (outermost first).
  std::array<bool, 4> red{};
  if (p.reduce_all || dims == 1) {
    red = {true, true, true, true};
  } else {
    for (int a : p.axes) red[std::size_t(a < 0 ? a + dims : a)] = true;
  }
  const std::array<int, 4> e = s.outer_first();
  std::array<int, 4> kept_ext{1, 1, 1, 1};
  std::vector<int> kept;  // output extents outermost first
  for (int i = 0; i < dims; ++i) {
    if (!red[std::size_t(i)]) kept.push_back(e[std::size_t(i)]);
    kept_ext[std::size_t(i)] = red[std::size_t(i)] ? 1 : e[std::size_t(i)];
  }
  Shape os;
  if (dims == 1) {
    os = Shape::of(1);
  } else if (p.keepdims) {
    os = Shape::from_outer_first(dims, kept_ext);
  } else if (kept.empty()) {
    os = Shape::of(1);
  } else {
    std::array<int, 4> k{1, 1, 1, 1};
    for (std::size_t i = 0; i < kept.size(); ++i) k[i] = kept[i];
    os = Shape::from_outer_first(int(kept.size()), k);
  }

  const int op = p.operation;
  const double init = op == 4 ? -INFINITY : op == 5 ? INFINITY : op == 6 ? 1.0 : 0.0;
  std::vector<double> acc(os.total(), init);
  std::size_t count = 1;
  for (int i = 0; i < dims; ++i)
    if (red[std::size_t(i)]) count *= std::size_t(e[std::size_t(i)]);
  // Walk the input in its own outer-first order.
  const std::size_t total = s.total();
  for (std::size_t flat = 0; flat < total; ++flat) {
    std::array<int, 4> idx{};  // coordinates outermost first
    std::size_t rest = flat;
    for (int i = dims - 1; i >= 0; --i) {
      idx[std::size_t(i)] = int(rest % std::size_t(e[std::size_t(i)]));
      rest /= std::size_t(e[std::size_t(i)]);
    }
    std::size_t o = 0;
    for (int i = 0; i < dims; ++i) {
      if (red[std::size_t(i)]) continue;
      o = o * std::size_t(e[std::size_t(i)]) + std::size_t(idx[std::size_t(i)]);
    }
    const double x = in.v[flat];  // RefTensor is dense in the same order
    double& a = acc[o];
    switch (op) {
      case 1:
      case 7:
        a += std::fabs(x);
        break;
      case 2:
      case 8:
        a += x * x;
        break;
      case 4:
        a = std::max(a, x);
        break;
      case 5:
        a = std::min(a, x);
        break;
      case 6:
        a *= x;
        break;
      case 10:
        a += std::exp(x);
        break;
      default:
        a += x;
    }
  }
  RefTensor out(os);
  for (std::size_t i = 0; i < acc.size(); ++i) {
    double v = acc[i];
    if (op == 3) v /= double(count);
    if (op == 8) v = std::sqrt(v);
    if (op == 9 || op == 10) v = std::log(v);
    out.v[i] = float(v * p.coeff);
  }
  return out;
}

const std::vector<std::vector<Shape>> kByDims = {
    {Shape::of(1), Shape::of(7), Shape::of(48)},
    {Shape::of(5, 1), Shape::of(1, 12), Shape::of(9, 16), Shape::of(3, 20)},
    {Shape::of(1, 1, 1), Shape::of(5, 7, 3), Shape::of(1, 9, 16), Shape::of(13, 1, 20),
     Shape::of(17, 3, 24)},
    {Shape::of(3, 4, 2, 12), Shape::of(5, 1, 3, 16), Shape::of(2, 3, 5, 7)}};

void sweep(const Reduction& p, const std::vector<Shape>& shapes, const std::string& what) {
  LayerTester t(p, what);
  t.reference([p](const std::vector<RefTensor>& in) {
     return std::vector<RefTensor>{reduction_ref(in[0], p)};
   })
      .shapes(shapes)
      // Sums of up to ~1200 values in f32: rounding grows with the partial sums, not the result.
      .tolerance(ElemType::f32, 1e-4f, 1e-5f);
  // Positive inputs keep log-sums defined and products away from overflow and from 0.
  if (p.operation == 9) t.input_range(0.1f, 2.f);
  if (p.operation == 6) t.input_range(0.9f, 1.1f);
  t.run();
}

}  // namespace

TEST_CASE("Reduction of all axes, every operation", "[layer][reduction]") {
  for (int op = 0; op <= 10; ++op) {
    for (int keep = 0; keep <= 1; ++keep) {
      Reduction p;
      p.operation = op;
      p.keepdims = keep;
      p.coeff = op % 3 == 0 ? 1.f : 0.5f;
      for (int dims = 1; dims <= 4; ++dims)
        sweep(p, kByDims[std::size_t(dims - 1)],
              fmt::format("Reduction op={} all keepdims={} coeff={} ({}-D)", op, keep, p.coeff,
                          dims));
    }
  }
}

TEST_CASE("Reduction of each set of axes", "[layer][reduction]") {
  int n = 0;
  for (int dims = 1; dims <= 4; ++dims) {
    for (int mask = 1; mask < (1 << dims); ++mask) {
      for (int keep = 0; keep <= 1; ++keep, ++n) {
        Reduction p;
        p.reduce_all = 0;
        p.fixbug0 = 1;
        p.keepdims = keep;
        p.operation = n % 11;
        p.coeff = 1.5f;
        for (int a = 0; a < dims; ++a)  // every other set in negative numbering
          if (mask & (1 << a)) p.axes.push_back(n % 2 ? a - dims : a);
        sweep(p, kByDims[std::size_t(dims - 1)],
              fmt::format("Reduction op={} mask={:#x} keepdims={} ({}-D)", p.operation, mask, keep,
                          dims));
      }
    }
  }
}

TEST_CASE("Reduction infer_shapes drops or keeps the reduced axes", "[layer][reduction]") {
  Reduction p;
  p.reduce_all = 0;
  p.fixbug0 = 1;
  p.axes = {0, 2};  // c and w of a 3-D input
  const Shape in = Shape::of(5, 7, 3);
  Shape out[1];
  REQUIRE(p.infer_shapes(std::span<const Shape>(&in, 1), out).ok());
  REQUIRE(out[0] == Shape::of(7));
  p.keepdims = 1;
  REQUIRE(p.infer_shapes(std::span<const Shape>(&in, 1), out).ok());
  REQUIRE(out[0] == Shape::of(1, 7, 1));
}

TEST_CASE("Reduction rejects bad operations and axes", "[layer][reduction]") {
  auto with_axes = [](std::vector<int> axes, int fixbug0 = 1) {
    Reduction p;
    p.reduce_all = 0;
    p.axes = std::move(axes);
    p.fixbug0 = fixbug0;
    return p;
  };
  Reduction op11;
  op11.operation = 11;
  Reduction op_neg;
  op_neg.operation = -1;
  const struct {
    Reduction layer;
    Shape in;
    const char* message;
  } bad[] = {
      {op11, Shape::of(4, 4, 8), "operation must be 0 to 10"},
      {op_neg, Shape::of(4, 4, 8), "operation must be 0 to 10"},
      {with_axes({3}), Shape::of(4, 4, 8), "an axis is out of range for the input"},
      {with_axes({-4}), Shape::of(4, 4, 8), "an axis is out of range"},
      {with_axes({2}), Shape::of(4, 8), "an axis is out of range"},
      {with_axes({}), Shape::of(4, 4, 8), "reduce_all is 0 but axes lists no axis"},
      {with_axes({0}, 0), Shape::of(4, 4, 8), "fixbug0 = 0"},
  };
  for (const auto& b : bad) {
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(b.layer, in, out, 4, Placement::out_of_place, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Reduction"));
    Shape outs[1];
    REQUIRE_FALSE(b.layer.infer_shapes(std::span<const Shape>(&b.in, 1), outs).ok());
  }
}
