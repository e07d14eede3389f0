// Grouped convolution whose groups are narrower than a channel pack (ResNeXt's and RegNet's groups
// of 2 or 4 channels, ShuffleNet's 12-channel groups, odd widths at pack 1): vectorized across
// output pixels instead of channel lanes, on the unpacked (pack 1) input. For each group and chunk
// of output pixels a small GEMM multiplies the group's [cout_g][K] weights (K = input channels of
// the group x kernel positions, ncnn's weight order) by the window's values [K][pixels], in
// register tiles of up to 4 output channels x several pixel vectors, each weight broadcast from
// memory. At stride 1 the values are read in place: the output is computed on the padded input's
// grid (rows as wide as the input's, the columns past the output's width computed and not
// stored), where tap (ky, kx) of input channel ic is one offset from the output pixel's index, so
// row k of the product is the input plane shifted by that offset. Other strides (and the last
// rows, whose shifted rows would read past the plane) gather an f32 im2col block per chunk. The
// epilogue adds the bias and applies the activation on the way to the unpacked output;
// arithmetic is f32 whatever the storage type.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/kernels/convolution_depthwise.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// How convolution_grouped_planar cuts its work: output pixels per chunk (a multiple of the
/// vector width) and the workspace one thread needs, in floats (its im2col block, the chunk's
/// sums, and the K row offsets).
struct GroupedPlanarPlan {
  int chunk = 0;
  std::size_t floats = 0;  ///< per thread

  /// Chunks whose K rows of values stay within 32 KiB (one vector of pixels at least), no wider
  /// than the output's rows on the input's grid.
  static GroupedPlanarPlan plan(int cin_g, int cout_g, const ConvGeometry& g, int inw, int outh) {
    constexpr int V = simd::max_width;
    const int K = cin_g * g.kernel_w * g.kernel_h;
    const int pixels = std::max(inw, 1) * std::max(outh, 1);
    const int fit = std::max(1, 8192 / std::max(K, 1) / V) * V;
    GroupedPlanarPlan p;
    p.chunk = std::min(fit, (pixels + V - 1) / V * V);
    p.floats = (std::size_t(K) + std::size_t(cout_g)) * std::size_t(p.chunk) +
               std::size_t(K) * sizeof(std::ptrdiff_t) / sizeof(float);
    return p;
  }
};

namespace detail {

/// Pixel vectors of a register tile of M output channels: its M x NV accumulators, the NV pixel
/// vectors of one k and a broadcast weight fit the registers (at most 8).
template <int M>
inline constexpr int planar_vectors = std::min(8, (simd::vector_registers - 1) / (M + 1));

/// c[m][0, NV * V) = sum over k < K of w[m * K + k] * b[koff[k] + (0, NV * V)] for the M rows of
/// c (`ldc` floats apart): row k of the values starts koff[k] elements from b.
template <int M, int NV, StorageElement T>
void planar_tile(const T* b, const std::ptrdiff_t* koff, const float* w, int K, float* c,
                 std::size_t ldc) {
  constexpr int V = simd::max_width;
  using Vec = simd::fbatch<V>;
  Vec acc[M][NV];
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[m][j] = Vec(0.f);
  for (int k = 0; k < K; ++k) {
    const T* bk = b + koff[k];
    Vec x[NV];
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) x[j] = simd::load<V>(bk + j * V);
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      const Vec wv(w[std::size_t(m) * K + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[m][j] = xsimd::fma(wv, x[j], acc[m][j]);
    }
  }
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m)
#pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[m][j].store_unaligned(c + std::size_t(m) * ldc + j * V);
}

/// Rows [0, M) of c = w[M][K] * values, across `vectors` pixel vectors: in runs of the tile's
/// width, then one at a time.
template <int M, StorageElement T>
void planar_rows(const T* b, const std::ptrdiff_t* koff, const float* w, int K, int vectors,
                 float* c, std::size_t ldc) {
  constexpr int V = simd::max_width, NV = planar_vectors<M>;
  int j = 0;
  for (; j + NV <= vectors; j += NV)
    planar_tile<M, NV>(b + std::size_t(j) * V, koff, w, K, c + std::size_t(j) * V, ldc);
  for (; j < vectors; ++j)
    planar_tile<M, 1>(b + std::size_t(j) * V, koff, w, K, c + std::size_t(j) * V, ldc);
}

