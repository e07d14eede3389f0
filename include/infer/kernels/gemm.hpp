// Convolution as a packed GEMM, C[M x N] = A[M x K] * B[K x N]: M output channels, N output
// pixels, K = input channels x kernel positions. A (the weights) is repacked once into blocks of
// kRows vector rows of output channels; B is read straight from a 1x1 stride-1 input, or gathered
// (im2col, which also covers the stride-2 subsample) chunk by chunk into a per-thread panel that
// stays in cache. A register tile of kRows x kTileN accumulators takes the FMAs; the epilogue adds
// the bias, applies Act (a template parameter) and converts to T before the store. Pack-1 inputs
// and outputs turn the tile around (kPixRows channels x kPixVecs vectors of consecutive pixels), so
// that each store is a vector of one output plane.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels {

namespace gemm {

/// Lanes of one accumulator: the widest native float batch.
inline constexpr int kWidth = simd::max_width;
/// Whether the GEMM path exists on this target (it needs a float batch).
inline constexpr bool kAvailable = kWidth > 1;
/// Vector rows of output channels in a register tile; A is packed in blocks of kBlockM channels.
inline constexpr int kRows = 2;
inline constexpr int kBlockM = kWidth * kRows;
/// Pixels of a register tile: kRows x kTileN accumulators plus kRows weight rows and a broadcast
/// must fit the register file (32 vector registers with AVX-512, 16 below), and the 24 (or 12)
/// independent FMA chains hide the FMA latency on two pipes.
inline constexpr int kTileN = kWidth >= 16 ? 12 : 6;
/// Pixels of the narrow tile that takes a remainder of at most this many (2 x 4 accumulators still
/// cover the FMA latency on two pipes).
inline constexpr int kTileNarrow = kTileN / 3;
/// The pack-1-output tile (kernels write whole runs of one output plane): kPixRows output channels
/// (broadcast weights) by kPixVecs vectors of consecutive pixels.
inline constexpr int kPixRows = 8;
inline constexpr int kPixVecs = kWidth >= 16 ? 3 : 1;
inline constexpr int kPixTileN = kPixVecs * kWidth;
/// Register tiles of pixels per packed B chunk: the chunk is reused by every block of A, and a
/// block of A by every tile of the chunk, while both sit in L2.
inline constexpr int kChunkTiles = 8;
/// Output maps of at most this many pixels (a 7x7 stage, 9x9) split their output channel blocks
/// among threads rather than their pixel tiles: a handful of tiles splits unevenly, and each
/// thread would stream all of the weights.
inline constexpr std::size_t kSmallMapPixels = 96;

/// Floats of packed weights for M output channels and K = num_input x maxk.
inline std::size_t weights_size(int num_output, int k) {
  return std::size_t((num_output + kBlockM - 1) / kBlockM) * kBlockM * std::size_t(k);
}

/// Floats of padded bias for M output channels.
inline std::size_t bias_size(int num_output) {
  return std::size_t((num_output + kBlockM - 1) / kBlockM) * kBlockM;
}

/// Workspace floats convolution_gemm needs per thread for K = num_input x maxk.
inline std::size_t workspace_per_thread(int k) {
  return std::size_t(kChunkTiles) * kTileN * std::size_t(k);
}

/// Weights for convolution_gemm: for each block of kBlockM output channels and each k, the
/// kBlockM weights of that block (zero past num_output). k runs over (input channel group, kernel
/// position, lane), the order the packed input is gathered in. `src` is ncnn's
/// [num_output][num_input][maxk].
template <int InPack>  ///< lanes of an input channel group
void pack_weights(const float* src, float* dst, int num_input, int num_output, int maxk) {
  const int k_total = num_input * maxk;
  const int blocks = (num_output + kBlockM - 1) / kBlockM;
  std::fill_n(dst, std::size_t(blocks) * kBlockM * k_total, 0.f);
  for (int p = 0; p < num_output; ++p) {
    for (int c = 0; c < num_input; ++c) {
      for (int k = 0; k < maxk; ++k) {
        const std::size_t kk = (std::size_t(c / InPack) * maxk + k) * InPack + c % InPack;
        dst[(std::size_t(p / kBlockM) * k_total + kk) * kBlockM + p % kBlockM] =
            src[(std::size_t(p) * num_input + c) * maxk + k];
      }
    }
  }
}

/// bias (num_output values, or none when null) padded with zeros to whole blocks.
inline void pack_bias(const float* bias, float* dst, int num_output) {
  std::fill_n(dst, bias_size(num_output), 0.f);
  if (bias) std::copy_n(bias, num_output, dst);
}

/// What convolution_stem adds to each sum before the activation: `bias` (kBlockM-padded, as
/// pack_bias) alone; or, with `scale` (padded the same), sum * scale + bias, for the exact integer
/// sums of int8 inputs and weights, then times `out_scale` before an int8 store.
struct StemEpilogue {
  const float* bias = nullptr;
  const float* scale = nullptr;
  float out_scale = 0.f;
};

namespace detail {

using V = simd::fbatch<kWidth>;

/// Stores the W lanes of `v` (output channels c0.. of pixel n) into the packed output, skipping
/// channels at or past m.
template <int OutPack, StorageElement T>
inline void store_channels(const MatView<T, OutPack>& out, int c0, int m, std::size_t n, V v) {
  if constexpr (OutPack >= kWidth) {
    simd::store<kWidth>(out.channel(c0 / OutPack) + n * OutPack + c0 % OutPack, v);
  } else {
    alignas(64) float tmp[kWidth];
    v.store_aligned(tmp);
    for (int s = 0; s < kWidth / OutPack; ++s) {
      const int c = c0 + s * OutPack;
      if (c >= m) break;
      if constexpr (OutPack == 1) {
        out.channel(c)[n] = from_f32<T>(tmp[s]);
      } else {
        simd::store<OutPack>(out.channel(c / OutPack) + n * OutPack,
                             simd::load<OutPack>(tmp + s * OutPack));
      }
    }
  }
}

/// The convolutions' store: act(v + the residual at (c0, n)), or act(v) where `res` is empty (a
/// residual sum the composer fused into the layer: y = act(conv(x) + bias + r)). int8 outputs
/// take no residual (the layers refuse one; an int8 layer's f32 output takes it). Below a whole vector per output group the residual
/// is added group by group at the output's pack, the activation applied there too: gathering the
/// groups into one vector (narrow stores, then a wide load) stalled on store forwarding at every
/// pixel (yolo-fastest's 8 -> 4 channel 1x1 at 160x160 with its sum: 0.24 ms against 0.07 without).
template <int OutPack, StorageElement T, class Act>
inline void store_sum(const MatView<T, OutPack>& out, const MatView<T, OutPack>& res, int c0, int m,
                      std::size_t n, V v, const Act& act) {
  if constexpr (OutPack >= kWidth || std::same_as<T, i8>) {
    if constexpr (!std::same_as<T, i8>)
      if (res.data) v += simd::load<kWidth>(res.channel(c0 / OutPack) + n * OutPack + c0 % OutPack);
    store_channels<OutPack>(out, c0, m, n, V(act(v)));
  } else {
    if (!res.data) {
      store_channels<OutPack>(out, c0, m, n, V(act(v)));
      return;
    }
    alignas(64) float tmp[kWidth];
    v.store_aligned(tmp);
    for (int s = 0; s < kWidth / OutPack; ++s) {
      const int c = c0 + s * OutPack;
      if (c >= m) break;
      if constexpr (OutPack == 1) {
        out.channel(c)[n] = from_f32<T>(act(tmp[s] + to_f32(res.channel(c)[n])));
      } else {
        using B = simd::fbatch<OutPack>;
        const B x = B::load_aligned(tmp + s * OutPack) +
                    simd::load<OutPack>(res.channel(c / OutPack) + n * OutPack);
        simd::store<OutPack>(out.channel(c / OutPack) + n * OutPack, B(act(x)));
      }
    }
  }
}

/// Weights a tile asks the caches for ahead of use: `lines` 64-byte lines a k group from `at`,
/// `count` lines in all (none where `at` is null).
struct Prefetch {
  const float* at = nullptr;
  int lines = 0;
  std::size_t count = 0;
};

/// Lanes of the half row a register tile can end in (an AVX-512 build's 8-lane vector), 0 where
/// there is none. Zen 4 runs a 16-lane FMA as two 8-lane halves, so a block whose live channels
/// end within half a vector (24 of its 32: MobileNetV2's 24-channel layers, ShuffleNet v1's 20 per
/// group, a 40 or 72 channel layer's last block, a stem of 8) computes that half alone instead of
/// a whole row of zeros past it; elsewhere the half row costs what the whole one did.
inline constexpr int kHalfWidth = kWidth >= 16 ? kWidth / 2 : 0;
using HalfV = simd::fbatch<(kWidth >= 16 ? kWidth / 2 : kWidth)>;

/// The low kHalfWidth lanes of v (AVX-512 builds; the tiles ask for it only there).
inline HalfV low_half(V v) {
#if defined(__AVX512F__)
  static_assert(kWidth == 16);
  return HalfV(_mm512_castps512_ps256(v));
#else
  return v;
#endif
}

/// h in the low lanes of a whole vector, zeros above.
inline V widen(HalfV h) {
#if defined(__AVX512F__)
  return V(_mm512_zextps256_ps512(h));
#else
  return h;
#endif
}

/// One register tile of NT pixel columns: output channels m0 .. m0 + kBlockM (their bias at
/// `bias`), pixels n0 .. n0 + nvalid (nvalid <= NT). B value (k, j) with k = kg * L + i is
/// b[kg * gstride + j * L + i]; `a` is the tile's block of packed weights. Each k group also
/// prefetches `pf.lines` lines of `pf` into L2 (the next weight block, see convolution_gemm).
/// R (at most kRows) is the number of whole vector rows computed, and Half adds a row of
/// kHalfWidth lanes after them: a block whose live output channels end there would otherwise
/// multiply zeros in the rest of a row.
template <int NT, StorageElement T, int OutPack, class TB, int L, class Act, int R = kRows,
          bool Half = false>
inline void tile_cols(const TB* b, std::size_t gstride, int kgroups, const float* a,
                      const float* bias, const MatView<T, OutPack>& out,
                      const MatView<T, OutPack>& res, int m0, int m, std::size_t n0, int nvalid,
                      const Act& act, Prefetch pf = {}) {
  static_assert(R + (Half ? 1 : 0) > 0 && R <= kRows && (!Half || kHalfWidth > 0));
  V acc[R > 0 ? R : 1][NT];
  HalfV hacc[Half ? NT : 1];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j) acc[r][j] = V(0.f);
  if constexpr (Half)
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j) hacc[j] = HalfV(0.f);
  for (int kg = 0; kg < kgroups; ++kg) {
    if (pf.at)
      for (int l = 0; l < pf.lines; ++l)
        if (const std::size_t line = std::size_t(kg) * std::size_t(pf.lines) + std::size_t(l);
            line < pf.count)
          __builtin_prefetch(pf.at + line * 16, 0, 2);
    const TB* bg = b + std::size_t(kg) * gstride;
    for (int i = 0; i < L; ++i, a += kBlockM) {
      V w[R > 0 ? R : 1];
#pragma GCC unroll 32
      for (int r = 0; r < R; ++r) w[r] = V::load_unaligned(a + r * kWidth);
      HalfV wh{};
      if constexpr (Half) wh = HalfV::load_unaligned(a + R * kWidth);
#pragma GCC unroll 32
      for (int j = 0; j < NT; ++j) {
        if constexpr (R > 0) {
          const V x(to_f32(bg[j * L + i]));
#pragma GCC unroll 32
          for (int r = 0; r < R; ++r) acc[r][j] = xsimd::fma(w[r], x, acc[r][j]);
          if constexpr (Half) hacc[j] = xsimd::fma(wh, low_half(x), hacc[j]);
        } else {
          hacc[j] = xsimd::fma(wh, HalfV(to_f32(bg[j * L + i])), hacc[j]);
        }
      }
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
    const int c0 = m0 + r * kWidth;
    if (c0 >= m) break;
    const V bv = V::load_unaligned(bias + r * kWidth);
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j)
      if (j < nvalid) store_sum<OutPack>(out, res, c0, m, n0 + j, acc[r][j] + bv, act);
  }
  if constexpr (Half) {
    const int c0 = m0 + R * kWidth;
    const V bv = V::load_unaligned(bias + R * kWidth);
#pragma GCC unroll 32
    for (int j = 0; j < NT; ++j)
      if (j < nvalid) store_sum<OutPack>(out, res, c0, m, n0 + j, widen(hacc[j]) + bv, act);
  }
}

