// bf16 arithmetic on AVX512_BF16: vdpbf16ps multiplies 16 pairs of bf16 values by 16 pairs and
// adds both products of each pair to an f32 accumulator, twice the multiplications of an f32 FMA
// per instruction. The convolution GEMM (gemm.hpp's register tile and chunking), Winograd's
// per-position GEMMs and InnerProduct's one-sample product run on it: weights are rounded to bf16
// once, at prepare, and laid out in pairs of consecutive k; inputs are rounded to bf16 as they are
// gathered (a bf16 input is copied as it is); sums, bias, activation and the output stay f32 until
// the store. The instruction treats subnormal bf16 inputs as zero.
//
// Pair layout: where gemm.hpp keeps a block of kBlockM output channels as [k][kBlockM] floats,
// bf16 keeps [k / 2][kBlockM][2] (k padded to even with zeros), so one 64-byte load holds 16
// channels' weights for two k, and one broadcast 32-bit pair of inputs meets them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/element.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels::bf16dot {

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && XSIMD_WITH_AVX512F
/// Whether this build multiplies in bf16 (else layers keep f32 arithmetic on every storage type).
inline constexpr bool kAvailable = gemm::kWidth == 16;
#else
inline constexpr bool kAvailable = false;
#endif

/// Elements of `blocks` gemm weight blocks of k values each, in pairs.
inline std::size_t pairs_size(std::size_t blocks, std::size_t k) {
  return blocks * ((k + 1) / 2) * 2 * std::size_t(gemm::kBlockM);
}

/// Rounds gemm-layout weights ([blocks][k][kBlockM] floats, as gemm::pack_weights or
/// winograd::transform_weights write them) to bf16 pairs [blocks][k_pad / 2][kBlockM][2], zeros
/// from k to k_pad (at least k rounded up to even; the AMX tiles pad to whole tile rows).
inline void to_pairs(const float* src, std::size_t blocks, std::size_t k, bf16* dst,
                     std::size_t k_pad = 0) {
  constexpr std::size_t M = gemm::kBlockM;
  const std::size_t k2 = (std::max(k_pad, k) + 1) / 2;
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t kp = 0; kp < k2; ++kp)
      for (std::size_t r = 0; r < M; ++r)
        for (std::size_t h = 0; h < 2; ++h) {
          const std::size_t kk = 2 * kp + h;
          dst[((b * k2 + kp) * M + r) * 2 + h] =
              f32_to_bf16(kk < k ? src[(b * k + kk) * M + r] : 0.f);
        }
}

/// Elements of InnerProduct's pair weights for num_input x num_output.
inline std::size_t gemv_size(int num_input, int num_output) {
  return std::size_t((num_output + 15) / 16) * 16 * std::size_t((num_input + 1) / 2) * 2;
}

/// ncnn's [o][k] InnerProduct weights as [o / 16][k / 2][16][2] bf16 (zeros past either end).
inline void gemv_pack(const float* w, int num_input, int num_output, bf16* dst) {
  const std::size_t n = std::size_t(num_input), m = std::size_t(num_output);
  const std::size_t k2 = (n + 1) / 2, blocks = (m + 15) / 16;
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t kp = 0; kp < k2; ++kp)
      for (std::size_t l = 0; l < 16; ++l)
        for (std::size_t h = 0; h < 2; ++h) {
          const std::size_t o = b * 16 + l, k = 2 * kp + h;
          dst[((b * k2 + kp) * 16 + l) * 2 + h] = f32_to_bf16(o < m && k < n ? w[o * n + k] : 0.f);
        }
}

/// Stores the W lanes of v rounded to bf16 (to nearest even) as the products take them: with
/// AVX512_BF16's vcvtneps2bf16 where the build has it (one instruction; it flushes subnormals to
/// zero, which vdpbf16ps does with its inputs anyway), else as f32_to_bf16 rounds.
template <int W>
inline void store_rounded(bf16* q, simd::fbatch<W> v) {
#if defined(__AVX512BF16__) && defined(__AVX512VL__) && XSIMD_WITH_AVX512F
  if constexpr (W == 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), (__m256i)_mm512_cvtneps_pbh(v));
    return;
  } else if constexpr (W == 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), (__m128i)_mm256_cvtneps_pbh(v));
    return;
  } else if constexpr (W == 4) {
    const __m128i h = (__m128i)_mm_cvtneps_pbh(v);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q), h);
    return;
  }
#endif
  simd::store<W>(q, v);
}

