// Transposed-convolution kernels (ncnn Deconvolution, DeconvolutionDepthWise).
//
// deconvolution_gemm (group 1, the common case) runs the transposed convolution as a packed GEMM
// on gemm.hpp's register tile, in scatter form: columns C[(tap, o) x pixel] = W^T * X with
// M = kernel taps x output channels, K = input channels and N = input pixels. B is the input
// itself (no im2col: a deconvolution's K is only its input channels), copied chunk by chunk into
// a float panel, which widens f16/bf16 a vector at a time and is reused by every tap; each tile
// of columns is added at once into an f32 accumulator of the output (col2im). The output
// channels go in blocks of gemm::kBlockM; one block is a thread's unit of work with a private
// accumulator. The input is walked in bands of rows, and the accumulator holds only the output
// rows a band reaches (about 512 KiB, so it stays in L2 on large maps too): rows no later band
// reaches have every tap in and leave with bias, activation and conversion to T applied in
// registers, and the rows shared with the next band move to the accumulator's top. Chosen over the
// phase decomposition (one gathered convolution per output phase, oy mod stride x ox mod stride):
// that form needs an im2col panel per phase (K = input channels x taps of the phase, which differ
// between phases) and a strided store the register tile does not have, while here the micro-kernel
// runs as it is and the col2im add costs two vector loads and a store per K multiply-adds of a
// column. Measured on AVX-512 (f32, 1 thread, benchmarks/bench_deconv.cpp): 0.7-0.85 of the FMA
// peak on FCN/U-Net upsampling layers, 6x the direct kernel.
//
// deconvolution (any grouping) and deconvolution_depthwise are direct loops in gather form: each
// output value sums the input pixels whose dilated kernel footprint covers it, so every output is
// written once (bias, sums, activation, store) and the pads are cut by simply not computing them;
// vectorized across output channels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/kernels/activation.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels {

/// Where a transposed convolution reads and writes. Extents are logical pixels; steps are counted
/// in values (packed elements times their lanes).
struct DeconvGeometry {
  int w = 0, h = 0;           ///< input extent
  int in_pack = 1;            ///< input elempack
  std::size_t in_cstep = 0;   ///< values between input channel groups
  int outw = 0, outh = 0;     ///< output extent, after the cut
  int out_groups = 0;         ///< output channel groups (num_output / output pack)
  std::size_t out_cstep = 0;  ///< values between output channel groups
  int kernel_w = 1, kernel_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int stride_w = 1, stride_h = 1;
  int offset_x = 0, offset_y = 0;  ///< where output (0, 0) lies in the uncut output
};

/// The input channels one group of output channels reads and where its weights start: a group of
/// OutPack output channels may straddle convolution groups, so it reads the union of their input
/// channels (with zero weights where a lane's group does not use a channel).
struct DeconvBlock {
  int q_begin = 0;                ///< first input channel read
  int q_count = 0;                ///< input channels read
  std::size_t weight_offset = 0;  ///< start of this block's [kernel_h*kernel_w][q_count][OutPack]
};

namespace deconv_detail {

/// W lanes of float: a batch, or a plain float for W = 1, with the few operations the kernels use.
template <int W>
struct Lanes {
  using V = simd::fbatch<W>;
  static V splat(float v) { return simd::broadcast<W>(v); }
  template <StorageElement T>
  static V load(const T* p) {
    return simd::load<W>(p);
  }
  template <StorageElement T>
  static void store(T* p, V v) {
    simd::store<W>(p, v);
  }
  static V madd(V a, V b, V c) { return xsimd::fma(a, b, c); }
};
template <>
struct Lanes<1> {
  using V = float;
  static V splat(float v) { return v; }
  template <StorageElement T>
  static V load(const T* p) {
    return to_f32(*p);
  }
  template <StorageElement T>
  static void store(T* p, V v) {
    *p = from_f32<T>(v);
  }
  static V madd(V a, V b, V c) { return a * b + c; }
};

/// The register width that serves Pack lanes: Pack itself, or the widest native batch below it.
template <int Pack>
inline constexpr int lane_width = Pack < simd::max_width ? Pack : simd::max_width;

/// Multiply-adds below which a call stays on one thread (thread start-up would cost more).
inline constexpr std::size_t kParallelWork = std::size_t(1) << 15;

}  // namespace deconv_detail

