// Local response normalization kernels: window sums of squares (across neighbouring channels, or
// over a square spatial window of one channel) and the scaling y = x * (bias + k * sum)^-beta.
// Sums are built in f32 buffers laid out as the packed channel group they belong to, so the final
// scaling is one contiguous pass whatever the pack.
#pragma once

#include <cmath>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>

// GCC 12 (bug 105593) reports its own AVX-512 intrinsics inside xsimd::exp/log as uninitialised;
// the kernel is flattened so they are inlined under the pragma (see kernels/softmax.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define INFER_LRN_FLATTEN [[gnu::flatten]]
#else
#define INFER_LRN_FLATTEN
#endif

namespace infer::kernels {

namespace detail {

/// v^-beta; beta = 0.75 (the usual LRN exponent) as 1 / (sqrt(v) * sqrt(sqrt(v))), which is
/// faster than exp/log and as accurate.
template <class V>
V lrn_power(V v, float beta) {
  using std::exp;
  using std::log;
  using std::sqrt;
  using xsimd::exp;
  using xsimd::log;
  using xsimd::sqrt;
  if (beta == 0.75f) {
    const V r = sqrt(v);
    return V(1.f) / (r * sqrt(r));
  }
  return exp(V(-beta) * log(v));
}

}  // namespace detail

/// dst[i] = src[i] * (bias + k * sums[i])^-beta for n values (src == dst allowed).
template <StorageElement T>  ///< storage type; arithmetic is f32
INFER_LRN_FLATTEN void lrn_scale(const T* src, T* dst, const float* sums, std::size_t n, float k,
                                 float bias, float beta) {
  std::size_t i = 0;
  if constexpr (simd::max_width > 1) {
    constexpr int W = simd::max_width;
    const auto vk = simd::broadcast<W>(k), vb = simd::broadcast<W>(bias);
    for (; i + W <= n; i += W) {
      const auto s = simd::load<W>(sums + i);
      simd::store<W>(dst + i,
                     simd::load<W>(src + i) * detail::lrn_power(xsimd::fma(vk, s, vb), beta));
    }
  }
  for (; i < n; ++i)
    dst[i] = from_f32<T>(to_f32(src[i]) * detail::lrn_power(bias + k * sums[i], beta));
}

/// Squares of one packed channel group into a pixel-major table of every channel: for pixel i,
/// table[i * row + first + lane] = x^2 of channel (group * Pack + lane), `first` leaving room for
/// the zeros before channel 0.
template <StorageElement T,  ///< storage type
          int Pack>          ///< lanes per packed element (channels of the group)
void lrn_squares_by_pixel(const T* src, std::size_t pixels, float* table, std::size_t row,
                          std::size_t first) {
  for (std::size_t i = 0; i < pixels; ++i) {
    float* t = table + i * row + first;
    for (int l = 0; l < Pack; ++l) {
      const float v = to_f32(src[i * Pack + l]);
      t[l] = v * v;
    }
  }
}

/// Across-channel window sums of one channel group in packed order: sums[i * Pack + lane] adds
/// the `taps` consecutive table entries of pixel i that start at `first` + lane (the table holds
/// zeros beyond the channels, so no window is cut).
template <int Pack>  ///< lanes per packed element
void lrn_across_sums(const float* table, std::size_t pixels, std::size_t row, std::size_t first,
                     int taps, float* sums) {
  for (std::size_t i = 0; i < pixels; ++i) {
    const float* t = table + i * row + first;
    float acc[Pack] = {};
    for (int o = 0; o < taps; ++o)
      for (int l = 0; l < Pack; ++l) acc[l] += t[o + l];
    for (int l = 0; l < Pack; ++l) sums[i * Pack + l] = acc[l];
  }
}

/// Within-channel window sums over `size` x `size` windows (`pad` positions before each pixel,
/// size - pad - 1 after, zeros outside) of one channel group of w x h packed elements; the Pack
/// lanes are independent channels. Separable: row sums into `rows` (h * w * Pack floats), then
/// column sums into `sums`. `line` holds (w + size - 1) * Pack floats.
template <StorageElement T,  ///< storage type
          int Pack>          ///< lanes per packed element
void lrn_within_sums(const T* src, int w, int h, int size, int pad, float* line, float* rows,
                     float* sums) {
  const std::size_t n = std::size_t(w) * Pack;
  const std::size_t padded = std::size_t(w + size - 1) * Pack;
  for (std::size_t j = 0; j < padded; ++j) line[j] = 0.f;
  for (int y = 0; y < h; ++y) {
    const T* s = src + std::size_t(y) * n;
    float* l = line + std::size_t(pad) * Pack;
    for (std::size_t j = 0; j < n; ++j) {
      const float v = to_f32(s[j]);
      l[j] = v * v;
    }
    float* r = rows + std::size_t(y) * n;
    for (std::size_t j = 0; j < n; ++j) r[j] = 0.f;
    for (int dx = 0; dx < size; ++dx) {
      const float* p = line + std::size_t(dx) * Pack;
      for (std::size_t j = 0; j < n; ++j) r[j] += p[j];
    }
  }
  for (int y = 0; y < h; ++y) {
    float* o = sums + std::size_t(y) * n;
    for (std::size_t j = 0; j < n; ++j) o[j] = 0.f;
    for (int dy = 0; dy < size; ++dy) {
      const int sy = y - pad + dy;
      if (sy < 0 || sy >= h) continue;
      const float* r = rows + std::size_t(sy) * n;
      for (std::size_t j = 0; j < n; ++j) o[j] += r[j];
    }
  }
}

}  // namespace infer::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef INFER_LRN_FLATTEN
