// int8 3x3 stride-1 convolution by Winograd F(4x4, 3x3) on AVX-512 VNNI: the products as int16
// pairs into int32 (vpdpwssd, 32 products an instruction against vpdpbusd's 64), 36 of them per
// 4x4 output tile and channel where the direct form (conv_gemm) has 144: 2x fewer instructions.
//
// The transforms are int8_winograd43.hpp's (U'' = G'' g G''^T, V = B^T d B, 576 Y = A^T [e_i e_j
// M_ij] A), but every sum runs in int32 lanes and may wrap around: sums, differences and products
// by integers are exact modulo 2^32, so the output transform yields 576 Y modulo 2^32; times the
// inverse of 9 modulo 2^32 that is 64 Y modulo 2^32, and shifted right arithmetically by 6, Y
// itself where |Y| < 2^25. transform_weights checks that from the weights (exact_for): every
// output channel's sum of |w| times 128 (the largest |input|) below 2^25, or, for an input with
// no negative value (a ReLU's output, checked per forward by the layer, which takes the GEMM
// otherwise), its positive and its negative weights' sums times 127. A 512-channel 3x3 layer
// passes the first with a mean |w| below 56, the second below about 112 (a layer that passes
// neither keeps the GEMM). So the epilogue sees conv_gemm's sums exactly, value for value.
//
// Work: the output's tiles in chunks (as many as kChunkBytes of transformed input and products
// hold, at most kMaxChunk), each transformed, multiplied position by position against the
// weights (read once per chunk), and transformed back. A thread takes whole chunks where there
// are at least two a thread or a multiple of the threads (thread_chunk_tiles makes one where the
// weights are cheap to re-read); with fewer (small maps), the threads share each chunk's three
// phases.
//
// Layouts: weights [36 positions][m_pad / 16][cin_pad / 2][16 channels][2 k] int16 (m_pad and
// cin_pad multiples of 16); per chunk of nc tiles, the transformed input [36][nc][cin_pad] int16
// (int8_winograd43.hpp's transform_input) and the products [36][nc][m_pad] int32.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/detail/omp.hpp>
#include <infer/element.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/kernels/int8_winograd43.hpp>
#include <infer/mat.hpp>
#include <vector>