/// Transposed convolution, any grouping: out = act(bias + sum over (ky, kx, q) of
/// in[q][sy][sx] * w[o][q][ky][kx]) where sy * stride_h + ky * dilation_h is the output row in the
/// uncut output (likewise for x). Each block of OutPack output channels reads its DeconvBlock's
/// input channels; `weights` are laid out per block as [ky][kx][q][OutPack lane].
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int OutPack,       ///< output elempack: output channels computed together
          class Act>         ///< act:: functor applied to the accumulators before the store
void deconvolution(const T* in, T* out, const DeconvGeometry& g, const float* weights,
                   const DeconvBlock* blocks, const float* bias, const Act& act, int num_threads) {
  constexpr int W = deconv_detail::lane_width<OutPack>;
  constexpr int kParts = OutPack / W;
  using L = deconv_detail::Lanes<W>;
  using V = typename L::V;
  const int rows = g.out_groups * g.outh;
  const std::size_t work = std::size_t(rows) * g.outw * g.kernel_w * g.kernel_h *
                           std::size_t(blocks[0].q_count) * OutPack;
#pragma omp parallel for num_threads(num_threads) if (work > deconv_detail::kParallelWork)
  for (int t = 0; t < rows; ++t) {
    const int b = t / g.outh, oy = t % g.outh;
    const DeconvBlock blk = blocks[b];
    const int y = oy + g.offset_y;
    T* dst = out + b * g.out_cstep + std::size_t(oy) * g.outw * OutPack;
    for (int ox = 0; ox < g.outw; ++ox) {
      const int x = ox + g.offset_x;
      V acc[kParts];
      for (int p = 0; p < kParts; ++p)
        acc[p] = bias ? L::load(bias + b * OutPack + p * W) : L::splat(0.f);
      for (int ky = 0; ky < g.kernel_h; ++ky) {
        const int sys = y - ky * g.dilation_h;
        if (sys < 0 || sys % g.stride_h != 0 || sys / g.stride_h >= g.h) continue;
        const int sy = sys / g.stride_h;
        for (int kx = 0; kx < g.kernel_w; ++kx) {
          const int sxs = x - kx * g.dilation_w;
          if (sxs < 0 || sxs % g.stride_w != 0 || sxs / g.stride_w >= g.w) continue;
          const int sx = sxs / g.stride_w;
          const float* wk = weights + blk.weight_offset +
                            std::size_t(ky * g.kernel_w + kx) * blk.q_count * OutPack;
          // Walk the block's input channels: lane ql of channel group qg, at pixel (sy, sx).
          int ql = blk.q_begin % g.in_pack;
          const T* src = in + std::size_t(blk.q_begin / g.in_pack) * g.in_cstep +
                         (std::size_t(sy) * g.w + sx) * g.in_pack;
          for (int qi = 0; qi < blk.q_count; ++qi, wk += OutPack) {
            const V v = L::splat(to_f32(src[ql]));
            for (int p = 0; p < kParts; ++p) acc[p] = L::madd(v, L::load(wk + p * W), acc[p]);
            if (++ql == g.in_pack) {
              ql = 0;
              src += g.in_cstep;
            }
          }
        }
      }
      for (int p = 0; p < kParts; ++p) L::store(dst + ox * OutPack + p * W, act(acc[p]));
    }
  }
}

/// Depthwise transposed convolution (group == input channels == output channels): lane l of
/// channel group b reads only lane l of input group b. `weights` are [group b][ky][kx][Pack lane].
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< elempack of input and output alike
          class Act>         ///< act:: functor applied to the accumulators before the store
