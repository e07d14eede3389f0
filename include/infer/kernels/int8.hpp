// int8 convolution and inner-product kernels with ncnn's quantization rules: int8 inputs (already
// quantized by the bottom blob scale), int8 weights (quantized per output channel or group), int32
// sums, then in the epilogue v = sum * scale_in[oc] + bias[oc] (one fused multiply-add, as ncnn's
// x86 kernels round it; scale_in = 1 / (bottom scale x weight scale)), the activation, and the
// store: f32 (dequantized) or int8 requantized as float2int8(v * out_scale). Nothing between the
// products and the store leaves registers.
//
// The products (conv_gemm, gemv) run on blocks of 16 output channels whose weights are laid out
// [k / 4][16 channels][4 k] (pack_weights), against input values gathered four k at a time:
//  - AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, so the gathered inputs are
//    shifted to unsigned (x + 128, an xor of the sign bit) and 128 x (the channel's weight sum) is
//    taken back off in the epilogue (comp);
//  - AVX2: vpmaddubsw on |x| and the weights with x's sign (vpsignb), whose pairs cannot saturate
//    (2 x 128 x 127 < 2^15), then vpmaddwd by ones: exact signed products, no compensation;
//  - otherwise plain integer loops.
// Depthwise convolutions (conv_depthwise) compute in f32 on the integer values, exact while a sum
// stays below 2^24 (a kernel of up to 1040 taps).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/detail/omp.hpp>
#include <infer/element.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#include <vector>

namespace infer::kernels::int8 {

/// Output channels a weight block holds (one 512-bit register of int32 sums).
inline constexpr int kBlockM = 16;
/// Pixels a register tile of the convolution GEMM covers.
inline constexpr int kTileN = 12;
/// Pixel tiles gathered together (a chunk), so each weight block is read once per chunk.
inline constexpr int kChunkTiles = 8;

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
inline constexpr bool kVnni = true;
#else
inline constexpr bool kVnni = false;
#endif
#if defined(__AVX2__)
inline constexpr bool kAvx2 = true;
#else
inline constexpr bool kAvx2 = false;
#endif
/// The GEMM's products are AVX2's vpmaddubsw (no VNNI): tile_sums' NonNegative form applies.
inline constexpr bool kAvx2Products = kAvx2 && !kVnni;

/// The instruction path the products take on this build, for printing.
constexpr const char* path_name() { return kVnni ? "avx512-vnni" : kAvx2 ? "avx2" : "scalar"; }

/// What every output channel's epilogue needs, indexed by the channel's slot in the packed weights
/// (group g, channel m of the group: g * m_pad + m).
struct Epilogue {
  const float* scale_in = nullptr;     ///< 1 / (bottom scale x weight scale); 0 for a zero scale
  const float* bias = nullptr;         ///< bias (0 without bias_term)
  const std::int32_t* comp = nullptr;  ///< 128 x weight sum on the VNNI path, else zeros
  float out_scale = 0.f;               ///< > 0: requantize to int8 with this scale
  /// A residual sum the composer fused into the layer (f32 output only): added to the dequantized
  /// value before the activation, y = act(sum * scale_in + bias + r), as ncnn's Eltwise after the
  /// layer adds it. Laid out as the output: `residual_step` floats between its channel groups,
  /// the output's pack lanes a pixel. Null: none.
  const float* residual = nullptr;
  std::size_t residual_step = 0;
};

/// Weights laid out for conv_gemm / gemv.
struct PackedWeights {
  std::vector<std::int8_t> a;      ///< [group][m_pad / 16][k4][16][4], k4 a multiple of 4
  std::vector<std::int32_t> comp;  ///< [group][m_pad]
  int groups = 0, m = 0, m_pad = 0, k = 0, k4 = 0;
  /// The caller's choice of amx::conv_gemm_int8 (pack_weights with k_unit 64), which reads a
  /// block's 16 k quads as one tile.
  bool amx = false;