/// One register tile of kTileN pixel columns, or of kTileNarrow where no more are valid: the last
/// tile of a 7x7 map (49 = 4 x 12 + 1 pixels) would otherwise spend 11 of its 12 columns' FMAs on
/// nothing, a sixth of the layer.
/// A block with at most kWidth live output channels (m - m0) computes one vector row; on AVX-512
/// one whose live channels end within the first half of a row computes that half only.
template <StorageElement T, int OutPack, class TB, int L, class Act>
inline void tile(const TB* b, std::size_t gstride, int kgroups, const float* a, const float* bias,
                 const MatView<T, OutPack>& out, const MatView<T, OutPack>& res, int m0, int m,
                 std::size_t n0, int nvalid, const Act& act, Prefetch pf = {}) {
  if constexpr (kRows > 1) {
    const int live = m - m0;
    if constexpr (kHalfWidth > 0) {
      if (live <= kHalfWidth) {
        tile_cols<kTileN, T, OutPack, TB, L, Act, 0, true>(b, gstride, kgroups, a, bias, out, res,
                                                           m0, m, n0, nvalid, act, pf);
        return;
      }
      if (live > kWidth && live <= kWidth + kHalfWidth) {
        tile_cols<kTileN, T, OutPack, TB, L, Act, 1, true>(b, gstride, kgroups, a, bias, out, res,
                                                           m0, m, n0, nvalid, act, pf);
        return;
      }
    }
    if (live <= kWidth) {
      tile_cols<kTileN, T, OutPack, TB, L, Act, 1>(b, gstride, kgroups, a, bias, out, res, m0, m,
                                                   n0, nvalid, act, pf);
      return;
    }
  }
  if (nvalid <= kTileNarrow)
    tile_cols<kTileNarrow, T, OutPack, TB, L>(b, gstride, kgroups, a, bias, out, res, m0, m, n0,
                                              nvalid, act, pf);
  else
    tile_cols<kTileN, T, OutPack, TB, L>(b, gstride, kgroups, a, bias, out, res, m0, m, n0, nvalid,
                                         act, pf);
}