void deconvolution_depthwise(const T* in, T* out, const DeconvGeometry& g, const float* weights,
                             const float* bias, const Act& act, int num_threads) {
  constexpr int W = deconv_detail::lane_width<Pack>;
  constexpr int kParts = Pack / W;
  using L = deconv_detail::Lanes<W>;
  using V = typename L::V;
  const int maxk = g.kernel_w * g.kernel_h;
  const int rows = g.out_groups * g.outh;
  const std::size_t work = std::size_t(rows) * g.outw * maxk * Pack;
#pragma omp parallel for num_threads(num_threads) if (work > deconv_detail::kParallelWork)
  for (int t = 0; t < rows; ++t) {
    const int b = t / g.outh, oy = t % g.outh;
    const int y = oy + g.offset_y;
    const T* src = in + b * g.in_cstep;
    const float* wb = weights + std::size_t(b) * maxk * Pack;
    T* dst = out + b * g.out_cstep + std::size_t(oy) * g.outw * Pack;
    for (int ox = 0; ox < g.outw; ++ox) {
      const int x = ox + g.offset_x;
      V acc[kParts];
      for (int p = 0; p < kParts; ++p)
        acc[p] = bias ? L::load(bias + b * Pack + p * W) : L::splat(0.f);
      for (int ky = 0; ky < g.kernel_h; ++ky) {
        const int sys = y - ky * g.dilation_h;
        if (sys < 0 || sys % g.stride_h != 0 || sys / g.stride_h >= g.h) continue;
        const int sy = sys / g.stride_h;
        for (int kx = 0; kx < g.kernel_w; ++kx) {
          const int sxs = x - kx * g.dilation_w;
          if (sxs < 0 || sxs % g.stride_w != 0 || sxs / g.stride_w >= g.w) continue;
          const int sx = sxs / g.stride_w;
          const T* s = src + (std::size_t(sy) * g.w + sx) * Pack;
          const float* wk = wb + (ky * g.kernel_w + kx) * Pack;
          for (int p = 0; p < kParts; ++p)
            acc[p] = L::madd(L::load(s + p * W), L::load(wk + p * W), acc[p]);
        }
      }
      for (int p = 0; p < kParts; ++p) L::store(dst + ox * Pack + p * W, act(acc[p]));
    }
  }
}

/// Floats of deconvolution_gemm's packed weights: for each block of gemm::kBlockM output channels
/// and each kernel tap, a K = num_input by kBlockM block of A.
inline std::size_t deconvolution_gemm_weights_size(int num_input, int num_output, int maxk) {
  return gemm::weights_size(num_output, num_input) * std::size_t(maxk);
}

namespace deconv_detail {

/// Floats of output the per-thread accumulator aims at: half of a 1 MiB L2, so it stays there
/// beside the panel and the weights.
inline constexpr std::size_t kAccumulatorFloats = std::size_t(1) << 17;

/// How deconvolution_gemm walks the input: `band` input rows at a time, into an accumulator of
/// `rows` output rows (those a band reaches: band x stride plus the kernel's extent).
struct Bands {
  int band = 1;  ///< input rows per band
  int rows = 1;  ///< output rows the accumulator holds
};

inline Bands bands(const DeconvGeometry& g) {
  const int extent = (g.kernel_h - 1) * g.dilation_h + 1;
  const std::size_t row_floats = std::size_t(g.outw) * gemm::kBlockM;
  const int budget_rows = int(std::min<std::size_t>(
      std::max<std::size_t>(kAccumulatorFloats / row_floats, 1), std::size_t(g.outh) + extent));
  Bands b;
  b.band = std::clamp((budget_rows - extent) / g.stride_h, 1, g.h);
  b.rows = std::min(b.band * g.stride_h + extent, g.outh);
  return b;
}

}  // namespace deconv_detail

/// Workspace floats deconvolution_gemm needs per thread for geometry `g` and num_input input
/// channels: the f32 accumulator of one output channel block over a band of output rows, one tile
/// of columns and the input panel of a chunk of pixels; whole blocks, so each thread's part stays
/// as aligned as the workspace.
inline std::size_t deconvolution_gemm_workspace_per_thread(int num_input, const DeconvGeometry& g) {
  const std::size_t panel = gemm::workspace_per_thread(num_input);
  return (std::size_t(deconv_detail::bands(g).rows) * g.outw + gemm::kTileN) * gemm::kBlockM +
         (panel + gemm::kBlockM - 1) / gemm::kBlockM * gemm::kBlockM;
}

/// Weights for deconvolution_gemm: block (b, k) of A holds, for each input channel q, the kBlockM
/// weights w[o][q][k] of output channels o = b * kBlockM .. (zeros past num_output), so row m of A
/// is (block, tap, lane) and K runs over the input channels in order. `src` is ncnn's
/// [num_output][num_input][kernel_h][kernel_w].
inline void deconvolution_gemm_weights(const float* src, float* dst, int num_input, int num_output,
                                       int maxk) {
  constexpr int kBlockM = gemm::kBlockM;
  std::fill_n(dst, deconvolution_gemm_weights_size(num_input, num_output, maxk), 0.f);
  for (int o = 0; o < num_output; ++o)
    for (int q = 0; q < num_input; ++q)
      for (int k = 0; k < maxk; ++k)
        dst[((std::size_t(o / kBlockM) * maxk + k) * num_input + q) * kBlockM + o % kBlockM] =
            src[(std::size_t(o) * num_input + q) * maxk + k];
}

