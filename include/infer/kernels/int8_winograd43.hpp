// int8 3x3 stride-1 convolution by Winograd F(4x4, 3x3) in integers, for CPUs without VNNI (where
// the products run as int16 pairs, vpmaddwd): 36 products per 4x4 output tile and channel pair
// against F(2x2, 3x3)'s 16 per 2x2 tile (int8_winograd.hpp), 1.78 times fewer.
//
// Integers throughout. G's rows are scaled to integers (G'' = D G, D = diag(4, 6, 6, 24, 24, 1)),
// so U'' = G'' g G''^T holds integers within +-7 x 7 x 127; the input transform B^T d B (B's
// integer matrix) is within +-100 x 128. Then 576 Y = A^T [e_i e_j M_ij] A with e = 24 / d = (6, 4,
// 4, 1, 1, 24) and M = sum over channels of U'' .* V: integer coefficients, and the division by
// 576 is exact. M is summed in int32 over slices of channels short enough that no partial sum can
// leave int32 (Weights43::slice, from the layer's own transformed weights and the largest |V|),
// and the slices' sums in int64, as is the output transform: every step exact, the result the
// direct convolution's int32 sum, the same sums the GEMM and F(2x2) give the epilogue.
//
// Layouts: weights [36 positions][m_pad / 8][cin_pad / 2][8 channels][2 k] int16 (m_pad a multiple
// of 16, cin_pad of 16); per chunk of nc tiles, the transformed input [36][nc][cin_pad] int16 and
// the products [36][nc][m_pad] int64, in a thread's workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/detail/omp.hpp>
#include <infer/element.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/kernels/int8_winograd.hpp>
#include <infer/mat.hpp>
#include <vector>

namespace infer::kernels::int8::winograd43 {

/// The largest |B^T d B| for int8 d (|d| <= 128): B^T's rows sum to at most 10 in magnitude.
inline constexpr std::int64_t kMaxV = 100 * 128;
/// Tiles a chunk holds at least, and the bytes its workspace may take.
inline constexpr int kMinChunk = 12;
inline constexpr std::size_t kChunkBytes = std::size_t(512) << 10;

/// Weights transformed for conv_wino43.
struct Weights43 {
  std::vector<std::int16_t> u;     ///< [36][m_pad / 8][cin_pad / 2][8][2]
  std::vector<std::int32_t> zero;  ///< [m_pad] zeros: the epilogue's compensation
  int m = 0, m_pad = 0, cin = 0, cin_pad = 0;
  int slice = 0;  ///< channels (a multiple of 16) summed in int32 before the int64 sum
};

/// G'' = D G for F(4x4, 3x3): integer rows.
inline constexpr int kG[6][3] = {{1, 0, 0}, {-1, -1, -1}, {-1, 1, -1},
                                 {1, 2, 4}, {1, -2, 4},   {0, 0, 1}};

/// U'' = G'' g G''^T of one 3x3 kernel g (row-major) into u[36] (position i x 6 + j).
inline void transform_kernel(const std::int8_t* g, int (&u)[36]) {
  int tg[6][3];  // G'' g
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 3; ++j)
      tg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      u[i * 6 + j] = tg[i][0] * kG[j][0] + tg[i][1] * kG[j][1] + tg[i][2] * kG[j][2];
}

