// Transposed-convolution kernels (ncnn Deconvolution, DeconvolutionDepthWise) in gather form: each
// output value sums the input pixels whose dilated kernel footprint covers it, so every output is
// written once (bias, sums, activation, store) and the pads are cut by simply not computing them.
// Direct loops, vectorized across output channels; the fast tiled versions come later.
#pragma once

#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>

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

}  // namespace infer::kernels
