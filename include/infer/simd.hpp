// Float batches of a fixed width and loads/stores that convert storage elements in registers, so a
// kernel is written once over (element type, width) and computes in float whatever is stored.
// Raw intrinsics appear only for the conversions xsimd lacks; each has a scalar fallback.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <infer/detail/xsimd.hpp>
#include <infer/element.hpp>

// GCC 12.2 (bug 105593) reports its own AVX-512 intrinsics (self-initialised
// _mm512_undefined_*) as uninitialised under -Wall in C++; the pragma must cover the inlined code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace infer::simd {

namespace detail {

/// The xsimd architecture whose float batch holds W lanes, as member `type`; absent where the
/// target has none, so fbatch<W> fails to form.
template <int W>
struct ArchFor {};

#if XSIMD_WITH_SSE2
template <>
struct ArchFor<4> {
#if XSIMD_WITH_FMA3_SSE
  using type = xsimd::fma3<xsimd::sse4_2>;
#elif XSIMD_WITH_SSE4_2
  using type = xsimd::sse4_2;
#elif XSIMD_WITH_SSE4_1
  using type = xsimd::sse4_1;
#elif XSIMD_WITH_SSSE3
  using type = xsimd::ssse3;
#elif XSIMD_WITH_SSE3
  using type = xsimd::sse3;
#else
  using type = xsimd::sse2;
#endif
};
#endif

#if XSIMD_WITH_AVX
template <>
struct ArchFor<8> {
#if XSIMD_WITH_FMA3_AVX2
  using type = xsimd::fma3<xsimd::avx2>;
#elif XSIMD_WITH_AVX2
  using type = xsimd::avx2;
#elif XSIMD_WITH_FMA3_AVX
  using type = xsimd::fma3<xsimd::avx>;
#else
  using type = xsimd::avx;
#endif
};
#endif

#if XSIMD_WITH_AVX512F
template <>
struct ArchFor<16> {
#if XSIMD_WITH_AVX512BW
  using type = xsimd::avx512bw;
#else
  using type = xsimd::avx512f;
#endif
};
#endif

}  // namespace detail

/// Whether the target has a native float batch of W lanes; W = 1 (plain scalar code) always does.
/// @tparam W lanes: 1, 4, 8 or 16.
template <int W>
inline constexpr bool has_width = W == 1 || requires {
  typename detail::ArchFor<W>::type;
};

/// Lanes of the widest native float batch: 16 with AVX-512F, 8 with AVX, 4 with SSE2, else 1.
inline constexpr int max_width = has_width<16> ? 16 : has_width<8> ? 8 : has_width<4> ? 4 : 1;

/// Vector registers the kernels' tiles may plan for: 32 with AVX-512, 16 below (AVX2, SSE2).
inline constexpr int vector_registers = max_width >= 16 ? 32 : 16;

/// A batch of W floats on the best architecture of that register width.
/// @tparam W lanes, 4, 8 or 16, where has_width<W>; W = 1 is plain float rather than a batch.
template <int W>
using fbatch = xsimd::batch<float, typename detail::ArchFor<W>::type>;

/// W lanes of float broadcast from v.
/// @tparam W lanes, as for fbatch.
template <int W>
fbatch<W> broadcast(float v) {
  return fbatch<W>(v);
}