/// Transforms int8 3x3 weights w ([m][cin][9], ncnn's layout) into U'' = G'' g G''^T per channel
/// pair and picks the int32 slice. Empty (u.empty()) when not even 16 channels fit a slice (not
/// for int8 weights: |U''| <= 6223 keeps 26 channels within int32).
inline Weights43 transform_weights(const std::int8_t* w, int m, int cin) {
  Weights43 t;
  t.m = m;
  t.m_pad = (m + 15) / 16 * 16;
  t.cin = cin;
  t.cin_pad = (cin + 15) / 16 * 16;
  t.u.assign(std::size_t(36) * std::size_t(t.m_pad) * std::size_t(t.cin_pad), 0);
  t.zero.assign(std::size_t(t.m_pad), 0);
  const std::size_t pairs = std::size_t(t.cin_pad / 2);
  // |U''| per (channel block of 16 input channels, output channel, position), for the slice.
  const int cblocks = t.cin_pad / 16;
  std::vector<std::int64_t> block_abs(std::size_t(cblocks) * std::size_t(m) * 36, 0);
  for (int oc = 0; oc < m; ++oc)
    for (int c = 0; c < cin; ++c) {
      int us[36];
      transform_kernel(w + (std::size_t(oc) * std::size_t(cin) + std::size_t(c)) * 9, us);
      for (std::size_t pos = 0; pos < 36; ++pos) {
        const int u = us[pos];
        const std::size_t at = ((pos * std::size_t(t.m_pad / 8) + std::size_t(oc / 8)) * pairs +
                                std::size_t(c / 2)) *
                                   16 +
                               std::size_t(oc % 8) * 2 + std::size_t(c % 2);
        t.u[at] = std::int16_t(u);
        block_abs[(std::size_t(c / 16) * std::size_t(m) + std::size_t(oc)) * 36 + pos] +=
            u < 0 ? -u : u;
      }
    }
  // The longest slice (in blocks of 16 channels) whose every sum of |U''| x kMaxV, for every
  // output channel, position and slice of that length, stays below 2^31.
  constexpr std::int64_t kLimit = (std::int64_t(1) << 31) - 1;
  for (int len = cblocks; len >= 1; --len) {
    bool fits = true;
    for (int b0 = 0; b0 < cblocks && fits; b0 += len)
      for (int oc = 0; oc < m && fits; ++oc)
        for (std::size_t pos = 0; pos < 36 && fits; ++pos) {
          std::int64_t s = 0;
          for (int b = b0; b < std::min(cblocks, b0 + len); ++b)
            s += block_abs[(std::size_t(b) * std::size_t(m) + std::size_t(oc)) * 36 + pos];
          fits = s * kMaxV <= kLimit;
        }
    if (fits) {
      t.slice = len * 16;
      return t;
    }
  }
  return {};
}

/// Bytes one tile takes in a chunk's workspace: 36 positions of transformed input and products.
inline std::size_t tile_bytes(const Weights43& w) {
  return std::size_t(36) * (std::size_t(w.cin_pad) * sizeof(std::int16_t) +
                            std::size_t(w.m_pad) * sizeof(std::int64_t));
}

/// Tiles a chunk holds for a map of `tiles` tiles (a multiple of detail::kTileGroup, 6).
inline int chunk_tiles(const Weights43& w, int tiles) {
  const int fit = int(std::min<std::size_t>(126, kChunkBytes / tile_bytes(w))) / 6 * 6;
  return std::min((tiles + 5) / 6 * 6, std::max(kMinChunk, fit));
}

/// Bytes of workspace one thread needs for a map of `tiles` tiles.
inline std::size_t workspace_bytes(const Weights43& w, int tiles) {
  return std::size_t(chunk_tiles(w, tiles)) * tile_bytes(w);
}