/// Gathers pixels n0 .. n0 + kTileN of the im2col matrix into `panel` as [kgroups][kTileN][InPack]
/// floats (zeros past n_total): group kg = (input group g, kernel position), lanes of g.
template <StorageElement T, int InPack>
void pack_tile(const MatView<T, InPack>& in, const ConvGeometry& g, int outw, std::size_t n0,
               std::size_t n_total, float* panel) {
  std::size_t offset[kTileN];
  int nvalid = 0;
  for (int j = 0; j < kTileN; ++j) {
    const std::size_t n = n0 + std::size_t(j);
    if (n >= n_total) break;
    const std::size_t oy = n / std::size_t(outw), ox = n % std::size_t(outw);
    offset[j] = (oy * g.stride_h * std::size_t(in.w) + ox * g.stride_w) * InPack;
    nvalid = j + 1;
  }
  for (int q = 0; q < in.c; ++q) {
    const T* plane = in.channel(q);
    for (int ky = 0; ky < g.kernel_h; ++ky) {
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        const std::size_t koff =
            (std::size_t(ky) * g.dilation_h * in.w + std::size_t(kx) * g.dilation_w) * InPack;
        for (int j = 0; j < kTileN; ++j, panel += InPack) {
          if (j >= nvalid) {
            std::fill_n(panel, InPack, 0.f);
            continue;
          }
          const T* s = plane + offset[j] + koff;
          if constexpr (InPack == 1) {
            panel[0] = to_f32(s[0]);
          } else {
            // An input group can be wider than the widest batch (pack 16 on AVX2).
            constexpr int kCopy = InPack < kWidth ? InPack : kWidth;
            for (int b = 0; b < InPack; b += kCopy)
              simd::store<kCopy>(panel + b, simd::load<kCopy>(s + b));
          }
        }
      }
    }
  }
}

