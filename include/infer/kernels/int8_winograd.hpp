// int8 3x3 stride-1 convolution by Winograd F(2x2, 3x3) in integers: each 2x2 output tile is
// A^T [ (G' g G'^T) .* (B^T d B) ] A summed over input channels, with G' = 2 G so that the
// transformed weights are integers. Every step is an integer sum or product, so the result is 4 x
// the direct convolution's int32 sum exactly (the intermediate sums may wrap around in int32;
// their final value does not, while 4 x 9 x 128 x 127 x cin stays below 2^31: cin <= 4096), and
// the epilogue (kernels::int8's, value for value) sees the same sums as conv_gemm.
//
// Ranges: the transformed input B^T d B is within +-512 and the transformed weights within
// +-1143, both int16; the products run as int16 pairs into int32 (AVX2 vpmaddwd: 16 products an
// instruction, against conv_gemm's 64 per four instructions), on 16 products per tile where the
// direct form has 36: 2.25 times fewer.
//
// Layouts: weights [16 positions][m_pad / 8][cin_pad / 2][8 channels][2 k] int16 (m_pad a
// multiple of 16, cin_pad of 16); per chunk of nc tiles (chunk_tiles), the transformed input
// [16][nc][cin_pad] int16 and the products [16][nc][m_pad] int32, in a thread's
// workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/detail/omp.hpp>
#include <infer/element.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/mat.hpp>
#include <vector>