namespace detail {

template <int W>
using ibatch = xsimd::batch<std::int32_t, typename ArchFor<W>::type>;

/// Selects an overload by width without a template argument, so the instruction-specific overloads
/// below can be plain functions that overload resolution prefers to the scalar templates.
template <int W>
struct Width {};

// Scalar fallbacks, correct on any target; used wherever no conversion instruction is compiled in.
template <int W, StorageElement T>
fbatch<W> load_impl(const T* p, Width<W>) {
  alignas(64) float tmp[W];
  for (int i = 0; i < W; ++i) tmp[i] = to_f32(p[i]);
  return fbatch<W>::load_aligned(tmp);
}

template <int W, StorageElement T>
void store_impl(T* p, fbatch<W> v, Width<W>) {
  alignas(64) float tmp[W];
  v.store_aligned(tmp);
  for (int i = 0; i < W; ++i) p[i] = from_f32<T>(tmp[i]);
}

/// Returns v pinned to one register. Without it GCC folds the load that produced v into each of
/// its several uses, and those repeated loads of a streaming source halve the memory bandwidth.
template <class A>
xsimd::batch<float, A> in_register(xsimd::batch<float, A> v) {
#if defined(__GNUC__)
  auto r = static_cast<typename xsimd::batch<float, A>::register_type>(v);
  __asm__("" : "+v"(r));
  return r;
#else
  return v;
#endif
}

/// f32_to_bf16 on a batch, leaving the 16 result bits sign-extended in each 32-bit lane so that a
/// saturating pack keeps them. AVX512-BF16's vcvtneps2bf16 is not used: it flushes subnormal
/// inputs and outputs to zero, which would break the bit-exactness with the scalar conversion.
template <class A>
xsimd::batch<std::int32_t, A> bf16_bits(xsimd::batch<float, A> v) {
  using I = xsimd::batch<std::int32_t, A>;
  const I u = xsimd::bitwise_cast<I>(in_register(v));
  const I rounded = u + I(0x7FFF) + ((u >> 16) & I(1));
  const I quiet_nan = u | I(0x00400000);
  // Selected as floats: xsimd 8.1's integer select on AVX-512BW does not compile at -O0.
  using F = xsimd::batch<float, A>;
  const F picked = xsimd::select(xsimd::isnan(v), xsimd::bitwise_cast<F>(quiet_nan),
                                 xsimd::bitwise_cast<F>(rounded));
  return xsimd::bitwise_cast<I>(picked) >> 16;
}

/// float2int8 on a batch, as int32 lanes in [-127, 127].
template <class A>
xsimd::batch<std::int32_t, A> int8_values(xsimd::batch<float, A> v) {
  using F = xsimd::batch<float, A>;
  v = in_register(v);
  const F c = xsimd::min(xsimd::max(v, F(-127.0f)), F(127.0f));
  // Adding just under a half and truncating rounds half away from zero for |c| < 2^23: a tie
  // m + 0.5 sums to m + 1 - 2^-25, which rounds up to m + 1; no value below a tie gets there.
  // (Adding exactly 0.5 would take 0.5 - 2^-25 to 1.)
  const F r = c + xsimd::copysign(F(0.5f - 0x1p-25f), c);
  return xsimd::to_int(xsimd::select(xsimd::isnan(v), F(0.0f), r));
}

#if XSIMD_WITH_SSE2 && defined(__SSE2__)
inline fbatch<4> load_impl(const bf16* p, Width<4>) {
  const __m128i h = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h));
}

inline fbatch<4> load_impl(const i8* p, Width<4>) {
  std::int32_t word;
  std::memcpy(&word, p, sizeof(word));
  __m128i b = _mm_cvtsi32_si128(word);
  b = _mm_unpacklo_epi8(b, b);
  b = _mm_unpacklo_epi16(b, b);
  return xsimd::to_float(ibatch<4>(_mm_srai_epi32(b, 24)));
}

inline void store_impl(bf16* p, fbatch<4> v, Width<4>) {
  const __m128i r = bf16_bits(v);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi32(r, r));
}

inline void store_impl(i8* p, fbatch<4> v, Width<4>) {
  const __m128i q = int8_values(v);
  const __m128i w = _mm_packs_epi32(q, q);
  const std::int32_t word = _mm_cvtsi128_si32(_mm_packs_epi16(w, w));
  std::memcpy(p, &word, sizeof(word));
}
#endif

#if XSIMD_WITH_SSE2 && defined(__F16C__)
inline fbatch<4> load_impl(const f16* p, Width<4>) {
  return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

inline void store_impl(f16* p, fbatch<4> v, Width<4>) {
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#endif

#if XSIMD_WITH_AVX && defined(__AVX__)
inline fbatch<8> load_impl(const bf16* p, Width<8>) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
#if defined(__AVX2__)
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
#else
  const __m128i lo = _mm_unpacklo_epi16(_mm_setzero_si128(), h);
  const __m128i hi = _mm_unpackhi_epi16(_mm_setzero_si128(), h);
  return _mm256_castsi256_ps(_mm256_set_m128i(hi, lo));
#endif
}

inline fbatch<8> load_impl(const i8* p, Width<8>) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
#if defined(__AVX2__)
  return xsimd::to_float(ibatch<8>(_mm256_cvtepi8_epi32(b)));
#else
  const __m128i lo = _mm_cvtepi8_epi32(b);
  const __m128i hi = _mm_cvtepi8_epi32(_mm_srli_si128(b, 4));
  return xsimd::to_float(ibatch<8>(_mm256_set_m128i(hi, lo)));
#endif
}

