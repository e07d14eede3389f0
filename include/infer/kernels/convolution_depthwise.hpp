// Direct depthwise 3x3 and 5x5 kernels, stride 1 and 2, on the unpadded input: the interior of
// each output row runs in tiles of several output pixels with the kernel's weights held in
// registers (each input vector is loaded once per tile and feeds every output it touches); the
// border pixels, whose windows reach into the padding, take a bounds-checked path. Skipping the
// padded copy matters: these layers are memory-bound, and the copy doubles their input traffic.
// 5x5 stride 1 does 25 multiply-adds per output and is bound by the FMA units instead: its 25
// weight vectors would leave the row kernel few accumulators, and a quarter of a 14x14 map is
// border, so it runs through a per-thread ring of padded f32 input rows in tiles of 16 outputs.
// At pack 1 a channel has no lanes to vectorize across: each plane is copied once, padded, into
// f32 (stride 2 as even and odd column halves) and vectors run along the output rows instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

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
  constexpr int free = simd::vector_registers - K * K - 2;
  return free > 8 ? 8 : free < 4 ? 4 : free;
}

/// One kernel row's taps for N outputs: input column i of row `r` (Pack values apart) feeds output
/// o through kernel column i - o * S, with the K weight vectors `wk` of that kernel row.
template <int N, int K, int S, int Pack, class L, class U>
[[gnu::always_inline]] inline void row_taps(const U* r, const typename L::Vec* wk,
                                            typename L::Vec* acc) {
#pragma GCC unroll 64
  for (int i = 0; i < (N - 1) * S + K; ++i) {
    const typename L::Vec v = L::load(r + std::size_t(i) * Pack);
#pragma GCC unroll 16
    for (int o = 0; o < N; ++o) {
      const int kx = i - o * S;
      if (kx >= 0 && kx < K) acc[o] = L::fma(v, wk[kx], acc[o]);
    }
  }
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
      row_taps<N, K, S, Pack, L>(src + std::size_t(ky) * row_values, w + ky * K, acc);
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

namespace detail {

/// Runs f(item, buffer) for items [0, items) on `threads` threads in static shares, each thread
/// with its own `floats` floats of `workspace` (threads x floats in all).
template <class F>
void for_each_item(long items, int threads, float* workspace, std::size_t floats, F&& f) {
  if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long item = 0; item < items; ++item) {
#ifdef _OPENMP
      f(item, workspace + std::size_t(omp_get_thread_num()) * floats);
#else
      f(item, workspace);
#endif
    }
  } else {
    for (long item = 0; item < items; ++item) f(item, workspace);
  }
}

/// dst[0, n) = src[0, n) in f32, in whole vectors (the last one overlapping the one before):
/// memcpy takes `rep movsb` for these short rows, several times slower on AMD Zen.
template <StorageElement T>
inline void copy_row(const T* src, int n, float* dst) {
  constexpr int W = simd::max_width;
  if (n < W) {
    for (int i = 0; i < n; ++i) dst[i] = to_f32(src[i]);
    return;
  }
  for (int i = 0;; i += W) {
    if (i > n - W) i = n - W;
    simd::store<W>(dst + i, simd::load<W>(src + i));
    if (i == n - W) break;
  }
}

/// even[j] = src[2j], odd[j] = src[2j + 1] in f32 for the n values of src, in whole vector pairs
/// (the last pair overlapping the one before, at an even offset).
template <StorageElement T>
inline void split_row(const T* src, int n, float* even, float* odd) {
  constexpr int W = simd::max_width;
  int done = 0;
  if (n >= 2 * W) {
    const int last = (n - 2 * W) & ~1;
    for (int i = 0;; i += 2 * W) {
      if (i > last) i = last;
      simd::fbatch<W> e, o;
      simd::deinterleave<W>(simd::load<W>(src + i), simd::load<W>(src + i + W), e, o);
      simd::store<W>(even + i / 2, e);
      simd::store<W>(odd + i / 2, o);
      if (i == last) break;
    }
    done = last + 2 * W;
  }
  for (int i = done; i < n; ++i) (i % 2 == 0 ? even : odd)[i / 2] = to_f32(src[i]);
}

/// Output pixels per tile of the ring-buffer kernel: its weights are loaded one kernel row at a
/// time, so the registers go to accumulators (16 of 32 with AVX-512, 8 of 16 below).
inline constexpr int kRingTile = simd::max_width >= 16 ? 16 : 8;

