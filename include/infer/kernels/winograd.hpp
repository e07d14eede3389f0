// 3x3 stride-1 convolution by Winograd's minimal filtering F(Out x Out, 3 x 3) (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015): Y = A^T [U . V] A with
// U = G g G^T (the weights, transformed once) and V = B^T d B (each In x In input tile,
// In = Out + 2). The elementwise product summed over input channels is, per transform position,
// a [num_output x num_input] x [num_input x tiles] GEMM, on a register tile like gemm.hpp's (its
// weight packing, block sizes and width). Out = 6 takes 64 multiplications per 36 outputs instead
// of 36 x 9 = 324 (5.06x fewer); Out = 4 takes 36 per 16 (4x); Out = 2 takes 16 per 4 (2.25x), with
// the fewest transformed weights (16 positions against 36 and 64). Tiles are processed in chunks
// whose transformed inputs and outputs stay in cache, each chunk by one thread; where there are few
// chunks (small maps) they are split by output channels too, so two threads scale even on a 7x7
// map of 512 channels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <infer/element.hpp>
#include <infer/kernels/activation.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#include <vector>
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels::winograd {

/// The transforms of F(Out x Out, 3 x 3) along one axis, on any value type V (float or a float
/// batch, the lanes being channels). Points 0, 1, -1, 2, -2 (, 1/2, -1/2) and infinity.
/// @tparam Out outputs per tile along an axis: 6, 4 or 2.
template <int Out>
struct Transform;

template <>
struct Transform<6> {
  static constexpr int kOut = 6;
  static constexpr int kIn = 8;
  /// G (kIn x 3). The rows of the points 1/2 and -1/2 are scaled by 1/32 against Lavin's,
  /// and A^T's columns by 32, which keeps A^T's coefficients small integers.
  static constexpr double kG[kIn][3] = {
      {1.0, 0.0, 0.0},
      {-2.0 / 9, -2.0 / 9, -2.0 / 9},
      {-2.0 / 9, 2.0 / 9, -2.0 / 9},
      {1.0 / 90, 1.0 / 45, 2.0 / 45},
      {1.0 / 90, -1.0 / 45, 2.0 / 45},
      {1.0 / 45, 1.0 / 90, 1.0 / 180},
      {1.0 / 45, -1.0 / 90, 1.0 / 180},
      {0.0, 0.0, 1.0},
  };

  /// t = B^T d: d[i * ds], i < kIn, to t[i * ts]. Common subexpressions of row pairs
  /// (points p and -p) are shared.
  template <class V>
  static void input(const V* d, std::size_t ds, V* t, std::size_t ts) {
    const V d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds],
            d6 = d[6 * ds], d7 = d[7 * ds];
    const V c5_25 = V(5.25f), c4_25 = V(4.25f), c2_5 = V(2.5f), c1_25 = V(1.25f);
    t[0] = d0 - d6 + (d4 - d2) * c5_25;
    t[7 * ts] = d7 - d1 + (d3 - d5) * c5_25;
    const V a12 = d2 + d6 - d4 * c4_25;
    const V b12 = d1 + d5 - d3 * c4_25;
    t[ts] = a12 + b12;
    t[2 * ts] = a12 - b12;
    const V a34 = d6 + d2 * V(0.25f) - d4 * c1_25;
    const V b34 = d1 * V(0.5f) - d3 * c2_5 + d5 * V(2.f);
    t[3 * ts] = a34 + b34;
    t[4 * ts] = a34 - b34;
    const V a56 = d6 + (d2 - d4 * c1_25) * V(4.f);
    const V b56 = d1 * V(2.f) - d3 * c2_5 + d5 * V(0.5f);
    t[5 * ts] = a56 + b56;
    t[6 * ts] = a56 - b56;
  }

  /// y = A^T m: m[i * ms], i < kIn, to y[i * ys], i < kOut.
  template <class V>
  static void output(const V* m, std::size_t ms, V* y, std::size_t ys) {
    const V m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms],
            m6 = m[6 * ms], m7 = m[7 * ms];
    const V e1 = m1 + m2, o1 = m1 - m2;
    const V e2 = m3 + m4, o2 = m3 - m4;
    const V e3 = m5 + m6, o3 = m5 - m6;
    y[0] = m0 + e1 + e2 + e3 * V(32.f);
    y[2 * ys] = e1 + e2 * V(4.f) + e3 * V(8.f);
    y[4 * ys] = e1 + e2 * V(16.f) + e3 * V(2.f);
    y[ys] = o1 + o2 * V(2.f) + o3 * V(16.f);
    y[3 * ys] = o1 + o2 * V(8.f) + o3 * V(4.f);
    y[5 * ys] = m7 + o1 + o2 * V(32.f) + o3;
  }
};

