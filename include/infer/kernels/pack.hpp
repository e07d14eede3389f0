// Repacking kernel: moves values between layouts of different elempack along the packing axis.
// Knows nothing of Mat: it sees rows ("channels") of packed elements and a stride between them.
//
// Three shapes of work: pack 1 <-> P is a P x P transpose of tiles (in registers on x86 for 4-byte
// values, and for 2-byte ones at P = 8 and 16: SSE, AVX and AVX-512 transposes, which xsimd 8.1
// does not provide); pack P <-> Q
// with both above 1 moves contiguous runs of min(P, Q) values; equal packs are one copy per group.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <infer/detail/xsimd.hpp>

namespace infer::kernels {

namespace detail {

/// Whether a P x P tile of `Bytes`-byte values transposes in registers on this target (2-byte
/// values are widened to 32 bits in registers and narrowed again on the store).
template <int P, std::size_t Bytes>
constexpr bool kTileTranspose = (Bytes == 4 &&
                                 ((P == 4 && XSIMD_WITH_SSE2) || (P == 8 && XSIMD_WITH_AVX) ||
                                  (P == 16 && XSIMD_WITH_AVX512F))) ||
                                (Bytes == 2 &&
                                 ((P == 8 && XSIMD_WITH_AVX2) || (P == 16 && XSIMD_WITH_AVX512F)));

/// Loads row r (P values of `Bytes` bytes) from rows[r] + offset (in values), transposes the
/// tile, and stores column c (P values) to cols[c] + offset. Rows and columns may be strided apart
/// arbitrarily.
template <int P, std::size_t Bytes>
inline void transpose_tile(const void* const* rows, std::size_t row_offset, void* const* cols,
                           std::size_t col_offset) {
  auto in = [&](int r) { return static_cast<const char*>(rows[r]) + row_offset * Bytes; };
  auto out = [&](int c) { return static_cast<char*>(cols[c]) + col_offset * Bytes; };
#if XSIMD_WITH_AVX512F
  if constexpr (P == 16) {
    auto load = [&](int i) {
      if constexpr (Bytes == 4) return _mm512_loadu_ps(in(i));
      return _mm512_castsi512_ps(
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in(i)))));
    };
    auto store = [&](int c, __m512 v) {
      if constexpr (Bytes == 4) {
        _mm512_storeu_ps(out(c), v);
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out(c)),
                            _mm512_cvtepi32_epi16(_mm512_castps_si512(v)));
      }
    };
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = load(i);
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // Within each 128-bit lane, rows 4q..4q+3 are now a transposed 4 x 4 block.
    for (int q = 0; q < 4; ++q) {
      const __m512d a = _mm512_castps_pd(t[4 * q]), b = _mm512_castps_pd(t[4 * q + 1]);
      const __m512d c = _mm512_castps_pd(t[4 * q + 2]), d = _mm512_castps_pd(t[4 * q + 3]);
      r[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
      r[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
      r[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
      r[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    // Move the 128-bit blocks: block (row group q, lane j) goes to (row group j, lane q).
    for (int k = 0; k < 4; ++k) {
      t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
      t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xdd);
      t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
      t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xdd);
    }
    for (int k = 0; k < 8; ++k) {
      store(k, _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88));
      store(8 + k, _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd));
    }
    return;
  }
#endif
#if XSIMD_WITH_AVX
  if constexpr (P == 8) {
    auto load = [&](int i) {
      if constexpr (Bytes == 4) {
        return _mm256_loadu_ps(reinterpret_cast<const float*>(in(i)));
      } else {
#if XSIMD_WITH_AVX2
        return _mm256_castsi256_ps(
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in(i)))));
#endif
      }
    };
    auto store = [&](int c, __m256 v) {
      if constexpr (Bytes == 4) {
        _mm256_storeu_ps(reinterpret_cast<float*>(out(c)), v);
      } else {
#if XSIMD_WITH_AVX2
        // Values fit in 16 bits, so the unsigned saturating pack is exact; it packs per 128-bit
        // lane, and the permute brings the two halves together.
        const __m256i x = _mm256_castps_si256(v);
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(x, x), 0xD8);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out(c)), _mm256_castsi256_si128(packed));
#endif
      }
    };
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = load(i);
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int q = 0; q < 2; ++q) {
      r[4 * q] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
      r[4 * q + 1] = _mm256_shuffle_ps(t[4 * q], t[4 * q + 2], 0xee);
      r[4 * q + 2] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
      r[4 * q + 3] = _mm256_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xee);
    }
    for (int k = 0; k < 4; ++k) {
      store(k, _mm256_permute2f128_ps(r[k], r[4 + k], 0x20));
      store(4 + k, _mm256_permute2f128_ps(r[k], r[4 + k], 0x31));
    }
    return;
  }
#endif
#if XSIMD_WITH_SSE2
  if constexpr (P == 4 && Bytes == 4) {
    auto in_f = [&](int r) { return reinterpret_cast<const float*>(in(r)); };
    auto out_f = [&](int c) { return reinterpret_cast<float*>(out(c)); };
    __m128 a = _mm_loadu_ps(in_f(0)), b = _mm_loadu_ps(in_f(1));
    __m128 c = _mm_loadu_ps(in_f(2)), d = _mm_loadu_ps(in_f(3));
    _MM_TRANSPOSE4_PS(a, b, c, d);
    _mm_storeu_ps(out_f(0), a);
    _mm_storeu_ps(out_f(1), b);
    _mm_storeu_ps(out_f(2), c);
    _mm_storeu_ps(out_f(3), d);
    return;
  }
