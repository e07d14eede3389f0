// Separable resampling kernels (nearest, bilinear, bicubic): each output position along an axis
// is a weighted sum of `Taps` input positions whose indices are already clamped into the input, so
// no kernel reads outside it. A packed element's lanes are channels that share the spatial
// weights, so they are one batch.
#pragma once

#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// The input positions and weights of every output position along one axis: output o reads
/// index[o * Taps + t] with weight[o * Taps + t].
struct ResampleAxis {
  const int* index = nullptr;
  const float* weight = nullptr;
};

namespace detail {

template <int W, class T>
auto interp_load(const T* p) {
  if constexpr (W == 1) {
    return to_f32(*p);
  } else {
    return simd::load<W>(p);
  }
}
template <int W, class T, class V>
void interp_store(T* p, V v) {
  if constexpr (W == 1) {
    *p = from_f32<T>(v);
  } else {
    simd::store<W>(p, v);
  }
}

}  // namespace detail

/// Resamples one row of packed elements along w: dst[o] = sum_t weight * src[index] for out_w
/// outputs (src and dst must not overlap).
template <int Taps,          ///< input positions per output position (1, 2 or 4)
          int Pack,          ///< lanes per packed element (channels sharing the weights)
          StorageElement T,  ///< storage type read; arithmetic is f32
          StorageElement D>  ///< type written: the storage type, or f32 for an intermediate row
void resample_row(const T* src, D* dst, ResampleAxis x, int out_w) {
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(detail::interp_load<W>(src));
  for (int o = 0; o < out_w; ++o) {
    const int* ix = x.index + std::size_t(o) * Taps;
    const float* wx = x.weight + std::size_t(o) * Taps;
    for (int b = 0; b < kBlocks; ++b) {
      V acc = detail::interp_load<W>(src + std::size_t(ix[0]) * Pack + b * W) * V(wx[0]);
      for (int t = 1; t < Taps; ++t)
        acc += detail::interp_load<W>(src + std::size_t(ix[t]) * Pack + b * W) * V(wx[t]);
      detail::interp_store<W>(dst + std::size_t(o) * Pack + std::size_t(b) * W, acc);
    }
  }
}

/// dst[j] = sum_t weight[t] * rows[t][j] for n contiguous values: the vertical step, on rows the
/// horizontal step already resampled.
template <int Taps,          ///< rows combined (1, 2 or 4)
          StorageElement T>  ///< storage type written
void combine_rows(const float* const* rows, const float* weight, T* dst, std::size_t n) {
  std::size_t j = 0;
  if constexpr (simd::max_width > 1) {
    constexpr int W = simd::max_width;
    for (; j + W <= n; j += W) {
      auto acc = simd::load<W>(rows[0] + j) * simd::broadcast<W>(weight[0]);
      for (int t = 1; t < Taps; ++t)
        acc += simd::load<W>(rows[t] + j) * simd::broadcast<W>(weight[t]);
      simd::store<W>(dst + j, acc);
    }
  }
  for (; j < n; ++j) {
    float acc = rows[0][j] * weight[0];
    for (int t = 1; t < Taps; ++t) acc += rows[t][j] * weight[t];
    dst[j] = from_f32<T>(acc);
  }
}

/// Resamples one channel group of src_w x src_h packed elements (rows `src_row` values apart) to
/// out_w x out_h along both axes: each input row is resampled along w at most once per output
/// row sweep and kept in one of `Taps` cached f32 rows (cache: Taps * out_w * Pack floats).
template <int Taps,          ///< input positions per output position (1, 2 or 4)
          int Pack,          ///< lanes per packed element
          StorageElement T>  ///< storage type; arithmetic is f32
void resample_plane(const T* src, std::size_t src_row, T* dst, ResampleAxis x, ResampleAxis y,
                    int out_w, int out_h, float* cache) {
  const std::size_t n = std::size_t(out_w) * Pack;
  int tag[Taps];
  for (int t = 0; t < Taps; ++t) tag[t] = -1;
  for (int oy = 0; oy < out_h; ++oy) {
    const int* iy = y.index + std::size_t(oy) * Taps;
    const float* rows[Taps];
    bool used[Taps] = {};
    // Slots holding a needed row are kept; the others are free for the rows still missing.
    for (int t = 0; t < Taps; ++t)
      for (int s = 0; s < Taps; ++s)
        if (tag[s] == iy[t]) used[s] = true;
    for (int t = 0; t < Taps; ++t) {
      int slot = -1;
      for (int s = 0; s < Taps && slot < 0; ++s)
        if (tag[s] == iy[t]) slot = s;
      if (slot < 0) {
        for (int s = 0; s < Taps && slot < 0; ++s)
          if (!used[s]) slot = s;
        used[slot] = true;
        tag[slot] = iy[t];
        resample_row<Taps, Pack>(src + std::size_t(iy[t]) * src_row, cache + std::size_t(slot) * n,
                                 x, out_w);
      }
      rows[t] = cache + std::size_t(slot) * n;
    }
    combine_rows<Taps>(rows, y.weight + std::size_t(oy) * Taps, dst + std::size_t(oy) * n, n);
  }
}

}  // namespace infer::kernels
