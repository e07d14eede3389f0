// From interleaved 8-bit pixels to a network input, as ncnn users do it with
// Mat::from_pixels_resize and substract_mean_normalize: channel order conversion (RGB, BGR, RGBA,
// BGRA, GRAY), a crop, a resize (bilinear when enlarging, area averaging when shrinking, chosen per
// axis), then (v - mean[c]) * norm[c] per channel, into a Mat of any element type and pack.
//
// Everything is computed in float: the resize does not round to 8 bits between its passes as
// ncnn's does, so results differ from ncnn's by at most about half a level. No image decoding
// here: <infer/io/image_file.hpp> (optional, links libpng and libjpeg-turbo) reads PNG and JPEG.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <infer/convert.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/simd.hpp>
#include <infer/status.hpp>
#include <string_view>
#include <vector>

namespace infer {

/// The channel order of interleaved 8-bit pixels.
enum class PixelFormat { rgb, bgr, rgba, bgra, gray };

constexpr int channels_of(PixelFormat f) {
  return f == PixelFormat::gray ? 1 : (f == PixelFormat::rgba || f == PixelFormat::bgra) ? 4 : 3;
}

constexpr std::string_view to_string(PixelFormat f) {
  switch (f) {
    case PixelFormat::rgb:
      return "RGB";
    case PixelFormat::bgr:
      return "BGR";
    case PixelFormat::rgba:
      return "RGBA";
    case PixelFormat::bgra:
      return "BGRA";
    case PixelFormat::gray:
      return "GRAY";
  }
  return "?";
}

/// Interleaved 8-bit pixels owned elsewhere.
struct ImageView {
  const std::uint8_t* data = nullptr;
  int w = 0, h = 0;
  PixelFormat format = PixelFormat::rgb;
  std::size_t stride = 0;  ///< bytes from one row to the next; 0: w * channels (no padding)
};

/// A rectangle of an image, in pixels; an empty one (w or h 0) means the whole image.
struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
};

/// What image_to_mat makes of an image.
struct ImageToMat {
  PixelFormat to = PixelFormat::rgb;  ///< channel order of the result (GRAY: one channel)
  Rect crop{};                        ///< the part of the source used (empty: all of it)
  int width = 0, height = 0;          ///< size after resizing (0: the crop's)
  std::array<float, 4> mean{};        ///< subtracted per result channel, in 0..255 units
  std::array<float, 4> norm{1.f, 1.f, 1.f, 1.f};  ///< then multiplied, per result channel
  ElemType type = ElemType::f32;                  ///< element type of the result
  int pack = 1;  ///< pack of the result; must divide its channel count
};

/// The largest image side image_to_mat accepts (source, crop or target).
inline constexpr int kMaxImageSide = 1 << 15;