/// Runs f(panel, t0, t1) over the register tiles [0, ntiles) in chunks of at most max_chunk
/// tiles (at least two chunks per thread when there are enough), threads taking chunks as they
/// finish; `panel` is the calling thread's workspace_per_thread(k_total) floats of `workspace`.
template <class F>
void for_each_chunk(std::size_t ntiles, std::size_t max_chunk, int threads, float* workspace,
                    std::size_t k_total, const F& f) {
  const std::size_t chunk_tiles =
      std::clamp<std::size_t>(ntiles / std::size_t(2 * threads), 1, max_chunk);
  const std::size_t nchunks = (ntiles + chunk_tiles - 1) / chunk_tiles;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    float* panel =
        workspace + std::size_t(omp_get_thread_num()) * workspace_per_thread(int(k_total));
#else
    float* panel = workspace;
#endif
#pragma omp for schedule(dynamic)
    for (std::size_t chunk = 0; chunk < nchunks; ++chunk) {
      const std::size_t t0 = chunk * chunk_tiles;
      f(panel, t0, std::min(ntiles, t0 + chunk_tiles));
    }
  }
}

/// The pack-1-output tile: output channels m0 .. m0 + kPixRows (weights a[k * kBlockM + r]) by
/// pixels n0 .. n0 + nvalid, each accumulator a run of kWidth pixels of one channel, stored
/// whole. B value (k, pixel j) is b[k * kstride + j].
template <StorageElement T, class TB, class Act>
inline void tile_pixels(const TB* b, std::size_t kstride, std::size_t k_total, const float* a,
                        const float* bias, const MatView<T, 1>& out, const MatView<T, 1>& res,
                        int m0, int m, std::size_t n0, int nvalid, const Act& act) {
  V acc[kPixRows][kPixVecs];
#pragma GCC unroll 32
  for (int r = 0; r < kPixRows; ++r)
#pragma GCC unroll 32
    for (int v = 0; v < kPixVecs; ++v) acc[r][v] = V(0.f);
  for (std::size_t k = 0; k < k_total; ++k, b += kstride, a += kBlockM) {
    V x[kPixVecs];
#pragma GCC unroll 32
    for (int v = 0; v < kPixVecs; ++v) x[v] = simd::load<kWidth>(b + v * kWidth);
#pragma GCC unroll 32
    for (int r = 0; r < kPixRows; ++r) {
      const V w(a[r]);
#pragma GCC unroll 32
      for (int v = 0; v < kPixVecs; ++v) acc[r][v] = xsimd::fma(w, x[v], acc[r][v]);
    }
  }
  const int rows = std::min(kPixRows, m - m0);
  for (int r = 0; r < rows; ++r) {
    T* dst = out.channel(m0 + r) + n0;
    const T* rs = res.data ? res.channel(m0 + r) + n0 : nullptr;
    const V bv(bias[r]);
    for (int v = 0; v < kPixVecs; ++v) {
      const int left = nvalid - v * kWidth;
      V y = acc[r][v] + bv;
      if (rs && left >= kWidth) {
        y += simd::load<kWidth>(rs + v * kWidth);
      } else if (rs && left > 0) {
        alignas(64) float tmp[kWidth] = {};
        for (int j = 0; j < left; ++j) tmp[j] = to_f32(rs[v * kWidth + j]);
        y += V::load_aligned(tmp);
      }
      y = act(y);
      if (left >= kWidth) {
        simd::store<kWidth>(dst + v * kWidth, y);
      } else if (left > 0) {
        alignas(64) float tmp[kWidth];
        y.store_aligned(tmp);
        for (int j = 0; j < left; ++j) dst[v * kWidth + j] = from_f32<T>(tmp[j]);
      }
    }
  }
}