namespace detail {

/// x / 576 for x an exact multiple of 576 whose quotient fits int32: (x / 64) mod 2^32 times the
/// inverse of 9 modulo 2^32 (9 x 0x38E38E39 = 2^33 + 1), in 32-bit lanes the compiler vectorizes
/// (a 64-bit division is a scalar multiply-high per value on AVX2).
inline std::int32_t exact_div576(std::int64_t x) {
  const auto low = std::uint32_t(std::uint64_t(x) >> 6);
  return std::int32_t(low * 0x38E38E39u);
}

/// One axis of B^T x for six values (any integer type holding the range).
template <class T>
inline void input_axis(const T* x, std::size_t s, T* y, std::size_t t) {
  const T x0 = x[0], x1 = x[s], x2 = x[2 * s], x3 = x[3 * s], x4 = x[4 * s], x5 = x[5 * s];
  y[0] = T(4 * x0 - 5 * x2 + x4);
  y[t] = T(-4 * x1 - 4 * x2 + x3 + x4);
  y[2 * t] = T(4 * x1 - 4 * x2 - x3 + x4);
  y[3 * t] = T(-2 * x1 - x2 + 2 * x3 + x4);
  y[4 * t] = T(2 * x1 - x2 - 2 * x3 + x4);
  y[5 * t] = T(4 * x1 - 5 * x3 + x5);
}

#if defined(__AVX2__)
/// input_axis on the sixteen int16 lanes of a register.
inline void input_axis_v(const __m256i* x, std::size_t s, __m256i* y, std::size_t t) {
  const __m256i x0 = x[0], x1 = x[s], x2 = x[2 * s], x3 = x[3 * s], x4 = x[4 * s], x5 = x[5 * s];
  auto mul = [](__m256i v, int k) { return _mm256_mullo_epi16(v, _mm256_set1_epi16(short(k))); };
  const __m256i f4 = _mm256_sub_epi16(x4, mul(x2, 4));  // x4 - 4 x2
  const __m256i f3 = _mm256_sub_epi16(x3, mul(x1, 4));  // x3 - 4 x1
  const __m256i g4 = _mm256_sub_epi16(x4, x2);
  const __m256i g3 = _mm256_slli_epi16(_mm256_sub_epi16(x3, x1), 1);  // 2 (x3 - x1)
  y[0] = _mm256_add_epi16(_mm256_sub_epi16(mul(x0, 4), mul(x2, 5)), x4);
  y[t] = _mm256_add_epi16(f4, f3);
  y[2 * t] = _mm256_sub_epi16(f4, f3);
  y[3 * t] = _mm256_add_epi16(g4, g3);
  y[4 * t] = _mm256_sub_epi16(g4, g3);
  y[5 * t] = _mm256_add_epi16(_mm256_sub_epi16(mul(x1, 4), mul(x3, 5)), x5);
}
#endif

/// The channels transform_input reads (cin) and lays out (cin_pad, zeros past cin).
struct Sizes {
  int cin = 0, cin_pad = 0;
};

/// Gathers and transforms the 6x6 input windows of tiles [t0, t0 + nt) (tiles past `tiles` read
/// zeros) into v [36][nc][cin_pad]; values outside the input read `pad`.
template <int InPack>
void transform_input(const MatView<i8, InPack>& in, const Sizes& w, int tiles_x, int tiles,
                     int t0, int nt, int nc, int pad_left, int pad_top, std::int8_t pad,
                     std::int16_t* v) {
  const std::size_t cp = std::size_t(w.cin_pad);
  const std::size_t ncs = std::size_t(nc);
  for (int tt = 0; tt < nt; ++tt) {
    const int t = t0 + tt;
    if (t >= tiles) {
      winograd::detail::zero_tile(v, 36, ncs, cp, tt);
      continue;
    }
    bool inside[36];
    std::size_t at[36];
    winograd::detail::window_offsets<6>(in, (t % tiles_x) * 4 - pad_left,
                                        (t / tiles_x) * 4 - pad_top, inside, at);
    int c = 0;
#if defined(__AVX2__)
    if constexpr (InPack == 16) {
      // Sixteen channels (a whole pack) at a time, widened to int16 lanes.
      const __m128i padv = _mm_set1_epi8(pad);
      for (; c + 16 <= w.cin; c += 16) {
        const i8* plane = in.channel(c / 16);
        __m256i d[36], r[36], x[36];
        for (int i = 0; i < 36; ++i)
          d[i] = _mm256_cvtepi8_epi16(
              inside[i] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + at[i])) : padv);
        for (int j = 0; j < 6; ++j) input_axis_v(d + j, 6, r + j, 6);          // columns: B^T d
        for (int i = 0; i < 6; ++i) input_axis_v(r + i * 6, 1, x + i * 6, 1);  // rows: (.) B
        for (int pos = 0; pos < 36; ++pos)
          _mm256_storeu_si256(
              reinterpret_cast<__m256i*>(v + (std::size_t(pos) * ncs + std::size_t(tt)) * cp +
                                         std::size_t(c)),
              x[pos]);
      }
    }
    if constexpr (InPack == 8 || InPack == 16) {
      // Eight channels at a time, widened to int16 lanes.
      const __m128i padv = _mm_set1_epi8(pad);
      for (; c + 8 <= w.cin && (c % InPack) + 8 <= InPack; c += 8) {
        const i8* plane = in.channel(c / InPack) + c % InPack;
        __m256i d[36], r[36], x[36];
        for (int i = 0; i < 36; ++i)
          d[i] = _mm256_cvtepi8_epi16(
              inside[i] ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(plane + at[i])) : padv);
        for (int j = 0; j < 6; ++j) input_axis_v(d + j, 6, r + j, 6);          // columns: B^T d
        for (int i = 0; i < 6; ++i) input_axis_v(r + i * 6, 1, x + i * 6, 1);  // rows: (.) B
        for (int pos = 0; pos < 36; ++pos)
          _mm_storeu_si128(
              reinterpret_cast<__m128i*>(v + (std::size_t(pos) * ncs + std::size_t(tt)) * cp +
                                         std::size_t(c)),
              _mm256_castsi256_si128(x[pos]));  // the eight channels' int16 values
      }
    }