  const std::int8_t* block(int g, int mb) const {
    return a.data() +
           (std::size_t(g) * std::size_t(m_pad / kBlockM) + std::size_t(mb)) * std::size_t(k4) * 64;
  }
};

/// Packs int8 weights w (ncnn's layout: [group][m][cin][maxk]) so that k = tap * cin + c: the
/// input's channels innermost, four of one pixel gathered at once. K is padded with zeros to a
/// multiple of k_unit: 16, the gathered panel's unit, or 64 for AMX tiles.
inline PackedWeights pack_weights(const std::int8_t* w, int groups, int m, int cin, int maxk,
                                  int k_unit = 16) {
  PackedWeights p;
  p.groups = groups;
  p.m = m;
  p.m_pad = (m + kBlockM - 1) / kBlockM * kBlockM;
  p.k = cin * maxk;
  p.k4 = (p.k + k_unit - 1) / k_unit * k_unit / 4;
  p.a.assign(std::size_t(groups) * std::size_t(p.m_pad) * std::size_t(p.k4) * 4, 0);
  p.comp.assign(std::size_t(groups) * std::size_t(p.m_pad), 0);
  for (int g = 0; g < groups; ++g)
    for (int oc = 0; oc < m; ++oc) {
      std::int8_t* blk = const_cast<std::int8_t*>(p.block(g, oc / kBlockM));
      std::int32_t sum = 0;
      for (int tap = 0; tap < maxk; ++tap)
        for (int c = 0; c < cin; ++c) {
          const int k = tap * cin + c;
          const std::int8_t v =
              w[((std::size_t(g) * std::size_t(m) + std::size_t(oc)) * std::size_t(cin) +
                 std::size_t(c)) *
                    std::size_t(maxk) +
                std::size_t(tap)];
          blk[std::size_t(k / 4) * 64 + std::size_t(oc % kBlockM) * 4 + std::size_t(k % 4)] = v;
          sum += v;
        }
      p.comp[std::size_t(g) * std::size_t(p.m_pad) + std::size_t(oc)] = kVnni ? 128 * sum : 0;
    }
  return p;
}

namespace detail {

/// The byte the products read for input value x: shifted to unsigned on the VNNI path.
inline std::uint8_t gathered(std::int8_t x) {
  return kVnni ? std::uint8_t(std::uint8_t(x) ^ 0x80u) : std::uint8_t(x);
}
inline std::uint32_t gathered4(std::uint32_t x4) { return kVnni ? x4 ^ 0x80808080u : x4; }

/// The fused residual's value for logical channel c of pixel n (the output's layout at OutPack).
template <int OutPack>
inline float residual_at(const Epilogue& e, int c, std::size_t n) {
  return e.residual[std::size_t(c / OutPack) * e.residual_step + n * OutPack +
                    std::size_t(c % OutPack)];
}

/// 16 int32 sums of one block (and one pixel) through the epilogue into output channels c0.. of
/// the group (c0 + lanes < group_m valid), logical channel base `ch0`, pixel n.
template <class TO, int OutPack, class Act>
inline void store_block(const MatView<TO, OutPack>& out, const std::int32_t* sums, int ch0,
                        int valid, std::size_t n, const Epilogue& e, std::size_t slot,
                        const Act& act) {
  alignas(64) float v[kBlockM];
#if XSIMD_WITH_AVX512F
  {
    using V = simd::fbatch<16>;
    const __m512i s = _mm512_sub_epi32(_mm512_loadu_si512(sums), _mm512_loadu_si512(e.comp + slot));
    V x = xsimd::fma(V(_mm512_cvtepi32_ps(s)), V::load_unaligned(e.scale_in + slot),
                     V::load_unaligned(e.bias + slot));
    if (e.residual) {
      if (OutPack == 16 && valid == 16 && ch0 % 16 == 0) {
        x = x + V::load_unaligned(e.residual + std::size_t(ch0 / 16) * e.residual_step + n * 16);
      } else {
        for (int l = 0; l < kBlockM; ++l)
          v[l] = l < valid ? residual_at<OutPack>(e, ch0 + l, n) : 0.f;
        x = x + V::load_aligned(v);
      }
    }
    x = act(x);
    if constexpr (std::same_as<TO, i8>) x = x * V(e.out_scale);
    if (OutPack == 16 && valid == 16 && ch0 % 16 == 0) {
      simd::store<16>(out.channel(ch0 / 16) + n * 16, x);
      return;
    }
    x.store_aligned(v);
  }
#else
  for (int l = 0; l < kBlockM; ++l) {
    float x = std::fma(float(sums[l] - e.comp[slot + std::size_t(l)]),
                       e.scale_in[slot + std::size_t(l)], e.bias[slot + std::size_t(l)]);
    if (e.residual && l < valid) x += residual_at<OutPack>(e, ch0 + l, n);
    x = act(x);
    if constexpr (std::same_as<TO, i8>) x *= e.out_scale;
    v[l] = x;
  }
#endif
  if constexpr (OutPack > 1 && OutPack < 16 && simd::has_width<OutPack>) {
    if (valid == 16 && ch0 % OutPack == 0) {
      for (int s = 0; s < 16 / OutPack; ++s) {
        const int c = ch0 + s * OutPack;
        simd::store<OutPack>(out.channel(c / OutPack) + n * OutPack,
                             simd::load<OutPack>(v + s * OutPack));
      }
      return;
    }
  }
  for (int l = 0; l < valid; ++l) {
    const int c = ch0 + l;
    out.channel(c / OutPack)[n * OutPack + std::size_t(c % OutPack)] = from_f32<TO>(v[l]);
  }
}

/// store_block for `count` consecutive pixels n0.. (sums[j] pixel n0 + j's) of one block. Where
/// the block is 16 whole channels starting a 16-lane channel group of the output (AVX-512), the
/// block's compensation, scale, bias and output address are taken once, then per pixel the same
/// arithmetic as store_block (so the same values) and one 16-lane store.
template <class TO, int OutPack, class Act>
inline void store_pixels(const MatView<TO, OutPack>& out, const std::int32_t (*sums)[kBlockM],
                         int count, int ch0, int valid, std::size_t n0, const Epilogue& e,
                         std::size_t slot, const Act& act) {
#if XSIMD_WITH_AVX512F
  if (OutPack == 16 && valid == kBlockM && ch0 % 16 == 0) {
    using V = simd::fbatch<16>;
    const __m512i comp = _mm512_loadu_si512(e.comp + slot);
    const V scale = V::load_unaligned(e.scale_in + slot);
    const V bias = V::load_unaligned(e.bias + slot);
    const V out_scale(e.out_scale);
    TO* dst = out.channel(ch0 / 16) + n0 * 16;
    const float* res =
        e.residual ? e.residual + std::size_t(ch0 / 16) * e.residual_step + n0 * 16 : nullptr;
    for (int j = 0; j < count; ++j) {
      const __m512i s = _mm512_sub_epi32(_mm512_loadu_si512(sums[j]), comp);
      V x = xsimd::fma(V(_mm512_cvtepi32_ps(s)), scale, bias);
      if (res) x = x + V::load_unaligned(res + std::size_t(j) * 16);
      x = act(x);
      if constexpr (std::same_as<TO, i8>) x = x * out_scale;
      simd::store<16>(dst + std::size_t(j) * 16, x);
    }
    return;
  }
#endif
  for (int j = 0; j < count; ++j)
    store_block<TO, OutPack>(out, sums[j], ch0, valid, n0 + std::size_t(j), e, slot, act);
}

/// Sums of MB weight blocks (16 channels each, MB x 16 rows, `astride` bytes apart) against a
/// panel of NT pixel columns ([k / 16][NT][16] bytes: each pixel's 16 values of a unit together):
/// sums[b][j][16]. k4 is a multiple of 4. NonNegative (AVX2 without VNNI): every panel value is
/// at least 0 (the input of a layer after a ReLU), so vpmaddubsw takes the values as its unsigned
/// operand as they are (127 x 127 x 2 fits its int16 sums) without moving the signs of the values
/// onto the weights: six vector operations a pixel and 4 k in place of nine.
template <int MB, int NT, bool NonNegative = false>
inline void tile_sums(const std::int8_t* a, std::size_t astride, const std::uint8_t* panel, int k4,
                      std::int32_t (*sums)[NT][kBlockM]) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i acc[MB][NT];
  for (int b = 0; b < MB; ++b)
    for (int j = 0; j < NT; ++j) acc[b][j] = _mm512_setzero_si512();
  for (int q = 0; q < k4; ++q) {
    __m512i w[MB];
    for (int b = 0; b < MB; ++b)
      w[b] = _mm512_loadu_si512(a + std::size_t(b) * astride + std::size_t(q) * 64);
    const std::uint8_t* col = panel + std::size_t(q / 4) * NT * 16 + std::size_t(q % 4) * 4;
#pragma GCC unroll 16
    for (int j = 0; j < NT; ++j) {
      std::int32_t x4;
      std::memcpy(&x4, col + j * 16, 4);
      const __m512i x = _mm512_set1_epi32(x4);
      for (int b = 0; b < MB; ++b) acc[b][j] = _mm512_dpbusd_epi32(acc[b][j], x, w[b]);
    }
  }
  for (int b = 0; b < MB; ++b)
    for (int j = 0; j < NT; ++j) _mm512_storeu_si512(sums[b][j], acc[b][j]);
#elif defined(__AVX2__)
  // 16 channels as two halves of 8; pixels in groups of J = 4 (16 registers hold 8 sums at a
  // time). The pixel loops have constant bounds and unroll, so the sums stay in registers (with a
  // bound that varied, `j0 + j < NT`, they lived on the stack: a load and a store per product).
  constexpr int J = NT < 4 ? NT : 4;
  static_assert(NT % J == 0, "tile_sums: the pixel columns come in whole groups");
  const __m256i ones = _mm256_set1_epi16(1);
  for (int b = 0; b < MB; ++b)
    for (int j0 = 0; j0 < NT; j0 += J) {
      __m256i acc[J][2];
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j) acc[j][0] = acc[j][1] = _mm256_setzero_si256();
      for (int q = 0; q < k4; ++q) {
        const std::int8_t* wq = a + std::size_t(b) * astride + std::size_t(q) * 64;
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wq));
        const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wq + 32));
        const std::uint8_t* col = panel + std::size_t(q / 4) * NT * 16 + std::size_t(q % 4) * 4;
