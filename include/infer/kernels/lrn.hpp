// Local response normalization kernels: window sums of squares (across neighbouring channels, or
// over a square spatial window of one channel) and the scaling y = x * (bias + k * sum)^-beta.
// Sums are built in f32 buffers laid out as the packed channel group they belong to, so the final
// scaling is one contiguous pass whatever the pack.
#pragma once

#include <cmath>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>
#include <type_traits>

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

/// y refined by `steps` Newton steps towards 1 / sqrt(v).
template <class V>
V lrn_rsqrt_refine(V y, V v, int steps) {
  const V half_v = V(0.5f) * v;
  for (int s = 0; s < steps; ++s) y = y * xsimd::fnma(half_v * y, y, V(1.5f));
  return y;
}

/// 1 / sqrt(v) for v > 0: the instruction's estimate (14 bits with AVX-512, 12 with AVX and
/// SSE) refined by Newton steps; a division where neither is compiled in, and for a float.
template <class V>
V lrn_rsqrt(V v) {
  if constexpr (std::is_same_v<V, float>) {
    return 1.f / std::sqrt(v);
  } else {
#if XSIMD_WITH_AVX512F
    if constexpr (sizeof(V) == 64) return lrn_rsqrt_refine(V(_mm512_rsqrt14_ps(v)), v, 1);
#endif
#if XSIMD_WITH_AVX
    if constexpr (sizeof(V) == 32) return lrn_rsqrt_refine(V(_mm256_rsqrt_ps(v)), v, 2);
#endif
#if XSIMD_WITH_SSE2
    if constexpr (sizeof(V) == 16) return lrn_rsqrt_refine(V(_mm_rsqrt_ps(v)), v, 2);
#endif
    return V(1.f) / xsimd::sqrt(v);
  }
}

/// v^-beta; beta = 0.75 (the usual LRN exponent) as r^2 / sqrt(r) with r = 1 / sqrt(v): no
/// division or square root instruction, within 6 ulp of pow (two square roots and a division
/// before); other exponents through exp/log. With the batched sums below, AlexNet's norm1
/// (55x55x96, pack 16, one thread, this layer alone) went from 0.58 to 0.20 ms.
template <class V>
V lrn_power(V v, float beta) {
  using std::exp;
  using std::log;
  using xsimd::exp;
  using xsimd::log;
  if (beta == 0.75f) {
    const V r = lrn_rsqrt(v);
    return r * r * lrn_rsqrt(r);
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
  if constexpr (Pack > 1 && simd::has_width<Pack>) {
    for (std::size_t i = 0; i < pixels; ++i) {
      const auto v = simd::load<Pack>(src + i * Pack);
      simd::store<Pack>(table + i * row + first, v * v);
    }
    return;
  }
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
  // As batches of the group's lanes: left to itself GCC turns the overlapping windows into
  // scalar sliding sums (with the batched squares above, AlexNet's norm1 took 0.32 ms instead of
  // 0.58, before the faster power).
  if constexpr (Pack > 1 && simd::has_width<Pack>) {
    for (std::size_t i = 0; i < pixels; ++i) {
      const float* t = table + i * row + first;
      auto acc = simd::load<Pack>(t);
      for (int o = 1; o < taps; ++o) acc += simd::load<Pack>(t + o);
      simd::store<Pack>(sums + i * Pack, acc);
    }
    return;
  }
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