namespace image_detail {

/// Source position weights along one axis: output i reads `count[i]` source indices from
/// `first[i]` on, with weights `weights[offset[i] ...]` summing to 1.
struct AxisTaps {
  std::vector<int> first, count, offset;
  std::vector<float> weights;
  int max_count = 0;
};

/// Bilinear (half-pixel centres, clamped at the edges) when `dst >= src`, the average over each
/// output pixel's footprint when shrinking.
inline AxisTaps axis_taps(int src, int dst) {
  AxisTaps t;
  t.first.resize(std::size_t(dst));
  t.count.resize(std::size_t(dst));
  t.offset.resize(std::size_t(dst));
  const double scale = double(src) / double(dst);
  for (int i = 0; i < dst; ++i) {
    t.offset[std::size_t(i)] = int(t.weights.size());
    if (dst >= src) {
      double f = (i + 0.5) * scale - 0.5;
      f = std::clamp(f, 0.0, double(src - 1));
      const int i0 = std::min(int(f), src - 1);
      const double frac = f - i0;
      if (i0 + 1 < src && frac > 0) {
        t.first[std::size_t(i)] = i0;
        t.count[std::size_t(i)] = 2;
        t.weights.push_back(float(1 - frac));
        t.weights.push_back(float(frac));
      } else {
        t.first[std::size_t(i)] = i0;
        t.count[std::size_t(i)] = 1;
        t.weights.push_back(1.f);
      }
    } else {
      const double lo = i * scale, hi = std::min((i + 1) * scale, double(src));
      const int s0 = int(std::floor(lo));
      const int s1 = std::min(int(std::ceil(hi)), src);  // exclusive
      t.first[std::size_t(i)] = s0;
      t.count[std::size_t(i)] = s1 - s0;
      for (int s = s0; s < s1; ++s) {
        const double cover = std::min(hi, double(s + 1)) - std::max(lo, double(s));
        t.weights.push_back(float(cover / (hi - lo)));
      }
    }
    t.max_count = std::max(t.max_count, t.count[std::size_t(i)]);
  }
  return t;
}

/// How result channel c is made from the source pixel: sum of coef[k] * src[chan[k]] + constant.
struct ChannelMix {
  int n = 0;
  std::array<int, 3> chan{};
  std::array<float, 3> coef{};
  float constant = 0;
};

/// The channel mixes from `from` to `to` (ITU-R BT.601 luma for colour to GRAY; alpha 255 where
/// the source has none).
inline std::array<ChannelMix, 4> channel_mixes(PixelFormat from, PixelFormat to) {
  // Where R, G, B and A are in the source (-1: absent).
  int r = 0, g = 1, b = 2, a = -1;
  switch (from) {
    case PixelFormat::rgb:
      break;
    case PixelFormat::bgr:
      r = 2, b = 0;
      break;
    case PixelFormat::rgba:
      a = 3;
      break;
    case PixelFormat::bgra:
      r = 2, b = 0, a = 3;
      break;
    case PixelFormat::gray:
      r = g = b = 0;
      break;
  }
  std::array<ChannelMix, 4> m{};
  auto one = [](int c) {
    ChannelMix x;
    x.n = 1;
    x.chan[0] = c;
    x.coef[0] = 1.f;
    return x;
  };
  auto alpha = [&] {
    if (a >= 0) return one(a);
    ChannelMix x;
    x.constant = 255.f;
    return x;
  };
  switch (to) {
    case PixelFormat::rgb:
      m = {one(r), one(g), one(b), {}};
      break;
    case PixelFormat::bgr:
      m = {one(b), one(g), one(r), {}};
      break;
    case PixelFormat::rgba:
      m = {one(r), one(g), one(b), alpha()};
      break;
    case PixelFormat::bgra:
      m = {one(b), one(g), one(r), alpha()};
      break;
    case PixelFormat::gray:
      if (from == PixelFormat::gray) {
        m[0] = one(0);
      } else {
        m[0].n = 3;
        m[0].chan = {r, g, b};
        m[0].coef = {0.299f, 0.587f, 0.114f};
      }
      break;
  }
  return m;
}

/// out[x] = (in[x] - mean) * norm over n floats, vectorised.
inline void normalize_row(const float* in, float* out, int n, float mean, float norm) {
  constexpr int W = simd::max_width;
  int x = 0;
  if constexpr (W > 1) {
    const simd::fbatch<W> vm(mean), vn(norm);
    for (; x + W <= n; x += W)
      ((simd::fbatch<W>::load_unaligned(in + x) - vm) * vn).store_unaligned(out + x);
  }
  for (; x < n; ++x) out[x] = (in[x] - mean) * norm;
}

/// acc[x] += w * row[x] over n floats, vectorised.
inline void accumulate_row(float* acc, const float* row, float w, int n) {
  constexpr int W = simd::max_width;
  int x = 0;
  if constexpr (W > 1) {
    const simd::fbatch<W> vw(w);
    for (; x + W <= n; x += W)
      xsimd::fma(simd::fbatch<W>::load_unaligned(row + x), vw,
                 simd::fbatch<W>::load_unaligned(acc + x))
          .store_unaligned(acc + x);
  }
  for (; x < n; ++x) acc[x] += w * row[x];
}

}  // namespace image_detail