#pragma GCC unroll 4
        for (int j = 0; j < J; ++j) {
          std::int32_t x4;
          std::memcpy(&x4, col + (j0 + j) * 16, 4);
          const __m256i x = _mm256_set1_epi32(x4);
          if constexpr (NonNegative) {
            acc[j][0] =
                _mm256_add_epi32(acc[j][0], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w0), ones));
            acc[j][1] =
                _mm256_add_epi32(acc[j][1], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w1), ones));
          } else {
            const __m256i ax = _mm256_sign_epi8(x, x);
            acc[j][0] = _mm256_add_epi32(
                acc[j][0],
                _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w0, x)), ones));
            acc[j][1] = _mm256_add_epi32(
                acc[j][1],
                _mm256_madd_epi16(_mm256_maddubs_epi16(ax, _mm256_sign_epi8(w1, x)), ones));
          }
        }
      }
#pragma GCC unroll 4
      for (int j = 0; j < J; ++j) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums[b][j0 + j]), acc[j][0]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums[b][j0 + j] + 8), acc[j][1]);
      }
    }
#else
  for (int b = 0; b < MB; ++b)
    for (int j = 0; j < NT; ++j)
      for (int l = 0; l < kBlockM; ++l) {
        std::int32_t s = 0;
        for (int q = 0; q < k4; ++q)
          for (int i = 0; i < 4; ++i)
            s += std::int32_t(a[std::size_t(b) * astride + std::size_t(q) * 64 +
                                std::size_t(l) * 4 + std::size_t(i)]) *
                 std::int32_t(std::int8_t(panel[std::size_t(q / 4) * NT * 16 + std::size_t(j) * 16 +
                                                std::size_t(q % 4) * 4 + std::size_t(i)]));
        sums[b][j][l] = s;
      }
#endif
}

}  // namespace detail

/// Where a convolution reads: kernel geometry, the input's pads (values outside read `pad`) and the
/// output size.
struct ConvWindow {
  ConvGeometry g;
  int pad_left = 0, pad_top = 0;
  int outw = 0, outh = 0;
  std::int8_t pad = 0;
};

