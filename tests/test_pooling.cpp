// Pooling against a scalar reference that follows ncnn's own recipe (pad the input into a bordered
// copy, slide the window over it), while the kernel never materializes the padding: max and
// average, every pad mode, count_include_pad 0 and 1, the 2x2 / 3x3 stride-2 and global fast paths,
// asymmetric pads and kernels, global and adaptive pooling, over every storage type (i8 over the
// whole int8 range: max exact, averages rounded to the nearest integer) and pack and awkward
// shapes; then the errors.
#include <cfloat>
#include <cmath>
#include <infer/layers/pooling.hpp>

#include "support/layer_tester.hpp"

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Pooling;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// The parameters with ncnn's defaults resolved (kernel_h = kernel_w, ...).
struct Resolved {
  int kw, kh, sw, sh, pl, pr, pt, pb;
};
int or_else(int v, int fallback) { return v == infer::layers::kSameAs ? fallback : v; }
Resolved resolve(const Pooling& p) {
  const int pt = or_else(p.pad_top, p.pad_left);
  return {p.kernel_w, or_else(p.kernel_h, p.kernel_w),  p.stride_w, or_else(p.stride_h, p.stride_w),
          p.pad_left, or_else(p.pad_right, p.pad_left), pt,         or_else(p.pad_bottom, pt)};
}

// ncnn's bordered input: pads before/after along w and h, and the tail pads of full padding.
struct Border {
  int left = 0, right = 0, top = 0, bottom = 0, wtail = 0, htail = 0;
};
Border border(const Pooling& p, int w, int h) {
  const Resolved r = resolve(p);
  Border b;
  if (p.pad_mode == 0) {
    const int wt = (w + r.pl + r.pr - r.kw) % r.sw, ht = (h + r.pt + r.pb - r.kh) % r.sh;
    b.wtail = wt != 0 ? r.sw - wt : 0;
    b.htail = ht != 0 ? r.sh - ht : 0;
    b = {r.pl, r.pr + b.wtail, r.pt, r.pb + b.htail, b.wtail, b.htail};
  } else if (p.pad_mode == 1) {
    b = {r.pl, r.pr, r.pt, r.pb};
  } else {
    // SAME: ncnn pads kernel + (n - 1) / stride * stride - n in all; a negative total (kernel
    // below stride) is taken as no padding.
    const int wpad = std::max(0, r.kw + (w - 1) / r.sw * r.sw - w);
    const int hpad = std::max(0, r.kh + (h - 1) / r.sh * r.sh - h);
    if (p.pad_mode == 2) b = {wpad / 2, wpad - wpad / 2, hpad / 2, hpad - hpad / 2};
    if (p.pad_mode == 3) b = {wpad - wpad / 2, wpad / 2, hpad - hpad / 2, hpad / 2};
  }
  return b;
}

// Output extents for a sliding-window pooling, or 0 when the kernel does not fit.
std::pair<int, int> sliding_out(const Pooling& p, int w, int h) {
  const Resolved r = resolve(p);
  const Border b = border(p, w, h);
  const int bw = w + b.left + b.right, bh = h + b.top + b.bottom;
  if (bw < r.kw || bh < r.kh) return {0, 0};
  return {(bw - r.kw) / r.sw + 1, (bh - r.kh) / r.sh + 1};
}

// Whether some window of a max pooling lies wholly in the padding: it gives ncnn's -FLT_MAX,
// which f16 and bf16 cannot hold, so the sweeps leave those shapes to a test of their own.
bool has_padding_only_window(const Pooling& p, int w, int h) {
  if (p.global_pooling || p.adaptive_pooling) return false;
  const Resolved r = resolve(p);
  const Border b = border(p, w, h);
  const auto [ow, oh] = sliding_out(p, w, h);
  for (int j = 0; j < ow; ++j)
    if (j * r.sw + r.kw <= b.left || j * r.sw >= b.left + w) return true;
  for (int i = 0; i < oh; ++i)
    if (i * r.sh + r.kh <= b.top || i * r.sh >= b.top + h) return true;
  return false;
}