/// Gathers pixels n0 .. n0 + kPixTileN of the im2col matrix into `panel` as [k][kPixTileN] floats
/// (zeros past n_total), k in pack_weights' order (input group, kernel position, lane). The tile's
/// pixels are runs along output rows; a run reads its input row at a constant step.
template <StorageElement T, int InPack>
void pack_tile_pixels(const MatView<T, InPack>& in, const ConvGeometry& g, int outw, std::size_t n0,
                      std::size_t n_total, float* panel) {
  struct Run {
    int j, len;
    std::size_t offset;  ///< of the run's first pixel's window origin, in values
  };
  Run runs[kPixTileN];
  int nruns = 0, nvalid = 0;
  for (std::size_t n = n0; n < std::min(n_total, n0 + kPixTileN);) {
    const std::size_t oy = n / std::size_t(outw), ox = n % std::size_t(outw);
    const int len =
        int(std::min<std::size_t>({std::size_t(outw) - ox, n_total - n, n0 + kPixTileN - n}));
    runs[nruns++] = {int(n - n0), len,
                     (oy * g.stride_h * std::size_t(in.w) + ox * g.stride_w) * InPack};
    n += std::size_t(len);
    nvalid += len;
  }
  const std::size_t step = std::size_t(g.stride_w) * InPack;
  for (int q = 0; q < in.c; ++q) {
    const T* plane = in.channel(q);
    for (int ky = 0; ky < g.kernel_h; ++ky) {
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        const T* s0 =
            plane +
            (std::size_t(ky) * g.dilation_h * in.w + std::size_t(kx) * g.dilation_w) * InPack;
        for (int i = 0; i < InPack; ++i, panel += kPixTileN) {
          for (int r = 0; r < nruns; ++r) {
            const T* src = s0 + runs[r].offset + i;
            float* dst = panel + runs[r].j;
            if (step == 1) {
              for (int t = 0; t < runs[r].len; ++t) dst[t] = to_f32(src[t]);
            } else if (step == 2 && runs[r].len > kWidth) {
              // The even values of vector pairs (stride 2 conv1 layers: the gather is a third of
              // their time). Each pair ends before the run's last value, so no read passes it;
              // the last vector overlaps the one before, and the last value is copied alone.
              const int len = runs[r].len, last = len - kWidth - 1;
              for (int t = 0;; t += kWidth) {
                if (t > last) t = last;
                simd::fbatch<kWidth> even, odd;
                simd::deinterleave<kWidth>(simd::load<kWidth>(src + 2 * std::size_t(t)),
                                           simd::load<kWidth>(src + 2 * std::size_t(t) + kWidth),
                                           even, odd);
                simd::store<kWidth>(dst + t, even);
                if (t == last) break;
              }
              dst[len - 1] = to_f32(src[2 * std::size_t(len - 1)]);
            } else {
              for (int t = 0; t < runs[r].len; ++t) dst[t] = to_f32(src[std::size_t(t) * step]);
            }
          }
          for (int j = nvalid; j < kPixTileN; ++j) panel[j] = 0.f;
        }
      }
    }
  }
}

/// convolution_gemm for pack-1 inputs and outputs: tiles of consecutive pixels (vectors along the
/// output planes) instead of consecutive channels, so every store is a whole vector of one plane. A
/// 1x1 stride-1 pack-1 input is read in place (its planes are the B rows).
template <StorageElement T, int InPack, class Act>
void convolution_gemm_pixels(const MatView<T, InPack>& in, const MatView<T, 1>& out,
                             const float* weights, const float* bias, const ConvGeometry& g,
                             const Act& act, float* workspace, int num_threads,
                             const MatView<T, 1>& res) {
  const int m = out.c;
  const int mblocks = (m + kBlockM - 1) / kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const std::size_t k_total = std::size_t(in.c) * maxk * InPack;
  const std::size_t n_total = std::size_t(out.w) * out.h;
  const std::size_t ntiles = (n_total + kPixTileN - 1) / kPixTileN;
  const bool in_place =
      InPack == 1 && maxk == 1 && g.stride_w == 1 && g.stride_h == 1 && in.w == out.w;
  const int threads =
      kernels::detail::worth_threads(std::size_t(m) * k_total * n_total) ? num_threads : 1;
  // As many pixels per chunk as convolution_gemm's chunks hold (the same workspace).
  constexpr std::size_t kMaxChunk = std::max(1, kChunkTiles * kTileN / kPixTileN);
  const std::size_t tile_floats = k_total * kPixTileN;
  const std::size_t block_floats = k_total * kBlockM;
  for_each_chunk(ntiles, kMaxChunk, threads, workspace, k_total,
                 [&](float* panel, std::size_t t0, std::size_t t1) {
                   for (std::size_t t = t0; t < t1; ++t) {
                     const std::size_t n0 = t * kPixTileN;
                     const bool direct = in_place && n0 + kPixTileN <= n_total;
                     if (!direct)
                       pack_tile_pixels<T, InPack>(in, g, out.w, n0, n_total,
                                                   panel + (t - t0) * tile_floats);
                   }
                   for (int mb = 0; mb < mblocks; ++mb) {
                     for (int r0 = 0; r0 < kBlockM && mb * kBlockM + r0 < m; r0 += kPixRows) {
                       const float* a = weights + std::size_t(mb) * block_floats + r0;
                       const float* bb = bias + std::size_t(mb) * kBlockM + r0;
                       const int m0 = mb * kBlockM + r0;
                       for (std::size_t t = t0; t < t1; ++t) {
                         const std::size_t n0 = t * kPixTileN;
                         const int nvalid = int(std::min<std::size_t>(kPixTileN, n_total - n0));
                         if (in_place && nvalid == kPixTileN)
                           tile_pixels<T>(in.data + n0, in.cstep, k_total, a, bb, out, res, m0, m,
                                          n0, nvalid, act);
                         else
                           tile_pixels<T>(panel + (t - t0) * tile_floats, std::size_t(kPixTileN),
                                          k_total, a, bb, out, res, m0, m, n0, nvalid, act);
                       }
                     }
                   }
                 });
}

