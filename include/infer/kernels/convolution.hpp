// Direct 2-D convolution kernels, the path every shape can take: one output position at a time,
// vectorized across the lanes of an output channel group. The epilogue adds the bias and applies
// the activation functor Act (a template parameter) to the accumulators before the store; faster
// kernels keep that hook. Inputs come padded: the kernels read no border and check no bounds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/element.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// Kernel extents, dilation and stride of a 2-D window.
struct ConvGeometry {
  int kernel_w = 1, kernel_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int stride_w = 1, stride_h = 1;
};

namespace detail {

/// W floats: a native batch, or a plain float for W = 1.
template <int W>
struct VecOf {
  using type = simd::fbatch<W>;
};
template <>
struct VecOf<1> {
  using type = float;
};

/// N lanes held as `blocks` registers of W floats: the widest native batch that divides N, or
/// plain floats where N or the target is scalar.
template <int N>
struct Lanes {
  static constexpr int W = N < simd::max_width ? N : simd::max_width;
  static constexpr int blocks = N / W;
  using Vec = typename VecOf<W>::type;

  static Vec zero() { return Vec(0.f); }
  static Vec splat(float v) { return Vec(v); }
  template <StorageElement T>
  static Vec load(const T* p) {
    if constexpr (W == 1) {
      return to_f32(*p);
    } else {
      return simd::load<W>(p);
    }
  }
  template <StorageElement T>
  static void store(T* p, Vec v) {
    if constexpr (W == 1) {
      *p = from_f32<T>(v);
    } else {
      simd::store<W>(p, v);
    }
  }
  /// a * b + c
  static Vec fma(Vec a, Vec b, Vec c) {
    if constexpr (W == 1) {
      return a * b + c;
    } else {
      return xsimd::fma(a, b, c);
    }
  }
};

/// The epilogue: act(acc + bias) stored to the N lanes at dst, or act(acc + bias + res) where
/// `res` (a fused residual sum's other input at the output's place) is given.
template <int N, StorageElement T, class Act>
void store_epilogue(T* dst, const typename Lanes<N>::Vec* acc, const float* bias, const Act& act,
                    const T* res = nullptr) {
  using L = Lanes<N>;
  for (int b = 0; b < L::blocks; ++b) {
    typename L::Vec v = acc[b] + L::load(bias + b * L::W);
    if (res) v = v + L::load(res + b * L::W);
    L::store(dst + b * L::W, act(v));
  }
}

/// Whether a loop of `work` multiply-adds is worth spreading over threads.
inline bool worth_threads(std::size_t work) { return work >= (std::size_t(1) << 16); }

}  // namespace detail

/// The weights of convolution_direct for num_output x num_input channels in its layout: for each
/// output channel group, input channel group, kernel position and input lane, the OutPack weights
/// of that group's output lanes. `src` is ncnn's [num_output][num_input][kernel_h][kernel_w].
template <int InPack,   ///< lanes of an input channel group
          int OutPack>  ///< lanes of an output channel group
void convolution_direct_weights(const float* src, float* dst, int num_input, int num_output,
                                int maxk) {
  const int in_groups = num_input / InPack;
  for (int p = 0; p < num_output; ++p) {
    for (int c = 0; c < num_input; ++c) {
      for (int k = 0; k < maxk; ++k) {
        const std::size_t to =
            ((((std::size_t(p / OutPack) * in_groups + c / InPack) * maxk + k) * InPack +
              c % InPack) *
                 OutPack +
             p % OutPack);
        dst[to] = src[(std::size_t(p) * num_input + c) * maxk + k];
      }
    }
  }
}