namespace detail {

/// W consecutive values of p rounded to bf16 at q (a bf16 source is copied).
template <int W, StorageElement T>
inline void to_bf16(const T* p, bf16* q) {
  if constexpr (std::same_as<T, bf16>) {
    std::memcpy(q, p, sizeof(bf16) * W);
  } else if constexpr (W == 1) {
    q[0] = f32_to_bf16(to_f32(p[0]));
  } else {
    store_rounded<W>(q, simd::load<W>(p));
  }
}

#if defined(__AVX512BF16__) && defined(__AVX512BW__) && XSIMD_WITH_AVX512F
using V = simd::fbatch<16>;

/// Sums of one register tile: acc[r][j] = the 16 channels r * 16.. of the block `a` (pairs, 2 x
/// kBlockM per k pair) against pixel column j, NT columns. B value (k, j), k = kg * L + i, is
/// b[kg * gstride + j * L + i]; L (the input pack) is even.
template <int NT, int L>
inline void tile_sums(const bf16* b, std::size_t gstride, int kgroups, const bf16* a,
                      __m512 (&acc)[gemm::kRows][NT]) {
  static_assert(L % 2 == 0 && gemm::kBlockM == 32);
#pragma GCC unroll 32
  for (int r = 0; r < gemm::kRows; ++r)
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int kg = 0; kg < kgroups; ++kg) {
    const bf16* bg = b + std::size_t(kg) * gstride;
#pragma GCC unroll 2
    for (int i = 0; i < L; i += 2, a += 2 * gemm::kBlockM) {
      const __m512bh w0 = (__m512bh)_mm512_loadu_si512(a);
      const __m512bh w1 = (__m512bh)_mm512_loadu_si512(a + 32);
#pragma GCC unroll 32
      for (int j = 0; j < NT; ++j) {
        std::int32_t pair;
        std::memcpy(&pair, bg + j * L + i, sizeof(pair));
        const __m512bh x = (__m512bh)_mm512_set1_epi32(pair);
        acc[0][j] = _mm512_dpbf16_ps(acc[0][j], w0, x);
        acc[1][j] = _mm512_dpbf16_ps(acc[1][j], w1, x);
      }
    }
  }
}

/// tile_sums, then bias, activation and the store of output channels m0.. (< m), pixels n0..
/// n0 + nvalid.
template <int NT, StorageElement T, int OutPack, int L, class Act>
inline void tile(const bf16* b, std::size_t gstride, int kgroups, const bf16* a, const float* bias,
                 const MatView<T, OutPack>& out, const MatView<T, OutPack>& res, int m0, int m,
                 std::size_t n0, int nvalid, const Act& act) {
  __m512 acc[gemm::kRows][NT];
  tile_sums<NT, L>(b, gstride, kgroups, a, acc);
#pragma GCC unroll 32
  for (int r = 0; r < gemm::kRows; ++r) {
    const int c0 = m0 + r * 16;
    if (c0 >= m) break;
    const V bv = V::load_unaligned(bias + r * 16);
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j)
      if (j < nvalid)
        gemm::detail::store_sum<OutPack>(out, res, c0, m, n0 + j, V(acc[r][j]) + bv, act);
  }
}
#endif

/// Gathers pixels n0 .. n0 + kTileN of the im2col matrix into `panel` in bf16 as [input group x
/// kernel position][kTileN][InPack] (gemm::detail::pack_tile's layout; InPack even, so k pairs
/// are lanes of one pixel), zeros past n_total.
template <StorageElement T, int InPack>
void gather_tile(const MatView<T, InPack>& in, const ConvGeometry& g, int outw, std::size_t n0,
                 std::size_t n_total, bf16* panel) {
  constexpr int NT = gemm::kTileN;
  std::size_t offset[NT];
  int nvalid = 0;
  for (int j = 0; j < NT; ++j) {
    const std::size_t n = n0 + std::size_t(j);
    if (n >= n_total) break;
    const std::size_t oy = n / std::size_t(outw), ox = n % std::size_t(outw);
    offset[j] = (oy * g.stride_h * std::size_t(in.w) + ox * g.stride_w) * InPack;
    nvalid = j + 1;
  }
  static_assert(InPack > 1, "bf16 GEMM gathers packed inputs (a pack-1 layer keeps f32)");
  constexpr int kCopy = InPack < gemm::kWidth ? InPack : gemm::kWidth;
  for (int q = 0; q < in.c; ++q) {
    const T* plane = in.channel(q);
    for (int ky = 0; ky < g.kernel_h; ++ky)
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        const std::size_t koff =
            (std::size_t(ky) * g.dilation_h * in.w + std::size_t(kx) * g.dilation_w) * InPack;
        for (int j = 0; j < NT; ++j, panel += InPack) {
          if (j >= nvalid) {
            std::fill_n(panel, InPack, bf16{});
            continue;
          }
          const T* s = plane + offset[j] + koff;
          for (int b = 0; b < InPack; b += kCopy) to_bf16<kCopy>(s + b, panel + b);
        }
      }
  }
}

}  // namespace detail