/// Bytes of gathered input one thread of conv_gemm needs for K = `k`.
inline std::size_t panel_bytes(int k) {
  return std::size_t((k + 15) / 16) * 16 * kTileN * kChunkTiles;
}

namespace detail {

/// Where each k (= tap * cin + c) of a group reads: the input row and column offsets of its tap
/// and its channel's plane offset (from the group's first channel), for the gathers that take one
/// value at a time. Views of arrays that k_table writes into caller memory (the kernel's
/// workspace: no allocation per forward).
struct KTable {
  std::ptrdiff_t* at = nullptr;  ///< plane + the tap's offset (dy, dx) in the input's layout
  std::size_t* plane = nullptr;
  int* dy = nullptr;
  int* dx = nullptr;
};

/// Bytes a k table's arrays take for K values (a multiple of 8).
constexpr std::size_t k_table_bytes(int K) {
  return std::size_t(K) * (sizeof(std::ptrdiff_t) + sizeof(std::size_t) + 2 * sizeof(int));
}

/// Whether conv_gemm's gathers of an input at InPack with `cin` channels per group go value by
/// value, through k tables: channels not in whole packs of 4.
constexpr bool needs_k_tables(int in_pack, int cin) { return !(in_pack % 4 == 0 && cin % 4 == 0); }

/// The views of the k table for K values at `mem` (k_table_bytes(K) bytes, 8-byte aligned).
inline KTable k_table_at(std::byte* mem, int K) {
  KTable t;
  t.at = reinterpret_cast<std::ptrdiff_t*>(mem);
  t.plane = reinterpret_cast<std::size_t*>(t.at + K);
  t.dy = reinterpret_cast<int*>(t.plane + K);
  t.dx = t.dy + K;
  return t;
}

/// Writes the table of the group whose first channel is c_base (K = cin * taps values) at `mem`
/// and returns its views.
inline KTable k_table(const ConvGeometry& geo, int cin, int in_pack, std::size_t cstep_values,
                      int c_base, int in_w, std::byte* mem) {
  const int K = cin * geo.kernel_w * geo.kernel_h;
  const KTable t = k_table_at(mem, K);
  for (int k = 0; k < K; ++k) {
    const int tap = k / cin, c = c_base + k % cin;
    t.dy[k] = (tap / geo.kernel_w) * geo.dilation_h;
    t.dx[k] = (tap % geo.kernel_w) * geo.dilation_w;
    t.plane[k] = std::size_t(c / in_pack) * cstep_values + std::size_t(c % in_pack);
    t.at[k] = std::ptrdiff_t(t.plane[k]) + (std::ptrdiff_t(t.dy[k]) * in_w + t.dx[k]) * in_pack;
  }
  return t;
}

/// Gathers pixels n0 .. n0 + kTileN of group g's input (cin channels from channel g * cin) into
/// panel [k / 16][kTileN][16]; pixels past n_total and k past K read 0. Whole packs of 16
/// channels (or 4) are one 16-byte (4-byte) copy per pixel and tap; other inputs go value by
/// value through `table` (k_table of the group).
template <int InPack>
void gather_tile(const MatView<i8, InPack>& in, const ConvWindow& win, int g, int cin, int k4,
                 std::size_t n0, std::size_t n_total, const KTable& table, std::uint8_t* panel) {
  const ConvGeometry& geo = win.g;
  const int maxk = geo.kernel_w * geo.kernel_h;
  const int K = cin * maxk;
  int iy0[kTileN], ix0[kTileN];
  bool ok[kTileN];
  for (int j = 0; j < kTileN; ++j) {
    const std::size_t n = n0 + std::size_t(j);
    ok[j] = n < n_total;
    const int oy = ok[j] ? int(n / std::size_t(win.outw)) : 0;
    const int ox = ok[j] ? int(n % std::size_t(win.outw)) : 0;
    iy0[j] = oy * geo.stride_h - win.pad_top;
    ix0[j] = ox * geo.stride_w - win.pad_left;
  }
  const std::uint8_t padb = gathered(win.pad);
  const int c_base = g * cin;
  const int units = k4 / 4;                            // 16-value units of the panel
  auto at = [&](int j, int dy, int dx) -> const i8* {  // null: outside the input
    const int iy = iy0[j] + dy, ix = ix0[j] + dx;
    if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) return nullptr;
    return in.data + (std::size_t(iy) * std::size_t(in.w) + std::size_t(ix)) * InPack;
  };
  if (InPack == 16 && cin % 16 == 0 && c_base % 16 == 0) {
    // The tile's pixels, where they are consecutive input pixels at every tap, make each unit
    // one run of bytes: a pointwise layer's (1x1, stride 1, no pad: pixel n reads input pixel
    // n), or, at stride 1, a tile within one output row whose windows lie inside the input rows.
    const int valid = int(std::min<std::size_t>(kTileN, n_total - n0));
    const bool pointwise = geo.kernel_w == 1 && geo.kernel_h == 1 && geo.stride_w == 1 &&
                           geo.stride_h == 1 && win.pad_left == 0 && win.pad_top == 0 &&
                           win.outw == in.w && win.outh == in.h;
    const bool one_row = geo.stride_w == 1 && valid == kTileN &&
                         n0 % std::size_t(win.outw) + kTileN <= std::size_t(win.outw);
    // A unit is one pack of one tap: 16 bytes per pixel.
    for (int u = 0; u < units; ++u) {
      const int k = u * 16, tap = k / cin, c = c_base + k % cin;
      std::uint8_t* dst = panel + std::size_t(u) * kTileN * 16;
      if (k >= K) {  // K padded past its 16-value units (weights packed with k_unit 64)
        std::memset(dst, 0, std::size_t(kTileN) * 16);
        continue;
      }
      const int dy = (tap / geo.kernel_w) * geo.dilation_h;
      const int dx = (tap % geo.kernel_w) * geo.dilation_w;
      const std::size_t plane = std::size_t(c / InPack) * in.cstep * InPack;
      const i8* run = nullptr;
      if (pointwise) {
        run = in.data + plane + n0 * 16;
      } else if (one_row) {
        const int iy = iy0[0] + dy, ix = ix0[0] + dx;
        if (iy >= 0 && iy < in.h && ix >= 0 && ix + kTileN <= in.w)
          run = in.data + plane + (std::size_t(iy) * std::size_t(in.w) + std::size_t(ix)) * 16;
      }
      if (run) {
        const std::size_t bytes = std::size_t(valid) * 16;
        for (std::size_t b = 0; b < bytes; ++b) dst[b] = gathered(std::int8_t(run[b]));
        std::memset(dst + bytes, 0, std::size_t(kTileN) * 16 - bytes);
        continue;
      }
      for (int j = 0; j < kTileN; ++j) {
        const i8* src = ok[j] ? at(j, dy, dx) : nullptr;
        std::uint8_t bytes[16];
        if (src) {
          std::memcpy(bytes, src + plane, 16);
          for (int b = 0; b < 16; ++b) bytes[b] = gathered(std::int8_t(bytes[b]));
        } else {
          std::memset(bytes, ok[j] ? padb : 0, 16);
        }
        std::memcpy(dst + j * 16, bytes, 16);
      }
    }
    return;
  }
  if (InPack % 4 == 0 && cin % 4 == 0 && c_base % 4 == 0) {
    // Four channels of one tap: one 32-bit read per pixel.
    for (int q = 0; q < k4; ++q) {
      std::uint8_t* dst = panel + std::size_t(q / 4) * kTileN * 16 + std::size_t(q % 4) * 4;
      const int k = q * 4;
      if (k >= K) {
        for (int j = 0; j < kTileN; ++j) std::memset(dst + j * 16, 0, 4);
        continue;
      }
      const int tap = k / cin, c = c_base + k % cin;
      const int dy = (tap / geo.kernel_w) * geo.dilation_h;
      const int dx = (tap % geo.kernel_w) * geo.dilation_w;
      const std::size_t plane =
          std::size_t(c / InPack) * in.cstep * InPack + std::size_t(c % InPack);
      for (int j = 0; j < kTileN; ++j) {
        const i8* src = ok[j] ? at(j, dy, dx) : nullptr;
        std::uint32_t v = ok[j] ? std::uint32_t(padb) * 0x01010101u : 0u;
        if (src) {
          std::memcpy(&v, src + plane, 4);
          v = gathered4(v);
        }
        std::memcpy(dst + j * 16, &v, 4);
      }
    }
    return;
  }
  // Pixels whose whole window lies inside the input read every k at a fixed offset from their
  // window's corner; the others check each k.
  const int ext_w = (geo.kernel_w - 1) * geo.dilation_w,
            ext_h = (geo.kernel_h - 1) * geo.dilation_h;
  bool inside[kTileN];
  for (int j = 0; j < kTileN; ++j) {
    inside[j] =
        ok[j] && iy0[j] >= 0 && iy0[j] + ext_h < in.h && ix0[j] >= 0 && ix0[j] + ext_w < in.w;
    if (!inside[j]) continue;
    const i8* corner =
        in.data + (std::size_t(iy0[j]) * std::size_t(in.w) + std::size_t(ix0[j])) * InPack;
    for (int k = 0; k < K; ++k)
      panel[std::size_t(k / 16) * kTileN * 16 + std::size_t(j) * 16 + std::size_t(k % 16)] =
          gathered(corner[table.at[std::size_t(k)]]);
    for (int k = K; k < k4 * 4; ++k)
      panel[std::size_t(k / 16) * kTileN * 16 + std::size_t(j) * 16 + std::size_t(k % 16)] = 0;
  }
  for (int k = 0; k < k4 * 4; ++k) {
    std::uint8_t* dst = panel + std::size_t(k / 16) * kTileN * 16 + std::size_t(k % 16);
    if (k >= K) {
      for (int j = 0; j < kTileN; ++j)
        if (!inside[j]) dst[j * 16] = 0;
      continue;
    }
    const int dy = table.dy[std::size_t(k)], dx = table.dx[std::size_t(k)];
    const std::size_t plane = table.plane[std::size_t(k)];
    for (int j = 0; j < kTileN; ++j) {
      if (inside[j]) continue;
      const i8* src = ok[j] ? at(j, dy, dx) : nullptr;
      dst[j * 16] = src ? gathered(src[plane]) : ok[j] ? padb : 0;
    }
  }
}

