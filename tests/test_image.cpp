// image_to_mat against a scalar reference written from the definitions (each output value as a
// sum over every source pixel of the product of its two axis weights), over every pair of pixel
// formats, crops, strides, enlarging and shrinking per axis, mean/norm, and every element type and
// pack the result can take; and its errors.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <infer/image.hpp>
#include <random>
#include <vector>

#include "support/ref_tensor.hpp"

using infer::ElemType;
using infer::ImageToMat;
using infer::ImageView;
using infer::PixelFormat;
using infer::Rect;

namespace {

constexpr PixelFormat kFormats[] = {PixelFormat::rgb, PixelFormat::bgr, PixelFormat::rgba,
                                    PixelFormat::bgra, PixelFormat::gray};

/// The weight source index s has in output o along an axis of `src` source and `dst` output
/// pixels: the bilinear hat at the output's centre (half-pixel centres, clamped) when enlarging,
/// the share of the output's footprint s covers when shrinking.
double axis_weight(int src, int dst, int o, int s) {
  const double scale = double(src) / dst;
  if (dst >= src) {
    const double f = std::clamp((o + 0.5) * scale - 0.5, 0.0, double(src - 1));
    return std::max(0.0, 1.0 - std::abs(f - s));
  }
  const double lo = o * scale, hi = (o + 1) * scale;
  const double cover = std::min(hi, s + 1.0) - std::max(lo, double(s));
  return std::max(0.0, cover) / (hi - lo);
}

/// The value of result channel c for a source pixel, from its R, G, B, A by name.
double channel_value(const std::uint8_t* p, PixelFormat from, PixelFormat to, int c) {
  double r, g, b, a = 255;
  switch (from) {
    case PixelFormat::rgb:
      r = p[0], g = p[1], b = p[2];
      break;
    case PixelFormat::bgr:
      b = p[0], g = p[1], r = p[2];
      break;
    case PixelFormat::rgba:
      r = p[0], g = p[1], b = p[2], a = p[3];
      break;
    case PixelFormat::bgra:
      b = p[0], g = p[1], r = p[2], a = p[3];
      break;
    default:
      r = g = b = p[0];
      break;
  }
  switch (to) {
    case PixelFormat::rgb:
      return c == 0 ? r : c == 1 ? g : b;
    case PixelFormat::bgr:
      return c == 0 ? b : c == 1 ? g : r;
    case PixelFormat::rgba:
      return c == 0 ? r : c == 1 ? g : c == 2 ? b : a;
    case PixelFormat::bgra:
      return c == 0 ? b : c == 1 ? g : c == 2 ? r : a;
    default:
      return from == PixelFormat::gray ? r : 0.299 * r + 0.587 * g + 0.114 * b;
  }
}

struct TestImage {
  std::vector<std::uint8_t> bytes;
  ImageView view;
};

TestImage random_image(int w, int h, PixelFormat f, int pad, unsigned seed) {
  TestImage t;
  const std::size_t stride = std::size_t(w * infer::channels_of(f) + pad);
  t.bytes.resize(stride * std::size_t(h));
  std::mt19937 rng(seed);
  for (auto& b : t.bytes) b = std::uint8_t(rng() & 0xFF);
  t.view = {t.bytes.data(), w, h, f, pad ? stride : 0};
  return t;
}

/// The reference result as planar floats (c, h, w).
std::vector<double> reference(const ImageView& img, const ImageToMat& how) {
  const int sc = infer::channels_of(img.format), oc = infer::channels_of(how.to);
  const std::size_t stride = img.stride ? img.stride : std::size_t(img.w * sc);
  const Rect crop = how.crop.w && how.crop.h ? how.crop : Rect{0, 0, img.w, img.h};
  const int ow = how.width ? how.width : crop.w, oh = how.height ? how.height : crop.h;
  std::vector<double> out(std::size_t(oc * ow * oh));
  for (int c = 0; c < oc; ++c)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        double v = 0;
        for (int sy = 0; sy < crop.h; ++sy) {
          const double wy = axis_weight(crop.h, oh, y, sy);
          if (wy == 0) continue;
          for (int sx = 0; sx < crop.w; ++sx) {
            const double wx = axis_weight(crop.w, ow, x, sx);
            if (wx == 0) continue;
            const std::uint8_t* p =
                img.data + std::size_t(crop.y + sy) * stride + std::size_t((crop.x + sx) * sc);
            v += wy * wx * channel_value(p, img.format, how.to, c);
          }
        }
        out[std::size_t((c * oh + y) * ow + x)] =
            (v - how.mean[std::size_t(c)]) * how.norm[std::size_t(c)];
      }
  return out;
}

/// Runs image_to_mat and compares with the reference at the precision of the result's type.
void check(const ImageView& img, const ImageToMat& how, const std::string& what) {
  INFO(what);
  auto got = infer::image_to_mat(img, how);
  INFO((got.ok() ? std::string("ok") : got.message()));
  REQUIRE(got.ok());
  REQUIRE(got->type() == how.type);
  REQUIRE(got->elempack() == how.pack);
  const infer::test::RefTensor t = infer::test::from_mat(*got);
  const std::vector<double> want = reference(img, how);
  const int ow = got->w(), oh = got->h(), oc = int(t.shape.c);
  REQUIRE(t.shape.dims == 3);
  REQUIRE(std::size_t(oc * ow * oh) == want.size());
  // Values are up to 255 * norm; the tolerance follows the type's rounding.
  const double rel = how.type == ElemType::f32 ? 2e-6 : how.type == ElemType::f16 ? 1e-3 : 8e-3;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double tol = 1e-4 + rel * std::abs(want[i]);
    if (std::abs(t.v[i] - want[i]) > tol) {
      FAIL(fmt::format("value {} (c {}, y {}, x {}): got {}, want {}", i, int(i) / (ow * oh),
                       int(i) / ow % oh, int(i) % ow, t.v[i], want[i]));
    }
  }
}

}  // namespace