namespace deconv_detail {

/// The bias the register tile adds to the columns: none (bias waits for the last tap).
alignas(64) inline constexpr float kZeroBias[gemm::kBlockM] = {};

/// Adds a tile of columns (`cols`: [kRows][kTileN][kWidth], the rows of tap (ky, kx) for one
/// output channel block) into the block's accumulator `acc` ([row][outw][kBlockM], row 0 being
/// output row y0): input pixel n0 + j lands on uncut output (sy * stride + ky * dilation), less
/// the cut's offset. The band walk keeps every row it reaches at or past y0 and inside `acc`.
inline void col2im_add(const float* cols, float* acc, int y0, const DeconvGeometry& g,
                       std::size_t n0, int nvalid, int ky, int kx, int rows) {
  using V = simd::fbatch<gemm::kWidth>;
  const int dy = ky * g.dilation_h - g.offset_y, dx = kx * g.dilation_w - g.offset_x;
  int sy = int(n0 / std::size_t(g.w)), sx = int(n0 % std::size_t(g.w));
  for (int j = 0; j < nvalid; ++j) {
    const int y = sy * g.stride_h + dy, x = sx * g.stride_w + dx;
    if (unsigned(y) < unsigned(g.outh) && unsigned(x) < unsigned(g.outw)) {
      float* a = acc + (std::size_t(y - y0) * g.outw + x) * gemm::kBlockM;
      for (int r = 0; r < rows; ++r) {
        const float* c = cols + (r * gemm::kTileN + j) * gemm::kWidth;
        (V::load_aligned(a + r * gemm::kWidth) + V::load_aligned(c))
            .store_aligned(a + r * gemm::kWidth);
      }
    }
    if (++sx == g.w) {
      sx = 0;
      ++sy;
    }
  }
}

}  // namespace deconv_detail

/// Transposed convolution of group 1 as a packed GEMM (see the top of this file): out =
/// act(bias + sum over (ky, kx, q) of in[q][sy][sx] * w[o][q][ky][kx]) at uncut output row
/// sy * stride_h + ky * dilation_h (likewise x), cut by g's offset and out's extent. `weights`
/// come from deconvolution_gemm_weights, `bias` from gemm::pack_bias (both for out.c * OutPack
/// outputs); `workspace` holds num_threads x deconvolution_gemm_workspace_per_thread(in.c *
/// InPack, g) floats and must be 64-byte aligned. g's extents, offsets and window are read; its
/// steps and packs are not (the views carry them).
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int InPack,        ///< lanes of an input channel group
          int OutPack,       ///< lanes of an output channel group
          class Act>         ///< act:: functor applied to the sums before the store
