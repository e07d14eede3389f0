// Interp: nearest, bilinear and bicubic, by scale and to a fixed size, half-pixel and
// align-corner mapping, up and down, on 1-D (value -> constant channel), 2-D (w only) and 3-D
// inputs with extents of 1, in every float type and pack; plus the errors for unsupported
// parameters and sizes that come out empty.
#include <cmath>
#include <infer/layers/interp.hpp>

#include "support/layer_tester.hpp"

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Interp;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// Keys' cubic convolution kernel with a = -0.75.
double keys(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

// The input positions and weights of output position o along an axis of `in` -> `out`.
std::vector<std::pair<int, double>> taps(const Interp& p, int in, int out, int o, bool size_given,
                                         float scale) {
  std::vector<std::pair<int, double>> t;
  auto clamp = [in](int i) { return std::min(std::max(i, 0), in - 1); };
  if (p.resize_type == 1) {
    const float ratio = size_given ? float(in) / float(out) : 1.f / scale;
    t.push_back({std::min(int(float(o) * ratio), in - 1), 1.0});
    return t;
  }
  double src = 0;
  if (p.align_corner)
    src = out > 1 ? o * double(in - 1) / double(out - 1) : 0.0;
  else
    src = (o + 0.5) * double(in) / double(out) - 0.5;
  if (p.resize_type == 2) {
    src = std::min(std::max(src, 0.0), double(in - 1));
    const int i0 = int(std::floor(src));
    const double f = src - i0;
    t.push_back({i0, 1 - f});
    t.push_back({clamp(i0 + 1), f});
    return t;
  }
  const int i0 = int(std::floor(src));
  for (int k = -1; k <= 2; ++k) t.push_back({clamp(i0 + k), keys(src - (i0 + k))});
  return t;
}

RefTensor interp_ref(const RefTensor& in, const Interp& p) {
  const Shape s = in.shape;
  const int w = s.dims == 1 ? 1 : s.w, h = s.dims == 1 ? 1 : s.h;
  int ow = p.output_width, oh = p.output_height;
  if (ow == 0 || oh == 0) {
    ow = int(float(w) * p.width_scale);
    oh = int(float(h) * p.height_scale);
  }
  if (s.dims == 1) {
    RefTensor out(Shape::of(ow, oh, s.w));
    for (int c = 0; c < s.w; ++c)
      for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) out.at(x, y, 0, c) = in.at(c);
    return out;
  }
  const bool flat = s.dims == 2;  // 2-D: each row is resized along w only
  RefTensor out(flat ? Shape::of(ow, s.h) : Shape::of(ow, oh, s.c));
  const int channels = flat ? 1 : s.c, out_h = flat ? s.h : oh;
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < out_h; ++y) {
      const auto ty = flat ? std::vector<std::pair<int, double>>{{y, 1.0}}
                           : taps(p, h, oh, y, p.output_height != 0, p.height_scale);
      for (int x = 0; x < ow; ++x) {
        const auto tx = taps(p, w, ow, x, p.output_width != 0, p.width_scale);
        double v = 0;
        for (const auto& [iy, wy] : ty)
          for (const auto& [ix, wx] : tx) v += wy * wx * in.at(ix, iy, 0, c);
        out.at(x, y, 0, c) = float(v);
      }
    }
  }
  return out;
}

const std::vector<Shape> kShapes = {
    Shape::of(1),       Shape::of(7),        Shape::of(48),        Shape::of(5, 1),
    Shape::of(1, 12),   Shape::of(9, 16),    Shape::of(3, 20),     Shape::of(1, 1, 1),
    Shape::of(5, 7, 3), Shape::of(1, 9, 16), Shape::of(13, 1, 20), Shape::of(6, 4, 24),
    Shape::of(4, 5, 7), Shape::of(2, 3, 32), Shape::of(19, 11, 8)};

Interp make(int type, float hs, float ws, int oh, int ow, int align) {
  Interp p;
  p.resize_type = type;
  p.height_scale = hs;
  p.width_scale = ws;
  p.output_height = oh;
  p.output_width = ow;
  p.align_corner = align;
  return p;
}

}  // namespace

TEST_CASE("Interp", "[layer][interp]") {
  const Interp params[] = {
      make(1, 2.f, 2.f, 0, 0, 0),    // nearest x2
      make(1, 1.7f, 2.3f, 0, 0, 0),  // nearest, fractional scales
      make(1, 1.f, 1.f, 3, 5, 0),    // nearest to a fixed (mostly smaller) size
      make(2, 2.f, 1.5f, 0, 0, 0),   // bilinear by scale
      make(2, 1.f, 1.f, 3, 7, 0),    // bilinear to a fixed size
      make(2, 1.f, 1.f, 6, 11, 1),   // bilinear, align corners
      make(2, 1.f, 1.f, 1, 1, 1),    // align corners onto one pixel
      make(2, 1.f, 1.f, 1, 1, 0),    // half-pixel onto one pixel
      make(3, 2.f, 2.f, 0, 0, 0),    // bicubic x2
      make(3, 1.f, 1.f, 9, 5, 0),    // bicubic to a fixed size
      make(3, 1.f, 1.f, 8, 8, 1),    // bicubic, align corners
      make(3, 3.f, 0.5f, 0, 4, 0),   // output_height 0: both sizes from the scales
  };
  for (const Interp& p : params) {
    std::vector<Shape> shapes;
    for (const Shape& s : kShapes) {  // keep the shapes whose output is not empty
      Shape o[1];
      if (p.infer_shapes(std::span<const Shape>(&s, 1), o).ok()) shapes.push_back(s);
    }
    REQUIRE(shapes.size() >= 8);
    LayerTester(p, fmt::format("Interp type={} scale={}x{} size={}x{} align={}", p.resize_type,
                               p.width_scale, p.height_scale, p.output_width, p.output_height,
                               p.align_corner))
        .reference([p](const std::vector<RefTensor>& in) {
          return std::vector<RefTensor>{interp_ref(in[0], p)};
        })
        .shapes(shapes)
        .run();
  }
}

TEST_CASE("Interp rejects unsupported parameters and empty sizes", "[layer][interp]") {
  Interp dynamic = make(2, 1.f, 1.f, 0, 0, 0);
  dynamic.dynamic_target_size = 1;
  const struct {
    Interp layer;
    Shape in;
    const char* message;
  } bad[] = {
      {make(0, 2.f, 2.f, 0, 0, 0), Shape::of(4, 4, 8), "resize_type must be 1 (nearest)"},
      {make(4, 2.f, 2.f, 0, 0, 0), Shape::of(4, 4, 8), "resize_type 4"},
      {dynamic, Shape::of(4, 4, 8), "dynamic_target_size (size from a second blob)"},
      {make(1, 2.f, 2.f, 0, 0, 0), Shape::of(2, 3, 4, 8), "input must have 1 to 3 dims"},
      {make(2, 0.2f, 0.2f, 0, 0, 0), Shape::of(4, 4, 8), "output size is not positive"},
      {make(2, 1.f, 0.f, 0, 0, 0), Shape::of(6, 5), "output size is not positive"},
      {make(2, 1.f, 1.f, 4, -2, 0), Shape::of(4, 4, 8), "output size is not positive"},
  };
  for (const auto& b : bad) {
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(b.layer, in, out, 4, Placement::out_of_place, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Interp"));
    Shape outs[1];
    REQUIRE_FALSE(b.layer.infer_shapes(std::span<const Shape>(&b.in, 1), outs).ok());
  }
}