/// Elements of bf16 workspace convolution_gemm needs per thread for K = `k` (as many as
/// gemm::workspace_per_thread's floats, which it fits in half).
inline std::size_t workspace_per_thread(int k) {
  return std::size_t(gemm::kChunkTiles) * gemm::kTileN * (std::size_t(k) + 1) / 2 * 2;
}

#if !(defined(__AVX512BF16__) && defined(__AVX512BW__) && XSIMD_WITH_AVX512F)
// Declared for every build, so that callers name them behind `if constexpr (kAvailable)`; a
// build without AVX512_BF16 that instantiates one fails here.
template <StorageElement T, int InPack, int OutPack, class Act>
void convolution_gemm(const MatView<T, InPack>&, const MatView<T, OutPack>&, const bf16*,
                      const float*, const ConvGeometry&, const Act&, bf16*, int,
                      const MatView<T, OutPack>& = {}) {
  static_assert(sizeof(T) == 0, "bf16dot::convolution_gemm needs AVX512_BF16 (kAvailable)");
}
template <StorageElement T, class Act>
void gemv(const bf16*, int, const bf16*, const float*, T*, int, const Act&, int) {
  static_assert(sizeof(T) == 0, "bf16dot::gemv needs AVX512_BF16 (kAvailable)");
}
#else
/// gemm::convolution_gemm in bf16 arithmetic: `weights` are gemm::pack_weights<InPack>'s rounded to
/// pairs (to_pairs, k = in.c * InPack * kernel positions), `bias` gemm::pack_bias's, `workspace`
/// num_threads x workspace_per_thread(K) elements. Packed inputs only (InPack > 1: a pack-1
/// layer, a 3-channel stem, keeps f32 arithmetic). A bf16 1x1 stride-1 input is read in place;
/// everything else is gathered chunk by chunk into the thread's panel.
template <StorageElement T,  ///< storage of input and output: f32 or bf16
          int InPack, int OutPack, class Act>
void convolution_gemm(const MatView<T, InPack>& in, const MatView<T, OutPack>& out,
                      const bf16* weights, const float* bias, const ConvGeometry& g, const Act& act,
                      bf16* workspace, int num_threads, const MatView<T, OutPack>& res = {}) {
  constexpr int NT = gemm::kTileN, kNarrow = gemm::kTileNarrow, kBlockM = gemm::kBlockM;
  static_assert(InPack > 1, "bf16dot::convolution_gemm: packed inputs only");
  constexpr int L = InPack;
  const int m = out.c * OutPack;
  const int mblocks = (m + kBlockM - 1) / kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const std::size_t k_total = std::size_t(in.c) * std::size_t(maxk) * InPack;
  const std::size_t k2 = (k_total + 1) / 2;
  const int kgroups = int(k2 * 2 / L);
  const std::size_t n_total = std::size_t(out.w) * out.h;
  const std::size_t ntiles = (n_total + NT - 1) / NT;
  const bool in_place =
      std::same_as<T, bf16> && maxk == 1 && g.stride_w == 1 && g.stride_h == 1 && in.w == out.w;
  const int threads =
      kernels::detail::worth_threads(std::size_t(m) * k_total * n_total) ? num_threads : 1;
  const std::size_t tile_elems = k2 * 2 * NT;
  const std::size_t block_elems = k2 * 2 * kBlockM;
  const std::size_t per_thread = workspace_per_thread(int(k_total));
  auto one = [&](const bf16* b, std::size_t gstride, const bf16* a, const float* bb, int m0,
                 std::size_t n0, int nvalid) {
    if (nvalid <= kNarrow)
      detail::tile<kNarrow, T, OutPack, L>(b, gstride, kgroups, a, bb, out, res, m0, m, n0, nvalid,
                                           act);
    else
      detail::tile<NT, T, OutPack, L>(b, gstride, kgroups, a, bb, out, res, m0, m, n0, nvalid, act);
  };
  auto run = [&](bf16* panel, std::size_t t0, std::size_t t1, int mb0, int mb1) {
    if (!in_place)
      for (std::size_t t = t0; t < t1; ++t)
        detail::gather_tile<T, InPack>(in, g, out.w, t * NT, n_total,
                                       panel + (t - t0) * tile_elems);
    for (int mb = mb0; mb < mb1; ++mb) {
      const bf16* a = weights + std::size_t(mb) * block_elems;
      const float* bb = bias + std::size_t(mb) * kBlockM;
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t n0 = t * NT;
        const int nvalid = int(std::min<std::size_t>(NT, n_total - n0));
        if (in_place && nvalid == NT) {
          one(reinterpret_cast<const bf16*>(in.data) + n0 * InPack, in.cstep * InPack, a, bb,
              mb * kBlockM, n0, nvalid);
        } else {
          bf16* p = panel + (t - t0) * tile_elems;
          if (in_place && mb == mb0) detail::gather_tile<T, InPack>(in, g, out.w, n0, n_total, p);
          one(p, std::size_t(NT) * L, a, bb, mb * kBlockM, n0, nvalid);
        }
      }
    }
  };