#endif
  static_assert(kTileTranspose<P, Bytes>, "transpose_tile: no register transpose for this width");
}

}  // namespace detail

/// Unpacks one channel group of `n` elements of P lanes (`group`, P values an element) into the
/// pack-1 planes `planes[l]` of its lanes, by P x P register transposes where kTileTranspose
/// holds (else value by value); a null plane's lane is not stored. What a Crop of channels that
/// start inside a group and a ShuffleChannel's permutation of lanes share with repack.
template <int P, class V>
void unpack_group(const V* group, std::size_t n, V* const* planes_in) {
  // A local copy: the transposes store through char pointers, which could alias the caller's
  // array, so reading it would reload every pointer per tile.
  V* planes[P];
  for (int l = 0; l < P; ++l) planes[l] = planes_in[l];
  std::size_t i = 0;
  if constexpr (detail::kTileTranspose<P, sizeof(V)>) {
    const void* rows[P];
    for (int k = 0; k < P; ++k) rows[k] = group + std::size_t(k) * P;
    alignas(64) V scratch[P];
    for (; i + P <= n; i += P) {
      void* cols[P];
      for (int l = 0; l < P; ++l) cols[l] = planes[l] ? static_cast<void*>(planes[l] + i) : scratch;
      detail::transpose_tile<P, sizeof(V)>(rows, i * P, cols, 0);
    }
  }
  for (; i < n; ++i)
    for (int l = 0; l < P; ++l)
      if (planes[l]) planes[l][i] = group[i * P + std::size_t(l)];
}

/// Copies `channels` logical channels of `n` values each from a layout packed by InPack into one
/// packed by OutPack. Channel ch lives in group ch / Pack, lane ch % Pack; `*_gstep` is the
/// distance between group starts in packed elements (cstep for 3-D, w for 2-D). Both packs must
/// divide `channels`. Threads split the groups of the wider pack.
template <class V,      ///< value type (only its size matters: 1, 2 or 4 bytes)
          int InPack,   ///< source elempack
          int OutPack>  ///< destination elempack
void repack(const V* src, std::size_t src_gstep, V* dst, std::size_t dst_gstep, int channels,
            std::size_t n, int num_threads) {
  constexpr int kWide = std::max(InPack, OutPack);
  constexpr int kRun = std::min(InPack, OutPack);  // contiguous values per lane move
  const int groups = channels / kWide;
  // Below this many values per thread the team costs more than the copy.
  const bool parallel = num_threads > 1 && std::size_t(channels) * n >= (std::size_t{1} << 15);
#pragma omp parallel for num_threads(num_threads) if (parallel)
  for (int g = 0; g < groups; ++g) {
    if constexpr (InPack == OutPack) {
      std::memcpy(dst + std::size_t(g) * dst_gstep * OutPack,
                  src + std::size_t(g) * src_gstep * InPack, n * OutPack * sizeof(V));
    } else {
      // The wide group g spans kWide / kRun narrow groups ("parts"); part p holds lanes
      // [p * kRun, (p + 1) * kRun) of the wide group, kRun values per element.
      constexpr int kParts = kWide / kRun;
      V* narrow[kParts];
      V* wide;
      if constexpr (InPack > OutPack) {
        wide = const_cast<V*>(src) + std::size_t(g) * src_gstep * InPack;
        for (int p = 0; p < kParts; ++p) {
          narrow[p] = dst + std::size_t(g * kParts + p) * dst_gstep * OutPack;
        }
      } else {
        wide = dst + std::size_t(g) * dst_gstep * OutPack;
        for (int p = 0; p < kParts; ++p) {
          narrow[p] = const_cast<V*>(src) + std::size_t(g * kParts + p) * src_gstep * InPack;
        }
      }
      std::size_t i = 0;
      if constexpr (kRun == 1 && detail::kTileTranspose<kWide, sizeof(V)>) {
        // Pack 1 <-> kWide: kWide x kWide tiles. To pack, rows are channels and columns the
        // elements of the wide group; to unpack, the other way round.
        void* element_rows[kWide];
        for (int k = 0; k < kWide; ++k) element_rows[k] = wide + std::size_t(k) * kWide;
        for (; i + kWide <= n; i += kWide) {
          if constexpr (InPack > OutPack) {
            detail::transpose_tile<kWide, sizeof(V)>(element_rows, i * kWide,
                                                     reinterpret_cast<void**>(narrow), i);
          } else {
            detail::transpose_tile<kWide, sizeof(V)>(reinterpret_cast<void**>(narrow), i,
                                                     element_rows, i * kWide);
          }
        }
      }
      for (; i < n; ++i) {
        for (int p = 0; p < kParts; ++p) {
          V* w = wide + i * kWide + p * kRun;
          V* s = narrow[p] + i * kRun;
          if constexpr (InPack > OutPack) {
            std::memcpy(s, w, kRun * sizeof(V));
          } else {
            std::memcpy(w, s, kRun * sizeof(V));
          }
        }
      }
    }
  }
}

}  // namespace infer::kernels
