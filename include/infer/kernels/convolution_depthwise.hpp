// Direct depthwise 3x3 and 5x5 kernels, stride 1 and 2, on the unpadded input: the interior of
// each output row runs in tiles of several output pixels with the kernel's weights held in
// registers (each input vector is loaded once per tile and feeds every output it touches); the
// border pixels, whose windows reach into the padding, take a bounds-checked path. Skipping the
// padded copy matters: these layers are memory-bound, and the copy doubles their input traffic.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// The padding around the input that convolution_depthwise_kxk reads as `value`; the right and
/// bottom pads follow from the output extents.
struct DepthwisePads {
  int left = 0;
  int top = 0;
  float value = 0.f;
};

/// Multiply-adds below which convolution_depthwise_kxk stays on one thread: measured, MobileNetV2's
/// 14x14x576 stride 2 (254k) runs slower on two threads, 7x7x960 stride 1 (423k) faster.
inline constexpr std::size_t kDepthwiseThreadWork = std::size_t(1) << 18;

namespace detail {

/// Output pixels per interior tile: as many accumulators as the vector registers leave once the
/// K * K weights, an input and the bias are held (never below 4: AVX2 5x5 reads weights from L1).
template <int K, int S>
constexpr int depthwise_tile() {
  constexpr int regs = simd::max_width >= 16 ? 32 : 16;
  constexpr int free = regs - K * K - 2;
  return free > 8 ? 8 : free < 4 ? 4 : free;
}

/// One output row of lane block `b` of a channel group: the border pixels bounds-checked, the
/// interior in tiles of N pixels (then single pixels).
template <StorageElement T, int Pack, int K, int S, class Act>
struct DepthwiseRow {
  using L = Lanes<Pack>;
  using Vec = typename L::Vec;

  const Vec* w;  ///< K * K weight vectors of this lane block
  Vec bias;
  const Act& act;

  /// N outputs whose windows lie inside the input; `src` is the top-left input of the first.
  template <int N>
  void tile(const T* src, std::size_t row_values, T* dst) const {
    Vec acc[N];
#pragma GCC unroll 16
    for (int o = 0; o < N; ++o) acc[o] = bias;
#pragma GCC unroll 8
    for (int ky = 0; ky < K; ++ky) {
      const T* r = src + std::size_t(ky) * row_values;
      // Input column i feeds output o through kernel column i - o * S.
#pragma GCC unroll 32
      for (int i = 0; i < (N - 1) * S + K; ++i) {
        const Vec v = L::load(r + std::size_t(i) * Pack);
#pragma GCC unroll 16
        for (int o = 0; o < N; ++o) {
          const int kx = i - o * S;
          if (kx >= 0 && kx < K) acc[o] = L::fma(v, w[ky * K + kx], acc[o]);
        }
      }
    }
#pragma GCC unroll 16
    for (int o = 0; o < N; ++o) L::store(dst + std::size_t(o) * Pack, act(acc[o]));
  }

  /// One output whose window reaches outside the w x h input (at ix0, iy0), where it reads `pad`.
  void border(const T* plane, int in_w, int in_h, int ix0, int iy0, Vec pad, T* dst) const {
    Vec acc = bias;
    for (int ky = 0; ky < K; ++ky) {
      const int iy = iy0 + ky;
      for (int kx = 0; kx < K; ++kx) {
        const int ix = ix0 + kx;
        const Vec v = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w
                          ? L::load(plane + (std::size_t(iy) * in_w + ix) * Pack)
                          : pad;
        acc = L::fma(v, w[ky * K + kx], acc);
      }
    }
    L::store(dst, act(acc));
  }
};

}  // namespace detail

/// Whether convolution_depthwise_kxk has a kernel for this geometry: square 3x3 or 5x5, stride 1
/// or 2 on both axes, no dilation.
constexpr bool depthwise_kxk_supported(const ConvGeometry& g) {
  return g.kernel_w == g.kernel_h && (g.kernel_w == 3 || g.kernel_w == 5) &&
         g.stride_w == g.stride_h && (g.stride_w == 1 || g.stride_w == 2) && g.dilation_w == 1 &&
         g.dilation_h == 1;
}