void deconvolution_gemm(const MatView<T, InPack>& in, const MatView<T, OutPack>& out,
                        const DeconvGeometry& g, const float* weights, const float* bias,
                        const Act& act, float* workspace, int num_threads) {
  using gemm::kBlockM;
  using gemm::kRows;
  using gemm::kTileN;
  using gemm::kWidth;
  using V = simd::fbatch<kWidth>;
  const int m = out.c * OutPack;
  const int mblocks = (m + kBlockM - 1) / kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const int k_total = in.c * InPack;
  const std::size_t n_total = std::size_t(in.w) * in.h;
  const std::size_t block_floats = std::size_t(k_total) * kBlockM;
  const std::size_t tile_floats = std::size_t(k_total) * kTileN;
  const std::size_t row_floats = std::size_t(out.w) * kBlockM;
  const deconv_detail::Bands bands = deconv_detail::bands(g);
  const std::size_t per_thread = deconvolution_gemm_workspace_per_thread(k_total, g);
  // A thread takes whole output channel blocks, whose accumulators no other thread touches.
  const int threads =
      kernels::detail::worth_threads(std::size_t(m) * maxk * std::size_t(k_total) * n_total)
          ? std::clamp(num_threads, 1, mblocks)
          : 1;
  const MatView<float, kWidth> no_view{};
  const kernels::ConvGeometry one_by_one{};  // panels gather the pixels as 1x1 windows
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    float* acc = workspace + std::size_t(omp_get_thread_num()) * per_thread;
#else
    float* acc = workspace;
#endif
    float* cols_data = acc + std::size_t(bands.rows) * row_floats;
    float* panel = cols_data + std::size_t(kTileN) * kBlockM;
    // The tile stores its kBlockM x kTileN columns as kRows channel groups of kTileN pixels.
    MatView<float, kWidth> cols = no_view;
    cols.data = cols_data;
    cols.dims = 3;
    cols.w = kTileN;
    cols.h = 1;
    cols.d = 1;
    cols.c = kRows;
    cols.cstep = kTileN;
#pragma omp for schedule(dynamic)
    for (int mb = 0; mb < mblocks; ++mb) {
      const int m0 = mb * kBlockM;
      const int rows = std::min(kRows, (m - m0 + kWidth - 1) / kWidth);
      std::fill_n(acc, std::size_t(bands.rows) * row_floats, 0.f);
      int y0 = 0;  // the output row at the top of the accumulator
      for (int sy0 = 0; sy0 < g.h; sy0 += bands.band) {
        const int sy1 = std::min(g.h, sy0 + bands.band);
        const std::size_t n_begin = std::size_t(sy0) * g.w, n_end = std::size_t(sy1) * g.w;
        for (std::size_t c0 = n_begin; c0 < n_end; c0 += gemm::kChunkTiles * kTileN) {
          const int tiles =
              int((std::min<std::size_t>(n_end - c0, gemm::kChunkTiles * kTileN) + kTileN - 1) /
                  kTileN);
          // The chunk's pixels gathered into a float panel (zeros past the band), widened from T
          // a vector at a time: every tap's block of A then reads them from L2.
          for (int t = 0; t < tiles; ++t)
            gemm::detail::pack_tile<T, InPack>(in, one_by_one, in.w, c0 + std::size_t(t) * kTileN,
                                               n_end, panel + t * tile_floats);
          for (int k = 0; k < maxk; ++k) {
            // Block (mb, k) of A serves every tile of the chunk from L1.
            const float* a = weights + (std::size_t(mb) * maxk + k) * block_floats;
            for (int t = 0; t < tiles; ++t) {
              const std::size_t n0 = c0 + std::size_t(t) * kTileN;
              const int nvalid = int(std::min<std::size_t>(kTileN, n_end - n0));
              gemm::detail::tile<float, kWidth, float, InPack>(
                  panel + t * tile_floats, std::size_t(kTileN) * InPack, in.c, a,
                  deconv_detail::kZeroBias, cols, {}, 0, kBlockM, 0, nvalid, act::Identity{});
              deconv_detail::col2im_add(cols_data, acc, y0, g, n0, nvalid, k / g.kernel_w,
                                        k % g.kernel_w, rows);
            }
          }
        }
        // Rows above the next band's reach have every tap in: bias, activation and the
        // conversion to T on the way out, a buffer at a time (past the last band's reach,
        // output_pad rows hold bias alone); the rest move to the top of the accumulator.
        const int y1 = sy1 == g.h ? g.outh : std::clamp(sy1 * g.stride_h - g.offset_y, y0, g.outh);
        while (y0 < y1) {
          const int y_end = std::min(y1, y0 + bands.rows);
          for (std::size_t p = std::size_t(y0) * out.w; p < std::size_t(y_end) * out.w; ++p) {
            const float* a = acc + (p - std::size_t(y0) * out.w) * kBlockM;
            for (int r = 0; r < rows; ++r) {
              const int c = m0 + r * kWidth;
              const V v = V::load_aligned(a + r * kWidth) + V::load_unaligned(bias + c);
              gemm::detail::store_channels<OutPack>(out, c, m, p, V(act(v)));
            }
          }
          const std::size_t done = std::size_t(y_end - y0) * row_floats;
          const std::size_t held = std::size_t(bands.rows) * row_floats;
          std::copy(acc + done, acc + held, acc);
          std::fill(acc + (held - done), acc + held, 0.f);
          y0 = y_end;
        }
      }
    }
  }
}

}  // namespace infer::kernels
