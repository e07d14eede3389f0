// Max and average pooling of one channel group, vectorized across the Pack lanes of a packed
// element (each lane is a channel, so every lane pools the same window). Windows are described
// per axis, which lets one loop serve sliding windows over a padded input, adaptive windows and
// global pooling; the padding is never materialized, only accounted for.
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

/// Pools one channel group: `src` holds rows of `src_w` packed elements, `dst` receives
/// out_h rows of out_w packed elements; x and y give the windows along w and h.
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element (channels pooled together)
          class Op>          ///< PoolMax or PoolAvg
void pool(const T* src, int src_w, T* dst, const PoolAxis& x, const PoolAxis& y, int out_w,
          int out_h, const Op& op) {
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(detail::pool_load<W>(src));
  const std::size_t row_values = std::size_t(src_w) * Pack;
  for (int oy = 0; oy < out_h; ++oy) {
    const PoolSpan sy = y.span(oy);
    for (int ox = 0; ox < out_w; ++ox, dst += Pack) {
      const PoolSpan sx = x.span(ox);
      V acc[kBlocks];
      for (int k = 0; k < kBlocks; ++k) acc[k] = Op::template init<V>();
      for (int iy = sy.begin; iy < sy.end; ++iy) {
        const T* p = src + std::size_t(iy) * row_values + std::size_t(sx.begin) * Pack;
        for (int ix = sx.begin; ix < sx.end; ++ix, p += Pack)
          for (int k = 0; k < kBlocks; ++k) acc[k] = op(acc[k], detail::pool_load<W>(p + k * W));
      }
      const int count = sx.count * sy.count;
      const bool padded = sx.padded || sy.padded;
      for (int k = 0; k < kBlocks; ++k)
        detail::pool_store<W>(dst + k * W, op.finish(acc[k], count, padded));
    }
  }
}

}  // namespace infer::kernels
