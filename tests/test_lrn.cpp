// LRN across channels and within a channel, odd and even window sizes, default and other
// exponents (0.75 has its own fast path), in every float type and pack, in place and not; plus the
// errors for bad parameters and inputs that are not 3-D.
#include <cmath>
#include <infer/layers/lrn.hpp>

#include "support/layer_tester.hpp"

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::LRN;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// From ncnn's definition: across channels the window is channels c - n/2 .. c + n/2 and the sum is
// scaled by alpha / n; within a channel it is rows and columns p - n/2 .. p - n/2 + n - 1, scaled
// by alpha / n^2. Squares outside the blob are 0.
RefTensor lrn_ref(const RefTensor& in, const LRN& p) {
  const Shape s = in.shape;
  RefTensor out(s);
  const int n = p.local_size;
  for (int c = 0; c < s.c; ++c) {
    for (int y = 0; y < s.h; ++y) {
      for (int x = 0; x < s.w; ++x) {
        double sum = 0;
        double scale = 0;
        if (p.region_type == 0) {
          for (int cc = c - n / 2; cc <= c + n / 2; ++cc) {
            if (cc < 0 || cc >= s.c) continue;
            const double v = in.at(x, y, 0, cc);
            sum += v * v;
          }
          scale = double(p.alpha) / n;
        } else {
          for (int yy = y - n / 2; yy < y - n / 2 + n; ++yy) {
            for (int xx = x - n / 2; xx < x - n / 2 + n; ++xx) {
              if (yy < 0 || yy >= s.h || xx < 0 || xx >= s.w) continue;
              const double v = in.at(xx, yy, 0, c);
              sum += v * v;
            }
          }
          scale = double(p.alpha) / (double(n) * n);
        }
        const double v = in.at(x, y, 0, c);
        out.at(x, y, 0, c) = float(v * std::pow(double(p.bias) + scale * sum, -double(p.beta)));
      }
    }
  }
  return out;
}

const std::vector<Shape> kShapes = {
    Shape::of(1, 1, 1),   Shape::of(5, 7, 3),   Shape::of(1, 9, 16),
    Shape::of(13, 1, 20), Shape::of(17, 3, 24), Shape::of(8, 8, 32),
    Shape::of(6, 5, 7),   Shape::of(3, 4, 40),  Shape::of(33, 21, 48)};

}  // namespace

TEST_CASE("LRN", "[layer][lrn]") {
  const LRN params[] = {
      LRN{},                        // across channels, 5, alpha 1, beta 0.75, bias 1
      LRN{0, 3, 0.5f, 0.6f, 2.f},   // general exponent
      LRN{0, 4, 2.f, 0.75f, 1.f},   // even size: a window of 5 channels
      LRN{0, 1, 1.f, 0.75f, 1.5f},  // each channel alone
      LRN{0, 9, 0.3f, 1.2f, 0.5f},  // window wider than most channel counts
      LRN{1, 3, 1.f, 0.75f, 1.f},   // within channel
      LRN{1, 5, 0.7f, 0.4f, 2.f},   // within, general exponent
      LRN{1, 2, 1.f, 0.75f, 1.f},   // even: one row/column before, none after
      LRN{1, 1, 0.2f, 0.75f, 1.f},  // one pixel
      LRN{1, 6, 1.f, 0.9f, 1.f},    // larger than w/h of several shapes
  };
  for (const LRN& p : params) {
    LayerTester(p, fmt::format("LRN region={} size={} alpha={} beta={} bias={}", p.region_type,
                               p.local_size, p.alpha, p.beta, p.bias))
        .reference([p](const std::vector<RefTensor>& in) {
          return std::vector<RefTensor>{lrn_ref(in[0], p)};
        })
        .shapes(kShapes)
        .run();
  }
}

TEST_CASE("LRN rejects bad parameters and inputs", "[layer][lrn]") {
  const struct {
    LRN layer;
    Shape in;
    const char* message;
  } bad[] = {
      {LRN{2, 5}, Shape::of(4, 4, 8), "region_type must be 0 (across channels) or 1"},
      {LRN{-1, 5}, Shape::of(4, 4, 8), "got -1"},
      {LRN{0, 0}, Shape::of(4, 4, 8), "local_size must be positive, got 0"},
      {LRN{1, -3}, Shape::of(4, 4, 8), "local_size must be positive, got -3"},
      {LRN{}, Shape::of(8, 4), "input must be 3-D (w, h, c), got 2-D"},
      {LRN{}, Shape::of(12), "input must be 3-D"},
      {LRN{}, Shape::of(2, 3, 4, 8), "input must be 3-D"},
  };
  for (const auto& b : bad) {
    for (Placement pl : {Placement::out_of_place, Placement::in_place}) {
      Mat in(b.in);
      in.fill(1.f);
      Mat out;
      auto st = infer::run_layer<float>(b.layer, in, out, 4, pl, Option{});
      REQUIRE_FALSE(st.ok());
      REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("LRN"));
    }
    infer::Shape outs[1];
    const infer::ShapeCheck c = b.layer.infer_shapes(std::span<const Shape>(&b.in, 1), outs);
    REQUIRE_FALSE(c.ok());
  }
}