namespace infer::kernels::int8::winograd {

/// Output tiles (2x2 pixels each) transformed and multiplied together: at least this many (a
/// multiple of 4, the products' register tile), more where the transformed input and products of
/// more tiles stay within kChunkBytes, so that the weights are read once for more tiles.
inline constexpr int kMinChunk = 12;
inline constexpr std::size_t kChunkBytes = std::size_t(256) << 10;
/// Input channels past which 4 x the sums could leave int32 (see the file's comment).
inline constexpr int kMaxChannels = 4096;

/// Weights transformed for conv_wino23.
struct Weights {
  std::vector<std::int16_t> u;     ///< [16][m_pad / 8][cin_pad / 2][8][2]
  std::vector<std::int32_t> zero;  ///< [m_pad] zeros: the epilogue's compensation
  int m = 0, m_pad = 0, cin = 0, cin_pad = 0;
};

/// Transforms int8 3x3 weights w ([m][cin][9], ncnn's layout) into U = G' g G'^T per channel pair.
inline Weights transform_weights(const std::int8_t* w, int m, int cin) {
  Weights t;
  t.m = m;
  t.m_pad = (m + 15) / 16 * 16;
  t.cin = cin;
  t.cin_pad = (cin + 15) / 16 * 16;
  t.u.assign(std::size_t(16) * std::size_t(t.m_pad) * std::size_t(t.cin_pad), 0);
  t.zero.assign(std::size_t(t.m_pad), 0);
  const std::size_t pairs = std::size_t(t.cin_pad / 2);
  for (int oc = 0; oc < m; ++oc)
    for (int c = 0; c < cin; ++c) {
      const std::int8_t* g = w + (std::size_t(oc) * std::size_t(cin) + std::size_t(c)) * 9;
      int tg[4][3];  // G' g
      for (int j = 0; j < 3; ++j) {
        tg[0][j] = 2 * g[j];
        tg[1][j] = g[j] + g[3 + j] + g[6 + j];
        tg[2][j] = g[j] - g[3 + j] + g[6 + j];
        tg[3][j] = 2 * g[6 + j];
      }
      for (int i = 0; i < 4; ++i) {
        const int u[4] = {2 * tg[i][0], tg[i][0] + tg[i][1] + tg[i][2],
                          tg[i][0] - tg[i][1] + tg[i][2], 2 * tg[i][2]};
        for (int j = 0; j < 4; ++j) {
          const std::size_t pos = std::size_t(i * 4 + j);
          const std::size_t at = ((pos * std::size_t(t.m_pad / 8) + std::size_t(oc / 8)) * pairs +
                                  std::size_t(c / 2)) *
                                     16 +
                                 std::size_t(oc % 8) * 2 + std::size_t(c % 2);
          t.u[at] = std::int16_t(u[j]);
        }
      }
    }
  return t;
}

/// Bytes one tile takes in a chunk's workspace: 16 positions of transformed input and products.
inline std::size_t tile_bytes(const Weights& w) {
  return std::size_t(16) * (std::size_t(w.cin_pad) * sizeof(std::int16_t) +
                            std::size_t(w.m_pad) * sizeof(std::int32_t));
}

/// Tiles a chunk holds for a map of `tiles` tiles (a multiple of 4).
inline int chunk_tiles(const Weights& w, int tiles) {
  const int fit = int(std::min<std::size_t>(256, kChunkBytes / tile_bytes(w))) / 4 * 4;
  return std::min((tiles + 3) / 4 * 4, std::max(kMinChunk, fit));
}

/// Bytes of workspace one thread needs for a map of `tiles` tiles.
inline std::size_t workspace_bytes(const Weights& w, int tiles) {
  return std::size_t(chunk_tiles(w, tiles)) * tile_bytes(w);
}

namespace detail {

/// Where an N x N input window with its corner at (ix0, iy0) reads, row-major: inside[i] whether
/// position i lies in the input, at[i] its offset in a channel pack's plane (0 outside). Both
/// integer Winograd tiles gather their windows through it (F(2x2): N = 4, F(4x4): N = 6).
template <int N, int InPack>
inline void window_offsets(const MatView<i8, InPack>& in, int ix0, int iy0, bool (&inside)[N * N],
                           std::size_t (&at)[N * N]) {
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c) {
      const int iy = iy0 + r, ix = ix0 + c;
      inside[r * N + c] = iy >= 0 && iy < in.h && ix >= 0 && ix < in.w;
      at[r * N + c] = inside[r * N + c] ? (std::size_t(iy) * std::size_t(in.w) + std::size_t(ix)) *
                                              std::size_t(InPack)
                                        : 0;
    }
}

/// Zeros tile tt's transformed values at every one of `positions` positions of v
/// [positions][nc][cp] (a tile past the map's last).
inline void zero_tile(std::int16_t* v, int positions, std::size_t nc, std::size_t cp, int tt) {
  for (int pos = 0; pos < positions; ++pos)
    std::memset(v + (std::size_t(pos) * nc + std::size_t(tt)) * cp, 0, cp * sizeof(std::int16_t));
}

/// B^T d B of one 4x4 window d (row-major), into v[16].
template <class T>
inline void input_transform(const T (&d)[16], T (&v)[16]) {
  T t[16];
  for (int j = 0; j < 4; ++j) {
    t[j] = T(d[j] - d[8 + j]);
    t[4 + j] = T(d[4 + j] + d[8 + j]);
    t[8 + j] = T(d[8 + j] - d[4 + j]);
    t[12 + j] = T(d[4 + j] - d[12 + j]);
  }
  for (int i = 0; i < 4; ++i) {
    v[i * 4] = T(t[i * 4] - t[i * 4 + 2]);
    v[i * 4 + 1] = T(t[i * 4 + 1] + t[i * 4 + 2]);
    v[i * 4 + 2] = T(t[i * 4 + 2] - t[i * 4 + 1]);
    v[i * 4 + 3] = T(t[i * 4 + 1] - t[i * 4 + 3]);
  }
}

/// Gathers and transforms the 4x4 input windows of tiles [t0, t0 + nt) (tiles past `tiles` read
/// zeros) into v [16][nc][cin_pad]; values outside the input read `pad`.
template <int InPack>
void transform_input(const MatView<i8, InPack>& in, const Weights& w, int tiles_x, int tiles,
                     int t0, int nt, int nc, int pad_left, int pad_top, std::int8_t pad,
                     std::int16_t* v) {
  const std::size_t cp = std::size_t(w.cin_pad);
  const std::size_t ncs = std::size_t(nc);
  for (int tt = 0; tt < nt; ++tt) {
    const int t = t0 + tt;
    if (t >= tiles) {
      zero_tile(v, 16, ncs, cp, tt);
      continue;
    }
    bool inside[16];
    std::size_t at[16];
    window_offsets<4>(in, (t % tiles_x) * 2 - pad_left, (t / tiles_x) * 2 - pad_top, inside, at);
    int c = 0;
#if defined(__AVX2__)
    if constexpr (InPack == 8 || InPack == 16) {
      // One pack of channels at a time, widened to int16 lanes.
      const __m128i padv = _mm_set1_epi8(pad);
      for (; c + InPack <= w.cin; c += InPack) {
        const i8* plane = in.channel(c / InPack);
        __m256i d[16], x[16];
        for (int i = 0; i < 16; ++i) {
          __m128i b;
          if constexpr (InPack == 16)
            b = inside[i] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + at[i])) : padv;
          else
            b = inside[i] ? _mm_loadl_epi64(reinterpret_cast<const __m128i*>(plane + at[i])) : padv;
          d[i] = _mm256_cvtepi8_epi16(b);
        }
        __m256i tq[16];
        for (int j = 0; j < 4; ++j) {
          tq[j] = _mm256_sub_epi16(d[j], d[8 + j]);
          tq[4 + j] = _mm256_add_epi16(d[4 + j], d[8 + j]);
          tq[8 + j] = _mm256_sub_epi16(d[8 + j], d[4 + j]);
          tq[12 + j] = _mm256_sub_epi16(d[4 + j], d[12 + j]);
        }
        for (int i = 0; i < 4; ++i) {
          x[i * 4] = _mm256_sub_epi16(tq[i * 4], tq[i * 4 + 2]);
          x[i * 4 + 1] = _mm256_add_epi16(tq[i * 4 + 1], tq[i * 4 + 2]);
          x[i * 4 + 2] = _mm256_sub_epi16(tq[i * 4 + 2], tq[i * 4 + 1]);
          x[i * 4 + 3] = _mm256_sub_epi16(tq[i * 4 + 1], tq[i * 4 + 3]);
        }
        for (int pos = 0; pos < 16; ++pos) {
          std::int16_t* dst = v + (std::size_t(pos) * ncs + std::size_t(tt)) * cp + std::size_t(c);
          if constexpr (InPack == 16)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), x[pos]);
          else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(x[pos]));
        }
      }
    }