/// Converts an image into a network input: crop, channel order, resize, (v - mean) * norm, then
/// the element type and pack asked for. The result is 3-D (w, h, channels of `how.to`); its
/// memory comes from opt.blob_alloc(). Errors name the argument that is wrong.
inline Result<Mat> image_to_mat(const ImageView& img, const ImageToMat& how,
                                const Option& opt = {}) {
  using namespace image_detail;
  if (!img.data) return make_error("image_to_mat: the image has no pixels (data is null)");
  if (img.w <= 0 || img.h <= 0 || img.w > kMaxImageSide || img.h > kMaxImageSide)
    return make_error("image_to_mat: image size {}x{} is outside 1..{}", img.w, img.h,
                      kMaxImageSide);
  const int sc = channels_of(img.format);
  const std::size_t stride = img.stride ? img.stride : std::size_t(img.w) * std::size_t(sc);
  if (stride < std::size_t(img.w) * std::size_t(sc))
    return make_error("image_to_mat: stride {} is less than a row of {}x{} {} pixels ({} bytes)",
                      img.stride, img.w, 1, to_string(img.format), img.w * sc);
  Rect crop = how.crop;
  if (crop.w == 0 || crop.h == 0) crop = {0, 0, img.w, img.h};
  if (crop.x < 0 || crop.y < 0 || crop.w < 0 || crop.h < 0 || crop.x > img.w - crop.w ||
      crop.y > img.h - crop.h)
    return make_error("image_to_mat: crop {}x{} at ({}, {}) is not inside the {}x{} image", crop.w,
                      crop.h, crop.x, crop.y, img.w, img.h);
  const int ow = how.width ? how.width : crop.w, oh = how.height ? how.height : crop.h;
  if (ow <= 0 || oh <= 0 || ow > kMaxImageSide || oh > kMaxImageSide)
    return make_error("image_to_mat: target size {}x{} is outside 1..{}", ow, oh, kMaxImageSide);
  const int oc = channels_of(how.to);
  for (int c = 0; c < oc; ++c)
    if (!std::isfinite(how.mean[std::size_t(c)]) || !std::isfinite(how.norm[std::size_t(c)]))
      return make_error("image_to_mat: mean and norm of channel {} must be finite, got {} and {}",
                        c, how.mean[std::size_t(c)], how.norm[std::size_t(c)]);
  if (how.pack != 1 && how.pack != 4 && how.pack != 8 && how.pack != 16)
    return make_error("image_to_mat: pack must be 1, 4, 8 or 16, got {}", how.pack);
  if (oc % how.pack != 0)
    return make_error("image_to_mat: pack {} does not divide the {} channels of {}", how.pack, oc,
                      to_string(how.to));
  if (how.type == ElemType::i8)
    return make_error("image_to_mat: i8 needs a quantization scale; make f32 and cast()");

  const AxisTaps tx = axis_taps(crop.w, ow), ty = axis_taps(crop.h, oh);
  const std::array<ChannelMix, 4> mix = channel_mixes(img.format, how.to);
  // Pass 1, along x: every source row the vertical taps read, as planar float rows of width ow.
  std::vector<float> rows(std::size_t(crop.h) * std::size_t(oc) * std::size_t(ow));
  auto hrow = [&](int sy, int c) {
    return rows.data() + (std::size_t(sy) * std::size_t(oc) + std::size_t(c)) * std::size_t(ow);
  };
  const int threads = std::max(1, opt.num_threads);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int sy = 0; sy < crop.h; ++sy) {
    const std::uint8_t* src = img.data + std::size_t(crop.y + sy) * stride + std::size_t(crop.x) * std::size_t(sc);
    for (int c = 0; c < oc; ++c) {
      const ChannelMix& m = mix[std::size_t(c)];
      float* out = hrow(sy, c);
      for (int x = 0; x < ow; ++x) {
        const int first = tx.first[std::size_t(x)], n = tx.count[std::size_t(x)];
        const float* w = tx.weights.data() + tx.offset[std::size_t(x)];
        float acc = 0;
        for (int k = 0; k < n; ++k) {
          const std::uint8_t* p = src + std::size_t(first + k) * std::size_t(sc);
          float v = m.constant;
          for (int j = 0; j < m.n; ++j) v += m.coef[std::size_t(j)] * float(p[m.chan[std::size_t(j)]]);
          acc += w[k] * v;
        }
        out[x] = acc;
      }
    }
  }
  // Pass 2, along y, then mean and norm: planar f32.
  Mat planar;
  INFER_TRY(planar.create(Shape::of(ow, oh, oc), ElemType::f32, 1,
                          how.type == ElemType::f32 && how.pack == 1 ? opt.blob_alloc()
                                                                     : opt.workspace_alloc()));
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> acc(static_cast<std::size_t>(ow));
#pragma omp for schedule(static)
    for (int y = 0; y < oh; ++y) {
      const int first = ty.first[std::size_t(y)], n = ty.count[std::size_t(y)];
      const float* w = ty.weights.data() + ty.offset[std::size_t(y)];
      for (int c = 0; c < oc; ++c) {
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int k = 0; k < n; ++k) accumulate_row(acc.data(), hrow(first + k, c), w[k], ow);
        float* out = static_cast<float*>(planar.channel_data(c)) + std::size_t(y) * std::size_t(ow);
        normalize_row(acc.data(), out, ow, how.mean[std::size_t(c)], how.norm[std::size_t(c)]);
      }
    }
  }
  if (how.type == ElemType::f32 && how.pack == 1) return planar;
  Mat typed, packed;
  INFER_TRY(cast(planar, typed, how.type, opt));
  if (how.pack == 1) return typed;
  INFER_TRY(convert_packing(typed, packed, how.pack, opt));
  return packed;
}

}  // namespace infer