/// Whether no value of `in` is negative: one pass over its planes (the padding between them
/// skipped), an OR of the bytes that the compiler vectorizes; far cheaper than the products.
template <int InPack>
inline bool no_negative(const MatView<i8, InPack>& in) {
  const std::size_t plane = std::size_t(in.w) * std::size_t(in.h) * InPack;
  std::uint8_t any = 0;
  for (int c = 0; c < in.c; ++c) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(in.channel(c));
    for (std::size_t i = 0; i < plane; ++i) any |= p[i];
    if (any & 0x80u) return false;
  }
  return true;
}

}  // namespace detail

/// Bytes of conv_gemm's workspace for `num_threads` threads over an input at InPack: each
/// thread's panel, then (channels not in whole packs of 4) each group's k table.
template <int InPack>
std::size_t conv_gemm_workspace_bytes(const PackedWeights& w, int cin, int num_threads) {
  const std::size_t tables =
      detail::needs_k_tables(InPack, cin) ? std::size_t(w.groups) * detail::k_table_bytes(w.k) : 0;
  return std::size_t(num_threads) * panel_bytes(w.k) + tables;
}

/// Convolution (grouped: w.groups groups of cin input and w.m output channels) as an int8 GEMM per
/// group: out = epilogue(W x im2col(in)). `workspace` holds conv_gemm_workspace_bytes<InPack>(w,
/// cin, num_threads) bytes, 8-byte aligned.
template <class TO,     ///< f32 (dequantized) or i8 (requantized) output
          int InPack,   ///< lanes of an input channel group
          int OutPack,  ///< lanes of an output channel group
          class Act>