#endif
    for (; c < w.cin; ++c) {
      const i8* plane = in.channel(c / InPack) + c % InPack;
      std::int16_t d[16], x[16];
      for (int i = 0; i < 16; ++i) d[i] = inside[i] ? plane[at[i]] : pad;
      input_transform(d, x);
      for (int pos = 0; pos < 16; ++pos)
        v[(std::size_t(pos) * ncs + std::size_t(tt)) * cp + std::size_t(c)] = x[pos];
    }
    for (; c < w.cin_pad; ++c)
      for (int pos = 0; pos < 16; ++pos)
        v[(std::size_t(pos) * ncs + std::size_t(tt)) * cp + std::size_t(c)] = 0;
  }
}

/// y[pos][tile][m] = sum over channels of U[pos][m][c] V[pos][tile][c], for every position, the
/// chunk's first nt tiles (a multiple of 4) of nc and m_pad channels (int32, wrapping).
inline void products(const Weights& w, const std::int16_t* v, int nt, int nc, std::int32_t* y) {
  const std::size_t ncs = std::size_t(nc);
  const int pairs = w.cin_pad / 2;
  const std::size_t cp = std::size_t(w.cin_pad), mp = std::size_t(w.m_pad);
  for (int pos = 0; pos < 16; ++pos) {
    const std::int16_t* vp = v + std::size_t(pos) * ncs * cp;
    std::int32_t* yp = y + std::size_t(pos) * ncs * mp;
    for (int mb = 0; mb < w.m_pad / 8; mb += 2) {
      const std::int16_t* u0 =
          w.u.data() +
          (std::size_t(pos) * std::size_t(w.m_pad / 8) + std::size_t(mb)) * std::size_t(pairs) * 16;
      const std::int16_t* u1 = u0 + std::size_t(pairs) * 16;
#if defined(__AVX2__)
      for (int t0 = 0; t0 < nt; t0 += 4) {
        __m256i acc[4][2];
        for (int j = 0; j < 4; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_si256();
        for (int q = 0; q < pairs; ++q) {
          const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u0 + q * 16));
          const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u1 + q * 16));
          for (int j = 0; j < 4; ++j) {
            std::int32_t pair;
            std::memcpy(&pair, vp + std::size_t(t0 + j) * cp + std::size_t(q) * 2, 4);
            const __m256i x = _mm256_set1_epi32(pair);
            acc[j][0] = _mm256_add_epi32(acc[j][0], _mm256_madd_epi16(w0, x));
            acc[j][1] = _mm256_add_epi32(acc[j][1], _mm256_madd_epi16(w1, x));
          }
        }
        for (int j = 0; j < 4; ++j) {
          std::int32_t* dst = yp + std::size_t(t0 + j) * mp + std::size_t(mb) * 8;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), acc[j][0]);
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8), acc[j][1]);
        }
      }