RefTensor pooling_ref(const RefTensor& in, const Pooling& p) {
  const int w = in.shape.w, h = in.shape.h, c = in.shape.c;
  const bool is_max = p.pooling_type == 0;
  if (p.global_pooling) {
    RefTensor out(Shape::of(c));
    for (int q = 0; q < c; ++q) {
      double acc = is_max ? in.at(0, 0, 0, q) : 0.0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          acc = is_max ? std::max(acc, double(in.at(x, y, 0, q))) : acc + in.at(x, y, 0, q);
      out.at(q) = float(is_max ? acc : acc / (w * h));
    }
    return out;
  }
  if (p.adaptive_pooling) {
    const int ow = p.out_w == -233 ? w : p.out_w;
    const int oh_param = or_else(p.out_h, p.out_w);
    const int oh = oh_param == -233 ? h : oh_param;
    RefTensor out(Shape::of(ow, oh, c));
    for (int q = 0; q < c; ++q) {
      for (int i = 0; i < oh; ++i) {
        const int y0 = h * i / oh, y1 = (h * (i + 1) + oh - 1) / oh;
        for (int j = 0; j < ow; ++j) {
          const int x0 = w * j / ow, x1 = (w * (j + 1) + ow - 1) / ow;
          double acc = is_max ? in.at(x0, y0, 0, q) : 0.0;
          for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x)
              acc = is_max ? std::max(acc, double(in.at(x, y, 0, q))) : acc + in.at(x, y, 0, q);
          out.at(j, i, 0, q) = float(is_max ? acc : acc / (y1 - y0) / (x1 - x0));
        }
      }
    }
    return out;
  }

  const Resolved r = resolve(p);
  const Border b = border(p, w, h);
  const int bw = w + b.left + b.right, bh = h + b.top + b.bottom;
  const float pad_value = is_max ? -FLT_MAX : 0.f;
  RefTensor bordered(Shape::of(bw, bh, c), pad_value);
  for (int q = 0; q < c; ++q)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) bordered.at(x + b.left, y + b.top, 0, q) = in.at(x, y, 0, q);
  const int ow = (bw - r.kw) / r.sw + 1, oh = (bh - r.kh) / r.sh + 1;
  RefTensor out(Shape::of(ow, oh, c));
  for (int q = 0; q < c; ++q) {
    for (int i = 0; i < oh; ++i) {
      for (int j = 0; j < ow; ++j) {
        const int sy0 = i * r.sh, sx0 = j * r.sw;
        double acc = is_max ? bordered.at(sx0, sy0, 0, q) : 0.0;
        int area = 0;
        for (int ky = 0; ky < r.kh; ++ky) {
          for (int kx = 0; kx < r.kw; ++kx) {
            const int sy = sy0 + ky, sx = sx0 + kx;
            const double v = bordered.at(sx, sy, 0, q);
            if (is_max) {
              acc = std::max(acc, v);
            } else if (p.avgpool_count_include_pad) {
              acc += v;
            } else if (sy >= r.pt && sy < bh - r.pb - b.htail && sx >= r.pl &&
                       sx < bw - r.pr - b.wtail) {
              // ncnn leaves out the positions of the pad parameters (and the full-padding tail)
              // in the bordered input's coordinates.
              acc += v;
              ++area;
            }
          }
        }
        if (!is_max) acc /= p.avgpool_count_include_pad ? double(r.kw * r.kh) : double(area);
        out.at(j, i, 0, q) = float(acc);
      }
    }
  }
  return out;
}

const std::vector<Shape> kShapes = {
    Shape::of(1, 1, 3),  Shape::of(1, 7, 5),   Shape::of(7, 1, 17), Shape::of(7, 5, 3),
    Shape::of(7, 5, 48), Shape::of(2, 3, 5),   Shape::of(8, 8, 16), Shape::of(13, 9, 17),
    Shape::of(6, 6, 4),  Shape::of(16, 11, 8), Shape::of(9, 4, 32), Shape::of(67, 45, 48)};