#endif
    for (; c < w.cin; ++c) {
      const i8* plane = in.channel(c / InPack) + c % InPack;
      std::int32_t d[36], r[36], x[36];
      for (int i = 0; i < 36; ++i) d[i] = inside[i] ? plane[at[i]] : pad;
      for (int j = 0; j < 6; ++j) input_axis(d + j, 6, r + j, 6);
      for (int i = 0; i < 6; ++i) input_axis(r + i * 6, 1, x + i * 6, 1);
      for (int pos = 0; pos < 36; ++pos)
        v[(std::size_t(pos) * ncs + std::size_t(tt)) * cp + std::size_t(c)] = std::int16_t(x[pos]);
    }
    for (; c < w.cin_pad; ++c)
      for (int pos = 0; pos < 36; ++pos)
        v[(std::size_t(pos) * ncs + std::size_t(tt)) * cp + std::size_t(c)] = 0;
  }
}

/// Tiles of the products' register tile: 6 tiles x 16 channels (12 accumulators, the two weight
/// vectors and a broadcast: 15 of AVX2's 16 registers), each weight vector loaded once for six
/// tiles and each broadcast pair used for two weight vectors.
inline constexpr int kTileGroup = 6;

/// y[pos][tile][m] = sum over channels of U''[pos][m][c] V[pos][tile][c] (int64), for every
/// position, the chunk's first nt tiles (a multiple of kTileGroup) of nc and m_pad channels: int32
/// sums over each slice of w.slice channels, added up in int64.
inline void products(const Weights43& w, const std::int16_t* v, int nt, int nc, std::int64_t* y) {
  constexpr int G = kTileGroup;
  const std::size_t ncs = std::size_t(nc);
  const int pairs = w.cin_pad / 2, slice_pairs = w.slice / 2;
  const std::size_t cp = std::size_t(w.cin_pad), mp = std::size_t(w.m_pad);
  for (int pos = 0; pos < 36; ++pos) {
    const std::int16_t* vp = v + std::size_t(pos) * ncs * cp;
    std::int64_t* yp = y + std::size_t(pos) * ncs * mp;
    for (int mb = 0; mb < w.m_pad / 8; mb += 2) {
      const std::int16_t* u0 =
          w.u.data() +
          (std::size_t(pos) * std::size_t(w.m_pad / 8) + std::size_t(mb)) * std::size_t(pairs) * 16;
      const std::int16_t* u1 = u0 + std::size_t(pairs) * 16;
      for (int t0 = 0; t0 < nt; t0 += G) {
        for (int q0 = 0; q0 < pairs; q0 += slice_pairs) {
          const int q1 = std::min(pairs, q0 + slice_pairs);
          alignas(32) std::int32_t part[G][16];
#if defined(__AVX2__)
          __m256i acc[G][2];
          for (int j = 0; j < G; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_si256();
          const std::int16_t* vt = vp + std::size_t(t0) * cp;
          for (int q = q0; q < q1; ++q) {
            __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u0 + q * 16));
            __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u1 + q * 16));
            // In registers: folded into each product as a memory operand, the weights would take
            // the load ports twelve times a step instead of twice.
            __asm__("" : "+x"(w0), "+x"(w1));
#pragma GCC unroll 6
            for (int j = 0; j < G; ++j) {
              std::int32_t pair;
              std::memcpy(&pair, vt + std::size_t(j) * cp + std::size_t(q) * 2, 4);
              const __m256i x = _mm256_set1_epi32(pair);
              acc[j][0] = _mm256_add_epi32(acc[j][0], _mm256_madd_epi16(w0, x));
              acc[j][1] = _mm256_add_epi32(acc[j][1], _mm256_madd_epi16(w1, x));
            }
          }
          for (int j = 0; j < G; ++j) {
            _mm256_store_si256(reinterpret_cast<__m256i*>(part[j]), acc[j][0]);
            _mm256_store_si256(reinterpret_cast<__m256i*>(part[j] + 8), acc[j][1]);
          }
#else
          for (int j = 0; j < G; ++j)
            for (int l = 0; l < 16; ++l) {
              const std::int16_t* u = l < 8 ? u0 : u1;
              std::int32_t s = 0;
              for (int q = q0; q < q1; ++q)
                for (int e = 0; e < 2; ++e)
                  s += std::int32_t(u[q * 16 + (l % 8) * 2 + e]) *
                       std::int32_t(vp[std::size_t(t0 + j) * cp + std::size_t(q * 2 + e)]);
              part[j][l] = s;
            }
#endif
          for (int j = 0; j < G; ++j) {
            std::int64_t* dst = yp + std::size_t(t0 + j) * mp + std::size_t(mb) * 8;
            if (q0 == 0)
              for (int l = 0; l < 16; ++l) dst[l] = part[j][l];
            else
              for (int l = 0; l < 16; ++l) dst[l] += part[j][l];
          }
        }
      }
    }
  }
}

}  // namespace detail

