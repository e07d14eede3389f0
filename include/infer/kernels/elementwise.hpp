// Element-wise kernels: a functor applied to every value, and per-channel affine maps
// (x * a[c] + b[c]). Values are converted to f32 in registers and back on store, so one kernel
// serves every storage type; pack only matters where parameters vary by channel.
#pragma once

#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// dst[i] = op(src[i]) for n values (src == dst allowed).
template <StorageElement T,  ///< storage type; arithmetic is f32
          class Op>          ///< functor callable on float and on simd::fbatch<max_width>
void unary(const T* src, T* dst, std::size_t n, const Op& op) {
  std::size_t i = 0;
  if constexpr (simd::max_width > 1) {
    constexpr int W = simd::max_width;
    for (; i + W <= n; i += W) simd::store<W>(dst + i, op(simd::load<W>(src + i)));
  }
  for (; i < n; ++i) dst[i] = from_f32<T>(op(to_f32(src[i])));
}

/// dst = op(src * a + b) over `n` packed elements of one channel group whose Pack lanes take
/// their own a[lane], b[lane] (a or b may be nullptr: 1 and 0).
template <StorageElement T,  ///< storage type; arithmetic is f32
          int Pack,          ///< lanes per packed element
          class Op>          ///< functor applied after the affine map
void channel_affine(const T* src, T* dst, std::size_t n, const float* a, const float* b,
                    const Op& op) {
  if constexpr (Pack == 1) {
    const float av = a ? a[0] : 1.f, bv = b ? b[0] : 0.f;
    std::size_t i = 0;
    if constexpr (simd::max_width > 1) {
      constexpr int W = simd::max_width;
      const auto va = simd::broadcast<W>(av), vb = simd::broadcast<W>(bv);
      for (; i + W <= n; i += W)
        simd::store<W>(dst + i, op(xsimd::fma(simd::load<W>(src + i), va, vb)));
    }
    for (; i < n; ++i) dst[i] = from_f32<T>(op(to_f32(src[i]) * av + bv));
  } else {
    constexpr int W = Pack < simd::max_width ? Pack : simd::max_width;
    constexpr int kBlocks = Pack / W;
    if constexpr (W == 1) {
      for (std::size_t i = 0; i < n; ++i)
        for (int l = 0; l < Pack; ++l)
          dst[i * Pack + l] =
              from_f32<T>(op(to_f32(src[i * Pack + l]) * (a ? a[l] : 1.f) + (b ? b[l] : 0.f)));
    } else {
      simd::fbatch<W> va[kBlocks], vb[kBlocks];
      for (int k = 0; k < kBlocks; ++k) {
        va[k] = a ? simd::load<W>(a + k * W) : simd::broadcast<W>(1.f);
        vb[k] = b ? simd::load<W>(b + k * W) : simd::broadcast<W>(0.f);
      }
      for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < kBlocks; ++k) {
          const std::size_t o = i * Pack + k * W;
          simd::store<W>(dst + o, op(xsimd::fma(simd::load<W>(src + o), va[k], vb[k])));
        }
      }
    }
  }
}

}  // namespace infer::kernels