namespace infer::kernels::int8::winograd43_wrap {

/// Whether this build has the kernel (AVX-512 VNNI and BW).
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

/// |Y| must stay below this for the sums modulo 2^26 to be exact (the file's comment).
inline constexpr std::int64_t kLimit = std::int64_t(1) << 25;
/// Tiles of the products' register tile (12 tiles x 32 channels: 24 accumulators, two weight
/// vectors and a broadcast pair of 32 registers); a chunk's last tiles run 4 at a time.
inline constexpr int kTileGroup = 12;
inline constexpr int kTailGroup = 4;
/// A chunk's transformed input and products take at most this many bytes and tiles (at least
/// kTileGroup): the weights, 8x the int8 layer's bytes, are read once per chunk.
inline constexpr std::size_t kChunkBytes = std::size_t(4) << 20;
inline constexpr int kMaxChunk = 96;

/// The inputs for which a layer's weights keep every |Y| below kLimit.
enum class Exactness {
  none,         ///< not even non-negative inputs: the GEMM
  nonnegative,  ///< inputs in [0, 127] (a ReLU's output; the caller checks each input)
  any,          ///< every int8 input
};

/// Weights transformed for conv_wino43_wrap; empty (u.empty()) where exact_for gives none.
struct Weights {
  std::vector<std::int16_t> u;     ///< [36][m_pad / 16][cin_pad / 2][16][2]
  std::vector<std::int32_t> zero;  ///< [m_pad] zeros: the epilogue's compensation
  int m = 0, m_pad = 0, cin = 0, cin_pad = 0;
  /// Exactness::nonnegative: exact only on an input with no negative value (nor pad value).
  bool nonnegative_only = false;
};

/// Which inputs keep |Y| < kLimit for the weights w ([m][cin][9]): any int8 input where every
/// output channel's sum of |w| times 128 is below it; inputs in [0, 127] where the larger of its
/// positive weights' sum and its negative weights' |sum|, times 127, is.
inline Exactness exact_for(const std::int8_t* w, int m, int cin) {
  const std::size_t per = std::size_t(cin) * 9;
  Exactness worst = Exactness::any;
  for (int oc = 0; oc < m; ++oc) {
    std::int64_t pos = 0, neg = 0;
    for (std::size_t i = 0; i < per; ++i) {
      const int v = w[std::size_t(oc) * per + i];
      (v < 0 ? neg : pos) += v < 0 ? -v : v;
    }
    if (std::max(pos, neg) * 127 >= kLimit) return Exactness::none;
    if ((pos + neg) * 128 >= kLimit) worst = Exactness::nonnegative;
  }
  return worst;
}

/// Transforms int8 3x3 weights w ([m][cin][9], ncnn's layout) into U'' per channel pair, in 16
/// output channels a block; empty where exact_for gives none.
inline Weights transform_weights(const std::int8_t* w, int m, int cin) {
  const Exactness exact = exact_for(w, m, cin);
  if (exact == Exactness::none) return {};
  Weights t;
  t.nonnegative_only = exact == Exactness::nonnegative;
  t.m = m;
  t.m_pad = (m + 15) / 16 * 16;
  t.cin = cin;
  t.cin_pad = (cin + 15) / 16 * 16;
  t.u.assign(std::size_t(36) * std::size_t(t.m_pad) * std::size_t(t.cin_pad), 0);
  t.zero.assign(std::size_t(t.m_pad), 0);
  const std::size_t pairs = std::size_t(t.cin_pad / 2), mblocks = std::size_t(t.m_pad / 16);
  for (int oc = 0; oc < m; ++oc)
    for (int c = 0; c < cin; ++c) {
      int us[36];
      winograd43::transform_kernel(w + (std::size_t(oc) * std::size_t(cin) + std::size_t(c)) * 9,
                                   us);
      for (std::size_t pos = 0; pos < 36; ++pos)
        t.u[((pos * mblocks + std::size_t(oc / 16)) * pairs + std::size_t(c / 2)) * 32 +
            std::size_t(oc % 16) * 2 + std::size_t(c % 2)] = std::int16_t(us[pos]);
    }
  return t;
}

/// Bytes one tile takes in a chunk: 36 positions of transformed input and products.
inline std::size_t tile_bytes(const Weights& w) {
  return std::size_t(36) * (std::size_t(w.cin_pad) * sizeof(std::int16_t) +
                            std::size_t(w.m_pad) * sizeof(std::int32_t));
}

/// Tiles a chunk holds for a map of `tiles` tiles: the chunks of kChunkBytes balanced, each a
/// multiple of kTailGroup.
inline int chunk_tiles(const Weights& w, int tiles) {
  const int fit = std::clamp(int(kChunkBytes / tile_bytes(w)), kTileGroup, kMaxChunk);
  const int chunks = (tiles + fit - 1) / fit;
  const int per = (tiles + chunks - 1) / chunks;
  return (per + kTailGroup - 1) / kTailGroup * kTailGroup;
}

/// Bytes of workspace one thread needs for a map of `tiles` tiles.
inline std::size_t workspace_bytes(const Weights& w, int tiles) {
  return std::size_t(chunk_tiles(w, tiles)) * tile_bytes(w);
}

/// The tiles of a chunk for `threads` threads: chunk_tiles, or fewer where that makes the chunk
/// count a multiple of the threads (each thread then takes whole chunks, as many as the others)
/// and re-reading the weights once per extra chunk moves fewer bytes than what it saves: a chunk
/// count short of a multiple leaves a thread idle for up to a chunk, or, below two chunks a
/// thread, has the threads share each chunk's phases, which moves the chunk's transformed input
/// and products between the cores (twice). SqueezeNet's first expand3x3 (16 -> 64 channels, a
/// 56x56 map, 3 chunks) took 1.6x longer on 2 threads than on 1 that way (AMD EPYC Zen 5 VM).
/// Never more than chunk_tiles, so workspace_bytes holds it.
inline int thread_chunk_tiles(const Weights& w, int tiles, int threads) {
  const int nc = chunk_tiles(w, tiles);
  const int chunks = (tiles + nc - 1) / nc;
  if (threads < 2 || chunks % threads == 0 || chunks >= 8 * threads) return nc;
  const int want = (chunks + threads - 1) / threads * threads;
  const int per = ((tiles + want - 1) / want + kTailGroup - 1) / kTailGroup * kTailGroup;
  const int more = (tiles + per - 1) / per;
  if (per < kTileGroup || per > nc || more % threads != 0) return nc;
  const std::size_t weight_bytes = w.u.size() * sizeof(std::int16_t);
  const std::size_t chunk_bytes = std::size_t(nc) * tile_bytes(w);
  return std::size_t(more - chunks) * weight_bytes < 2 * chunk_bytes ? per : nc;
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
namespace detail {

/// y[tile j][NV x 16 channels] = sum over the channel pairs of U''[channels][pair] V[tile j][pair]
/// for G tiles: u the first 16-channel block's weights (the next at + ustride), v tile 0's
/// transformed input (the next at + cp), y tile 0's products (the next at + mp).
template <int G, int NV>
inline void block_products(const std::int16_t* u, std::size_t ustride, const std::int16_t* v,
                           std::size_t cp, int pairs, std::int32_t* y, std::size_t mp) {
  __m512i acc[G][NV];
#pragma GCC unroll 12
  for (int j = 0; j < G; ++j)
#pragma GCC unroll 2
    for (int k = 0; k < NV; ++k) acc[j][k] = _mm512_setzero_si512();
  for (int q = 0; q < pairs; ++q) {
    __m512i wv[NV];
#pragma GCC unroll 2
    for (int k = 0; k < NV; ++k)
      wv[k] = _mm512_loadu_si512(u + std::size_t(k) * ustride + std::size_t(q) * 32);
#pragma GCC unroll 12
    for (int j = 0; j < G; ++j) {
      std::int32_t pair;
      std::memcpy(&pair, v + std::size_t(j) * cp + std::size_t(q) * 2, 4);
      const __m512i x = _mm512_set1_epi32(pair);
#pragma GCC unroll 2
      for (int k = 0; k < NV; ++k) acc[j][k] = _mm512_dpwssd_epi32(acc[j][k], wv[k], x);
    }
  }
#pragma GCC unroll 12
  for (int j = 0; j < G; ++j)
#pragma GCC unroll 2
    for (int k = 0; k < NV; ++k)
      _mm512_storeu_si512(y + std::size_t(j) * mp + std::size_t(k) * 16, acc[j][k]);
}

/// Position pos's products for the chunk's nt tiles (a multiple of kTailGroup), output channels
/// [mb x 16, +NV x 16).
template <int NV>
inline void position_products(const Weights& w, const std::int16_t* v, std::int32_t* y, int nc,
                              int nt, int pos, int mb) {
  const std::size_t cp = std::size_t(w.cin_pad), mp = std::size_t(w.m_pad), ncs = std::size_t(nc);
  const int pairs = w.cin_pad / 2;
  const std::size_t ustride = std::size_t(pairs) * 32;
  const std::int16_t* u =
      w.u.data() + (std::size_t(pos) * std::size_t(w.m_pad / 16) + std::size_t(mb)) * ustride;
  const std::int16_t* vp = v + std::size_t(pos) * ncs * cp;
  std::int32_t* yp = y + std::size_t(pos) * ncs * mp + std::size_t(mb) * 16;
  int t = 0;
  for (; t + kTileGroup <= nt; t += kTileGroup)
    block_products<kTileGroup, NV>(u, ustride, vp + std::size_t(t) * cp, cp, pairs,
                                   yp + std::size_t(t) * mp, mp);
  for (; t < nt; t += kTailGroup)
    block_products<kTailGroup, NV>(u, ustride, vp + std::size_t(t) * cp, cp, pairs,
                                   yp + std::size_t(t) * mp, mp);
}

/// Work items of one position's products: 32-channel blocks, and a last of 16.
inline int position_items(const Weights& w) { return (w.m_pad / 16 + 1) / 2; }

/// Item `item` of position_items at position pos.
inline void item_products(const Weights& w, const std::int16_t* v, std::int32_t* y, int nc, int nt,
                          int pos, int item) {
  const int mb = item * 2;
  if (mb + 2 <= w.m_pad / 16)
    position_products<2>(w, v, y, nc, nt, pos, mb);
  else
    position_products<1>(w, v, y, nc, nt, pos, mb);
}

/// One axis of A^T diag(e) for F(4x4, 3x3) on six int32 vectors (wrapping): A^T's columns scaled
/// by e = (6, 4, 4, 1, 1, 24), in shifts and adds.
inline void output_axis(const __m512i* m, std::size_t s, __m512i* r, std::size_t t) {
  const __m512i a12 = _mm512_add_epi32(m[s], m[2 * s]), s12 = _mm512_sub_epi32(m[s], m[2 * s]);
  const __m512i a34 = _mm512_add_epi32(m[3 * s], m[4 * s]);
  const __m512i s34 = _mm512_sub_epi32(m[3 * s], m[4 * s]);
  const __m512i m0x6 = _mm512_add_epi32(_mm512_slli_epi32(m[0], 2), _mm512_slli_epi32(m[0], 1));
  const __m512i m5x24 =
      _mm512_add_epi32(_mm512_slli_epi32(m[5 * s], 4), _mm512_slli_epi32(m[5 * s], 3));
  const __m512i s12x4 = _mm512_slli_epi32(s12, 2);
  r[0] = _mm512_add_epi32(_mm512_add_epi32(m0x6, _mm512_slli_epi32(a12, 2)), a34);
  r[t] = _mm512_add_epi32(s12x4, _mm512_slli_epi32(s34, 1));
  r[2 * t] = _mm512_slli_epi32(_mm512_add_epi32(a12, a34), 2);
  r[3 * t] = _mm512_add_epi32(_mm512_add_epi32(s12x4, _mm512_slli_epi32(s34, 3)), m5x24);
}

/// The 16 output pixels of tile tt (chunk-relative) for output channels [m0, m0 + 16): A^T
/// diag(e) on both axes gives 576 Y modulo 2^32; times the inverse of 9 it is 64 Y modulo 2^32,
/// shifted right arithmetically by 6 Y itself (the file's comment), into sums[pixel][16].
inline void output_tile(const std::int32_t* y, std::size_t ncs, std::size_t mp, int tt, int m0,
                        std::int32_t (*sums)[kBlockM]) {
  __m512i mv[36], r[24], o[16];
  for (int pos = 0; pos < 36; ++pos)
    mv[pos] = _mm512_loadu_si512(y + (std::size_t(pos) * ncs + std::size_t(tt)) * mp +
                                 std::size_t(m0));
  for (int j = 0; j < 6; ++j) output_axis(mv + j, 6, r + j, 6);  // columns: 6 rows -> 4
  for (int i = 0; i < 4; ++i) output_axis(r + i * 6, 1, o + i * 4, 1);  // rows: 6 columns -> 4
  const __m512i inv9 = _mm512_set1_epi32(std::int32_t(0x38E38E39u));
  for (int p = 0; p < 16; ++p)
    _mm512_store_si512(sums[p], _mm512_srai_epi32(_mm512_mullo_epi32(o[p], inv9), 6));
}

}  // namespace detail

/// The convolution of `in` (int8, 3x3, stride 1, dilation 1, one group) with transformed weights
/// `w` into `out` (outw x outh; f32, or i8 requantized) through kernels::int8's epilogue `e`,
/// whose comp must be zeros (w.zero). `workspace` holds num_threads x workspace_bytes(w, tiles),
/// the output's tiles ((outw + 3) / 4) x ((outh + 3) / 4).
template <class TO, int InPack, int OutPack, class Act>
void conv_wino43_wrap(const MatView<i8, InPack>& in, const MatView<TO, OutPack>& out,
                      const Weights& w, int pad_left, int pad_top, std::int8_t pad, int outw,
                      int outh, const Epilogue& e, const Act& act, std::uint8_t* workspace,
                      int num_threads) {
  const int tiles_x = (outw + 3) / 4, tiles_y = (outh + 3) / 4;
  const int tiles = tiles_x * tiles_y;
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.cin) *
                                                     std::size_t(tiles) * 36 / 2)
                          ? num_threads
                          : 1;
  const int nc = thread_chunk_tiles(w, tiles, threads);
  const int chunks = (tiles + nc - 1) / nc;
  const std::size_t mp = std::size_t(w.m_pad), ncs = std::size_t(nc);
  const std::size_t v_bytes = std::size_t(36) * ncs * std::size_t(w.cin_pad) * sizeof(std::int16_t);
  const int items = detail::position_items(w);
  // Tiles [t0, t0 + n) of a chunk's output transform and epilogue, from its products y.
  auto finish = [&](const std::int32_t* y, int t0, int tt0, int tt1) {
    alignas(64) std::int32_t sums[16][kBlockM];
    for (int tt = tt0; tt < tt1; ++tt) {
      const int t = t0 + tt, oy = (t / tiles_x) * 4, ox = (t % tiles_x) * 4;
      for (int m0 = 0; m0 < w.m; m0 += kBlockM) {
        detail::output_tile(y, ncs, mp, tt, m0, sums);
        const int valid = std::min(kBlockM, w.m - m0);
        for (int i = 0; i < 4 && oy + i < outh; ++i)
          int8::detail::store_pixels<TO, OutPack>(
              out, sums + i * 4, std::min(4, outw - ox), m0, valid,
              std::size_t(oy + i) * std::size_t(outw) + std::size_t(ox), e, std::size_t(m0), act);
      }
    }
  };
  const winograd43::detail::Sizes sizes{w.cin, w.cin_pad};
  if (threads == 1 || chunks >= 2 * threads || chunks % threads == 0) {
    // Whole chunks a thread (as many as the others where the count is a multiple of the threads).
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
    for (int chunk = 0; chunk < chunks; ++chunk) {
      std::uint8_t* ws = workspace + std::size_t(omp_get_thread_num()) * workspace_bytes(w, tiles);
      auto* v = reinterpret_cast<std::int16_t*>(ws);
      auto* y = reinterpret_cast<std::int32_t*>(ws + v_bytes);
      const int t0 = chunk * nc;
      const int n = std::min(nc, tiles - t0);
      const int nt = (n + kTailGroup - 1) / kTailGroup * kTailGroup;
      winograd43::detail::transform_input<InPack>(in, sizes, tiles_x, tiles, t0, nt, nc, pad_left,
                                                  pad_top, pad, v);
      for (int pos = 0; pos < 36; ++pos)
        for (int item = 0; item < items; ++item)
          detail::item_products(w, v, y, nc, nt, pos, item);
      finish(y, t0, 0, n);
    }
    return;
  }
  // Few chunks: the threads share each chunk's phases, in thread 0's workspace.
  auto* v = reinterpret_cast<std::int16_t*>(workspace);
  auto* y = reinterpret_cast<std::int32_t*>(workspace + v_bytes);
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int t0 = chunk * nc;
    const int n = std::min(nc, tiles - t0);
    const int nt = (n + kTailGroup - 1) / kTailGroup * kTailGroup;
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static)
      for (int tt = 0; tt < nt; ++tt)
        winograd43::detail::transform_input<InPack>(in, sizes, tiles_x, tiles, t0 + tt, 1, nc,
                                                    pad_left, pad_top, pad, v + std::size_t(tt) *
                                                                                std::size_t(w.cin_pad));
#pragma omp for schedule(dynamic)
      for (int job = 0; job < 36 * items; ++job)
        detail::item_products(w, v, y, nc, nt, job / items, job % items);
#pragma omp for schedule(static)
      for (int tt = 0; tt < n; ++tt) finish(y, t0, tt, tt + 1);
    }
  }
}
#endif

}  // namespace infer::kernels::int8::winograd43_wrap
