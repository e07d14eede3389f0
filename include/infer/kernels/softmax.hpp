// Softmax kernels, numerically stable (the maximum is subtracted before exp), f32 arithmetic on
// any float storage type. One for values that are contiguous along the axis, one for an axis
// whose steps are far apart while neighbouring positions are contiguous (they go in SIMD lanes).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>
#include <limits>

// GCC 12 (bug 105593) reports its own AVX-512 intrinsics inside xsimd::exp as uninitialised. The
// pragma only silences code inlined into functions below it, so the kernels are flattened: xsimd's
// exp is inlined into them (left out of line at -O1 it is reported).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define INFER_SOFTMAX_FLATTEN [[gnu::flatten]]
#else
#define INFER_SOFTMAX_FLATTEN
#endif

namespace infer::kernels {

namespace detail {

template <int W, StorageElement T>
auto load_w(const T* p) {
  if constexpr (W == 1) {
    return to_f32(*p);
  } else {
    return simd::load<W>(p);
  }
}
template <int W, StorageElement T, class V>
void store_w(T* p, V v) {
  if constexpr (W == 1) {
    *p = from_f32<T>(v);
  } else {
    simd::store<W>(p, v);
  }
}
inline float vmax(float a, float b) { return std::max(a, b); }
template <class B>
B vmax(const B& a, const B& b) {
  return xsimd::max(a, b);
}
template <class V>
V vexp(V x) {
  using std::exp;
  using xsimd::exp;
  return exp(x);
}

/// Calls f.template operator()<W>(i) over [0, n): widest batches first, then 4 lanes, then one.
template <class F>
void by_widths(std::size_t n, F&& f) {
  std::size_t i = 0;
  constexpr int kW = simd::max_width;
  if constexpr (kW > 4) {
    for (; i + kW <= n; i += kW) f.template operator()<kW>(i);
  }
  if constexpr (simd::has_width<4>) {
    for (; i + 4 <= n; i += 4) f.template operator()<4>(i);
  }
  for (; i < n; ++i) f.template operator()<1>(i);
}

}  // namespace detail

/// Positions softmax_strided handles in one call: its max and sum live on the stack.
inline constexpr std::size_t kSoftmaxTile = 256;

/// Softmax of n contiguous values (src == dst allowed).
template <StorageElement T>  ///< storage type; arithmetic is f32
INFER_SOFTMAX_FLATTEN void softmax_contiguous(const T* src, T* dst, std::size_t n) {
  constexpr int kW = simd::max_width;
  float m = std::numeric_limits<float>::lowest();
  std::size_t i = 0;
  if constexpr (kW > 1) {
    if (n >= std::size_t(kW)) {
      auto vm = simd::broadcast<kW>(m);
      for (; i + kW <= n; i += kW) vm = xsimd::max(vm, simd::load<kW>(src + i));
      alignas(64) float lanes[kW];
      vm.store_aligned(lanes);
      for (float x : lanes) m = std::max(m, x);
    }
  }
  for (; i < n; ++i) m = std::max(m, to_f32(src[i]));

  float sum = 0.f;
  i = 0;
  if constexpr (kW > 1) {
    if (n >= std::size_t(kW)) {
      const auto vm = simd::broadcast<kW>(m);
      auto vs = simd::broadcast<kW>(0.f);
      for (; i + kW <= n; i += kW) vs += detail::vexp(simd::load<kW>(src + i) - vm);
      sum = xsimd::hadd(vs);
    }
  }
  for (; i < n; ++i) sum += std::exp(to_f32(src[i]) - m);

  // exp is recomputed rather than stored: a stored f16/bf16 exp would be rounded twice.
  detail::by_widths(n, [&]<int W>(std::size_t j) {
    using V = decltype(detail::load_w<W>(src));
    detail::store_w<W>(dst + j, detail::vexp(detail::load_w<W>(src + j) - V(m)) / V(sum));
  });
}

/// Softmax along an axis of `len` steps `step` values apart, for n <= kSoftmaxTile neighbouring
/// positions at once (src == dst allowed). When the axis is a packing axis, each run of `lanes`
/// positions holds lanes of one packed element: values of the same softmax, so they share one
/// max and one sum; with lanes = 1 every position is its own softmax.
template <StorageElement T>  ///< storage type; arithmetic is f32
INFER_SOFTMAX_FLATTEN void softmax_strided(const T* src, T* dst, std::size_t len, std::size_t step,
                                           std::size_t n, int lanes) {
  alignas(64) float mx[kSoftmaxTile];
  alignas(64) float sm[kSoftmaxTile];
  std::fill_n(mx, n, std::numeric_limits<float>::lowest());
  std::fill_n(sm, n, 0.f);
  auto combine_lanes = [&](float* v, auto op) {
    if (lanes == 1) return;
    for (std::size_t j = 0; j < n; j += std::size_t(lanes)) {
      float r = v[j];
      for (int l = 1; l < lanes; ++l) r = op(r, v[j + l]);
      std::fill_n(v + j, lanes, r);
    }
  };
  for (std::size_t a = 0; a < len; ++a) {
    const T* p = src + a * step;
    detail::by_widths(n, [&]<int W>(std::size_t j) {
      detail::store_w<W>(mx + j, detail::vmax(detail::load_w<W>(mx + j), detail::load_w<W>(p + j)));
    });
  }
  combine_lanes(mx, [](float x, float y) { return std::max(x, y); });
  for (std::size_t a = 0; a < len; ++a) {
    const T* p = src + a * step;
    detail::by_widths(n, [&]<int W>(std::size_t j) {
      detail::store_w<W>(sm + j,
                         detail::load_w<W>(sm + j) +
                             detail::vexp(detail::load_w<W>(p + j) - detail::load_w<W>(mx + j)));
    });
  }
  combine_lanes(sm, [](float x, float y) { return x + y; });
  for (std::size_t a = 0; a < len; ++a) {
    const T* p = src + a * step;
    T* q = dst + a * step;
    detail::by_widths(n, [&]<int W>(std::size_t j) {
      detail::store_w<W>(q + j, detail::vexp(detail::load_w<W>(p + j) - detail::load_w<W>(mx + j)) /
                                    detail::load_w<W>(sm + j));
    });
  }
}

}  // namespace infer::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#undef INFER_SOFTMAX_FLATTEN
