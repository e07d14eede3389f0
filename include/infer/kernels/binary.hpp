// Two-operand element-wise kernels: a binary functor over two runs of values, either of which may
// be broadcast (one packed element repeated, or one value for every lane), and the N-input
// reduction Eltwise needs. Values are converted to f32 in registers and back on store.
#pragma once

#include <cmath>
#include <cstddef>
#include <infer/detail/xsimd.hpp>
#include <infer/element.hpp>
#include <infer/simd.hpp>
#include <type_traits>

namespace infer::binop {

// Binary functors, each usable on two floats and on two xsimd float batches (ncnn's BinaryOp and
// Eltwise operations). The operand order is ncnn's: op(a, b) with a the first input.

/// a + b
struct Add {
  template <class V>
  V operator()(V a, V b) const {
    return a + b;
  }
};

/// a - b
struct Sub {
  template <class V>
  V operator()(V a, V b) const {
    return a - b;
  }
};

/// a * b
struct Mul {
  template <class V>
  V operator()(V a, V b) const {
    return a * b;
  }
};

/// a / b
struct Div {
  template <class V>
  V operator()(V a, V b) const {
    return a / b;
  }
};

/// max(a, b), std::max's choice of a when neither is greater.
struct Max {
  template <class V>
  V operator()(V a, V b) const {
    if constexpr (std::is_same_v<V, float>) {
      return a < b ? b : a;
    } else {
      return xsimd::max(a, b);
    }
  }
};

/// min(a, b), std::min's choice of a when neither is smaller.
struct Min {
  template <class V>
  V operator()(V a, V b) const {
    if constexpr (std::is_same_v<V, float>) {
      return b < a ? b : a;
    } else {
      return xsimd::min(a, b);
    }
  }
};

/// a ^ b; NaN for a negative base and a non-integer exponent, as powf.
struct Pow {
  template <class V>
  V operator()(V a, V b) const {
    if constexpr (std::is_same_v<V, float>) {
      return std::pow(a, b);
    } else {
      return xsimd::pow(a, b);
    }
  }
};

/// atan2(a, b): the angle of the point (b, a).
struct Atan2 {
  template <class V>
  V operator()(V a, V b) const {
    if constexpr (std::is_same_v<V, float>) {
      return std::atan2(a, b);
    } else {
      return xsimd::atan2(a, b);
    }
  }
};

/// op(b, a): ncnn's reversed operations (RSUB, RDIV, RPOW, RATAN2).
template <class Op>  ///< the functor whose operands are swapped
struct Flip {
  Op op;
  template <class V>
  V operator()(V a, V b) const {
    return op(b, a);
  }
};

}  // namespace infer::binop