/// Depthwise K x K stride S: output channel c = act(conv(input channel c, its own kernel) +
/// bias[c]), vectorized across the Pack lanes of a channel group. `in` is the UNPADDED input,
/// read as `pads.value` outside; out.w x out.h are the output extents the pads give. `weights`
/// are laid out by convolution_depthwise_weights; `bias` holds out.c * Pack values.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          int K,             ///< kernel extent, both axes
          int S,             ///< stride, both axes
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_depthwise_kxk(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                               const float* weights, const float* bias, const DepthwisePads& pads,
                               const Act& act, int num_threads) {
  using L = detail::Lanes<Pack>;
  using Vec = typename L::Vec;
  using Row = detail::DepthwiseRow<T, Pack, K, S, Act>;
  constexpr int N = detail::depthwise_tile<K, S>();
  const int groups = out.c, outh = out.h, outw = out.w;
  const std::size_t row_values = std::size_t(in.w) * Pack;
  // Outputs [x_lo, x_hi) have windows inside the input along w.
  const int x_lo = std::min(outw, (pads.left + S - 1) / S);
  const int last = in.w - K + pads.left;  // the last window start (padded) inside the input
  const int x_hi = std::max(x_lo, last < 0 ? 0 : std::min(outw, last / S + 1));
  const std::size_t work = std::size_t(outw) * outh * groups * K * K * Pack;
  const auto output_row = [&](int q, int y) {
    const T* plane = in.channel(q);
    T* dst = out.row(q, y);
    const int iy0 = y * S - pads.top;
    const bool row_inside = iy0 >= 0 && iy0 + K <= in.h;
    for (int b = 0; b < L::blocks; ++b) {
      Vec w[K * K];
      for (int k = 0; k < K * K; ++k)
        w[k] = L::load(weights + (std::size_t(q) * K * K + k) * Pack + b * L::W);
      const Row row{w, L::load(bias + std::size_t(q) * Pack + b * L::W), act};
      const Vec pad = L::splat(pads.value);
      const T* lanes = plane + b * L::W;
      T* d = dst + b * L::W;
      int x = 0;
      if (row_inside) {
        for (; x < x_lo; ++x)
          row.border(lanes, in.w, in.h, x * S - pads.left, iy0, pad, d + std::size_t(x) * Pack);
        const T* src = lanes + std::size_t(iy0) * row_values;
        for (; x + N <= x_hi; x += N)
          row.template tile<N>(src + std::size_t(x * S - pads.left) * Pack, row_values,
                               d + std::size_t(x) * Pack);
        for (; x < x_hi; ++x)
          row.template tile<1>(src + std::size_t(x * S - pads.left) * Pack, row_values,
                               d + std::size_t(x) * Pack);
      }
      for (; x < outw; ++x)
        row.border(lanes, in.w, in.h, x * S - pads.left, iy0, pad, d + std::size_t(x) * Pack);
    }
  };
  // Rows of every channel group are the parallel work, so a few groups still fill the threads.
  // Without threads no parallel region at all: even a one-thread region costs about a
  // microsecond, several percent of the smallest of these layers.
  if (num_threads > 1 && work >= kDepthwiseThreadWork) {
#pragma omp parallel for collapse(2) num_threads(num_threads)
    for (int q = 0; q < groups; ++q)
      for (int y = 0; y < outh; ++y) output_row(q, y);
  } else {
    for (int q = 0; q < groups; ++q)
      for (int y = 0; y < outh; ++y) output_row(q, y);
  }
}

/// Runs convolution_depthwise_kxk for geometry `g` and returns true, or returns false (doing
/// nothing) where depthwise_kxk_supported(g) is false.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          class Act>         ///< epilogue activation, callable on float and on simd batches
bool convolution_depthwise_fast(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                                const float* weights, const float* bias, const ConvGeometry& g,
                                const DepthwisePads& pads, const Act& act, int num_threads) {
  if (!depthwise_kxk_supported(g)) return false;
  const auto run = [&]<int K, int S>() {
    convolution_depthwise_kxk<T, Pack, K, S>(in, out, weights, bias, pads, act, num_threads);
  };
  if (g.kernel_w == 3) {
    if (g.stride_w == 1) {
      run.template operator()<3, 1>();
    } else {
      run.template operator()<3, 2>();
    }
  } else {
    if (g.stride_w == 1) {
      run.template operator()<5, 1>();
    } else {
      run.template operator()<5, 2>();
    }
  }
  return true;
}

}  // namespace infer::kernels