/// N outputs of one lane block from the f32 ring rows `rows[ky]` of that block, the first
/// output's window starting at pixel x; `w` holds the block's K * K weight vectors, Pack floats
/// apart. The first `count` outputs are stored.
template <int N,             ///< outputs of the tile
          int K,             ///< kernel extent, both axes
          int S,             ///< stride, both axes
          class L,           ///< Lanes<Pack> of the channel group
          StorageElement T,  ///< storage type of the output
          class Act>         ///< epilogue activation, callable on simd batches
inline void ring_tile(const float* const* rows, std::size_t x, const float* w, typename L::Vec bias,
                      const Act& act, T* dst, int count) {
  using Vec = typename L::Vec;
  constexpr int P = L::W * L::blocks;  // floats per pixel in a ring row
  // One kernel row per iteration of the ky loop, which is not unrolled: the accumulators stay in
  // registers across it while each iteration loads its K weights (unrolled, GCC spills them).
  Vec acc[N];
#pragma GCC unroll 16
  for (int o = 0; o < N; ++o) acc[o] = bias;
#pragma GCC unroll 1
  for (int ky = 0; ky < K; ++ky) {
    Vec wk[K];
#pragma GCC unroll 8
    for (int kx = 0; kx < K; ++kx) wk[kx] = L::load(w + std::size_t(ky * K + kx) * P);
    row_taps<N, K, S, P, L>(rows[ky] + x * P, wk, acc);
  }
#pragma GCC unroll 16
  for (int o = 0; o < N; ++o)
    if (o < count) L::store(dst + std::size_t(o) * P, act(acc[o]));
}

}  // namespace detail

/// How convolution_depthwise_ring splits its work: output rows per item and the floats of one
/// thread's ring (K rows of the padded input, in f32, wide enough for whole tiles).
struct DepthwiseRing {
  int band = 0;            ///< output rows per item
  int cols = 0;            ///< pixels per ring row
  std::size_t floats = 0;  ///< workspace floats per thread: the ring and a guard gap

  /// Floats between the rings of two threads beyond the ring itself. Measured: rings adjacent
  /// in memory ran two threads no faster than one (each core's prefetchers pull in lines of the
  /// other's ring, which then bounce between the cores); 64 KiB apart, they scale.
  static constexpr std::size_t kGuard = std::size_t(16) << 10;

  /// The split for a K x K stride S kernel over out_w x out_h outputs of `groups` channel groups
  /// of Pack lanes on `threads` threads.
  template <int K,     ///< kernel extent, both axes
            int S,     ///< stride, both axes
            int Pack>  ///< lanes of a channel group
  static DepthwiseRing plan(int out_w, int out_h, int groups, int threads) {
    constexpr int N = detail::kRingTile;
    DepthwiseRing r;
    const int tiles = (out_w + N - 1) / N;
    r.cols = (tiles * N - 1) * S + K;
    r.floats = std::size_t(K) * std::size_t(r.cols) * Pack + kGuard;
    // Whole channel planes per item where there are enough of them for every thread to take
    // several; otherwise bands of rows (each repeats K - S input rows).
    const int want = threads > 1 ? 16 * threads : 1;
    const int bands = groups >= want ? 1 : std::min(out_h, (want + groups - 1) / groups);
    r.band = (out_h + bands - 1) / bands;
    return r;
  }
};