template <>
struct Transform<4> {
  static constexpr int kOut = 4;
  static constexpr int kIn = 6;
  // clang-format off
  /// G (kIn x 3), Lavin's.
  static constexpr double kG[kIn][3] = {
      {1.0 / 4, 0.0, 0.0},
      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
      {1.0 / 24, 1.0 / 12, 1.0 / 6},
      {1.0 / 24, -1.0 / 12, 1.0 / 6},
      {0.0, 0.0, 1.0},
  };
  // clang-format on

  template <class V>
  static void input(const V* d, std::size_t ds, V* t, std::size_t ts) {
    const V d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds], d4 = d[4 * ds], d5 = d[5 * ds];
    const V c4 = V(4.f), c5 = V(5.f), c2 = V(2.f);
    t[0] = d0 * c4 - d2 * c5 + d4;
    t[5 * ts] = d1 * c4 - d3 * c5 + d5;
    const V a12 = d4 - d2 * c4, b12 = d3 - d1 * c4;
    t[ts] = a12 + b12;
    t[2 * ts] = a12 - b12;
    const V a34 = d4 - d2, b34 = (d3 - d1) * c2;
    t[3 * ts] = a34 + b34;
    t[4 * ts] = a34 - b34;
  }

  template <class V>
  static void output(const V* m, std::size_t ms, V* y, std::size_t ys) {
    const V m0 = m[0], m1 = m[ms], m2 = m[2 * ms], m3 = m[3 * ms], m4 = m[4 * ms], m5 = m[5 * ms];
    const V e1 = m1 + m2, o1 = m1 - m2, e2 = m3 + m4, o2 = m3 - m4;
    y[0] = m0 + e1 + e2;
    y[ys] = o1 + o2 * V(2.f);
    y[2 * ys] = e1 + e2 * V(4.f);
    y[3 * ys] = o1 + o2 * V(8.f) + m5;
  }
};

template <>
struct Transform<2> {
  static constexpr int kOut = 2;
  static constexpr int kIn = 4;
  // clang-format off
  /// G (kIn x 3), Lavin's: points 0, 1, -1 and infinity.
  static constexpr double kG[kIn][3] = {
      {1.0, 0.0, 0.0},
      {0.5, 0.5, 0.5},
      {0.5, -0.5, 0.5},
      {0.0, 0.0, 1.0},
  };
  // clang-format on

  template <class V>
  static void input(const V* d, std::size_t ds, V* t, std::size_t ts) {
    const V d0 = d[0], d1 = d[ds], d2 = d[2 * ds], d3 = d[3 * ds];
    t[0] = d0 - d2;
    t[ts] = d1 + d2;
    t[2 * ts] = d2 - d1;
    t[3 * ts] = d1 - d3;
  }

  template <class V>
  static void output(const V* m, std::size_t ms, V* y, std::size_t ys) {
    const V m1 = m[ms], m2 = m[2 * ms];
    y[0] = m[0] + m1 + m2;
    y[ys] = m1 - m2 - m[3 * ms];
  }
};

/// Transform positions (GEMMs) of F(Out x Out, 3 x 3).
template <int Out>
inline constexpr int kPositions = Transform<Out>::kIn* Transform<Out>::kIn;

