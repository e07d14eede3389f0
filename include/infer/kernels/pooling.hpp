// Max and average pooling of one channel group, vectorized across the Pack lanes of a packed
// element (each lane is a channel, so every lane pools the same window). Windows are described
// per axis, which lets one loop serve sliding windows over a padded input, adaptive windows and
// global pooling; the padding is never materialized, only accounted for. Fixed K x K stride S
// windows (2x2 and 3x3 stride 2 in Pooling) and global pooling have unrolled fast paths.
#pragma once

#include <cstdint>
#include <infer/element.hpp>
#include <infer/simd.hpp>
#include <limits>
#include <type_traits>

namespace infer::kernels {

/// The input positions one output position pools along one axis.
struct PoolSpan {
  int begin = 0;        ///< first input position read
  int end = 0;          ///< one past the last input position read (end <= begin: none)
  int count = 0;        ///< positions an average divides by along this axis
  bool padded = false;  ///< the window reaches into the padding
};

/// The pooling windows along one axis, in input coordinates.
struct PoolAxis {
  /// A count bound beyond any window (extents stay far below it), so nothing is left out.
  static constexpr int kUnbounded = std::numeric_limits<int>::max() / 4;

  int in = 1;                     ///< input extent
  int kernel = 1;                 ///< sliding: window length
  int stride = 1;                 ///< sliding: distance between window starts
  int pad = 0;                    ///< sliding: padding before position 0
  int count_begin = -kUnbounded;  ///< an average reads and counts only positions
  int count_end = kUnbounded;     ///< in [count_begin, count_end); padding counts as zeros
  int adaptive_out = 0;           ///< nonzero: `adaptive_out` even windows instead of sliding