void conv_gemm(const MatView<i8, InPack>& in, const MatView<TO, OutPack>& out,
               const PackedWeights& w, const ConvWindow& win, const Epilogue& e, const Act& act,
               std::uint8_t* workspace, int num_threads) {
  const int cin = w.k / (win.g.kernel_w * win.g.kernel_h);
  const std::size_t n_total = std::size_t(win.outw) * std::size_t(win.outh);
  const std::size_t ntiles = (n_total + kTileN - 1) / kTileN;
  const std::size_t nchunks = (ntiles + kChunkTiles - 1) / kChunkTiles;
  const int mblocks = w.m_pad / kBlockM;
  const int mpairs = (mblocks + 1) / 2;
  const std::size_t astride = std::size_t(w.k4) * 64;
  const std::size_t tile_bytes = std::size_t(w.k4) * kTileN * 4;
  // Value-by-value gathers (channels not in whole packs of 4): each group's k -> input offsets,
  // written into the workspace after the panels.
  const bool by_value = detail::needs_k_tables(InPack, cin);
  auto* table_mem =
      reinterpret_cast<std::byte*>(workspace + std::size_t(num_threads) * panel_bytes(w.k));
  if (by_value)
    for (int g = 0; g < w.groups; ++g)
      detail::k_table(win.g, cin, InPack, in.cstep * InPack, g * cin, in.w,
                      table_mem + std::size_t(g) * detail::k_table_bytes(w.k));
  auto table_of = [&](int g) {
    return by_value
               ? detail::k_table_at(table_mem + std::size_t(g) * detail::k_table_bytes(w.k), w.k)
               : detail::KTable{};
  };
  // Without VNNI, an input with no negative value (nor a negative pad) takes the shorter products.
  const bool nonneg = kAvx2Products && win.pad >= 0 && detail::no_negative(in);
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.k) * n_total *
                                                     std::size_t(w.groups) / 4)
                          ? num_threads
                          : 1;
  // Work items: (group, chunk of tiles, share of the channel pairs); the channel pairs are split
  // only where the chunks alone leave threads idle (small maps of many channels).
  const std::size_t chunk_items = nchunks * std::size_t(w.groups);
  int mparts = 1;
  if (std::size_t(threads) > chunk_items)
    mparts = int(std::min<std::size_t>(std::size_t(mpairs),
                                       (std::size_t(threads) + chunk_items - 1) / chunk_items));
  const std::size_t items = chunk_items * std::size_t(mparts);
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
  for (std::size_t item = 0; item < items; ++item) {
    std::uint8_t* panel = workspace + std::size_t(omp_get_thread_num()) * panel_bytes(w.k);
    const int part = int(item % std::size_t(mparts));
    const std::size_t rest = item / std::size_t(mparts);
    const int g = int(rest % std::size_t(w.groups));
    const std::size_t chunk = rest / std::size_t(w.groups);
    const std::size_t t0 = chunk * kChunkTiles, t1 = std::min(ntiles, t0 + kChunkTiles);
    const detail::KTable table = table_of(g);
    for (std::size_t t = t0; t < t1; ++t)
      detail::gather_tile<InPack>(in, win, g, cin, w.k4, t * kTileN, n_total, table,
                                  panel + (t - t0) * tile_bytes);
    const int p0 = mpairs * part / mparts, p1 = mpairs * (part + 1) / mparts;
    for (int pair = p0; pair < p1; ++pair) {
      const int mb = pair * 2;
      const bool two = mb + 1 < mblocks;
      for (std::size_t t = t0; t < t1; ++t) {
        alignas(64) std::int32_t sums[2][kTileN][kBlockM];
        const std::uint8_t* tile = panel + (t - t0) * tile_bytes;
        if (nonneg) {
          if (two)
            detail::tile_sums<2, kTileN, true>(w.block(g, mb), astride, tile, w.k4, sums);
          else
            detail::tile_sums<1, kTileN, true>(w.block(g, mb), astride, tile, w.k4, sums);
        } else if (two) {
          detail::tile_sums<2, kTileN>(w.block(g, mb), astride, tile, w.k4, sums);
        } else {
          detail::tile_sums<1, kTileN>(w.block(g, mb), astride, tile, w.k4, sums);
        }
        const int nvalid = int(std::min<std::size_t>(kTileN, n_total - t * kTileN));
        for (int b = 0; b < (two ? 2 : 1); ++b) {
          const int m0 = (mb + b) * kBlockM;
          const int valid = std::min(kBlockM, w.m - m0);
          const std::size_t slot = std::size_t(g) * std::size_t(w.m_pad) + std::size_t(m0);
          detail::store_pixels<TO, OutPack>(out, sums[b], nvalid, g * w.m + m0, valid,
                                            t * kTileN, e, slot, act);
        }
      }
    }
  }
}