/// Floats of transformed weights for num_output x num_input channels: per position, a GEMM A
/// block (gemm::weights_size(num_output, num_input)).
template <int Out>
std::size_t weights_size(int num_output, int num_input) {
  return std::size_t(kPositions<Out>) * gemm::weights_size(num_output, num_input);
}

/// The weights for convolution_winograd: U = G g G^T of each (output, input) pair's 3x3 kernel,
/// then per position the [num_output][num_input] matrix in gemm::pack_weights's layout (k = input
/// channel, whatever the input pack, since the kernel size is 1 there). `src` is ncnn's
/// [num_output][num_input][3][3].
template <int Out>  ///< outputs per tile along an axis: 6, 4 or 2
void transform_weights(const float* src, float* dst, int num_input, int num_output) {
  using Tr = Transform<Out>;
  constexpr int kIn = Tr::kIn;
  const std::size_t pairs = std::size_t(num_output) * num_input;
  std::vector<float> u(std::size_t(kPositions<Out>) * pairs);  // [position][output][input]
  for (std::size_t pc = 0; pc < pairs; ++pc) {
    const float* g = src + pc * 9;
    double gg[kIn][3];  // G g
    for (int i = 0; i < kIn; ++i)
      for (int c = 0; c < 3; ++c)
        gg[i][c] = Tr::kG[i][0] * g[c] + Tr::kG[i][1] * g[3 + c] + Tr::kG[i][2] * g[6 + c];
    for (int i = 0; i < kIn; ++i)
      for (int j = 0; j < kIn; ++j)
        u[std::size_t(i * kIn + j) * pairs + pc] =
            float(gg[i][0] * Tr::kG[j][0] + gg[i][1] * Tr::kG[j][1] + gg[i][2] * Tr::kG[j][2]);
  }
  const std::size_t per = gemm::weights_size(num_output, num_input);
  for (int pos = 0; pos < kPositions<Out>; ++pos)
    gemm::pack_weights<1>(u.data() + std::size_t(pos) * pairs, dst + std::size_t(pos) * per,
                          num_input, num_output, 1);
}

/// Pixels of the narrow register tile that finishes a chunk whose tile count is not a multiple of
/// the GEMM's kTileN (a 7x7 map has 4 tiles of 6x6: a full-width tile would waste two thirds).
inline constexpr int kNarrowN = gemm::kTileN / 3;

/// How the tiles of one output are processed: in `chunks` runs of consecutive tiles, of even
/// sizes, whose transformed inputs and GEMM outputs fit the workspace.
struct Plan {
  int tiles_x = 0, tiles_y = 0;
  std::size_t tiles = 0;   ///< tiles_x * tiles_y
  std::size_t chunk = 0;   ///< the most tiles of a chunk, rounded up to kNarrowN
  std::size_t chunks = 0;  ///< chunks

  /// The first tile of chunk k (k = chunks: one past the last tile).
  std::size_t chunk_begin(std::size_t k) const { return k * tiles / chunks; }
  /// Floats from one position's block to the next: transformed inputs, GEMM outputs.
  std::size_t v_pos = 0, m_pos = 0;
  std::size_t v_floats = 0, m_floats = 0;  ///< floats of transformed inputs, GEMM outputs
  /// Workspace floats per thread.
  std::size_t workspace() const { return v_floats + m_floats; }
};

namespace detail {

/// `floats` rounded up to an odd number of cache lines: the transforms touch every position's
/// block at once, and blocks a power of two of lines apart would share a few L1 sets.
inline std::size_t odd_lines(std::size_t floats) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  const std::size_t lines = (floats + kLine - 1) / kLine;
  return (lines | 1) * kLine;
}

}  // namespace detail