/// out = act(conv(in, weights) + bias + res) over every output channel group of `out`, `res` (a
/// fused residual sum's other input, the output's shape and layout) left out where empty. `in` is
/// the padded input (its extents give the window positions); `weights` are laid out by
/// convolution_direct_weights for in.c * InPack inputs; `bias` holds out.c * OutPack values.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int InPack,        ///< lanes of an input channel group
          int OutPack,       ///< lanes of an output channel group (vectorized)
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_direct(const MatView<T, InPack>& in, const MatView<T, OutPack>& out,
                        const float* weights, const float* bias, const ConvGeometry& g,
                        const Act& act, int num_threads, const MatView<T, OutPack>& res = {}) {
  using L = detail::Lanes<OutPack>;
  const int maxk = g.kernel_w * g.kernel_h;
  const std::size_t group_weights = std::size_t(in.c) * maxk * InPack * OutPack;
  const int out_groups = out.c;
  const std::size_t work = std::size_t(out.w) * out.h * out_groups * group_weights;
#pragma omp parallel for num_threads(num_threads) if (detail::worth_threads(work))
  for (int q = 0; q < out_groups; ++q) {
    const float* wq = weights + q * group_weights;
    for (int y = 0; y < out.h; ++y) {
      T* dst = out.row(q, y);
      const T* rrow = res.data ? res.row(q, y) : nullptr;
      for (int x = 0; x < out.w; ++x) {
        typename L::Vec acc[L::blocks];
        for (int b = 0; b < L::blocks; ++b) acc[b] = L::zero();
        const float* wp = wq;
        for (int c = 0; c < in.c; ++c) {
          const T* src = in.row(c, y * g.stride_h) + std::size_t(x) * g.stride_w * InPack;
          for (int ky = 0; ky < g.kernel_h; ++ky) {
            const T* srow = src + std::size_t(ky) * g.dilation_h * in.w * InPack;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
              const T* s = srow + std::size_t(kx) * g.dilation_w * InPack;
              for (int i = 0; i < InPack; ++i, wp += OutPack) {
                const typename L::Vec v = L::splat(to_f32(s[i]));
                for (int b = 0; b < L::blocks; ++b)
                  acc[b] = L::fma(v, L::load(wp + b * L::W), acc[b]);
              }
            }
          }
        }
        detail::store_epilogue<OutPack>(dst + std::size_t(x) * OutPack, acc,
                                        bias + std::size_t(q) * OutPack, act,
                                        rrow ? rrow + std::size_t(x) * OutPack : nullptr);
      }
    }
  }
}

/// Output pixels of a tile of convolution_grouped_pack (eight accumulators cover the FMA latency on
/// two pipes), and of the narrower tile that takes a last tile of at most kGroupedTileTail.
inline constexpr int kGroupedTile = 8, kGroupedTileTail = 4;