// Runs the sweep on the shapes this parameter set accepts.
void sweep(const Pooling& p, const std::string& what) {
  std::vector<Shape> shapes;
  for (const Shape& s : kShapes) {
    if (!p.global_pooling && !p.adaptive_pooling && sliding_out(p, s.w, s.h).first == 0) continue;
    if (p.pooling_type == 0 && has_padding_only_window(p, s.w, s.h)) continue;
    shapes.push_back(s);
  }
  REQUIRE(shapes.size() >= 4);
  LayerTester(p, what)
      .reference([p](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{pooling_ref(in[0], p)};
      })
      .shapes(shapes)
      .int8_range(-127.f, 127.f)
      .run();
}

Pooling pool(int type, int k, int s, int pad = 0, int mode = 0, int include_pad = 0) {
  Pooling p;
  p.pooling_type = type;
  p.kernel_w = k;
  p.stride_w = s;
  p.pad_left = pad;
  p.pad_mode = mode;
  p.avgpool_count_include_pad = include_pad;
  return p;
}

}  // namespace

TEST_CASE("Pooling 2x2 s2 and 3x3 s2 pad 1", "[layer][pooling]") {
  for (int type : {0, 1}) {
    sweep(pool(type, 2, 2), fmt::format("Pooling type={} 2x2 s2", type));
    for (int include : {0, 1})
      sweep(pool(type, 3, 2, 1, 0, include),
            fmt::format("Pooling type={} 3x3 s2 pad 1 include_pad={}", type, include));
  }
}

TEST_CASE("Pooling 2x2 / 3x3 stride 2 fast paths without padding", "[layer][pooling]") {
  // With the cases above (pad 1 in every mode) each fast path runs on kShapes (odd extents,
  // w = 1 / h = 1, channels 3, 5, 17, 48): interior windows by the unrolled kernel, border
  // windows (padding, the full-mode tail) by the general one.
  for (int type : {0, 1}) {
    for (int include : {0, 1}) {
      if (type == 0 && include == 1) continue;  // max ignores it
      for (int mode : {0, 1})
        sweep(pool(type, 3, 2, 0, mode, include),
              fmt::format("Pooling type={} 3x3 s2 pad 0 mode={} include_pad={}", type, mode,
                          include));
      sweep(pool(type, 2, 2, 0, 1, include),
            fmt::format("Pooling type={} 2x2 s2 valid include_pad={}", type, include));
    }
  }
}

TEST_CASE("Pooling every pad mode, asymmetric pads and kernels", "[layer][pooling]") {
  for (int mode = 0; mode < 4; ++mode) {
    for (int type : {0, 1}) {
      for (int include : {0, 1}) {
        if (type == 0 && include == 1) continue;  // max ignores it
        Pooling p = pool(type, 3, 2, 1, mode, include);
        sweep(p, fmt::format("Pooling type={} 3x3 s2 pad 1 mode={} include_pad={}", type, mode,
                             include));
        p.kernel_h = 2;
        p.stride_h = 1;
        p.pad_right = 2;
        p.pad_top = 0;
        p.pad_bottom = 1;
        sweep(p, fmt::format("Pooling type={} 3x2 s2x1 pads l1 r2 t0 b1 mode={} include_pad={}",
                             type, mode, include));
        Pooling q = pool(type, 2, 3, 0, mode, include);  // stride above the kernel
        q.kernel_h = 4;
        q.stride_h = 1;
        sweep(q,
              fmt::format("Pooling type={} 2x4 s3x1 mode={} include_pad={}", type, mode, include));
      }
    }
  }
}

TEST_CASE("Pooling global", "[layer][pooling]") {
  for (int type : {0, 1}) {
    Pooling p;
    p.pooling_type = type;
    p.global_pooling = 1;
    p.kernel_w = 3;  // ignored
    sweep(p, fmt::format("Pooling global type={}", type));
  }
}