/// Writes int8 vector x (k values) as gemv reads it into xs (k4 x 4 bytes; k4 a PackedWeights'):
/// each value as the products take it (gathered()), the padding past k as a zero. xs may be x.
inline void gather_vector(const std::int8_t* x, int k, int k4, std::uint8_t* xs) {
  for (int i = 0; i < k4 * 4; ++i) xs[i] = detail::gathered(i < k ? x[i] : std::int8_t(0));
}

/// out[oc] = epilogue(W x) for one int8 vector of w.k values (one group) in gather_vector's form
/// `xs`, f32 out.
template <class Act>
void gemv(const std::uint8_t* xs, float* out, const PackedWeights& w, const Epilogue& e,
          const Act& act, int num_threads) {
  const int mblocks = w.m_pad / kBlockM;
  const int threads =
      kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.k) / 4) ? num_threads : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int mb = 0; mb < mblocks; ++mb) {
    alignas(64) std::int32_t sums[1][1][kBlockM];
    detail::tile_sums<1, 1>(w.block(0, mb), 0, xs, w.k4, sums);
    const int m0 = mb * kBlockM;
    const int valid = std::min(kBlockM, w.m - m0);
    alignas(64) float v[kBlockM];
    for (int l = 0; l < kBlockM; ++l)
      v[l] = std::fma(float(sums[0][0][l] - e.comp[m0 + l]), e.scale_in[m0 + l], e.bias[m0 + l]);
    for (int l = 0; l < valid; ++l) out[m0 + l] = act(v[l]);
  }
}

/// The columns of conv_depthwise's widened rows: every column an output row's windows read, from
/// the first window's left edge (pad included) to the last one's right edge.
inline int depthwise_row_width(const ConvWindow& win) {
  return (win.outw - 1) * win.g.stride_w + (win.g.kernel_w - 1) * win.g.dilation_w + 1;
}

/// The input rows one output row of conv_depthwise reads at most (its window's height, dilated).
inline int depthwise_row_span(const ConvWindow& win) {
  return (win.g.kernel_h - 1) * win.g.dilation_h + 1;
}

/// Floats of workspace each thread of conv_depthwise needs at pack Pack: its ring of input rows
/// widened to f32 (depthwise_row_span rows of depthwise_row_width columns), then the index of the
/// row each ring slot holds, rounded up to whole cache lines (so that each thread's ring starts on
/// one: a ring off the line split every load of the thread's multiply-adds in two).
template <int Pack>
std::size_t conv_depthwise_workspace_floats(const ConvWindow& win) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  const std::size_t span = std::size_t(depthwise_row_span(win));
  const std::size_t floats = span * std::size_t(depthwise_row_width(win)) * Pack + span;
  return (floats + kLine - 1) / kLine * kLine;
}