namespace detail {

/// X output pixels of one group of convolution_grouped_pack, anywhere in its plane: pixel j's
/// window starts at src[j] and its output goes to dst[j]; the first `count` are stored (the
/// others repeat a valid pixel). Each weight vector is loaded once for the X pixels.
template <int X, int Pack, StorageElement T, class Act>
void grouped_pack_tile(const T* const* src, T* const* dst, int count, int in_w, const float* wq,
                       const float* bias, const ConvGeometry& g, const Act& act) {
  // The pixel and block loops unrolled whatever the caller's -O level: rolled (GCC's -O2), the
  // accumulators live in memory and every FMA loads and stores one (0.46x the -O3 speed).
  using L = Lanes<Pack>;
  typename L::Vec acc[X][L::blocks];
#pragma GCC unroll 16
  for (int j = 0; j < X; ++j)
#pragma GCC unroll 4
    for (int b = 0; b < L::blocks; ++b) acc[j][b] = L::zero();
  const float* wp = wq;
  for (int ky = 0; ky < g.kernel_h; ++ky) {
    for (int kx = 0; kx < g.kernel_w; ++kx) {
      const std::size_t off =
          (std::size_t(ky) * g.dilation_h * in_w + std::size_t(kx) * g.dilation_w) * Pack;
      for (int i = 0; i < Pack; ++i, wp += Pack) {
        typename L::Vec w[L::blocks];
#pragma GCC unroll 4
        for (int b = 0; b < L::blocks; ++b) w[b] = L::load(wp + b * L::W);
#pragma GCC unroll 16
        for (int j = 0; j < X; ++j) {
          const typename L::Vec v = L::splat(to_f32(src[j][off + std::size_t(i)]));
#pragma GCC unroll 4
          for (int b = 0; b < L::blocks; ++b) acc[j][b] = L::fma(v, w[b], acc[j][b]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < X; ++j)
    if (j < count) store_epilogue<Pack>(dst[j], acc[j], bias, act);
}

/// X output pixels x OB output packs of a grouped 1x1 window, along a run of the group's planes:
/// pixel j reads, in each of the group's in_packs input planes (in_plane elements apart), the Pack
/// values at src + j * Step * Pack, and stores output pack o at dst + o * out_plane + j * Pack.
/// The pixel offsets are constants, so each input value is one broadcast load serving the OB
/// packs' FMAs. `w` is the OB packs' weights in convolution_direct_weights' layout for the group
/// (output pack, input pack, input lane, Pack outputs); `bias` the OB packs' biases.
template <int X, int OB, int Step, int Pack, StorageElement T, class Act>
void grouped_1x1_tile(const T* src, std::size_t in_plane, int in_packs, T* dst,
                      std::size_t out_plane, const float* w, const float* bias, const Act& act) {
  using L = Lanes<Pack>;
  const std::size_t out_stride = std::size_t(in_packs) * Pack * Pack;  // between output packs
  typename L::Vec acc[OB][X][L::blocks];
#pragma GCC unroll 4
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 16
    for (int j = 0; j < X; ++j)
#pragma GCC unroll 4
      for (int b = 0; b < L::blocks; ++b) acc[o][j][b] = L::zero();
  for (int ia = 0; ia < in_packs; ++ia) {
    const T* s = src + std::size_t(ia) * in_plane;
    const float* wa = w + std::size_t(ia) * Pack * Pack;
#pragma GCC unroll 16
    for (int i = 0; i < Pack; ++i) {
      typename L::Vec wv[OB][L::blocks];
#pragma GCC unroll 4
      for (int o = 0; o < OB; ++o)
#pragma GCC unroll 4
        for (int b = 0; b < L::blocks; ++b)
          wv[o][b] = L::load(wa + o * out_stride + std::size_t(i) * Pack + b * L::W);
#pragma GCC unroll 16
      for (int j = 0; j < X; ++j) {
        const typename L::Vec v = L::splat(to_f32(s[std::size_t(j) * Step * Pack + i]));
#pragma GCC unroll 4
        for (int o = 0; o < OB; ++o)
#pragma GCC unroll 4
          for (int b = 0; b < L::blocks; ++b) acc[o][j][b] = L::fma(v, wv[o][b], acc[o][j][b]);
      }
    }
  }
#pragma GCC unroll 4
  for (int o = 0; o < OB; ++o)
#pragma GCC unroll 16
    for (int j = 0; j < X; ++j)
      store_epilogue<Pack>(dst + o * out_plane + std::size_t(j) * Pack, acc[o][j], bias + o * Pack,
                           act);
}

/// n output pixels of a run (grouped_1x1_tile's addressing) for OB output packs: tiles of
/// kGroupedTile pixels, then one of kGroupedTileTail, then single pixels.
template <int OB, int Step, int Pack, StorageElement T, class Act>
void grouped_1x1_run(const T* src, std::size_t in_plane, int in_packs, T* dst,
                     std::size_t out_plane, int n, const float* w, const float* bias,
                     const Act& act) {
  constexpr int X = kGroupedTile, XS = kGroupedTileTail;
  const auto at = [&]<int N>(int j) {
    grouped_1x1_tile<N, OB, Step, Pack>(src + std::size_t(j) * Step * Pack, in_plane, in_packs,
                                        dst + std::size_t(j) * Pack, out_plane, w, bias, act);
  };
  int j = 0;
  for (; j + X <= n; j += X) at.template operator()<X>(j);
  if (j + XS <= n) {
    at.template operator()<XS>(j);
    j += XS;
  }
  for (; j < n; ++j) at.template operator()<1>(j);
}

/// Output packs of a grouped 1x1 tile at once: three where the target has 32 vector registers
/// (3 x 8 accumulators, the weights and a broadcast), else one.
template <int Pack>
constexpr int grouped_1x1_packs() {
  return 3 * kGroupedTile * Lanes<Pack>::blocks + 4 <= simd::vector_registers ? 3 : 1;
}

}  // namespace detail

/// A grouped convolution with a 1x1 window at horizontal stride 1 or 2 (any vertical stride) whose
/// groups are whole packs: `groups` groups of in.c / groups input and out.c / groups output packs.
/// Threads share (group, band of rows) items; each row is a run whose pixels sit at constant
/// offsets (a band is one run where input and output rows are one contiguous plane: stride 1
/// without padding), computed detail::grouped_1x1_packs() output packs at a time, so each input
/// value loaded serves their FMAs. Against a GEMM per group it gathers nothing (a strided input is
/// read in place) and has no per-call setup, which at a group's few channels costs more than the
/// products.
/// `in` is the padded input; `weights` are convolution_direct_weights' layout for one group, group
/// after group; `bias` holds out.c * Pack values.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_grouped_1x1(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                             const float* weights, const float* bias, const ConvGeometry& g,
                             int groups, const Act& act, int num_threads) {
  constexpr int OB = detail::grouped_1x1_packs<Pack>();
  const int in_packs = in.c / groups, out_packs = out.c / groups;
  const std::size_t in_plane = in.cstep * Pack, out_plane = out.cstep * Pack;
  const std::size_t group_weights = std::size_t(in_packs) * out_packs * Pack * Pack;
  // Enough bands that every thread gets several items however few the groups are.
  const int splits = std::clamp((4 * num_threads + groups - 1) / groups, 1, std::max(out.h, 1));
  const int rows = (out.h + splits - 1) / splits;
  const int bands = (out.h + rows - 1) / rows;
  const int items = groups * bands;
  const bool one_run = g.stride_w == 1 && g.stride_h == 1 && in.w == out.w;
  const std::size_t work = std::size_t(out.w) * out.h * groups * group_weights;
#pragma omp parallel for num_threads(num_threads) if (detail::worth_threads(work))
  for (int it = 0; it < items; ++it) {
    const int q = it / bands, y0 = (it % bands) * rows, y1 = std::min(out.h, y0 + rows);
    // One run: a row (stride 1 or 2), or the band's rows as one.
    const auto run = [&]<int Step>(int y, int n) {
      const T* src = in.row(q * in_packs, y * g.stride_h);
      T* dst = out.row(q * out_packs, y);
      const float* wq = weights + std::size_t(q) * group_weights;
      const float* bq = bias + std::size_t(q) * out_packs * Pack;
      const std::size_t w_step = std::size_t(in_packs) * Pack * Pack;
      int o = 0;
      for (; o + OB <= out_packs; o += OB)
        detail::grouped_1x1_run<OB, Step, Pack>(src, in_plane, in_packs, dst + o * out_plane,
                                                out_plane, n, wq + o * w_step, bq + o * Pack, act);
      for (; o < out_packs; ++o)
        detail::grouped_1x1_run<1, Step, Pack>(src, in_plane, in_packs, dst + o * out_plane,
                                               out_plane, n, wq + o * w_step, bq + o * Pack, act);
    };
    if (one_run) {
      run.template operator()<1>(y0, (y1 - y0) * out.w);
      continue;
    }
    for (int y = y0; y < y1; ++y) {
      if (g.stride_w == 1)
        run.template operator()<1>(y, out.w);
      else
        run.template operator()<2>(y, out.w);
    }
  }
}

/// A grouped convolution whose groups are one channel pack in and one out (RegNet's 3x3 of 8
/// channels per group at pack 8): output pack q = act(conv(input pack q, group q's weights) +
/// bias), every group at once. A group's output pixels go in tiles of kGroupedTile taken across
/// its rows (a 7x7 map is six such tiles and a last pixel, not seven rows of one pixel at a
/// time; a last tile of kGroupedTileTail or fewer runs that narrower kernel), each weight vector
/// loaded once per tile; threads share the (group, tile) items. (A 1x1 window at horizontal stride 1
/// or 2 takes convolution_grouped_1x1 instead.) `in` is the
/// padded input; `weights` are convolution_direct_weights' layout for one input and one output
/// group, group after group; `bias` holds out.c * Pack.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group: the group's channels
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_grouped_pack(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                              const float* weights, const float* bias, const ConvGeometry& g,
                              const Act& act, int num_threads) {
  constexpr int X = kGroupedTile, XS = kGroupedTileTail;
  const std::size_t group_weights = std::size_t(g.kernel_w) * g.kernel_h * Pack * Pack;
  const int pixels = out.w * out.h;
  const int tiles = (pixels + X - 1) / X;
  const int items = out.c * tiles;
  const std::size_t work = std::size_t(pixels) * out.c * group_weights;
#pragma omp parallel for num_threads(num_threads) if (detail::worth_threads(work))
  for (int it = 0; it < items; ++it) {
    const int q = it / tiles, p0 = (it % tiles) * X;
    const int count = std::min(X, pixels - p0);
    const T* src[X];
    T* dst[X];
    // The tile's pixels walk along the rows from (x, y) = p0 (one division a tile, not two a
    // pixel: with a 1x1 window they cost what the products did); past count, the last again.
    int y = p0 / out.w, x = p0 - y * out.w;
    for (int j = 0; j < X; ++j) {
      src[j] = in.row(q, y * g.stride_h) + std::size_t(x) * g.stride_w * Pack;
      dst[j] = out.row(q, y) + std::size_t(x) * Pack;
      if (j + 1 < count && ++x == out.w) {
        x = 0;
        ++y;
      }
    }
    const float* wq = weights + q * group_weights;
    const float* bq = bias + std::size_t(q) * Pack;
    if (count <= XS)
      detail::grouped_pack_tile<XS, Pack>(src, dst, count, in.w, wq, bq, g, act);
    else
      detail::grouped_pack_tile<X, Pack>(src, dst, count, in.w, wq, bq, g, act);
  }
}

/// The weights of convolution_depthwise_direct for `channels` channels in its layout: for each
/// channel group and kernel position, the Pack weights of that group's lanes. `src` is ncnn's
/// [channels][kernel_h][kernel_w].
template <int Pack>  ///< lanes of a channel group
void convolution_depthwise_weights(const float* src, float* dst, int channels, int maxk) {
  for (int c = 0; c < channels; ++c)
    for (int k = 0; k < maxk; ++k)
      dst[(std::size_t(c / Pack) * maxk + k) * Pack + c % Pack] = src[std::size_t(c) * maxk + k];
}

/// Depthwise: output channel c = act(conv(input channel c, its own kernel) + bias[c]), vectorized
/// across the Pack lanes of a channel group. `in` is the padded input; `weights` are laid out by
/// convolution_depthwise_weights; `bias` holds out.c * Pack values.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< lanes of a channel group (vectorized)
          class Act>         ///< epilogue activation, callable on float and on simd batches
void convolution_depthwise_direct(const MatView<T, Pack>& in, const MatView<T, Pack>& out,
                                  const float* weights, const float* bias, const ConvGeometry& g,
                                  const Act& act, int num_threads) {
  using L = detail::Lanes<Pack>;
  const int maxk = g.kernel_w * g.kernel_h;
  const int groups = out.c;
  const std::size_t work = std::size_t(out.w) * out.h * groups * maxk * Pack;
#pragma omp parallel for num_threads(num_threads) if (detail::worth_threads(work))
  for (int q = 0; q < groups; ++q) {
    const float* wq = weights + std::size_t(q) * maxk * Pack;
    for (int y = 0; y < out.h; ++y) {
      T* dst = out.row(q, y);
      for (int x = 0; x < out.w; ++x) {
        typename L::Vec acc[L::blocks];
        for (int b = 0; b < L::blocks; ++b) acc[b] = L::zero();
        const T* src = in.row(q, y * g.stride_h) + std::size_t(x) * g.stride_w * Pack;
        const float* wp = wq;
        for (int ky = 0; ky < g.kernel_h; ++ky) {
          const T* srow = src + std::size_t(ky) * g.dilation_h * in.w * Pack;
          for (int kx = 0; kx < g.kernel_w; ++kx, wp += Pack) {
            const T* s = srow + std::size_t(kx) * g.dilation_w * Pack;
            for (int b = 0; b < L::blocks; ++b)
              acc[b] = L::fma(L::load(s + b * L::W), L::load(wp + b * L::W), acc[b]);
          }
        }
        detail::store_epilogue<Pack>(dst + std::size_t(x) * Pack, acc, bias + std::size_t(q) * Pack,
                                     act);
      }
    }
  }
}

}  // namespace infer::kernels