/// convolution_stem's store of pixel n's sums `v` for output channels c0 .. (bias `bv`): the bias
/// added, or for integer sums (an int8 layer's, `e.scale` set: their scales `sv`) dequantized as
/// the int8 kernels' epilogue does (the residual, if any, added after) and requantized where the
/// output is int8.
template <int OutPack, StorageElement T, class Act>
inline void stem_store(const StemEpilogue& e, V bv, V sv, const MatView<T, OutPack>& out,
                       const MatView<T, OutPack>& res, int c0, int m, std::size_t n, V v,
                       const Act& act) {
  if (e.scale) {
    if constexpr (!std::same_as<T, i8>) {
      // A residual sum fused into the int8 layer (its output float): added after dequantizing.
      if (res.data) {
        store_sum<OutPack>(out, res, c0, m, n, V(xsimd::fma(v, sv, bv)), act);
        return;
      }
    }
    V y = V(act(xsimd::fma(v, sv, bv)));
    if constexpr (std::same_as<T, i8>) y = y * V(e.out_scale);
    store_channels<OutPack>(out, c0, m, n, y);
    return;
  }
  store_sum<OutPack>(out, res, c0, m, n, v + bv, act);
}

/// One row's X output pixels from `first` on (pixel j's window at src + j * step) by R vector rows
/// of output channels m0 .. and, with Half, a row of kHalfWidth lanes after them (weights: a block
/// of pack_weights<1>, kBlockM floats a k; k's input offset koff[k]): each input value is
/// broadcast once for the rows, each weight vector loaded once for the X pixels, the first
/// `count` pixels stored.
template <int X, int R, bool Half, StorageElement TI, StorageElement T, int OutPack, class Act>
inline void stem_tile(const TI* src, std::size_t step, const std::size_t* koff, int k_total,
                      const float* a, const StemEpilogue& e, const MatView<T, OutPack>& out,
                      const MatView<T, OutPack>& res, int m0, int m, std::size_t first, int count,
                      const Act& act) {
  static_assert(R + (Half ? 1 : 0) > 0 && R <= kRows && (!Half || kHalfWidth > 0));
  V acc[X][R > 0 ? R : 1];
  HalfV hacc[Half ? X : 1];
#pragma GCC unroll 32
  for (int j = 0; j < X; ++j) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[j][r] = V(0.f);
    if constexpr (Half) hacc[j] = HalfV(0.f);
  }
  for (int k = 0; k < k_total; ++k, a += kBlockM) {
    V w[R > 0 ? R : 1];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) w[r] = V::load_unaligned(a + r * kWidth);
    HalfV wh{};
    if constexpr (Half) wh = HalfV::load_unaligned(a + R * kWidth);
    const TI* s = src + koff[k];
#pragma GCC unroll 32
    for (int j = 0; j < X; ++j) {
      if constexpr (R > 0) {
        const V x(to_f32(s[std::size_t(j) * step]));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) acc[j][r] = xsimd::fma(w[r], x, acc[j][r]);
        if constexpr (Half) hacc[j] = xsimd::fma(wh, low_half(x), hacc[j]);
      } else {
        hacc[j] = xsimd::fma(wh, HalfV(to_f32(s[std::size_t(j) * step])), hacc[j]);
      }
    }
  }
  const auto scales = [&](int roff) {
    return e.scale ? V::load_unaligned(e.scale + roff) : V(0.f);
  };
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const int c0 = m0 + r * kWidth;
    if (c0 >= m) break;
    const V bv = V::load_unaligned(e.bias + r * kWidth), sv = scales(r * kWidth);
#pragma GCC unroll 32
    for (int j = 0; j < X; ++j)
      if (j < count)
        stem_store<OutPack>(e, bv, sv, out, res, c0, m, first + std::size_t(j), acc[j][r], act);
  }
  if constexpr (Half) {
    const int c0 = m0 + R * kWidth;
    const V bv = V::load_unaligned(e.bias + R * kWidth), sv = scales(R * kWidth);
    if (c0 < m)
#pragma GCC unroll 32
      for (int j = 0; j < X; ++j)
        if (j < count)
          stem_store<OutPack>(e, bv, sv, out, res, c0, m, first + std::size_t(j), widen(hacc[j]),
                              act);
  }
}

/// One output row of one block of output channels for convolution_stem: tiles of X pixels, the
/// last one moved back to end at the row's end (its first pixels computed again, stored again),
/// single pixels where the row is narrower than a tile.
template <int X, int R, bool Half, StorageElement TI, StorageElement T, int OutPack, class Act>
inline void stem_row(const TI* row, std::size_t step, const std::size_t* koff, int k_total,
                     const float* a, const StemEpilogue& e, const MatView<T, OutPack>& out,
                     const MatView<T, OutPack>& res, int m0, int m, int y, const Act& act) {
  const std::size_t n_row = std::size_t(y) * std::size_t(out.w);
  if (out.w < X) {
    for (int x = 0; x < out.w; ++x)
      stem_tile<1, R, Half>(row + std::size_t(x) * step, step, koff, k_total, a, e, out, res, m0, m,
                            n_row + std::size_t(x), 1, act);
    return;
  }
  for (int x0 = 0; x0 < out.w; x0 += X) {
    const int x = std::min(x0, out.w - X);
    stem_tile<X, R, Half>(row + std::size_t(x) * step, step, koff, k_total, a, e, out, res, m0, m,
                          n_row + std::size_t(x), X, act);
  }
}

}  // namespace detail