namespace infer::kernels {

/// Where one operand of binary() keeps its values for a run of packed elements.
template <StorageElement T>  ///< storage type
struct BinaryOperand {
  const T* data;        ///< the operand's values for the run's first packed element
  std::ptrdiff_t step;  ///< elements from one packed element to the next; 0 repeats the first
  bool lanes;           ///< Pack values per packed element (false: one value serves every lane)
};

namespace detail {

/// dst[i] = op(a[i], b[i]) over n values, where an operand that is not Vec repeats a[0].
template <bool AVec, bool BVec, StorageElement T, class Op>
void binary_flat(const T* a, const T* b, T* dst, std::size_t n, const Op& op) {
  std::size_t i = 0;
  const float a0 = to_f32(a[0]), b0 = to_f32(b[0]);
  if constexpr (simd::max_width > 1) {
    constexpr int W = simd::max_width;
    const simd::fbatch<W> sa = simd::broadcast<W>(a0), sb = simd::broadcast<W>(b0);
    for (; i + W <= n; i += W) {
      simd::fbatch<W> va = sa, vb = sb;
      if constexpr (AVec) va = simd::load<W>(a + i);
      if constexpr (BVec) vb = simd::load<W>(b + i);
      simd::store<W>(dst + i, op(va, vb));
    }
  }
  for (; i < n; ++i) dst[i] = from_f32<T>(op(AVec ? to_f32(a[i]) : a0, BVec ? to_f32(b[i]) : b0));
}

template <int W, int Pack, StorageElement T>
auto lane_block(const T* p, bool lanes, int k) {
  if constexpr (W == 1) {
    return to_f32(p[lanes ? k : 0]);
  } else {
    return lanes ? simd::load<W>(p + k * W) : simd::broadcast<W>(to_f32(p[0]));
  }
}

}  // namespace detail

/// dst = op(a, b) over a run of n packed elements of Pack lanes each, written contiguously. Each
/// operand advances by its own step and either has its own value per lane or one for all lanes,
/// which covers every broadcast of ncnn's BinaryOp. A run where both operands are contiguous or
/// repeat a single value is processed as one flat array at the widest SIMD width.
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element
          class Op>          ///< binary functor callable on floats and on simd::fbatch
void binary(BinaryOperand<T> a, BinaryOperand<T> b, T* dst, std::size_t n, const Op& op) {
  const auto contiguous = [](const BinaryOperand<T>& o) {
    return (o.lanes || Pack == 1) && o.step == Pack;
  };
  const auto single = [](const BinaryOperand<T>& o) {
    return (!o.lanes || Pack == 1) && o.step == 0;
  };
  if (n == 0) return;
  const std::size_t values = n * Pack;
  if (contiguous(a) && contiguous(b))
    return detail::binary_flat<true, true>(a.data, b.data, dst, values, op);
  if (contiguous(a) && single(b))
    return detail::binary_flat<true, false>(a.data, b.data, dst, values, op);
  if (single(a) && contiguous(b))
    return detail::binary_flat<false, true>(a.data, b.data, dst, values, op);
  if (single(a) && single(b))
    return detail::binary_flat<false, false>(a.data, b.data, dst, values, op);

  // Lanes and steps differ between the operands: one packed element at a time, in blocks of W
  // lanes. An operand that does not advance is loaded once.
  constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
  constexpr int kBlocks = Pack / W;
  using V = decltype(detail::lane_block<W, Pack>(a.data, true, 0));
  V fa[kBlocks], fb[kBlocks];
  for (int k = 0; k < kBlocks; ++k) {
    fa[k] = detail::lane_block<W, Pack>(a.data, a.lanes, k);
    fb[k] = detail::lane_block<W, Pack>(b.data, b.lanes, k);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const T* pa = a.data + std::ptrdiff_t(i) * a.step;
    const T* pb = b.data + std::ptrdiff_t(i) * b.step;
    T* pd = dst + i * Pack;
    for (int k = 0; k < kBlocks; ++k) {
      const V va = a.step == 0 ? fa[k] : detail::lane_block<W, Pack>(pa, a.lanes, k);
      const V vb = b.step == 0 ? fb[k] : detail::lane_block<W, Pack>(pb, b.lanes, k);
      if constexpr (W == 1) {
        pd[k] = from_f32<T>(op(va, vb));
      } else {
        simd::store<W>(pd + k * W, op(va, vb));
      }
    }
  }
}

namespace detail {

template <bool Scaled, StorageElement T, class Op>
void reduce_inputs_impl(const T* const* src, std::size_t count, const float* coeffs, T* dst,
                        std::size_t n, const Op& op) {
  const auto scale = [&](auto v, std::size_t k) {
    if constexpr (Scaled) {
      return v * decltype(v)(coeffs[k]);
    } else {
      (void)k;
      return v;
    }
  };
  std::size_t i = 0;
  if constexpr (simd::max_width > 1) {
    constexpr int W = simd::max_width;
    for (; i + W <= n; i += W) {
      simd::fbatch<W> acc = scale(simd::load<W>(src[0] + i), 0);
      for (std::size_t k = 1; k < count; ++k) acc = op(acc, scale(simd::load<W>(src[k] + i), k));
      simd::store<W>(dst + i, acc);
    }
  }
  for (; i < n; ++i) {
    float acc = scale(to_f32(src[0][i]), 0);
    for (std::size_t k = 1; k < count; ++k) acc = op(acc, scale(to_f32(src[k][i]), k));
    dst[i] = from_f32<T>(acc);
  }
}

}  // namespace detail

/// dst = op(...op(op(s0 * c0, s1 * c1), s2 * c2)..., s[count-1] * c[count-1]) over n values of
/// `count` inputs, accumulated in f32 and rounded once; coeffs == nullptr means every c is 1.
template <StorageElement T,  ///< storage type; arithmetic is f32
          class Op>          ///< binary functor callable on floats and on simd::fbatch
void reduce_inputs(const T* const* src, std::size_t count, const float* coeffs, T* dst,
                   std::size_t n, const Op& op) {
  if (coeffs)
    detail::reduce_inputs_impl<true>(src, count, coeffs, dst, n, op);
  else
    detail::reduce_inputs_impl<false>(src, count, coeffs, dst, n, op);
}

}  // namespace infer::kernels