/// Depthwise convolution (one input and one output channel per group) on int8 values, Pack
/// channels at a time: `weights` [c / Pack][maxk][Pack] as floats of the int8 values, epilogue
/// slots by channel. `workspace`: conv_depthwise_workspace_floats<Pack>(win) floats per thread
/// (num_threads x that in all).
///
/// Each input row a window reads is widened to f32 once per channel pack, into a ring of rows
/// with the pad value around them (rows above and below the input all pad), so that every tap of
/// every output pixel is one multiply-add from memory with no bounds test: the taps converted
/// bytes to floats one pixel and tap at a time before (a stride-1 3x3 layer converted each input
/// value nine times). The sums run in the same order on the same values: outputs are unchanged.
template <class TO, int Pack, class Act>
void conv_depthwise(const MatView<i8, Pack>& in, const MatView<TO, Pack>& out, const float* weights,
                    const ConvWindow& win, const Epilogue& e, const Act& act, float* workspace,
                    int num_threads) {
  // The Pack lanes as B registers of W floats (pack 16 on AVX2: two of 8).
  constexpr int W = kernels::detail::Lanes<Pack>::W, B = Pack / W;
  // Output pixels summed side by side: eight on one register a pixel, four where a pixel takes
  // two (pack 16 on AVX2), within 16 registers.
  constexpr int kBlock = B == 1 ? 8 : 4;
  using V = typename kernels::detail::VecOf<W>::type;
  auto vec = [](const float* p) -> V {
    if constexpr (W == 1)
      return *p;
    else
      return V::load_unaligned(p);
  };
  auto fma = [](V a, V b, V c) -> V {
    if constexpr (W == 1)
      return std::fma(a, b, c);
    else
      return xsimd::fma(a, b, c);
  };
  const ConvGeometry& geo = win.g;
  const int maxk = geo.kernel_w * geo.kernel_h;
  const int groups = out.c;
  const int span = depthwise_row_span(win), width = depthwise_row_width(win);
  const std::size_t row_floats = std::size_t(width) * Pack;
  const std::size_t per_thread = conv_depthwise_workspace_floats<Pack>(win);
  constexpr float kNoRow = -16777216.f;  // below any row index (-pad_top at least)
  const std::size_t work = std::size_t(win.outw) * std::size_t(win.outh) * std::size_t(groups) *
                           std::size_t(maxk) * Pack;
  const int threads = kernels::detail::worth_threads(work) ? num_threads : 1;
#pragma omp parallel for num_threads(threads) if (threads > 1)
  for (int q = 0; q < groups; ++q) {
    float* ring = workspace + std::size_t(omp_get_thread_num()) * per_thread;
    // The input row each ring slot holds (as a float: exact for any row index below 2^24).
    float* held = ring + std::size_t(span) * row_floats;
    std::fill(held, held + span, kNoRow);
    const i8* plane = in.channel(q);
    const float* wq = weights + std::size_t(q) * std::size_t(maxk) * Pack;
    V scale[B], bias[B];
    for (int b = 0; b < B; ++b) {
      scale[b] = vec(e.scale_in + std::size_t(q) * Pack + std::size_t(b) * W);
      bias[b] = vec(e.bias + std::size_t(q) * Pack + std::size_t(b) * W);
    }
    const float pad = float(win.pad);
    TO* dst = out.channel(q);
    // Input row iy (iy >= -pad_top; may lie in the pad) widened into ring slot
    // (iy + pad_top) % span unless the slot holds it already: the rows one output row reads are
    // span consecutive rows at most, each in its own slot.
    auto widen = [&](int iy) {
      const int slot = (iy + win.pad_top) % span;
      float* r = ring + std::size_t(slot) * row_floats;
      float& h = held[slot];
      if (h == float(iy)) return;
      h = float(iy);
      if (iy < 0 || iy >= in.h) {
        std::fill(r, r + row_floats, pad);
        return;
      }
      const i8* src = plane + std::size_t(iy) * std::size_t(in.w) * Pack;
      for (int j = 0; j < width; ++j) {
        const int ix = j - win.pad_left;
        float* d = r + std::size_t(j) * Pack;
        if (ix < 0 || ix >= in.w) {
          std::fill(d, d + Pack, pad);
        } else if constexpr (W == 1) {
          for (int l = 0; l < Pack; ++l) d[l] = float(src[std::size_t(ix) * Pack + l]);
        } else {
          for (int b = 0; b < B; ++b)
            simd::store<W>(d + b * W, simd::load<W>(src + std::size_t(ix) * Pack + b * W));
        }
      }
    };
    // Bias, activation, requantization and the store of output pixel (oy, ox).
    auto finish = [&](int oy, int ox, V* acc) {
      const std::size_t at = (std::size_t(oy) * std::size_t(win.outw) + std::size_t(ox)) * Pack;
      for (int b = 0; b < B; ++b) {
        V v = act(fma(acc[b], scale[b], bias[b]));
        if constexpr (std::same_as<TO, i8>) v = v * V(e.out_scale);
        if constexpr (W == 1)
          dst[at + std::size_t(b)] = from_f32<TO>(v);
        else
          simd::store<W>(dst + at + std::size_t(b) * W, v);
      }
    };
    const std::size_t step = std::size_t(geo.stride_w) * Pack;
    // The slot of the output row's first input row (row iy0 = oy * stride_h - pad_top).
    int row_slot = 0;
    const int slot_step = geo.dilation_h % span;
    // N neighbouring output pixels from column ox: independent sums, so that the multiply-adds
    // of one tap do not wait on each other.
    // (The loops over pixels and registers unrolled whole: GCC otherwise keeps the sums in
    // memory, each multiply-add waiting on the store of the one before.)
    auto pixels = [&]<int N>(int oy, int ox) {
      V acc[N][B];
#pragma GCC unroll 8
      for (int p = 0; p < N; ++p)
#pragma GCC unroll 2
        for (int b = 0; b < B; ++b) acc[p][b] = V(0.f);
      // The slot of row iy0 + ky * dilation_h, stepped without a division.
      int slot = row_slot;
      for (int ky = 0; ky < geo.kernel_h; ++ky) {
        const float* r = ring + std::size_t(slot) * row_floats + std::size_t(ox) * step;
        slot += slot_step;
        if (slot >= span) slot -= span;
        for (int kx = 0; kx < geo.kernel_w; ++kx) {
          const float* wt = wq + std::size_t(ky * geo.kernel_w + kx) * Pack;
          V w[B];
#pragma GCC unroll 2
          for (int b = 0; b < B; ++b) w[b] = vec(wt + b * W);
          const float* src = r + std::size_t(kx * geo.dilation_w) * Pack;
#pragma GCC unroll 8
          for (int p = 0; p < N; ++p)
#pragma GCC unroll 2
            for (int b = 0; b < B; ++b)
              acc[p][b] =
                  fma(vec(src + std::size_t(p) * step + std::size_t(b) * W), w[b], acc[p][b]);
        }
      }
#pragma GCC unroll 8
      for (int p = 0; p < N; ++p) finish(oy, ox + p, acc[p]);
    };
    for (int oy = 0; oy < win.outh; ++oy) {
      const int iy0 = oy * geo.stride_h - win.pad_top;
      for (int ky = 0; ky < geo.kernel_h; ++ky) widen(iy0 + ky * geo.dilation_h);
      row_slot = (oy * geo.stride_h) % span;
      int ox = 0;
      for (; ox + kBlock <= win.outw; ox += kBlock) pixels.template operator()<kBlock>(oy, ox);
      // The row's last pixels in blocks of 4, 2 and 1 (one sum alone waits on each of its taps).
      if constexpr (kBlock > 4)
        if (ox + 4 <= win.outw) {
          pixels.template operator()<4>(oy, ox);
          ox += 4;
        }
      if (ox + 2 <= win.outw) {
        pixels.template operator()<2>(oy, ox);
        ox += 2;
      }
      if (ox < win.outw) pixels.template operator()<1>(oy, ox);
    }
  }
}

}  // namespace infer::kernels::int8