/// c[rows][vectors * V] = w[rows][K] * values (rows koff apart from b): tiles of 4 output
/// channels, then the 1 to 3 left.
template <StorageElement T>
void planar_gemm(const T* b, const std::ptrdiff_t* koff, const float* w, int rows, int K,
                 int vectors, float* c, std::size_t ldc) {
  int m = 0;
  for (; m + 4 <= rows; m += 4)
    planar_rows<4>(b, koff, w + std::size_t(m) * K, K, vectors, c + std::size_t(m) * ldc, ldc);
  const float* wm = w + std::size_t(m) * K;
  float* cm = c + std::size_t(m) * ldc;
  switch (rows - m) {
    case 3:
      planar_rows<3>(b, koff, wm, K, vectors, cm, ldc);
      break;
    case 2:
      planar_rows<2>(b, koff, wm, K, vectors, cm, ldc);
      break;
    case 1:
      planar_rows<1>(b, koff, wm, K, vectors, cm, ldc);
      break;
    default:
      break;
  }
}

/// The im2col block of one group and chunk: row k = ic * maxk + ky * kernel_w + kx holds, for
/// the `count` output pixels from p0 on, input channel c0 + ic at the window's tap (ky, kx), in
/// f32; each row zero-filled up to `width` (whole vectors).
template <StorageElement T>
void planar_im2col(const MatView<T, 1>& in, int c0, int cin_g, const ConvGeometry& g, int outw,
                   int p0, int count, int width, float* col) {
  const int maxk = g.kernel_w * g.kernel_h;
  const int y0 = p0 / outw, x0 = p0 - y0 * outw;
  for (int ic = 0; ic < cin_g; ++ic) {
    for (int ky = 0; ky < g.kernel_h; ++ky) {
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        float* dst = col + (std::size_t(ic) * maxk + std::size_t(ky) * g.kernel_w + kx) * width;
        int y = y0, x = x0;
        for (int i = 0; i < count;) {
          const int seg = std::min(outw - x, count - i);
          const T* src = in.row(c0 + ic, y * g.stride_h + ky * g.dilation_h) +
                         std::size_t(x) * g.stride_w + std::size_t(kx) * g.dilation_w;
          if (g.stride_w == 1) {
            copy_row(src, seg, dst + i);
          } else {
            int j = 0;
            if (g.stride_w == 2) {
              // The even values of vector pairs while a pair stays inside the input row.
              constexpr int W = simd::max_width;
              const int avail = in.w - (x * 2 + kx * g.dilation_w);
              for (; j + W <= seg && 2 * (j + W) <= avail; j += W) {
                simd::fbatch<W> even, odd;
                simd::deinterleave<W>(simd::load<W>(src + 2 * j), simd::load<W>(src + 2 * j + W),
                                      even, odd);
                even.store_unaligned(dst + i + j);
              }
            }
            for (; j < seg; ++j) dst[i + j] = to_f32(src[std::size_t(j) * g.stride_w]);
          }
          i += seg;
          x = 0;
          ++y;
        }
        for (int i = count; i < width; ++i) dst[i] = 0.f;
      }
    }
  }
}

/// dst[0, n) = act(src[0, n) + bias) in whole vectors: the last one overlapping the one before
/// (the same values again), or through a vector of scratch where n is less than one.
template <StorageElement T, class Act>
void planar_store(const float* src, int n, float bias, const Act& act, T* dst) {
  constexpr int V = simd::max_width;
  using Vec = simd::fbatch<V>;
  const Vec bv(bias);
  if (n < V) {
    alignas(64) float tail[V];
    act(Vec::load_unaligned(src) + bv).store_aligned(tail);
    for (int i = 0; i < n; ++i) dst[i] = from_f32<T>(tail[i]);
    return;
  }
  for (int i = 0;; i += V) {
    if (i > n - V) i = n - V;
    simd::store<V>(dst + i, act(Vec::load_unaligned(src + i) + bv));
    if (i == n - V) break;
  }
}

}  // namespace detail