/// The convolution of `in` (int8, 3x3, stride 1, dilation 1, one group) with transformed weights
/// `w` into `out` (outw x outh; f32, or i8 requantized) through kernels::int8's epilogue `e`,
/// whose comp must be zeros (w.zero). `workspace` holds num_threads x workspace_bytes(w, tiles),
/// the output's tiles ((outw + 3) / 4) x ((outh + 3) / 4).
template <class TO, int InPack, int OutPack, class Act>
void conv_wino43(const MatView<i8, InPack>& in, const MatView<TO, OutPack>& out, const Weights43& w,
                 int pad_left, int pad_top, std::int8_t pad, int outw, int outh, const Epilogue& e,
                 const Act& act, std::uint8_t* workspace, int num_threads) {
  const int tiles_x = (outw + 3) / 4, tiles_y = (outh + 3) / 4;
  const int tiles = tiles_x * tiles_y;
  const int nc = chunk_tiles(w, tiles);
  const int chunks = (tiles + nc - 1) / nc;
  const std::size_t mp = std::size_t(w.m_pad), ncs = std::size_t(nc);
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.cin) *
                                                     std::size_t(tiles) * 36 / 4)
                          ? num_threads
                          : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
  for (int chunk = 0; chunk < chunks; ++chunk) {
    std::uint8_t* ws = workspace + std::size_t(omp_get_thread_num()) * workspace_bytes(w, tiles);
    auto* v = reinterpret_cast<std::int16_t*>(ws);
    auto* y = reinterpret_cast<std::int64_t*>(ws + std::size_t(36) * ncs * std::size_t(w.cin_pad) *
                                                       sizeof(std::int16_t));
    const int t0 = chunk * nc;
    // A partial chunk's tiles, to a multiple of the products' register tile.
    const int nt = (std::min(nc, tiles - t0) + detail::kTileGroup - 1) / detail::kTileGroup *
                   detail::kTileGroup;
    detail::transform_input<InPack>(in, detail::Sizes{w.cin, w.cin_pad}, tiles_x, tiles, t0, nt, nc, pad_left, pad_top, pad, v);
    detail::products(w, v, nt, nc, y);
    // 576 Y = A^T [e_i e_j M_ij] A per tile and channel, divided exactly, then the epilogue.
    alignas(64) std::int32_t sums[16][kBlockM];
    for (int tt = 0; tt < nc && t0 + tt < tiles; ++tt) {
      const int t = t0 + tt, oy = (t / tiles_x) * 4, ox = (t % tiles_x) * 4;
      for (int m0 = 0; m0 < w.m; m0 += kBlockM) {
        // e_i scales row i and e_j column j; e = (6, 4, 4, 1, 1, 24) as shifts and adds (AVX2
        // has no 64-bit multiply: the compiler's emulation of y * e_i e_j cost more than the
        // transform's sums).
        auto scale = [](std::int64_t v, int i) -> std::int64_t {
          switch (i) {
            case 0:
              return (v << 2) + (v << 1);
            case 1:
            case 2:
              return v << 2;
            case 5:
              return (v << 4) + (v << 3);
            default:
              return v;
          }
        };
        // A^T on the columns (6 rows -> 4, rows scaled by e_i), then on the rows (6 columns -> 4,
        // scaled by e_j).
        std::int64_t r[4][6][kBlockM];
        for (int j = 0; j < 6; ++j) {
          const std::int64_t* col =
              y + (std::size_t(j) * ncs + std::size_t(tt)) * mp + std::size_t(m0);
          const std::size_t row = 6 * ncs * mp;  // from position (i, j) to (i + 1, j)
          for (int l = 0; l < kBlockM; ++l) {
            const std::int64_t m0v = scale(col[l], 0), m1 = scale(col[row + l], 1),
                               m2 = scale(col[2 * row + l], 2), m3 = col[3 * row + l],
                               m4 = col[4 * row + l], m5 = scale(col[5 * row + l], 5);
            const std::int64_t a12 = m1 + m2, s12 = m1 - m2, a34 = m3 + m4, s34 = m3 - m4;
            r[0][j][l] = scale(m0v + a12 + a34, j);
            r[1][j][l] = scale(s12 + 2 * s34, j);
            r[2][j][l] = scale(a12 + 4 * a34, j);
            r[3][j][l] = scale(s12 + 8 * s34 + m5, j);
          }
        }
        for (int i = 0; i < 4; ++i)
          for (int l = 0; l < kBlockM; ++l) {
            const std::int64_t m0v = r[i][0][l], m1 = r[i][1][l], m2 = r[i][2][l], m3 = r[i][3][l],
                               m4 = r[i][4][l], m5 = r[i][5][l];
            const std::int64_t a12 = m1 + m2, s12 = m1 - m2, a34 = m3 + m4, s34 = m3 - m4;
            sums[i * 4 + 0][l] = detail::exact_div576(m0v + a12 + a34);
            sums[i * 4 + 1][l] = detail::exact_div576(s12 + 2 * s34);
            sums[i * 4 + 2][l] = detail::exact_div576(a12 + 4 * a34);
            sums[i * 4 + 3][l] = detail::exact_div576(s12 + 8 * s34 + m5);
          }
        const int valid = std::min(kBlockM, w.m - m0);
        for (int i = 0; i < 4 && oy + i < outh; ++i)
          int8::detail::store_pixels<TO, OutPack>(
              out, sums + i * 4, std::min(4, outw - ox), m0, valid,
              std::size_t(oy + i) * std::size_t(outw) + std::size_t(ox), e, std::size_t(m0), act);
      }
    }
  }
}

}  // namespace infer::kernels::int8::winograd43