/// Input channels (at pack 1) up to which convolution_gemm runs as convolution_stem.
inline constexpr int kStemMaxChannels = 4;
/// Window taps (channels x kernel positions) up to which it does: their offsets live on the stack,
/// so a forward allocates nothing (4 channels of an 11x11 kernel are 484).
inline constexpr int kStemMaxTaps = 512;

/// A convolution of a pack-1 input of few channels (a network's first layer on an image) into a
/// packed output, on convolution_gemm's weights and bias but without its gather: its K is short
/// (27 for 3 channels 3x3), so gathering each pixel's window into the panel cost as much as the
/// products (a 3x3 stride-2 layer of 3 -> 8 channels at 320x320: 36% of its time in the gather).
/// Each input value is broadcast straight from the padded input for the block's rows of output
/// channels; a block with at most kWidth live channels runs one row with twice the pixels instead
/// of two rows, the second all zeros, and on AVX-512 a block whose live channels end within half
/// a row (a stem of 8 outputs, the last block of 24) computes that half only (kHalfWidth).
/// The input's type TI may differ from the output's T: an int8 layer's stem (its int8 values
/// widened to f32, its integer weights as floats, `e.scale` set, T f32 or i8) sums exactly in f32,
/// since |sum| <= kStemMaxTaps x 127 x 127 < 2^24, and its epilogue is the int8 kernels' own.
/// Requires in.c x kernel positions <= kStemMaxTaps (convolution_gemm and Convolution check it).
template <StorageElement TI, StorageElement T, int OutPack, class Act>
void convolution_stem(const MatView<TI, 1>& in, const MatView<T, OutPack>& out,
                      const float* weights, const StemEpilogue& e, const ConvGeometry& g,
                      const Act& act, int num_threads, const MatView<T, OutPack>& res = {}) {
  const int m = out.c * OutPack;
  const int mblocks = (m + kBlockM - 1) / kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const int k_total = in.c * maxk;
  assert(k_total <= kStemMaxTaps);
  std::array<std::size_t, kStemMaxTaps> koff;
  for (int c = 0, k = 0; c < in.c; ++c)
    for (int ky = 0; ky < g.kernel_h; ++ky)
      for (int kx = 0; kx < g.kernel_w; ++kx, ++k)
        koff[std::size_t(k)] = in.cstep * std::size_t(c) +
                               std::size_t(ky) * g.dilation_h * std::size_t(in.w) +
                               std::size_t(kx) * g.dilation_w;
  const std::size_t step = std::size_t(g.stride_w);
  const std::size_t block_floats = std::size_t(k_total) * kBlockM;
  const int items = mblocks * out.h;
  const int threads = kernels::detail::worth_threads(std::size_t(m) * std::size_t(k_total) *
                                                     std::size_t(out.w) * std::size_t(out.h))
                          ? num_threads
                          : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int it = 0; it < items; ++it) {
    const int mb = it / out.h, y = it % out.h;
    const TI* row = in.data + std::size_t(y) * g.stride_h * std::size_t(in.w);
    const float* a = weights + std::size_t(mb) * block_floats;
    const StemEpilogue eb{e.bias + std::size_t(mb) * kBlockM,
                          e.scale ? e.scale + std::size_t(mb) * kBlockM : nullptr, e.out_scale};
    const int m0 = mb * kBlockM, live = m - m0;
    if constexpr (detail::kHalfWidth > 0) {
      if (live <= detail::kHalfWidth) {
        detail::stem_row<2 * kTileN, 0, true>(row, step, koff.data(), k_total, a, eb, out, res, m0,
                                              m, y, act);
        continue;
      }
      if (live > kWidth && live <= kWidth + detail::kHalfWidth) {
        detail::stem_row<kTileN, 1, true>(row, step, koff.data(), k_total, a, eb, out, res, m0, m,
                                          y, act);
        continue;
      }
    }
    if (live <= kWidth)
      detail::stem_row<2 * kTileN, 1, false>(row, step, koff.data(), k_total, a, eb, out, res, m0,
                                             m, y, act);
    else
      detail::stem_row<kTileN, kRows, false>(row, step, koff.data(), k_total, a, eb, out, res, m0,
                                             m, y, act);
  }
}