TEST_CASE("image_to_mat: every pixel format pair, enlarging and shrinking", "[image]") {
  unsigned seed = 1;
  for (PixelFormat from : kFormats)
    for (PixelFormat to : kFormats) {
      // Odd sizes; the target enlarges one axis and shrinks the other, by non-integer ratios.
      const TestImage img = random_image(13, 9, from, 0, seed++);
      ImageToMat how;
      how.to = to;
      for (auto [w, h] : {std::pair{13, 9}, std::pair{29, 4}, std::pair{5, 17}, std::pair{1, 1},
                          std::pair{6, 3}}) {
        how.width = w;
        how.height = h;
        check(img.view, how,
              fmt::format("{} -> {} {}x{} -> {}x{}", to_string(from), to_string(to), 13, 9, w, h));
      }
    }
}

TEST_CASE("image_to_mat: crop, row padding, mean and norm", "[image]") {
  const TestImage img = random_image(31, 23, PixelFormat::bgra, 5, 7);
  ImageToMat how;
  how.to = PixelFormat::rgb;
  how.crop = {3, 4, 17, 11};
  how.width = 7;
  how.height = 5;
  how.mean = {123.675f, 116.28f, 103.53f, 0.f};
  how.norm = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f, 1.f};
  check(img.view, how, "crop 17x11 at (3, 4) of a padded BGRA image, 7x5, ImageNet mean/norm");
  how.width = 40;
  how.height = 33;
  check(img.view, how, "the same crop enlarged to 40x33");
  how.crop = {30, 22, 1, 1};
  how.width = 3;
  how.height = 2;
  check(img.view, how, "the last pixel enlarged");
  // A large shrink: many source pixels per output.
  const TestImage big = random_image(301, 97, PixelFormat::rgb, 3, 9);
  ImageToMat shrink;
  shrink.to = PixelFormat::bgr;
  shrink.width = 11;
  shrink.height = 7;
  check(big.view, shrink, "301x97 -> 11x7");
}

TEST_CASE("image_to_mat: every element type and pack", "[image]") {
  for (PixelFormat to : {PixelFormat::rgb, PixelFormat::rgba, PixelFormat::gray}) {
    const TestImage img = random_image(19, 14, PixelFormat::rgba, 0, 3);
    for (ElemType type : {ElemType::f32, ElemType::f16, ElemType::bf16})
      for (int pack : {1, 4, 8, 16}) {
        if (infer::channels_of(to) % pack) continue;
        ImageToMat how;
        how.to = to;
        how.width = 10;
        how.height = 21;
        how.mean = {10, 20, 30, 40};
        how.norm = {0.5f, 0.25f, 2.f, 1.f};
        how.type = type;
        how.pack = pack;
        check(img.view, how,
              fmt::format("{} {} pack {}", to_string(to), infer::to_string(type), pack));
      }
  }
}

TEST_CASE("image_to_mat: a 16-channel-wide result stays exact at f32 on 2 threads", "[image]") {
  // The vectorised passes cover whole SIMD widths and a remainder.
  const TestImage img = random_image(67, 45, PixelFormat::rgb, 0, 11);
  ImageToMat how;
  how.width = 53;
  how.height = 38;
  infer::Option opt;
  opt.num_threads = 2;
  auto a = infer::image_to_mat(img.view, how, opt);
  opt.num_threads = 1;
  auto b = infer::image_to_mat(img.view, how, opt);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const infer::test::RefTensor ta = infer::test::from_mat(*a), tb = infer::test::from_mat(*b);
  CHECK(ta.v == tb.v);
  check(img.view, how, "67x45 -> 53x38");
}

TEST_CASE("image_to_mat: errors name what is wrong", "[image][errors]") {
  const TestImage img = random_image(8, 6, PixelFormat::rgb, 0, 5);
  auto message = [&](ImageView v, ImageToMat how) {
    auto r = infer::image_to_mat(v, how);
    REQUIRE_FALSE(r.ok());
    return r.message();
  };
  ImageToMat how;
  ImageView v = img.view;
  v.data = nullptr;
  CHECK_THAT(message(v, how), Catch::Contains("data is null"));
  v = img.view;
  v.w = 0;
  CHECK_THAT(message(v, how), Catch::Contains("image size 0x6"));
  v = img.view;
  v.stride = 10;
  CHECK_THAT(message(v, how), Catch::Contains("stride 10"));
  how.crop = {4, 0, 5, 6};
  CHECK_THAT(message(img.view, how), Catch::Contains("crop 5x6 at (4, 0)"));
  how = {};
  how.width = -3;
  how.height = 4;
  CHECK_THAT(message(img.view, how), Catch::Contains("target size -3x4"));
  how = {};
  how.width = 100000;
  how.height = 4;
  CHECK_THAT(message(img.view, how), Catch::Contains("target size 100000x4"));
  how = {};
  how.pack = 4;
  CHECK_THAT(message(img.view, how), Catch::Contains("pack 4 does not divide the 3 channels"));
  how = {};
  how.type = ElemType::i8;
  CHECK_THAT(message(img.view, how), Catch::Contains("i8"));
  how = {};
  how.norm[1] = std::nanf("");
  CHECK_THAT(message(img.view, how), Catch::Contains("channel 1 must be finite"));
}