/// The chunks for an outw x outh output of num_output channels from num_input channels on
/// `threads` threads.
template <int Out>  ///< outputs per tile along an axis: 6, 4 or 2
Plan plan(int outw, int outh, int num_input, int num_output, int threads) {
  Plan p;
  p.tiles_x = (outw + Out - 1) / Out;
  p.tiles_y = (outh + Out - 1) / Out;
  p.tiles = std::size_t(p.tiles_x) * p.tiles_y;
  // Per chunk, the whole of the transformed weights is read once, and per tile its transformed
  // inputs and outputs (positions x channels floats) are written and read back once. Chunks of
  // ~1 MiB of those stay in L2; where the weights per tile of such a chunk would outweigh them
  // (many channels: 512 x 512 takes 64 MiB of weights), chunks grow up to kMaxBytes (L3) so that
  // the weights are streamed fewer times. Chunks are spread evenly.
  constexpr std::size_t kL2Bytes = std::size_t(1) << 20, kMaxBytes = std::size_t(12) << 20;
  const std::size_t cin = std::size_t(num_input), cout = gemm::bias_size(num_output);
  const std::size_t per_tile = sizeof(float) * kPositions<Out> * (cin + cout);
  const std::size_t balanced = cin * cout / (cin + cout);  // weights per tile = chunk data per tile
  const std::size_t want = std::min(std::max(kL2Bytes / per_tile, balanced), kMaxBytes / per_tile);
  const std::size_t max_chunk = std::max<std::size_t>(1, want / gemm::kTileN) * gemm::kTileN;
  p.chunks = (p.tiles + max_chunk - 1) / max_chunk;
  // Threads take whole chunks; a count that does not divide among them is split by output
  // channels too, at the price of repeating the chunk's input transform (channel_parts). Where the
  // weights are small (they stay in cache for every thread) and the tiles many, a count that
  // divides is taken instead: fewer chunks up to 1.5x the size, or more of at least kMinChunk
  // tiles (smaller ones waste more of the register tiles; measured on 2 threads, resnet50
  // c128_28 (49 tiles) runs faster split by channels).
  constexpr std::size_t kMinChunk = std::size_t(3) * gemm::kTileN;
  const std::size_t t = std::size_t(std::max(threads, 1));
  if (p.chunks % t != 0 && kPositions<Out> * cin * cout * sizeof(float) <= 4 * kL2Bytes) {
    const std::size_t down = p.chunks / t * t, up = down + t;
    if (down > 0 && p.tiles / down <= max_chunk + max_chunk / 2)
      p.chunks = down;
    else if (p.tiles / up >= kMinChunk)
      p.chunks = up;
  }
  // Chunk k covers tiles [k * tiles / chunks, (k + 1) * tiles / chunks): sizes differ by at most
  // one tile (fixed sizes rounded to the narrow tile left resnet50 c64_56 at 52+52+52+40, so two
  // threads got 104 and 92 tiles). Buffers hold the largest, rounded up to the narrow tile.
  const std::size_t largest = (p.tiles + p.chunks - 1) / p.chunks;
  p.chunk = (largest + kNarrowN - 1) / kNarrowN * kNarrowN;
  p.v_pos = detail::odd_lines(std::size_t(num_input) * p.chunk);
  p.m_pos = detail::odd_lines(gemm::bias_size(num_output) * p.chunk);
  p.v_floats = kPositions<Out> * p.v_pos;
  p.m_floats = kPositions<Out> * p.m_pos;
  return p;
}