/// out = act(conv(in, weights) + bias + res) as a packed GEMM, `res` (a fused residual sum's
/// other input, of the output's shape and layout) left out where empty. `in` is the padded input
/// (its extents give the window positions); `weights` come from pack_weights<InPack>, `bias` from
/// pack_bias, both for out.c * OutPack outputs; `workspace` holds num_threads x
/// workspace_per_thread(K) floats (K = in.c * InPack * kernel positions), unused for 1x1 stride 1
/// except at edge tiles.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int InPack,        ///< lanes of an input channel group
          int OutPack,       ///< lanes of an output channel group
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_gemm(const MatView<T, InPack>& in, const MatView<T, OutPack>& out,
                      const float* weights, const float* bias, const ConvGeometry& g,
                      const Act& act, float* workspace, int num_threads,
                      const MatView<T, OutPack>& res = {}) {
  // Pack 1 in and out: tiles along the planes (the channel tiles would scatter every store over
  // kWidth planes, which also keeps two threads from scaling). A packed input stays on the
  // channel tiles: its B values lie InPack apart, so gathering them costs more than it saves.
  if constexpr (InPack == 1 && OutPack == 1 && kWidth >= 8) {
    detail::convolution_gemm_pixels<T, InPack>(in, out, weights, bias, g, act, workspace,
                                               num_threads, res);
    return;
  }
  if constexpr (InPack == 1 && OutPack > 1) {
    if (in.c <= kStemMaxChannels && in.c * g.kernel_w * g.kernel_h <= kStemMaxTaps) {
      convolution_stem<T, T, OutPack>(in, out, weights, StemEpilogue{bias}, g, act, num_threads,
                                      res);
      return;
    }
  }
  const int m = out.c * OutPack;
  const int mblocks = (m + kBlockM - 1) / kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const int kgroups = in.c * maxk;
  const std::size_t k_total = std::size_t(kgroups) * InPack;
  const std::size_t n_total = std::size_t(out.w) * out.h;
  const std::size_t ntiles = (n_total + kTileN - 1) / kTileN;
  // 1x1 stride 1 reads B in place: pixel n of input group q at in.channel(q) + n * InPack.
  const bool in_place = maxk == 1 && g.stride_w == 1 && g.stride_h == 1 && in.w == out.w;
  const int threads =
      kernels::detail::worth_threads(std::size_t(m) * k_total * n_total) ? num_threads : 1;
  const std::size_t tile_floats = std::size_t(kgroups) * kTileN * InPack;
  const std::size_t block_floats = k_total * kBlockM;
  // Tiles t0 .. t1 (packed into `panel`) by output channel blocks mb0 .. mb1.
  auto run = [&](float* panel, std::size_t t0, std::size_t t1, int mb0, int mb1) {
    if (!in_place)
      for (std::size_t t = t0; t < t1; ++t)
        detail::pack_tile<T, InPack>(in, g, out.w, t * kTileN, n_total,
                                     panel + (t - t0) * tile_floats);
    // While a block of weights serves the chunk's tiles, the tiles share out the next block's
    // lines among their k groups and prefetch them into L2. Otherwise a layer on a small map
    // (7x7: five tiles) waits on memory through the first tile of every block, which streams the
    // block at the FMAs' pace, faster than memory delivers: in a MnasNet forward (its weights not
    // in cache) 30% of the micro-kernel's samples sat on its weight loads, and the prefetch took
    // its 7x7 1x1 layers from 0.29 to 0.22 ms (192 -> 1152) and 0.43 to 0.36 (1152 -> 320).
    const std::size_t block_lines = block_floats / 16,
                      tile_lines_max = (block_lines + (t1 - t0) - 1) / (t1 - t0);
    const int pf_lines = int((tile_lines_max + std::size_t(kgroups) - 1) / std::size_t(kgroups));
    for (int mb = mb0; mb < mb1; ++mb) {
      const float* a = weights + std::size_t(mb) * block_floats;
      const float* bb = bias + std::size_t(mb) * kBlockM;
      for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t n0 = t * kTileN;
        const int nvalid = int(std::min<std::size_t>(kTileN, n_total - n0));
        // Tile t - t0 of the chunk takes lines [first, first + tile_lines_max) of the next block.
        const std::size_t first = (t - t0) * tile_lines_max;
        const detail::Prefetch pf{
            mb + 1 < mb1 && first < block_lines ? a + block_floats + first * 16 : nullptr, pf_lines,
            std::min(tile_lines_max, block_lines - first)};
        if (in_place && nvalid == kTileN) {
          detail::tile<T, OutPack, T, InPack>(in.data + n0 * InPack, in.cstep * InPack, in.c, a, bb,
                                              out, res, mb * kBlockM, m, n0, nvalid, act, pf);
        } else {
          float* p = panel + (t - t0) * tile_floats;
          if (in_place && mb == mb0) detail::pack_tile<T, InPack>(in, g, out.w, n0, n_total, p);
          detail::tile<T, OutPack, float, InPack>(p, std::size_t(kTileN) * InPack, kgroups, a, bb,
                                                  out, res, mb * kBlockM, m, n0, nvalid, act, pf);
        }
      }
    }
  };
#ifdef _OPENMP
  // Small maps (kSmallMapPixels): threads take even shares of the output channel blocks, each
  // packing the input's (few) tiles for itself, a chunk at a time.
  if (threads > 1 && n_total <= kSmallMapPixels && mblocks >= 2 * threads) {
#pragma omp parallel num_threads(threads)
    {
      const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
      float* panel = workspace + std::size_t(tid) * workspace_per_thread(int(k_total));
      for (std::size_t t0 = 0; t0 < ntiles; t0 += kChunkTiles)
        run(panel, t0, std::min<std::size_t>(ntiles, t0 + kChunkTiles), mblocks * tid / nt,
            mblocks * (tid + 1) / nt);
    }
    return;
  }
#endif
  detail::for_each_chunk(
      ntiles, kChunkTiles, threads, workspace, k_total,
      [&](float* panel, std::size_t t0, std::size_t t1) { run(panel, t0, t1, 0, mblocks); });
}

}  // namespace gemm

}  // namespace infer::kernels