#ifdef _OPENMP
  if (threads > 1 && n_total <= gemm::kSmallMapPixels && mblocks >= 2 * threads) {
#pragma omp parallel num_threads(threads)
    {
      const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
      bf16* panel = workspace + std::size_t(tid) * per_thread;
      for (std::size_t t0 = 0; t0 < ntiles; t0 += gemm::kChunkTiles)
        run(panel, t0, std::min<std::size_t>(ntiles, t0 + gemm::kChunkTiles), mblocks * tid / nt,
            mblocks * (tid + 1) / nt);
    }
    return;
  }
#endif
  const std::size_t chunk_tiles =
      std::clamp<std::size_t>(ntiles / std::size_t(2 * threads), 1, gemm::kChunkTiles);
  const std::size_t nchunks = (ntiles + chunk_tiles - 1) / chunk_tiles;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    bf16* panel = workspace + std::size_t(omp_get_thread_num()) * per_thread;
#else
    bf16* panel = workspace;
#endif
#pragma omp for schedule(dynamic)
    for (std::size_t chunk = 0; chunk < nchunks; ++chunk) {
      const std::size_t t0 = chunk * chunk_tiles;
      run(panel, t0, std::min(ntiles, t0 + chunk_tiles), 0, mblocks);
    }
  }
}

/// InnerProduct's one-sample product in bf16: out[o] = act(bias[o] + sum_k x[k] w[o][k]) with
/// `w` from gemv_pack and `x` the input as bf16, num_input rounded up to even with a zero.
/// `bias` is null or holds num_output values padded to a whole block of 16.
template <StorageElement T, class Act>
void gemv(const bf16* x, int num_input, const bf16* w, const float* bias, T* out, int num_output,
          const Act& act, int num_threads) {
  using V = simd::fbatch<16>;
  constexpr int kChains = 4;  // independent sums: latency of one dpbf16 per weight load
  const int blocks = (num_output + 15) / 16;
  const std::size_t k2 = (std::size_t(num_input) + 1) / 2;
  const std::size_t work = std::size_t(num_output) * std::size_t(num_input);
#pragma omp parallel for num_threads(num_threads) if (work > (std::size_t(1) << 15))
  for (int b = 0; b < blocks; ++b) {
    const bf16* wb = w + std::size_t(b) * k2 * 32;
    __m512 acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_setzero_ps();
    std::size_t kp = 0;
    for (; kp + kChains <= k2; kp += kChains)
#pragma GCC unroll 4
      for (int c = 0; c < kChains; ++c) {
        std::int32_t pair;
        std::memcpy(&pair, x + 2 * (kp + std::size_t(c)), sizeof(pair));
        acc[c] = _mm512_dpbf16_ps(acc[c], (__m512bh)_mm512_loadu_si512(wb + (kp + c) * 32),
                                  (__m512bh)_mm512_set1_epi32(pair));
      }
    for (; kp < k2; ++kp) {
      std::int32_t pair;
      std::memcpy(&pair, x + 2 * kp, sizeof(pair));
      acc[0] = _mm512_dpbf16_ps(acc[0], (__m512bh)_mm512_loadu_si512(wb + kp * 32),
                                (__m512bh)_mm512_set1_epi32(pair));
    }
    V sum = (V(acc[0]) + V(acc[1])) + (V(acc[2]) + V(acc[3]));
    if (bias) sum = sum + V::load_unaligned(bias + std::size_t(b) * 16);
    sum = act(sum);
    if ((b + 1) * 16 <= num_output) {
      simd::store<16>(out + std::size_t(b) * 16, sum);
    } else {
      alignas(64) float tail[16];
      sum.store_aligned(tail);
      for (int l = 0; b * 16 + l < num_output; ++l) out[b * 16 + l] = from_f32<T>(tail[l]);
    }
  }
}
#endif

}  // namespace infer::kernels::bf16dot