/// Depthwise K x K stride S, as convolution_depthwise_kxk computes it, through a ring of K input
/// rows per thread: each input row is converted to f32 once, with the pads around it, so every
/// output (the borders too) runs in full register tiles of kRingTile pixels whose weights are
/// loaded one kernel row at a time. `workspace` holds threads x ring.floats floats, `ring` comes
/// from DepthwiseRing::plan<K, S, Pack>(out.w, out.h, out.c, threads).
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          int K,             ///< kernel extent, both axes
          int S,             ///< stride, both axes
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_depthwise_ring(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                                const float* weights, const float* bias, const DepthwisePads& pads,
                                const Act& act, const DepthwiseRing& ring, float* workspace,
                                int num_threads) {
  using L = detail::Lanes<Pack>;
  using Vec = typename L::Vec;
  constexpr int N = detail::kRingTile;
  const int groups = out.c, outh = out.h, outw = out.w;
  const int bands = (outh + ring.band - 1) / ring.band;
  const long items = long(groups) * bands;
  const std::size_t row_floats = std::size_t(ring.cols) * Pack;
  const std::size_t work = std::size_t(outw) * outh * groups * K * K * Pack;
  const int threads = num_threads > 1 && work >= kDepthwiseThreadWork ? num_threads : 1;

  const auto run_item = [&](long item, float* buf) {
    const int q = int(item / bands), band = int(item % bands);
    const int y0 = band * ring.band, y1 = std::min(outh, y0 + ring.band);
    const T* plane = in.channel(q);
    // Padded input row iy (counted from the top of the pads) lives in ring row iy % K, as f32,
    // its pads written around it.
    const auto fill = [&](int iy) {
      float* dst = buf + std::size_t(iy % K) * row_floats;
      const int y = iy - pads.top;
      int x = 0;
      if (y >= 0 && y < in.h) {
        const int left = std::min(pads.left, ring.cols);
        for (; x < left; ++x)
          for (int l = 0; l < Pack; ++l) dst[std::size_t(x) * Pack + l] = pads.value;
        const int n = std::min(in.w, ring.cols - x);
        detail::copy_row(plane + std::size_t(y) * in.w * Pack, n * Pack,
                         dst + std::size_t(x) * Pack);
        x += n;
      }
      for (std::size_t i = std::size_t(x) * Pack; i < row_floats; ++i) dst[i] = pads.value;
    };
    int filled = y0 * S;  // the next padded row to bring into the ring
    for (int y = y0; y < y1; ++y) {
      const int iy0 = y * S;
      for (; filled < iy0 + K; ++filled) fill(filled);
      const float* rows[K];
      for (int ky = 0; ky < K; ++ky) rows[ky] = buf + std::size_t((iy0 + ky) % K) * row_floats;
      T* dst = out.row(q, y);
      for (int b = 0; b < L::blocks; ++b) {
        const float* w = weights + std::size_t(q) * K * K * Pack + b * L::W;
        const Vec bv = L::load(bias + std::size_t(q) * Pack + b * L::W);
        const float* lane_rows[K];
        for (int ky = 0; ky < K; ++ky) lane_rows[ky] = rows[ky] + b * L::W;
        T* d = dst + b * L::W;
        int x = 0;
        for (; x + N <= outw; x += N)
          detail::ring_tile<N, K, S, L>(lane_rows, std::size_t(x * S), w, bv, act,
                                        d + std::size_t(x) * Pack, N);
        // The rest in one tile of the next quarter of N up (28 = 16 + 12, 14 = 16 less 2).
        const int left = outw - x;
        const auto rest = [&]<int M>() {
          detail::ring_tile<M, K, S, L>(lane_rows, std::size_t(x * S), w, bv, act,
                                        d + std::size_t(x) * Pack, left);
        };
        if (left > 3 * N / 4)
          rest.template operator()<N>();
        else if (left > N / 2)
          rest.template operator()<3 * N / 4>();
        else if (left > N / 4)
          rest.template operator()<N / 2>();
        else if (left > 0)
          rest.template operator()<N / 4>();
      }
    }
  };
  detail::for_each_item(items, threads, workspace, ring.floats, run_item);
}

/// How convolution_depthwise_plane lays out one channel: its padded plane in f32, rows of
/// `cols` floats (stride 2: the even columns, then the odd ones, `cols / 2` each), wide enough
/// for whole vectors of outputs.
struct DepthwisePlane {
  int rows = 0;            ///< padded input rows the outputs read
  int cols = 0;            ///< floats per padded row
  std::size_t floats = 0;  ///< workspace floats per thread: the plane and a guard gap

  /// The layout for a K x K stride S kernel over out_w x out_h outputs.
  static DepthwisePlane plan(int k, int s, int out_w, int out_h) {
    constexpr int W = simd::max_width;
    const int vecs = (out_w + W - 1) / W;
    DepthwisePlane p;
    p.rows = (out_h - 1) * s + k;
    p.cols = s == 1 ? vecs * W + k - 1 : 2 * (vecs * W + (k - 1) / 2);
    p.floats = std::size_t(p.rows) * std::size_t(p.cols) + DepthwiseRing::kGuard;
    return p;
  }
};