TEST_CASE("Pooling adaptive", "[layer][pooling]") {
  for (int type : {0, 1}) {
    for (auto [ow, oh] : {std::pair{3, 2}, std::pair{1, 1}, std::pair{5, 0}, std::pair{-233, 2},
                          std::pair{4, -233}, std::pair{10, 9}}) {
      Pooling p;
      p.pooling_type = type;
      p.adaptive_pooling = 1;
      p.out_w = ow;
      if (oh != 0) p.out_h = oh;  // 0: left at kSameAs, out_h = out_w
      sweep(p, fmt::format("Pooling adaptive type={} out {}x{}", type, ow, oh));
    }
  }
}

TEST_CASE("Pooling windows wholly in the padding give ncnn's values", "[layer][pooling]") {
  // Full padding with a kernel above the input: w = 2, kernel 3, stride 2 gives a tail pad of 3,
  // two outputs, and the second window [2, 5) is all padding.
  Pooling p = pool(0, 3, 2);
  p.kernel_h = 1;
  p.stride_h = 1;
  Mat in(Shape::of(2, 1, 4));
  in.fill(-5.f);
  for (Pooling layer : {p, pool(1, 3, 2)}) {
    layer.kernel_h = 1;
    layer.stride_h = 1;
    std::array<Shape, 1> out_shape{};
    const Shape in_shape = in.shape();
    REQUIRE(layer.infer_shapes({&in_shape, 1}, out_shape).ok());
    REQUIRE(out_shape[0] == Shape::of(2, 1, 4));
    Mat out;
    REQUIRE(infer::run_layer<float>(layer, in, out, 4, Placement::out_of_place, Option{}).ok());
    const RefTensor got = infer::test::from_mat(out);
    CHECK(got.at(0, 0, 0, 1) == -5.f);
    if (layer.pooling_type == 0) {
      CHECK(got.at(1, 0, 0, 1) == -FLT_MAX);
    } else {
      CHECK(std::isnan(got.at(1, 0, 0, 1)));  // 0 / 0, as ncnn divides by an area of 0
    }
  }
}

TEST_CASE("Pooling errors", "[layer][pooling]") {
  auto fails_with = [](const Pooling& p, const Shape& s, const char* what) {
    Mat in(s);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(p, in, out, 4, Placement::out_of_place, Option{});
    INFO("expected: " << what);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("Pooling") && Catch::Contains(what));
    std::array<Shape, 1> o{};
    const infer::ShapeCheck c = p.infer_shapes({&s, 1}, o);
    REQUIRE_FALSE(c.ok());
    REQUIRE_THAT(std::string(c.error), Catch::Contains(what));
  };
  fails_with(pool(0, 2, 2), Shape::of(8, 8), "takes a 3-D input");
  fails_with(pool(0, 2, 2), Shape::of(8, 8, 2, 4), "takes a 3-D input");
  fails_with(pool(2, 2, 2), Shape::of(8, 8, 4), "pooling_type must be 0 (max) or 1 (average)");
  fails_with(pool(0, 0, 2), Shape::of(8, 8, 4), "kernel_w and kernel_h must be at least 1");
  fails_with(pool(0, 2, 0), Shape::of(8, 8, 4), "stride_w and stride_h must be at least 1");
  fails_with(pool(0, 2, 2, -1), Shape::of(8, 8, 4), "pads must not be negative");
  fails_with(pool(0, 2, 2, 0, 4), Shape::of(8, 8, 4), "pad_mode must be 0 (full)");
  fails_with(pool(0, 5, 1, 0, 1), Shape::of(4, 8, 4), "the kernel is larger than the padded input");
  Pooling adaptive;
  adaptive.adaptive_pooling = 1;
  fails_with(adaptive, Shape::of(8, 8, 4), "adaptive out_w and out_h must be positive");
}