  /// Window o: sliding [o * stride - pad, + kernel), or adaptive
  /// [floor(o * in / out), ceil((o + 1) * in / out)).
  constexpr PoolSpan span(int o) const {
    if (adaptive_out > 0) {
      const std::int64_t out = adaptive_out;
      const int b = static_cast<int>(std::int64_t(o) * in / out);
      const int e = static_cast<int>((std::int64_t(o + 1) * in + out - 1) / out);
      return {b, e, e - b, false};
    }
    const int w0 = o * stride - pad, w1 = w0 + kernel;
    const int lo = count_begin > 0 ? count_begin : 0;
    const int hi = count_end < in ? count_end : in;
    const int c0 = w0 > count_begin ? w0 : count_begin;
    const int c1 = w1 < count_end ? w1 : count_end;
    return {w0 > lo ? w0 : lo, w1 < hi ? w1 : hi, c1 > c0 ? c1 - c0 : 0, w0 < 0 || w1 > in};
  }
};

/// Max pooling: a window that reaches into the padding also sees ncnn's pad value -FLT_MAX.
struct PoolMax {
  template <class V>
  static V init() {
    return V(-std::numeric_limits<float>::infinity());
  }
  template <class V>
  V operator()(V acc, V x) const {
    if constexpr (std::is_same_v<V, float>) {
      return acc < x ? x : acc;  // std::max(acc, x), as ncnn
    } else {
      return xsimd::max(acc, x);
    }
  }
  template <class V>
  V finish(V acc, int /*count*/, bool padded) const {
    return padded ? (*this)(acc, V(std::numeric_limits<float>::lowest())) : acc;
  }
};

/// Average pooling: the sum of the values read over the count (0 / 0 is NaN, as in ncnn).
struct PoolAvg {
  template <class V>
  static V init() {
    return V(0.f);
  }
  template <class V>
  V operator()(V acc, V x) const {
    return acc + x;
  }
  template <class V>
  V finish(V acc, int count, bool /*padded*/) const {
    return acc / V(float(count));
  }
};

namespace detail {

template <int W, StorageElement T>
auto pool_load(const T* p) {
  if constexpr (W == 1) {
    return to_f32(*p);
  } else {
    return simd::load<W>(p);
  }
}
template <int W, StorageElement T, class V>
void pool_store(T* p, V v) {
  if constexpr (W == 1) {
    *p = from_f32<T>(v);
  } else {
    simd::store<W>(p, v);
  }
}

}  // namespace detail

namespace detail {

/// The output of the windows sx x sy at dst, read from rows of row_values values at src.
template <StorageElement T, int Pack, class Op>
void pool_at(const T* src, std::size_t row_values, T* dst, const PoolSpan& sx, const PoolSpan& sy,
             const Op& op) {
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(pool_load<W>(src));
  V acc[kBlocks];
  for (int k = 0; k < kBlocks; ++k) acc[k] = Op::template init<V>();
  for (int iy = sy.begin; iy < sy.end; ++iy) {
    const T* p = src + std::size_t(iy) * row_values + std::size_t(sx.begin) * Pack;
    for (int ix = sx.begin; ix < sx.end; ++ix, p += Pack)
      for (int k = 0; k < kBlocks; ++k) acc[k] = op(acc[k], pool_load<W>(p + k * W));
  }
  const int count = sx.count * sy.count;
  const bool padded = sx.padded || sy.padded;
  for (int k = 0; k < kBlocks; ++k) pool_store<W>(dst + k * W, op.finish(acc[k], count, padded));
}

/// Whether window s reads and counts `kernel` positions: no padding, nothing left uncounted.
constexpr bool pool_full(const PoolSpan& s, int kernel) {
  return !s.padded && s.end - s.begin == kernel && s.count == kernel;
}

}  // namespace detail

/// Pools one channel group: `src` holds rows of `src_w` packed elements, `dst` receives
/// out_h rows of out_w packed elements; x and y give the windows along w and h.
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element (channels pooled together)
          class Op>          ///< PoolMax or PoolAvg
void pool(const T* src, int src_w, T* dst, const PoolAxis& x, const PoolAxis& y, int out_w,
          int out_h, const Op& op) {
  const std::size_t row_values = std::size_t(src_w) * Pack;
  for (int oy = 0; oy < out_h; ++oy) {
    const PoolSpan sy = y.span(oy);
    for (int ox = 0; ox < out_w; ++ox, dst += Pack)
      detail::pool_at<T, Pack>(src, row_values, dst, x.span(ox), sy, op);
  }
}

/// pool for sliding K x K windows of stride S on both axes: the outputs whose windows lie inside
/// the input (and are wholly counted) read a fixed, unrolled K x K block; the others, at the
/// padded borders, go through the general path.
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element (channels pooled together)
          int K,             ///< window extent, both axes
          int S,             ///< stride, both axes
          class Op>          ///< PoolMax or PoolAvg
void pool_kxk(const T* src, int src_w, T* dst, const PoolAxis& x, const PoolAxis& y, int out_w,
              int out_h, const Op& op) {
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(detail::pool_load<W>(src));
  const std::size_t row_values = std::size_t(src_w) * Pack;
  // The full windows along x form one range [x_lo, x_hi): their bounds are linear in ox.
  int x_lo = 0, x_hi = out_w;
  while (x_lo < out_w && !detail::pool_full(x.span(x_lo), K)) ++x_lo;
  while (x_hi > x_lo && !detail::pool_full(x.span(x_hi - 1), K)) --x_hi;
  for (int oy = 0; oy < out_h; ++oy, dst += std::size_t(out_w) * Pack) {
    const PoolSpan sy = y.span(oy);
    if (!detail::pool_full(sy, K)) {
      for (int ox = 0; ox < out_w; ++ox)
        detail::pool_at<T, Pack>(src, row_values, dst + std::size_t(ox) * Pack, x.span(ox), sy, op);
      continue;
    }
    for (int ox = 0; ox < x_lo; ++ox)
      detail::pool_at<T, Pack>(src, row_values, dst + std::size_t(ox) * Pack, x.span(ox), sy, op);
    const T* top = src + std::size_t(sy.begin) * row_values;
    for (int ox = x_lo; ox < x_hi; ++ox) {
      const T* p = top + std::size_t(ox * S - x.pad) * Pack;
      T* d = dst + std::size_t(ox) * Pack;
      for (int k = 0; k < kBlocks; ++k) {
        V acc = detail::pool_load<W>(p + k * W);
#pragma GCC unroll 4
        for (int ky = 0; ky < K; ++ky)
#pragma GCC unroll 4
          for (int kx = 0; kx < K; ++kx)
            if (ky + kx > 0)
              acc = op(acc, detail::pool_load<W>(p + std::size_t(ky) * row_values +
                                                 std::size_t(kx) * Pack + k * W));
        detail::pool_store<W>(d + k * W, op.finish(acc, K * K, false));
      }
    }
    for (int ox = x_hi; ox < out_w; ++ox)
      detail::pool_at<T, Pack>(src, row_values, dst + std::size_t(ox) * Pack, x.span(ox), sy, op);
  }
}

/// Global pooling of one channel group: the n packed elements at src to the one at dst, in two
/// interleaved accumulators (measured on Zen 4 at 7x7x2048: two beat one and four).
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element (channels pooled together)
          class Op>          ///< PoolMax or PoolAvg
void pool_global(const T* src, int n, T* dst, const Op& op) {
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(detail::pool_load<W>(src));
  for (int k = 0; k < kBlocks; ++k) {
    const T* p = src + k * W;
    V a0 = Op::template init<V>(), a1 = a0;
    int i = 0;
    for (; i + 2 <= n; i += 2, p += 2 * Pack) {
      a0 = op(a0, detail::pool_load<W>(p));
      a1 = op(a1, detail::pool_load<W>(p + Pack));
    }
    if (i < n) a0 = op(a0, detail::pool_load<W>(p));
    detail::pool_store<W>(dst + k * W, op.finish(op(a0, a1), n, false));
  }
}

}  // namespace infer::kernels