#else
      for (int t = 0; t < nt; ++t)
        for (int b = 0; b < 2; ++b) {
          const std::int16_t* u = b == 0 ? u0 : u1;
          for (int l = 0; l < 8; ++l) {
            std::uint32_t s = 0;
            for (int q = 0; q < pairs; ++q)
              for (int e = 0; e < 2; ++e)
                s += std::uint32_t(std::int32_t(u[q * 16 + l * 2 + e]) *
                                   std::int32_t(vp[std::size_t(t) * cp + std::size_t(q * 2 + e)]));
            yp[std::size_t(t) * mp + std::size_t((mb + b) * 8 + l)] = std::int32_t(s);
          }
        }
#endif
    }
  }
}

}  // namespace detail

/// The convolution of `in` (int8, 3x3, stride 1, dilation 1, one group) with transformed weights
/// `w` into `out` (outw x outh; f32, or i8 requantized) through kernels::int8's epilogue `e`,
/// whose comp must be zeros (w.zero): these sums need no compensation. `workspace` holds
/// num_threads x workspace_bytes(w, tiles), the output's tiles ((outw + 1) / 2) x ((outh + 1) / 2).
template <class TO, int InPack, int OutPack, class Act>
void conv_wino23(const MatView<i8, InPack>& in, const MatView<TO, OutPack>& out, const Weights& w,
                 int pad_left, int pad_top, std::int8_t pad, int outw, int outh, const Epilogue& e,
                 const Act& act, std::uint8_t* workspace, int num_threads) {
  const int tiles_x = (outw + 1) / 2, tiles_y = (outh + 1) / 2;
  const int tiles = tiles_x * tiles_y;
  const int nc = chunk_tiles(w, tiles);
  const int chunks = (tiles + nc - 1) / nc;
  const std::size_t mp = std::size_t(w.m_pad), ncs = std::size_t(nc);
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.cin) *
                                                     std::size_t(tiles) * 16 / 4)
                          ? num_threads
                          : 1;
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
  for (int chunk = 0; chunk < chunks; ++chunk) {
    std::uint8_t* ws = workspace + std::size_t(omp_get_thread_num()) * workspace_bytes(w, tiles);
    auto* v = reinterpret_cast<std::int16_t*>(ws);
    auto* y = reinterpret_cast<std::int32_t*>(ws + std::size_t(16) * ncs * std::size_t(w.cin_pad) *
                                                       sizeof(std::int16_t));
    const int t0 = chunk * nc;
    const int nt = (std::min(nc, tiles - t0) + 3) / 4 * 4;  // a partial chunk's tiles, to 4
    detail::transform_input<InPack>(in, w, tiles_x, tiles, t0, nt, nc, pad_left, pad_top, pad, v);
    detail::products(w, v, nt, nc, y);
    // A^T Y A per tile and channel, / 4 (exact), then the epilogue per output pixel.
    alignas(64) std::int32_t sums[4][kBlockM];
    for (int tt = 0; tt < nc && t0 + tt < tiles; ++tt) {
      const int t = t0 + tt, oy = (t / tiles_x) * 2, ox = (t % tiles_x) * 2;
      for (int m0 = 0; m0 < w.m; m0 += kBlockM) {
        // 16 channels at once (the compiler's vectors): wrapping uint32 sums, then the exact
        // int32 multiple of 4 shifted down.
        std::uint32_t yv[16][kBlockM];
        for (int pos = 0; pos < 16; ++pos)
          std::memcpy(yv[pos],
                      y + (std::size_t(pos) * ncs + std::size_t(tt)) * mp + std::size_t(m0),
                      sizeof(yv[pos]));
        std::uint32_t r[2][4][kBlockM];
        for (int j = 0; j < 4; ++j)
          for (int l = 0; l < kBlockM; ++l) {
            r[0][j][l] = yv[j][l] + yv[4 + j][l] + yv[8 + j][l];
            r[1][j][l] = yv[4 + j][l] - yv[8 + j][l] - yv[12 + j][l];
          }
        for (int i = 0; i < 2; ++i)
          for (int l = 0; l < kBlockM; ++l) {
            sums[i * 2][l] = std::int32_t(r[i][0][l] + r[i][1][l] + r[i][2][l]) >> 2;
            sums[i * 2 + 1][l] = std::int32_t(r[i][1][l] - r[i][2][l] - r[i][3][l]) >> 2;
          }
        const int valid = std::min(kBlockM, w.m - m0);
        for (int i = 0; i < 2 && oy + i < outh; ++i)
          int8::detail::store_pixels<TO, OutPack>(
              out, sums + i * 2, std::min(2, outw - ox), m0, valid,
              std::size_t(oy + i) * std::size_t(outw) + std::size_t(ox), e, std::size_t(m0), act);
      }
    }
  }
}

}  // namespace infer::kernels::int8::winograd
