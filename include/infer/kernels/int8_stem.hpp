// An int8 network's first layer on AVX-512 VNNI: a convolution of a few unpacked input channels
// (at most 4: an image's 3) into many outputs, of any kernel, stride and dilation. The GEMM's
// gather costs such a layer more than its products (one 4-byte value a tap and pixel, with its
// bounds tested, against 64 products of one vpdpbusd); here the input is laid out once per forward
// as one unsigned 32-bit word a pixel (its channels as the products read them, x + 128, and the
// pad around it), so that each product's input is one broadcast from a fixed offset, and six
// pixels by four blocks of 16 channels stay in registers over all taps.
//
// The weights are the GEMM's (kernels::int8::pack_weights with 4 channels: k = tap x 4 + c, one
// 16-channel x 4-k quad a tap) and so is the epilogue (the compensation comp, dequantization,
// bias, activation, requantization): the sums and the outputs are the GEMM's, bit for bit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <infer/detail/omp.hpp>
#include <infer/kernels/int8.hpp>

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace infer::kernels::int8::stem {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

/// Input channels the kernel takes: one 32-bit word a pixel.
inline constexpr int kMaxChannels = 4;
/// Output pixels of a register tile (each with up to kBlocks blocks of sums).
inline constexpr int kPixels = 6;
/// Blocks of 16 output channels summed together.
inline constexpr int kBlocks = 4;

/// The padded input's extent: every window of the output inside it.
struct Extent {
  int w = 0, h = 0;
};

inline Extent padded_extent(const ConvWindow& win) {
  return {(win.outw - 1) * win.g.stride_w + (win.g.kernel_w - 1) * win.g.dilation_w + 1,
          (win.outh - 1) * win.g.stride_h + (win.g.kernel_h - 1) * win.g.dilation_h + 1};
}

/// Bytes of the padded input (layout_input's `dst`).
inline std::size_t input_bytes(const ConvWindow& win) {
  const Extent x = padded_extent(win);
  return std::size_t(x.w) * std::size_t(x.h) * 4;
}

/// Lays `in` (at most 4 int8 channels, pack 1) out as padded_extent(win) words, one a pixel: byte c
/// holds channel c as the products read it (detail::gathered: x + 128), window positions outside
/// the input hold the pad, channels past in.c a zero (their weights are zero).
inline void layout_input(const MatView<i8, 1>& in, const ConvWindow& win, std::uint32_t* dst) {
  const Extent x = padded_extent(win);
  const std::uint32_t pad = std::uint32_t(int8::detail::gathered(win.pad));
  std::uint32_t pad_word = 0;
  for (int c = 0; c < kMaxChannels; ++c)
    pad_word |= (c < in.c ? pad : std::uint32_t(int8::detail::gathered(0))) << (8 * c);
  for (int y = 0; y < x.h; ++y) {
    std::uint32_t* row = dst + std::size_t(y) * std::size_t(x.w);
    const int iy = y - win.pad_top;
    if (iy < 0 || iy >= in.h) {
      std::fill(row, row + x.w, pad_word);
      continue;
    }
    const int x0 = std::clamp(win.pad_left, 0, x.w), x1 = std::clamp(win.pad_left + in.w, x0, x.w);
    std::fill(row, row + x0, pad_word);
    std::fill(row + x1, row + x.w, pad_word);
    for (int xx = x0; xx < x1; ++xx) {
      const std::size_t i = std::size_t(iy) * std::size_t(in.w) + std::size_t(xx - win.pad_left);
      std::uint32_t v = 0;
      for (int c = 0; c < kMaxChannels; ++c)
        v |= std::uint32_t(int8::detail::gathered(c < in.c ? in.channel(c)[i] : std::int8_t(0)))
             << (8 * c);
      row[xx] = v;
    }
  }
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
namespace detail {

/// Sums of NB weight blocks (`astride` bytes apart, a tap's quad 64 bytes) over the window of
/// kPixels pixels whose top-left input words are px[p]: sums[p * NB + b][16]. `dy`, `dx`: words
/// between a window's rows and columns of taps.
template <int NB>
inline void tile(const std::uint32_t* const* px, const std::int8_t* w, std::size_t astride,
                 const ConvGeometry& g, std::ptrdiff_t dy, std::ptrdiff_t dx,
                 std::int32_t (*sums)[kBlockM]) {
  __m512i acc[kPixels][NB];
  for (int p = 0; p < kPixels; ++p)
    for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_setzero_si512();
  const std::uint32_t* p0 = px[0];
  const std::uint32_t* p1 = px[1];
  const std::uint32_t* p2 = px[2];
  const std::uint32_t* p3 = px[3];
  const std::uint32_t* p4 = px[4];
  const std::uint32_t* p5 = px[5];
  static_assert(kPixels == 6);
  const std::int8_t* wt = w;
  for (int ky = 0; ky < g.kernel_h; ++ky)
    for (int kx = 0; kx < g.kernel_w; ++kx, wt += 64) {
      const std::ptrdiff_t off = std::ptrdiff_t(ky) * dy + std::ptrdiff_t(kx) * dx;
      __m512i wv[NB];
      for (int b = 0; b < NB; ++b)
        wv[b] = _mm512_loadu_si512(wt + std::size_t(b) * astride);
      const __m512i x[kPixels] = {
          _mm512_set1_epi32(int(p0[off])), _mm512_set1_epi32(int(p1[off])),
          _mm512_set1_epi32(int(p2[off])), _mm512_set1_epi32(int(p3[off])),
          _mm512_set1_epi32(int(p4[off])), _mm512_set1_epi32(int(p5[off]))};
#pragma GCC unroll 6
      for (int p = 0; p < kPixels; ++p)
#pragma GCC unroll 4
        for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_dpbusd_epi32(acc[p][b], x[p], wv[b]);
    }
  for (int p = 0; p < kPixels; ++p)
    for (int b = 0; b < NB; ++b) _mm512_store_si512(sums[p * NB + b], acc[p][b]);
}

}  // namespace detail

/// The convolution of layout_input's words `src` (padded_extent(win)) with the GEMM's weights `w`
/// (4 input channels, one group) into `out` (win.outw x win.outh; f32, or i8 requantized) through
/// the GEMM's epilogue `e` (its comp).
template <class TO, int OutPack, class Act>
void conv_stem(const std::uint32_t* src, const MatView<TO, OutPack>& out, const PackedWeights& w,
               const ConvWindow& win, const Epilogue& e, const Act& act, int num_threads) {
  const Extent ext = padded_extent(win);
  const ConvGeometry& g = win.g;
  const std::ptrdiff_t dy = std::ptrdiff_t(g.dilation_h) * ext.w, dx = g.dilation_w;
  const int mblocks = w.m_pad / kBlockM;
  const std::size_t astride = std::size_t(w.k4) * 64;
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.k) *
                                                     std::size_t(win.outw) *
                                                     std::size_t(win.outh) / 4)
                          ? num_threads
                          : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int oy = 0; oy < win.outh; ++oy) {
    const std::uint32_t* row = src + std::size_t(oy) * std::size_t(g.stride_h) * std::size_t(ext.w);
    for (int ox0 = 0; ox0 < win.outw; ox0 += kPixels) {
      const int n = std::min(kPixels, win.outw - ox0);
      // A row's last, partial tile sums its last pixel again in the lanes past the row.
      const std::uint32_t* px[kPixels];
      for (int p = 0; p < kPixels; ++p)
        px[p] = row + std::size_t(std::min(ox0 + p, win.outw - 1)) * std::size_t(g.stride_w);
      for (int mb = 0; mb < mblocks; mb += kBlocks) {
        const int nb = std::min(kBlocks, mblocks - mb);
        alignas(64) std::int32_t sums[kPixels * kBlocks][kBlockM];
        const std::int8_t* wb = w.block(0, mb);
        switch (nb) {
          case 4: detail::tile<4>(px, wb, astride, g, dy, dx, sums); break;
          case 3: detail::tile<3>(px, wb, astride, g, dy, dx, sums); break;
          case 2: detail::tile<2>(px, wb, astride, g, dy, dx, sums); break;
          default: detail::tile<1>(px, wb, astride, g, dy, dx, sums); break;
        }
        for (int p = 0; p < n; ++p)
          for (int b = 0; b < nb; ++b) {
            const int m0 = (mb + b) * kBlockM;
            int8::detail::store_block<TO, OutPack>(
                out, sums[p * nb + b], m0, std::min(kBlockM, w.m - m0),
                std::size_t(oy) * std::size_t(win.outw) + std::size_t(ox0 + p), e, std::size_t(m0),
                act);
          }
      }
    }
  }
}
#endif

}  // namespace infer::kernels::int8::stem