/// out = act(conv(in, weights) + bias) for a convolution of `group` groups, each computed as
/// above. `in` is the padded input at pack 1 (its extents give the window positions), `out` the
/// output at pack 1; `weights` in ncnn's order [out.c][in.c / group][kernel_h][kernel_w]; `bias`
/// holds out.c values. `workspace` holds threads x plan.floats floats, `plan` from
/// GroupedPlanarPlan::plan for this layer, input and output.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_grouped_planar(const MatView<T, 1>& in, const MatView<T, 1>& out,
                                const float* weights, const float* bias, int group,
                                const ConvGeometry& g, const Act& act, int num_threads,
                                const GroupedPlanarPlan& plan, float* workspace) {
  constexpr int V = simd::max_width;
  const int cin_g = in.c / group, cout_g = out.c / group;
  const int maxk = g.kernel_w * g.kernel_h, K = cin_g * maxk;
  const int NC = plan.chunk;
  // Stride 1: output rows [0, grid_rows) on the input's grid, as many as keep every shifted row
  // (whole vectors of the chunks' last) inside the input plane; the rest through im2col.
  const std::size_t plane = std::size_t(in.w) * std::size_t(in.h);
  const std::size_t reach = std::size_t(g.kernel_h - 1) * g.dilation_h * in.w +
                            std::size_t(g.kernel_w - 1) * g.dilation_w;
  int grid_rows = 0;
  if (g.stride_w == 1 && g.stride_h == 1)
    for (int r = out.h; r > 0; --r) {
      const std::size_t cells = std::size_t(r) * in.w;
      const std::size_t chunks = (cells + NC - 1) / NC;
      const std::size_t last = cells - (chunks - 1) * NC;  // the last chunk's pixels
      const std::size_t end = (chunks - 1) * NC + (last + V - 1) / V * V;
      if (end + reach <= plane) {
        grid_rows = r;
        break;
      }
    }
  const int grid_cells = grid_rows * in.w;
  const int grid_chunks = (grid_cells + NC - 1) / NC;
  const int rest = (out.h - grid_rows) * out.w;  // pixels from row grid_rows on
  const int rest_chunks = (rest + NC - 1) / NC;
  const int per_group = grid_chunks + rest_chunks;
  const std::size_t work = std::size_t(out.w) * out.h * std::size_t(out.c) * std::size_t(K);
  const int threads = detail::worth_threads(work) ? std::max(num_threads, 1) : 1;
  detail::for_each_item(
      long(group) * per_group, threads, workspace, plan.floats, [&](long item, float* ws) {
        const int gi = int(item / per_group), ci = int(item % per_group);
        float* col = ws;
        float* sums = ws + std::size_t(K) * NC;
        auto* koff = reinterpret_cast<std::ptrdiff_t*>(sums + std::size_t(cout_g) * NC);
        const float* w = weights + std::size_t(gi) * cout_g * K;
        if (ci < grid_chunks) {
          // Grid cells [p0, p0 + count): cell (y, x) is output pixel (y, x) where x < out.w.
          const int p0 = ci * NC, count = std::min(NC, grid_cells - p0);
          const int vectors = (count + V - 1) / V;
          for (int ic = 0; ic < cin_g; ++ic)
            for (int ky = 0; ky < g.kernel_h; ++ky)
              for (int kx = 0; kx < g.kernel_w; ++kx)
                koff[(ic * g.kernel_h + ky) * g.kernel_w + kx] =
                    int(std::size_t(ic) * in.cstep + std::size_t(ky) * g.dilation_h * in.w +
                        std::size_t(kx) * g.dilation_w);
          detail::planar_gemm(in.channel(gi * cin_g) + p0, koff, w, cout_g, K, vectors, sums,
                              std::size_t(NC));
          for (int y = p0 / in.w; y * in.w < p0 + count; ++y) {
            const int x0 = std::max(p0 - y * in.w, 0);
            const int x1 = std::min(out.w, p0 + count - y * in.w);
            if (x0 >= x1) continue;
            for (int m = 0; m < cout_g; ++m) {
              const int oc = gi * cout_g + m;
              detail::planar_store(sums + std::size_t(m) * NC + (y * in.w + x0 - p0), x1 - x0,
                                   bias[oc], act, out.row(oc, y) + x0);
            }
          }
        } else {
          // Output pixels from row grid_rows on, gathered.
          const int p0 = grid_rows * out.w + (ci - grid_chunks) * NC;
          const int count = std::min(NC, out.w * out.h - p0);
          const int vectors = (count + V - 1) / V;
          const int width = vectors * V;
          detail::planar_im2col(in, gi * cin_g, cin_g, g, out.w, p0, count, width, col);
          for (int k = 0; k < K; ++k) koff[k] = std::ptrdiff_t(k) * width;
          detail::planar_gemm(static_cast<const float*>(col), koff, w, cout_g, K, vectors, sums,
                              std::size_t(NC));
          for (int m = 0; m < cout_g; ++m) {
            const int oc = gi * cout_g + m;
            detail::planar_store(sums + std::size_t(m) * NC, count, bias[oc], act,
                                 out.channel(oc) + p0);
          }
        }
      });
}

}  // namespace infer::kernels