namespace detail {

/// One register tile of a position's GEMM: C = A B for kBlockM output channels (`a`, the block of
/// packed weights) and N tiles. B value (k, j) with k = kg * L + i is b[kg * gstride + j * L + i];
/// lanes r * kWidth.. of C column j go to c[r * cstride + j * kWidth].
template <int N,  ///< tiles (GEMM columns)
          int L>  ///< lanes of an input channel group
inline void gemm_tile(const float* b, std::size_t gstride, int kgroups, const float* a, float* c,
                      std::size_t cstride) {
  using V = simd::fbatch<gemm::kWidth>;
  constexpr int kRows = gemm::kRows;
  V acc[kRows][N];
#pragma GCC unroll 32
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 32
    for (int j = 0; j < N; ++j) acc[r][j] = V(0.f);
  for (int kg = 0; kg < kgroups; ++kg) {
    const float* bg = b + std::size_t(kg) * gstride;
    for (int i = 0; i < L; ++i, a += gemm::kBlockM) {
      V w[kRows];
#pragma GCC unroll 32
      for (int r = 0; r < kRows; ++r) w[r] = V::load_unaligned(a + r * gemm::kWidth);
#pragma GCC unroll 32
      for (int j = 0; j < N; ++j) {
        const V x(bg[j * L + i]);
#pragma GCC unroll 32
        for (int r = 0; r < kRows; ++r) acc[r][j] = xsimd::fma(w[r], x, acc[r][j]);
      }
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 32
    for (int j = 0; j < N; ++j) acc[r][j].store_unaligned(c + r * cstride + j * gemm::kWidth);
}

/// gemm_tile in bf16 arithmetic: `b` and `a` (pairs) in bf16, C in f32.
template <int N, int L>
inline void gemm_tile_bf16(const bf16* b, std::size_t gstride, int kgroups, const bf16* a, float* c,
                           std::size_t cstride) {
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && XSIMD_WITH_AVX512F
  __m512 acc[gemm::kRows][N];
  bf16dot::detail::tile_sums<N, L>(b, gstride, kgroups, a, acc);
#pragma GCC unroll 32
  for (int r = 0; r < gemm::kRows; ++r)
#pragma GCC unroll 32
    for (int j = 0; j < N; ++j) _mm512_storeu_ps(c + r * cstride + j * 16, acc[r][j]);
#else
  (void)b, (void)gstride, (void)kgroups, (void)a, (void)c, (void)cstride;
#endif
}

}  // namespace detail

/// Items of work for `threads` threads over `chunks` chunks: each item is one chunk and one of
/// the returned number of ranges of output-channel blocks (of `mblocks`). Chunks that do not
/// divide among the threads (few, on small maps) are split by output channels too, so that every
/// thread has an even share (each such item repeats its chunk's input transform, a small cost
/// next to its GEMMs on the many channels those layers have).
inline int channel_parts(std::size_t chunks, int mblocks, int threads) {
  if (threads <= 1 || chunks % std::size_t(threads) == 0) return 1;
  return std::min(mblocks, threads);
}

/// out = act(conv3x3(pad(in), weights) + bias + res), stride 1, dilation 1, by F(Out x Out,
/// 3 x 3); `res` (a fused residual sum's other input, the output's shape and layout) left out
/// where empty.
/// `in` is the unpadded input: reads outside it take `pad_value` (the pads are pad_left and
/// pad_top; right and bottom follow from out's extents). `weights` come from
/// transform_weights<Out>, `bias` from gemm::pack_bias, `workspace` holds num_threads x
/// plan<Out>(out.w, out.h, in channels, out channels, num_threads).workspace() floats. Threads take
/// even shares of the (chunk, output channels) items, each a contiguous run: measured on 2 threads,
/// 3-10% faster than taking items as they finish, which interleaves the threads' output rows.
/// With bf16 weights (transform_weights' rounded to pairs by bf16dot::to_pairs,
/// bf16dot::kAvailable) the transformed inputs are rounded to bf16 and the GEMMs multiply in bf16
/// (f32 sums); the transforms stay f32.
template <StorageElement T,  ///< storage type of input and output
          int InPack,        ///< lanes of an input channel group (a float batch width)
          int OutPack,       ///< lanes of an output channel group
          int Out,           ///< outputs per tile along an axis: 6, 4 or 2
          class Act,         ///< epilogue activation, callable on float and on simd batches
          class WT>          ///< the GEMMs' arithmetic: float, or bf16 (pairs)
void convolution_winograd(const MatView<T, InPack>& in, int pad_left, int pad_top, float pad_value,
                          const MatView<T, OutPack>& out, const WT* weights, const float* bias,
                          const Act& act, float* workspace, int num_threads,
                          const MatView<T, OutPack>& res = {}) {
  constexpr bool kBf16 = std::same_as<WT, bf16>;
  static_assert(!kBf16 || bf16dot::kAvailable, "bf16 Winograd needs AVX512_BF16");
  using Tr = Transform<Out>;
  constexpr int kIn = Tr::kIn;
  constexpr int kPos = kPositions<Out>;
  constexpr int W = gemm::kWidth;  // lanes of the GEMM outputs and of the output transform
  constexpr int kGroupsPerBlock = gemm::kBlockM / W;
  using VI = simd::fbatch<InPack>;
  using VO = simd::fbatch<W>;
  const int cin = in.c * InPack;
  const int m = out.c * OutPack;
  const int mblocks = (m + gemm::kBlockM - 1) / gemm::kBlockM;
  const int ogroups = (m + W - 1) / W;
  const Plan p = plan<Out>(out.w, out.h, cin, m, num_threads);
  const std::size_t nt = p.chunk;
  // Per position: V as [input group][tile][InPack lanes], M as [output group][tile][W lanes].
  const std::size_t v_pos = p.v_pos, m_pos = p.m_pos;
  const std::size_t u_pos = gemm::weights_size(m, cin);
  // The pad value as the padded copy in T would hold it.
  const VI pad = VI(to_f32(from_f32<T>(pad_value)));
  const std::size_t work = std::size_t(kPos) * mblocks * gemm::kBlockM * cin * p.tiles;
  const int threads = kernels::detail::worth_threads(work) ? std::max(num_threads, 1) : 1;
  const int parts = channel_parts(p.chunks, mblocks, threads);
  const long items = long(p.chunks) * parts;

#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (long item = 0; item < items; ++item) {
#ifdef _OPENMP
    float* vbuf = workspace + std::size_t(omp_get_thread_num()) * p.workspace();
#else
    float* vbuf = workspace;
#endif
    float* mbuf = vbuf + p.v_floats;
    // Transformed inputs as the GEMMs read them (bf16: the same element offsets, half the bytes).
    WT* vb = reinterpret_cast<WT*>(vbuf);
    const std::size_t chunk = std::size_t(item / parts);
    const int part = int(item % parts);
    const int mb0 = int(std::int64_t(mblocks) * part / parts);
    const int mb1 = int(std::int64_t(mblocks) * (part + 1) / parts);
    const std::size_t t0 = p.chunk_begin(chunk);
    const std::size_t nvalid = p.chunk_begin(chunk + 1) - t0;
    // GEMM columns: nvalid rounded up to the narrow register tile; the columns past the output
    // get zeros.
    const std::size_t ncols = (nvalid + kNarrowN - 1) / kNarrowN * kNarrowN;
    // Input transform: V[pos][q][tile][lane].
    for (int q = 0; q < in.c; ++q) {
      for (std::size_t j = 0; j < ncols; ++j) {
        WT* dst = vb + (std::size_t(q) * nt + j) * InPack;
        if (j >= nvalid) {
          for (int pos = 0; pos < kPos; ++pos) simd::store<InPack>(dst + pos * v_pos, VI(0.f));
          continue;
        }
        const std::size_t t = t0 + j;
        const int y0 = int(t / std::size_t(p.tiles_x)) * Out - pad_top;
        const int x0 = int(t % std::size_t(p.tiles_x)) * Out - pad_left;
        VI d[kIn][kIn];
        if (y0 >= 0 && x0 >= 0 && y0 + kIn <= in.h && x0 + kIn <= in.w) {
          for (int r = 0; r < kIn; ++r) {
            const T* src = in.row(q, y0 + r) + std::size_t(x0) * InPack;
#pragma GCC unroll 8
            for (int c = 0; c < kIn; ++c) d[r][c] = simd::load<InPack>(src + c * InPack);
          }
        } else {
          for (int r = 0; r < kIn; ++r) {
            const int y = y0 + r;
            for (int c = 0; c < kIn; ++c) {
              const int x = x0 + c;
              d[r][c] = (y >= 0 && y < in.h && x >= 0 && x < in.w)
                            ? simd::load<InPack>(in.row(q, y) + std::size_t(x) * InPack)
                            : pad;
            }
          }
        }
        VI tmp[kIn][kIn];
#pragma GCC unroll 8
        for (int c = 0; c < kIn; ++c) Tr::input(&d[0][c], kIn, &tmp[0][c], kIn);
#pragma GCC unroll 8
        for (int r = 0; r < kIn; ++r) {
          VI v[kIn];
          Tr::input(tmp[r], 1, v, 1);
#pragma GCC unroll 8
          for (int c = 0; c < kIn; ++c) {
            if constexpr (kBf16)
              bf16dot::store_rounded<InPack>(dst + (r * kIn + c) * v_pos, v[c]);
            else
              v[c].store_unaligned(dst + (r * kIn + c) * v_pos);
          }
        }
      }
    }
    // GEMMs: per position and block of output channels, M[pos] = U[pos] V[pos].
    for (int pos = 0; pos < kPos; ++pos) {
      const WT* v = vb + std::size_t(pos) * v_pos;
      for (int mb = mb0; mb < mb1; ++mb) {
        const WT* a =
            weights + std::size_t(pos) * u_pos + std::size_t(mb) * gemm::kBlockM * std::size_t(cin);
        float* c = mbuf + std::size_t(pos) * m_pos + std::size_t(mb) * kGroupsPerBlock * nt * W;
        std::size_t j = 0;
        if constexpr (kBf16) {
          for (; j + gemm::kTileN <= nvalid; j += gemm::kTileN)
            detail::gemm_tile_bf16<gemm::kTileN, InPack>(v + j * InPack, nt * InPack, in.c, a,
                                                         c + j * W, nt * W);
          for (; j < ncols; j += kNarrowN)
            detail::gemm_tile_bf16<kNarrowN, InPack>(v + j * InPack, nt * InPack, in.c, a,
                                                     c + j * W, nt * W);
        } else {
          for (; j + gemm::kTileN <= nvalid; j += gemm::kTileN)
            detail::gemm_tile<gemm::kTileN, InPack>(v + j * InPack, nt * InPack, in.c, a, c + j * W,
                                                    nt * W);
          for (; j < ncols; j += kNarrowN)
            detail::gemm_tile<kNarrowN, InPack>(v + j * InPack, nt * InPack, in.c, a, c + j * W,
                                                nt * W);
        }
      }
    }
    // Output transform, bias, activation, conversion and store.
    const int g1 = std::min(ogroups, mb1 * kGroupsPerBlock);
    for (int g = mb0 * kGroupsPerBlock; g < g1; ++g) {
      const VO b = VO::load_unaligned(bias + std::size_t(g) * W);
      for (std::size_t j = 0; j < nvalid; ++j) {
        const std::size_t t = t0 + j;
        const int y0 = int(t / std::size_t(p.tiles_x)) * Out;
        const int x0 = int(t % std::size_t(p.tiles_x)) * Out;
        const float* src = mbuf + (std::size_t(g) * nt + j) * W;
        VO mm[kIn][kIn];
#pragma GCC unroll 8
        for (int r = 0; r < kIn; ++r)
#pragma GCC unroll 8
          for (int c = 0; c < kIn; ++c) mm[r][c] = VO::load_unaligned(src + (r * kIn + c) * m_pos);
        VO tmp[Out][kIn];
#pragma GCC unroll 8
        for (int c = 0; c < kIn; ++c) Tr::output(&mm[0][c], kIn, &tmp[0][c], kIn);
        const int rows = std::min(Out, out.h - y0), cols = std::min(Out, out.w - x0);
        for (int r = 0; r < rows; ++r) {
          VO y[Out];
          Tr::output(tmp[r], 1, y, 1);
          for (int c = 0; c < cols; ++c)
            gemm::detail::store_sum<OutPack>(out, res, g * W, m,
                                             std::size_t(y0 + r) * out.w + std::size_t(x0 + c),
                                             y[c] + b, act);
        }
      }
    }
  }
}

}  // namespace infer::kernels::winograd