namespace detail {

/// N consecutive output rows, one vector of W outputs each starting at column x, of a stride-S
/// depthwise K x K over the padded f32 plane `plane` (rows `cols` floats apart; stride 2: column
/// c at (c % 2) * cols / 2 + c / 2). The first `count` outputs of each row are stored.
template <int N, int K, int S, StorageElement T, class Act>
inline void plane_tile(const float* plane, std::size_t cols, int y, int x,
                       const simd::fbatch<simd::max_width>* w, float bias, const Act& act,
                       T* const* dst, int count) {
  constexpr int W = simd::max_width;
  using V = simd::fbatch<W>;
  V acc[N];
#pragma GCC unroll 8
  for (int r = 0; r < N; ++r) acc[r] = V(bias);
  const std::size_t half = cols / 2;
#pragma GCC unroll 5
  for (int ky = 0; ky < K; ++ky) {
#pragma GCC unroll 5
    for (int kx = 0; kx < K; ++kx) {
      const std::size_t at =
          S == 1 ? std::size_t(x + kx) : (kx % 2) * half + std::size_t(x + kx / 2);
#pragma GCC unroll 8
      for (int r = 0; r < N; ++r) {
        const float* row = plane + std::size_t((y + r) * S + ky) * cols;
        acc[r] = xsimd::fma(w[ky * K + kx], simd::load<W>(row + at), acc[r]);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < N; ++r) {
    const V v = act(acc[r]);
    if (count == W)
      simd::store<W>(dst[r] + x, v);
    else
      simd::store_first<W>(dst[r] + x, v, count);
  }
}

}  // namespace detail

/// Depthwise K x K stride S for pack 1, where a channel has no lanes to vectorize across: each
/// channel's padded plane is copied once into f32 (stride 2: split into even and odd columns), then
/// vectors of consecutive outputs along a row take every tap as one unaligned load, four output
/// rows at a time. `workspace` holds threads x plane.floats floats, `plane` comes from
/// DepthwisePlane::plan(K, S, out.w, out.h).
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int K,             ///< kernel extent, both axes
          int S,             ///< stride, both axes
          class Act>         ///< epilogue activation, callable on simd batches
void convolution_depthwise_plane(const MatView<T, 1>& in, const MatView<T, 1>& out,
                                 const float* weights, const float* bias, const DepthwisePads& pads,
                                 const Act& act, const DepthwisePlane& plane, float* workspace,
                                 int num_threads) {
  constexpr int W = simd::max_width;
  using V = simd::fbatch<W>;
  const int channels = out.c, outh = out.h, outw = out.w;
  const std::size_t cols = std::size_t(plane.cols);
  const std::size_t work = std::size_t(outw) * outh * channels * K * K;
  const int threads = num_threads > 1 && work >= kDepthwiseThreadWork ? num_threads : 1;

  const auto run_channel = [&](int q, float* buf) {
    const T* src = in.channel(q);
    // Padded row r: pads, then the input row converted to f32, then pads to the end (stride 2:
    // column c of the padded row goes to half c % 2 at c / 2).
    for (int r = 0; r < plane.rows; ++r) {
      float* dst = buf + std::size_t(r) * cols;
      const int y = r - pads.top;
      if (y < 0 || y >= in.h) {
        for (std::size_t i = 0; i < cols; ++i) dst[i] = pads.value;
        continue;
      }
      const T* row = src + std::size_t(y) * in.w;
      if constexpr (S == 1) {
        const int left = std::min<int>(pads.left, int(cols));
        const int n = std::min<int>(in.w, int(cols) - left);
        for (int i = 0; i < left; ++i) dst[i] = pads.value;
        detail::copy_row(row, n, dst + left);
        for (std::size_t i = std::size_t(left + n); i < cols; ++i) dst[i] = pads.value;
      } else {
        const std::size_t half = cols / 2;
        for (std::size_t i = 0; i < cols; ++i) dst[i] = pads.value;
        // Input column i sits at padded column i + left, in the half of its parity.
        const int left = pads.left;
        const int n = std::min<int>(in.w, int(cols) - left);
        float* first = dst + (left % 2 == 0 ? 0 : half) + left / 2;         // columns 0, 2, ...
        float* second = dst + (left % 2 == 0 ? half : 0) + (left + 1) / 2;  // columns 1, 3, ...
        detail::split_row(row, n, first, second);
      }
    }
    V w[K * K];
    for (int k = 0; k < K * K; ++k) w[k] = V(weights[std::size_t(q) * K * K + std::size_t(k)]);
    const float b = bias[q];
    int y = 0;
    const auto rows_of = [&]<int N>() {
      T* dst[N];
      for (int r = 0; r < N; ++r) dst[r] = out.row(q, y + r);
      for (int x = 0; x < outw; x += W)
        detail::plane_tile<N, K, S, T>(buf, cols, y, x, w, b, act, dst, std::min(W, outw - x));
      y += N;
    };
    for (; y + 4 <= outh;) rows_of.template operator()<4>();
    for (; y < outh;) rows_of.template operator()<1>();
  };
  detail::for_each_item(channels, threads, workspace, plane.floats,
                        [&](long q, float* buf) { run_channel(int(q), buf); });
}

/// Calls f.template operator()<K, S>() for geometry g, which depthwise_kxk_supported accepts.
template <class F>
decltype(auto) with_depthwise_kernel(const ConvGeometry& g, F&& f) {
  if (g.kernel_w == 3) {
    if (g.stride_w == 1) return f.template operator()<3, 1>();
    return f.template operator()<3, 2>();
  }
  if (g.stride_w == 1) return f.template operator()<5, 1>();
  return f.template operator()<5, 2>();
}

/// Whether geometry g runs convolution_depthwise_ring rather than convolution_depthwise_kxk:
/// 5x5 stride 1, whose 25 weight vectors leave the row kernel too few registers for its tiles
/// (and whose borders, a quarter of a 14x14 map, would run one pixel at a time there). Measured on
/// EfficientNet-B0's shapes: 5x5 stride 1 runs 1.4x faster through the ring; stride 2, which
/// reads four inputs per output and is bound by memory, and 3x3 run faster without the copy.
constexpr bool depthwise_ring_preferred(const ConvGeometry& g) {
  return depthwise_kxk_supported(g) && g.kernel_w == 5 && g.stride_w == 1;
}

/// Whether pack Pack runs convolution_depthwise_plane: pack 1 where the target has vectors.
template <int Pack>
inline constexpr bool depthwise_plane_preferred = Pack == 1 && simd::max_width > 1;

/// Workspace floats per thread convolution_depthwise_fast needs for geometry `g` over out_w x
/// out_h outputs of `groups` channel groups of Pack lanes on `threads` threads (0: none).
template <int Pack>  ///< lanes of a channel group
std::size_t depthwise_fast_workspace(const ConvGeometry& g, int out_w, int out_h, int groups,
                                     int threads) {
  if (!depthwise_kxk_supported(g)) return 0;
  if constexpr (depthwise_plane_preferred<Pack>)
    return DepthwisePlane::plan(g.kernel_w, g.stride_w, out_w, out_h).floats;
  if (depthwise_ring_preferred(g))
    return DepthwiseRing::plan<5, 1, Pack>(out_w, out_h, groups, threads).floats;
  return 0;
}

/// Runs the kernel for geometry `g` and returns true, or returns false (doing nothing) where
/// depthwise_kxk_supported(g) is false: convolution_depthwise_plane at pack 1,
/// convolution_depthwise_ring where depthwise_ring_preferred(g), else convolution_depthwise_kxk.
/// `workspace` holds num_threads x depthwise_fast_workspace<Pack>(g, out.w, out.h, out.c,
/// num_threads) floats.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          class Act>         ///< epilogue activation, callable on float and on simd batches
bool convolution_depthwise_fast(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                                const float* weights, const float* bias, const ConvGeometry& g,
                                const DepthwisePads& pads, const Act& act, int num_threads,
                                float* workspace = nullptr) {
  if (!depthwise_kxk_supported(g)) return false;
  with_depthwise_kernel(g, [&]<int K, int S>() {
    if constexpr (depthwise_plane_preferred<Pack>) {
      convolution_depthwise_plane<T, K, S>(in, out, weights, bias, pads, act,
                                           DepthwisePlane::plan(K, S, out.w, out.h), workspace,
                                           num_threads);
    } else if constexpr (K == 5 && S == 1) {
      convolution_depthwise_ring<T, Pack, K, S>(
          in, out, weights, bias, pads, act,
          DepthwiseRing::plan<K, S, Pack>(out.w, out.h, out.c, num_threads), workspace,
          num_threads);
    } else {
      convolution_depthwise_kxk<T, Pack, K, S>(in, out, weights, bias, pads, act, num_threads);
    }
  });
  return true;
}

}  // namespace infer::kernels