inline void store_impl(bf16* p, fbatch<8> v, Width<8>) {
  const __m256i r = bf16_bits(v);
  const __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extractf128_si256(r, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
}

inline void store_impl(i8* p, fbatch<8> v, Width<8>) {
  const __m256i q = int8_values(v);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extractf128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(w, w));
}
#endif

#if XSIMD_WITH_AVX && defined(__AVX__) && defined(__F16C__)
inline fbatch<8> load_impl(const f16* p, Width<8>) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline void store_impl(f16* p, fbatch<8> v, Width<8>) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#endif

#if XSIMD_WITH_AVX512F && defined(__AVX512F__)
inline fbatch<16> load_impl(const f16* p, Width<16>) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

inline fbatch<16> load_impl(const bf16* p, Width<16>) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

inline fbatch<16> load_impl(const i8* p, Width<16>) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return xsimd::to_float(ibatch<16>(_mm512_cvtepi8_epi32(b)));
}

inline void store_impl(f16* p, fbatch<16> v, Width<16>) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

inline void store_impl(bf16* p, fbatch<16> v, Width<16>) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(bf16_bits(v)));
}

inline void store_impl(i8* p, fbatch<16> v, Width<16>) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(int8_values(v)));
}
#endif

}  // namespace detail

/// Loads W consecutive elements from p (no alignment needed) and widens them to float exactly as
/// to_f32 does.
/// @tparam W lanes, as for fbatch.
/// @tparam T the storage type.
template <int W, StorageElement T>
fbatch<W> load(const T* p) {
  if constexpr (std::same_as<T, f32>) {
    return fbatch<W>::load_unaligned(p);
  } else {
    return detail::load_impl(p, detail::Width<W>{});
  }
}

/// Narrows v and stores it to W consecutive elements at p (no alignment needed), bit-identical to
/// from_f32 on each lane.
/// @tparam W lanes, as for fbatch.
/// @tparam T the storage type.
template <int W, StorageElement T>
void store(T* p, fbatch<W> v) {
  if constexpr (std::same_as<T, f32>) {
    v.store_unaligned(p);
  } else {
    detail::store_impl(p, v, detail::Width<W>{});
  }
}

/// Stores the first n (0 < n <= W) lanes of v to p[0, n), narrowed as store() does; the lanes past
/// n leave memory untouched (a masked store where the target has one).
/// @tparam W lanes, as for fbatch.
/// @tparam T the storage type.
template <int W, StorageElement T>
void store_first(T* p, fbatch<W> v, int n) {
#if XSIMD_WITH_AVX512F
  if constexpr (W == 16 && std::same_as<T, f32>) {
    _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1u), v);
    return;
  }
#endif
  alignas(64) float tmp[W];
  v.store_aligned(tmp);
  for (int i = 0; i < n; ++i) p[i] = from_f32<T>(tmp[i]);
}

/// The even and the odd lanes of the 2W floats of `lo` then `hi`: even = {lo0, lo2, ..., hi0,
/// hi2, ...}, odd = {lo1, lo3, ..., hi1, hi3, ...} (a stride-2 read, as stride-2 kernels need).
/// @tparam W lanes, as for fbatch.
template <int W>
void deinterleave(fbatch<W> lo, fbatch<W> hi, fbatch<W>& even, fbatch<W>& odd) {
#if XSIMD_WITH_AVX512F
  if constexpr (W == 16) {
    const __m512i e = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i o = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    even = _mm512_permutex2var_ps(lo, e, hi);
    odd = _mm512_permutex2var_ps(lo, o, hi);
    return;
  }
#endif
#if XSIMD_WITH_AVX2
  if constexpr (W == 8) {
    // Within each 128-bit half: lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6; then the 64-bit pairs reordered.
    const __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
    return;
  }
#endif
  alignas(64) float in[2 * W], e[W], o[W];
  lo.store_aligned(in);
  hi.store_aligned(in + W);
  for (int i = 0; i < W; ++i) {
    e[i] = in[2 * i];
    o[i] = in[2 * i + 1];
  }
  even = fbatch<W>::load_aligned(e);
  odd = fbatch<W>::load_aligned(o);
}

}  // namespace infer::simd

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
