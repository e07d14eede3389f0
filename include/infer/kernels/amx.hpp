// Convolution GEMMs on AMX tiles (Intel Sapphire Rapids and later: AMX-TILE, AMX-BF16, AMX-INT8):
// bf16 here, int8 (tdpbusd on int8::PackedWeights) in the second half of this file.
// One tdpbf16ps multiplies a 16 x 32 bf16 tile by a 32 x 16 one into 16 x 16 f32 sums: 16384
// products an instruction, where AVX512_BF16's vdpbf16ps does 32 (kernels/bf16.hpp). The layers
// take this path where prepare() finds the tiles usable (kAvailable and usable(): the build has
// the instructions and the OS granted this process the tile state), Option::use_amx holds and
// bf16 arithmetic is asked for (detail::bf16_arithmetic); otherwise bf16 arithmetic stays on
// vdpbf16ps.
//
// The GEMM's roles, chosen so that a sum tile is already in the packed output's layout:
// - A (16 rows x 32 k): 16 output pixels of the im2col matrix, each row 32 consecutive k of one
//   pixel, gathered from the input and rounded to bf16 into a per-thread panel
//   [pixel tile][k / 32][16 pixels][32].
// - B (16 k pairs x 16 channels x 2): weights in bf16dot's pair layout [block][k / 2][32][2]
//   (k padded to whole tiles: to_pairs with kPairRows), one tile holding half of a block's 32
//   channels, its rows 128 bytes apart.
// - C (16 pixels x 16 channels, f32): a pixel's 16 consecutive output channels per row, stored
//   with bias and activation as gemm.hpp stores its register tiles.
// Each step keeps 2 x 2 sum tiles (32 pixels by 32 channels) in tiles 0-3, the two pixel tiles in
// 4-5 and the two weight halves in 6-7: four products per four tile loads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/element.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/mat.hpp>
#include <infer/simd.hpp>
#if defined(__AMX_TILE__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels::amx {

#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__linux__)
/// Whether this build has the AMX bf16 kernel (it also needs bf16dot's pair layout and stores).
inline constexpr bool kAvailable = bf16dot::kAvailable;
#else
inline constexpr bool kAvailable = false;
#endif
#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__linux__)
/// Whether this build has the AMX int8 kernel (tdpbusd: the VNNI path's unsigned inputs and
/// compensation, so it needs that path's conventions).
inline constexpr bool kInt8Available = int8::kVnni;
#else
inline constexpr bool kInt8Available = false;
#endif

inline constexpr int kTileRows = 16;          ///< pixels of an A tile, k pairs of a B tile
inline constexpr int kTileK = 32;             ///< bf16 k values of an A tile's row
inline constexpr int kPairRows = kTileK / 2;  ///< k pairs per B tile: to_pairs' k-pair multiple
inline constexpr int kStepPixels = 2 * kTileRows;  ///< pixels of one step's two A tiles
/// A step's sums run over K in blocks of this many tile rows (256 k): the block's weights (16 KB
/// of B) stay in L1 while every step of the panel passes them.
inline constexpr std::size_t kKBlock = 8;
/// The gathered panel's size (bytes), which sets the pixels per panel, 32 to 256.
inline constexpr std::size_t kPanelBytes = std::size_t(256) << 10;
inline constexpr int kMaxPanelPixels = 256;
/// Weights (bytes) the output-channel blocks of one pass hold: the panels of a pass meet the
/// same blocks, which stay in L2 instead of streaming from memory once per panel.
inline constexpr std::size_t kGroupWeightBytes = std::size_t(1) << 20;

/// k rounded up to whole A-tile rows.
inline std::size_t k_padded(std::size_t k) {
  return (k + kTileK - 1) / std::size_t(kTileK) * kTileK;
}

/// Pixels per panel for K = k: as many whole steps as kPanelBytes holds, 1 to 8 steps.
inline int panel_pixels(std::size_t k) {
  const std::size_t fit = kPanelBytes / (k_padded(k) * sizeof(bf16)) / kStepPixels * kStepPixels;
  return int(std::clamp<std::size_t>(fit, kStepPixels, kMaxPanelPixels));
}

/// f32 sums a panel's steps park between K blocks: 4 tiles of 16 x 16 per step.
inline std::size_t sums_floats(std::size_t k) {
  return std::size_t(panel_pixels(k) / kStepPixels) * 4 * kTileRows * 16;
}

/// bf16 elements of workspace convolution_gemm needs per thread for K = `k`: the panel, then the
/// parked sums.
inline std::size_t workspace_per_thread(int k) {
  return std::size_t(panel_pixels(std::size_t(k))) * k_padded(std::size_t(k)) +
         sums_floats(std::size_t(k)) * 2;
}

/// Whether this process may use the tiles: Linux grants the tile data state to a process that
/// asks (arch_prctl ARCH_REQ_XCOMP_PERM, once, for all its threads); a kernel or hypervisor that
/// does not offer it refuses, and the layers keep vdpbf16ps.
inline bool usable() {
#if defined(__AMX_TILE__) && defined(__linux__)
  if constexpr (!kAvailable && !kInt8Available) return false;
  static const bool granted = [] {
    constexpr long kReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kXtiledata = 18;         // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

/// Elements of `blocks` weight blocks of K = k in pairs, k padded to whole B tiles.
inline std::size_t pairs_size(std::size_t blocks, std::size_t k) {
  return bf16dot::pairs_size(blocks, k_padded(k));
}

/// gemm-layout weights ([blocks][k][kBlockM] floats, gemm::pack_weights) as bf16 pairs with k
/// padded to whole tiles (zeros).
inline void to_pairs(const float* src, std::size_t blocks, std::size_t k, bf16* dst) {
  bf16dot::to_pairs(src, blocks, k, dst, k_padded(k));
}

namespace detail {

/// Gathers pixels n0 .. n0 + npix (whole steps) of the im2col matrix into `panel` as [pixel
/// tile][kb][16 pixels][32 k] bf16, k = (input group, kernel position, lane) as
/// gemm::pack_weights orders it; zeros past n_total and from K to the padded K.
template <StorageElement T, int InPack>
void gather_panel(const MatView<T, InPack>& in, const ConvGeometry& g, int outw, std::size_t n0,
                  int npix, std::size_t n_total, std::size_t k_total, bf16* panel) {
  static_assert(kTileK % InPack == 0, "an input group's lanes stay within one tile row");
  const std::size_t kb_count = k_padded(k_total) / kTileK;
  const std::size_t tile_elems = kb_count * kTileRows * kTileK;
  auto row = [&](int j, std::size_t kb) {
    return panel + std::size_t(j / kTileRows) * tile_elems +
           (kb * kTileRows + std::size_t(j % kTileRows)) * kTileK;
  };
  std::size_t offset[kMaxPanelPixels];
  int nvalid = 0;
  for (int j = 0; j < npix; ++j) {
    const std::size_t n = n0 + std::size_t(j);
    if (n >= n_total) break;
    const std::size_t oy = n / std::size_t(outw), ox = n % std::size_t(outw);
    offset[j] = (oy * g.stride_h * std::size_t(in.w) + ox * g.stride_w) * InPack;
    nvalid = j + 1;
  }
  // Rows past the map: zeros over the whole K. The last tile row's k past K: zeros.
  for (int j = nvalid; j < npix; ++j)
    for (std::size_t kb = 0; kb < kb_count; ++kb) std::fill_n(row(j, kb), kTileK, bf16{});
  if (const std::size_t tail = k_total % kTileK; tail != 0)
    for (int j = 0; j < nvalid; ++j)
      std::fill_n(row(j, kb_count - 1) + tail, kTileK - tail, bf16{});
  // Tile row by tile row: the kGroups input groups (channel group, kernel position) of a row
  // fill each pixel's 64 bytes at once.
  constexpr int kCopy = InPack < gemm::kWidth ? InPack : gemm::kWidth;
  constexpr int kGroups = kTileK / InPack;
  const int maxk = g.kernel_w * g.kernel_h;
  const std::size_t groups = std::size_t(in.c) * std::size_t(maxk);
  for (std::size_t kb = 0; kb < kb_count; ++kb) {
    const T* src[kGroups];
    int nsrc = 0;
    for (int i = 0; i < kGroups; ++i) {
      const std::size_t kg = kb * kGroups + std::size_t(i);
      if (kg >= groups) break;
      const int q = int(kg / std::size_t(maxk)), kpos = int(kg % std::size_t(maxk));
      const int ky = kpos / g.kernel_w, kx = kpos % g.kernel_w;
      src[i] = in.channel(q) +
               (std::size_t(ky) * g.dilation_h * in.w + std::size_t(kx) * g.dilation_w) * InPack;
      nsrc = i + 1;
    }
    for (int j = 0; j < nvalid; ++j) {
      bf16* d = row(j, kb);
      for (int i = 0; i < nsrc; ++i, d += InPack) {
        const T* s = src[i] + offset[j];
        for (int b = 0; b < InPack; b += kCopy) bf16dot::detail::to_bf16<kCopy>(s + b, d + b);
      }
    }
  }
}

#if defined(__AMX_TILE__) && defined(__linux__)
/// The tile shapes every step uses: eight tiles of 16 rows by 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

/// Loads the tile shapes into this thread's tile state (once per kernel call and thread).
inline void configure() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = kTileRows;
  }
  _tile_loadconfig(&cfg);
}
#endif

#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__linux__)
/// One step over K tile rows kb0 .. kb1: 32 pixels (the panel's pixel tiles `a0`, `a0 +
/// tile_elems`) by the 32 channels of weight block `b`, adding to the sums parked at `c` ([pixel
/// tile][channel half][16 pixels][16 channels]; zeros instead where `first`) and parking them
/// there again.
inline void step(const bf16* a0, std::size_t tile_elems, const bf16* b, std::size_t kb0,
                 std::size_t kb1, bool first, float* c) {
  constexpr std::size_t kA = kTileRows * kTileK;             // elements of an A tile
  constexpr std::size_t kB = kPairRows * gemm::kBlockM * 2;  // elements of a block's k tile row
  constexpr std::size_t kC = kTileRows * 16;                 // floats of a C tile
  constexpr int kBStride = gemm::kBlockM * 2 * sizeof(bf16);
  const bf16* a1 = a0 + tile_elems;
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, c, 64);
    _tile_loadd(1, c + kC, 64);
    _tile_loadd(2, c + 2 * kC, 64);
    _tile_loadd(3, c + 3 * kC, 64);
  }
  for (std::size_t kb = kb0; kb < kb1; ++kb) {
    _tile_loadd(4, a0 + kb * kA, kTileK * sizeof(bf16));
    _tile_loadd(5, a1 + kb * kA, kTileK * sizeof(bf16));
    _tile_loadd(6, b + kb * kB, kBStride);
    _tile_loadd(7, b + kb * kB + 32, kBStride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_stored(1, c + kC, 64);
  _tile_stored(2, c + 2 * kC, 64);
  _tile_stored(3, c + 3 * kC, 64);
}
#endif

}  // namespace detail

#if !(defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__linux__))
// Declared for every build, so that callers name it behind `if constexpr (kAvailable)`.
template <StorageElement T, int InPack, int OutPack, class Act>
void convolution_gemm(const MatView<T, InPack>&, const MatView<T, OutPack>&, const bf16*,
                      const float*, const ConvGeometry&, const Act&, bf16*, int,
                      const MatView<T, OutPack>& = {}) {
  static_assert(sizeof(T) == 0, "amx::convolution_gemm needs AMX-TILE and AMX-BF16 (kAvailable)");
}
#else
/// gemm::convolution_gemm on AMX tiles: `weights` are gemm::pack_weights<InPack>'s through
/// amx::to_pairs (K = in.c * InPack * kernel positions), `bias` gemm::pack_bias's, `workspace`
/// num_threads x workspace_per_thread(K) elements. Packed inputs (InPack 4, 8 or 16); usable()
/// must hold.
template <StorageElement T,  ///< storage of input and output: f32 or bf16
          int InPack, int OutPack, class Act>
void convolution_gemm(const MatView<T, InPack>& in, const MatView<T, OutPack>& out,
                      const bf16* weights, const float* bias, const ConvGeometry& g, const Act& act,
                      bf16* workspace, int num_threads, const MatView<T, OutPack>& res = {}) {
  static_assert(InPack > 1, "amx::convolution_gemm: packed inputs only");
  static_assert(gemm::kBlockM == 2 * 16 && gemm::kWidth == 16);
  using V = simd::fbatch<16>;
  const int m = out.c * OutPack;
  const std::size_t mblocks = std::size_t(m + gemm::kBlockM - 1) / gemm::kBlockM;
  const int maxk = g.kernel_w * g.kernel_h;
  const std::size_t k_total = std::size_t(in.c) * std::size_t(maxk) * InPack;
  const std::size_t kb_count = k_padded(k_total) / kTileK;
  const std::size_t tile_elems = kb_count * kTileRows * kTileK;
  const std::size_t block_elems = k_padded(k_total) * gemm::kBlockM;
  const std::size_t n_total = std::size_t(out.w) * out.h;
  const int npix = panel_pixels(k_total);
  const std::size_t npanels = (n_total + std::size_t(npix) - 1) / std::size_t(npix);
  const int threads =
      kernels::detail::worth_threads(std::size_t(m) * k_total * n_total) ? num_threads : 1;
  // Passes over the output channels, each holding at most kGroupWeightBytes of weights, and
  // enough (panel, pass) items for two per thread where the map has few panels.
  std::size_t per_pass = std::max<std::size_t>(1, kGroupWeightBytes / (block_elems * sizeof(bf16)));
  if (threads > 1) {
    const std::size_t want_passes = (std::size_t(2 * threads) + npanels - 1) / npanels;
    per_pass = std::min(per_pass, std::max<std::size_t>(1, mblocks / want_passes));
  }
  const std::size_t passes = (mblocks + per_pass - 1) / per_pass;
  const std::size_t items = passes * npanels;
  const std::size_t per_thread = workspace_per_thread(int(k_total));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    bf16* panel = workspace + std::size_t(omp_get_thread_num()) * per_thread;
#else
    bf16* panel = workspace;
#endif
    float* parked = reinterpret_cast<float*>(panel + std::size_t(npix) * k_padded(k_total));
    detail::configure();
#pragma omp for schedule(dynamic)
    for (std::size_t item = 0; item < items; ++item) {
      const std::size_t pass = item / npanels, n0 = item % npanels * std::size_t(npix);
      const std::size_t mb0 = pass * per_pass, mb1 = std::min(mblocks, mb0 + per_pass);
      const int steps = int(
          (std::min<std::size_t>(std::size_t(npix), n_total - n0) + kStepPixels - 1) / kStepPixels);
      detail::gather_panel<T, InPack>(in, g, out.w, n0, steps * kStepPixels, n_total, k_total,
                                      panel);
      for (std::size_t mb = mb0; mb < mb1; ++mb) {
        const bf16* b = weights + mb * block_elems;
        for (std::size_t kb0 = 0; kb0 < kb_count; kb0 += kKBlock) {
          const std::size_t kb1 = std::min(kb_count, kb0 + kKBlock);
          for (int s = 0; s < steps; ++s) {
            float* c = parked + std::size_t(s) * 4 * kTileRows * 16;
            detail::step(panel + std::size_t(2 * s) * tile_elems, tile_elems, b, kb0, kb1, kb0 == 0,
                         c);
            if (kb1 != kb_count) continue;
            // The step's sums are whole: bias, activation and the store.
            const std::size_t ns = n0 + std::size_t(s) * kStepPixels;
            for (int half = 0; half < 2; ++half) {
              const int c0 = int(mb) * gemm::kBlockM + half * 16;
              if (c0 >= m) break;
              const V bv = V::load_unaligned(bias + c0);
              for (int t = 0; t < 2; ++t)
                for (int j = 0; j < kTileRows; ++j) {
                  const std::size_t n = ns + std::size_t(t * kTileRows + j);
                  if (n >= n_total) break;
                  gemm::detail::store_sum<OutPack>(
                      out, res, c0, m, n,
                      V::load_aligned(c + (std::size_t(t * 2 + half) * kTileRows + j) * 16) + bv,
                      act);
                }
            }
          }
        }
      }
    }
    _tile_release();
  }
}
#endif

// ---- int8: tdpbusd on int8::PackedWeights (k_unit 64) --------------------------------------
//
// A tile: 16 pixels x 64 k of unsigned bytes (the VNNI path's gathered inputs, x + 128), gathered
// by int8::detail::gather_tile twelve pixels at a time and moved into [pixel tile][k / 64][16][64];
// B tile: a weight block's 16 k quads x 16 channels x 4 (PackedWeights' layout as it is); C: 16
// pixels x 16 channels of int32 sums, through int8's epilogue (compensation, scales, bias,
// activation, requantization) as the VNNI path stores them.

/// Pixels per int8 panel: whole 12-pixel gathers and whole 32-pixel steps.
inline constexpr int kInt8PanelPixels = 96;

/// Bytes of workspace conv_gemm_int8 needs per thread for weights `w`: the panel, one gather's
/// tile and the parked sums.
inline std::size_t int8_workspace_bytes(const int8::PackedWeights& w) {
  const std::size_t k4 = std::size_t(w.k4);
  return std::size_t(kInt8PanelPixels) * k4 * 4 + std::size_t(int8::kTileN) * k4 * 4 +
         std::size_t(kInt8PanelPixels / kStepPixels) * 4 * 16 * 16 * 4 + 64;
}

/// Bytes of conv_gemm_int8's workspace for `num_threads` threads over an input at InPack with
/// `cin` channels per group: each thread's int8_workspace_bytes(w), then the groups' gather tables
/// (unit tables for whole packs of 16, else k tables where channels are not in packs of 4).
template <int InPack>
std::size_t conv_gemm_int8_workspace_bytes(const int8::PackedWeights& w, int cin, int num_threads) {
  const int taps = cin > 0 ? w.k / cin : 0;
  std::size_t tables = 0;
  if (InPack == 16 && cin % 16 == 0)
    tables = std::size_t(w.groups) * int8::detail::k_table_bytes(cin / 16 * taps);
  else if (int8::detail::needs_k_tables(InPack, cin))
    tables = std::size_t(w.groups) * int8::detail::k_table_bytes(w.k);
  return std::size_t(num_threads) * int8_workspace_bytes(w) + tables;
}

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__linux__)
namespace detail {

/// Where each 16-value unit of K (one pack of 16 channels at one tap) reads, from a pixel's window
/// corner, in int8::detail::KTable's arrays (one entry a unit, in the kernel's workspace:
/// k_table_bytes(units)): `at` the pack's plane plus the tap's offset (windows inside the map),
/// `plane` the pack's plane, dy/dx the tap's offset.
using UnitTable = int8::detail::KTable;

/// Writes the units of group g (cin channels from g * cin, whole packs of 16) for input `in` at
/// `mem` (k_table_bytes(cin / 16 * taps) bytes).
template <int InPack>
void unit_table(const MatView<i8, InPack>& in, const ConvGeometry& geo, int g, int cin,
                std::byte* mem) {
  static_assert(InPack == 16);
  const int units = cin / 16 * geo.kernel_w * geo.kernel_h;
  const UnitTable t = int8::detail::k_table_at(mem, units);
  for (int u = 0; u < units; ++u) {
    const int k = u * 16, tap = k / cin, c = g * cin + k % cin;
    t.dy[u] = (tap / geo.kernel_w) * geo.dilation_h;
    t.dx[u] = (tap % geo.kernel_w) * geo.dilation_w;
    t.plane[u] = std::size_t(c / 16) * in.cstep * 16;
    t.at[u] = std::ptrdiff_t(t.plane[u]) + (std::ptrdiff_t(t.dy[u]) * in.w + t.dx[u]) * 16;
  }
}

/// Gathers pixels n0 .. n0 + npix of a pack-16 input (whole packs per group) straight into the
/// int8 panel [pixel tile][k / 64][16][64], each byte as the products take it (x + 128), the pad
/// value outside the map, zeros past n_total and past K.
inline void gather_panel_int8(const MatView<i8, 16>& in, const int8::ConvWindow& win,
                              const UnitTable& t, std::size_t units, std::size_t kb_count,
                              std::size_t n0, int npix, std::size_t n_total, std::uint8_t* panel) {
  const ConvGeometry& geo = win.g;
  const std::size_t tile_bytes = kb_count * 1024;
  const __m128i flip = _mm_set1_epi8(char(0x80));
  const __m128i padv = _mm_set1_epi8(char(std::uint8_t(win.pad) ^ 0x80u));
  const int ext_w = (geo.kernel_w - 1) * geo.dilation_w,
            ext_h = (geo.kernel_h - 1) * geo.dilation_h;
  for (int p = 0; p < npix; ++p) {
    std::uint8_t* row =
        panel + std::size_t(p / kTileRows) * tile_bytes + std::size_t(p % kTileRows) * 64;
    auto unit = [&](std::size_t u) { return row + (u / 4) * 1024 + (u % 4) * 16; };
    const std::size_t n = n0 + std::size_t(p);
    if (n >= n_total) {
      for (std::size_t kb = 0; kb < kb_count; ++kb) std::memset(row + kb * 1024, 0, 64);
      continue;
    }
    const int iy0 = int(n / std::size_t(win.outw)) * geo.stride_h - win.pad_top;
    const int ix0 = int(n % std::size_t(win.outw)) * geo.stride_w - win.pad_left;
    if (iy0 >= 0 && iy0 + ext_h < in.h && ix0 >= 0 && ix0 + ext_w < in.w) {
      const i8* corner = in.data + (std::size_t(iy0) * std::size_t(in.w) + std::size_t(ix0)) * 16;
      for (std::size_t u = 0; u < units; ++u)
        _mm_storeu_si128(
            reinterpret_cast<__m128i*>(unit(u)),
            _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(corner + t.at[u])),
                          flip));
    } else {
      for (std::size_t u = 0; u < units; ++u) {
        const int iy = iy0 + t.dy[u], ix = ix0 + t.dx[u];
        __m128i v = padv;
        if (iy >= 0 && iy < in.h && ix >= 0 && ix < in.w)
          v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(
                                in.data + t.plane[u] +
                                (std::size_t(iy) * std::size_t(in.w) + std::size_t(ix)) * 16)),
                            flip);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(unit(u)), v);
      }
    }
    for (std::size_t u = units; u < kb_count * 4; ++u) std::memset(unit(u), 0, 16);
  }
}

/// One int8 step over k tile rows kb0 .. kb1: 32 pixels (A tiles a0, a0 + tile_bytes) by one or
/// two weight blocks (b0, b0 + bstride), sums parked at c as in step().
template <bool Two>
inline void step_int8(const std::uint8_t* a0, std::size_t tile_bytes, const std::int8_t* b0,
                      std::size_t bstride, std::size_t kb0, std::size_t kb1, bool first,
                      std::int32_t* c) {
  constexpr std::size_t kC = kTileRows * 16;
  const std::uint8_t* a1 = a0 + tile_bytes;
  if (first) {
    _tile_zero(0);
    _tile_zero(2);
    if constexpr (Two) {
      _tile_zero(1);
      _tile_zero(3);
    }
  } else {
    _tile_loadd(0, c, 64);
    _tile_loadd(2, c + 2 * kC, 64);
    if constexpr (Two) {
      _tile_loadd(1, c + kC, 64);
      _tile_loadd(3, c + 3 * kC, 64);
    }
  }
  for (std::size_t kb = kb0; kb < kb1; ++kb) {
    _tile_loadd(4, a0 + kb * 1024, 64);
    _tile_loadd(5, a1 + kb * 1024, 64);
    _tile_loadd(6, b0 + kb * 1024, 64);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(2, 5, 6);
    if constexpr (Two) {
      _tile_loadd(7, b0 + bstride + kb * 1024, 64);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(3, 5, 7);
    }
  }
  _tile_stored(0, c, 64);
  _tile_stored(2, c + 2 * kC, 64);
  if constexpr (Two) {
    _tile_stored(1, c + kC, 64);
    _tile_stored(3, c + 3 * kC, 64);
  }
}

}  // namespace detail

/// int8::conv_gemm on AMX tiles: the same weights (packed with k_unit 64), window, epilogue and
/// output; `workspace` conv_gemm_int8_workspace_bytes<InPack>(w, cin, num_threads) bytes, 8-byte
/// aligned. usable() must hold.
template <class TO, int InPack, int OutPack, class Act>
void conv_gemm_int8(const MatView<i8, InPack>& in, const MatView<TO, OutPack>& out,
                    const int8::PackedWeights& w, const int8::ConvWindow& win,
                    const int8::Epilogue& e, const Act& act, std::uint8_t* workspace,
                    int num_threads) {
  constexpr int NT = int8::kTileN;
  static_assert(kInt8PanelPixels % NT == 0 && kInt8PanelPixels % kStepPixels == 0);
  const int cin = w.k / (win.g.kernel_w * win.g.kernel_h);
  const std::size_t n_total = std::size_t(win.outw) * std::size_t(win.outh);
  const std::size_t npanels = (n_total + kInt8PanelPixels - 1) / kInt8PanelPixels;
  const int mblocks = w.m_pad / int8::kBlockM;
  const int mpairs = (mblocks + 1) / 2;
  const std::size_t kb_count = std::size_t(w.k4) / 16;
  const std::size_t tile_bytes = kb_count * 1024;               // one A tile: 16 pixels x K
  const std::size_t gather_bytes = std::size_t(w.k4) * NT * 4;  // gather_tile's 12 pixels
  const std::size_t bstride = std::size_t(w.k4) * 64;           // one weight block
  // The groups' gather tables, in the workspace after the threads' panels: unit tables for whole
  // packs of 16 channels per group (gathered straight into the panel, 16 bytes a unit), else k
  // tables where channels are not in whole packs of 4.
  constexpr bool kPack16 = InPack == 16;
  const bool by_unit = kPack16 && cin % 16 == 0;
  const bool by_value = !by_unit && int8::detail::needs_k_tables(InPack, cin);
  const int taps = win.g.kernel_w * win.g.kernel_h;
  const std::size_t table_bytes = by_unit    ? int8::detail::k_table_bytes(cin / 16 * taps)
                                  : by_value ? int8::detail::k_table_bytes(w.k)
                                             : 0;
  auto* table_mem =
      reinterpret_cast<std::byte*>(workspace + std::size_t(num_threads) * int8_workspace_bytes(w));
  for (int g = 0; g < w.groups && table_bytes > 0; ++g) {
    std::byte* mem = table_mem + std::size_t(g) * table_bytes;
    if constexpr (kPack16)
      if (by_unit) detail::unit_table(in, win.g, g, cin, mem);
    if (by_value) int8::detail::k_table(win.g, cin, InPack, in.cstep * InPack, g * cin, in.w, mem);
  }
  const int threads = kernels::detail::worth_threads(std::size_t(w.m) * std::size_t(w.k) * n_total *
                                                     std::size_t(w.groups) / 4)
                          ? num_threads
                          : 1;
  const std::size_t panel_items = npanels * std::size_t(w.groups);
  int mparts = 1;
  if (std::size_t(2 * threads) > panel_items)
    mparts = int(std::min<std::size_t>(std::size_t(mpairs),
                                       (std::size_t(2 * threads) + panel_items - 1) / panel_items));
  const std::size_t items = panel_items * std::size_t(mparts);
  const std::size_t per_thread = int8_workspace_bytes(w);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::uint8_t* panel = workspace + std::size_t(omp_get_thread_num()) * per_thread;
    std::uint8_t* gathered = panel + std::size_t(kInt8PanelPixels) * std::size_t(w.k4) * 4;
    auto* parked = reinterpret_cast<std::int32_t*>(
        (reinterpret_cast<std::uintptr_t>(gathered + gather_bytes) + 63) / 64 * 64);
    detail::configure();
#pragma omp for schedule(dynamic)
    for (std::size_t item = 0; item < items; ++item) {
      const int part = int(item % std::size_t(mparts));
      const std::size_t rest = item / std::size_t(mparts);
      const int g = int(rest % std::size_t(w.groups));
      const std::size_t n0 = rest / std::size_t(w.groups) * kInt8PanelPixels;
      const int steps = int(
          (std::min<std::size_t>(kInt8PanelPixels, n_total - n0) + kStepPixels - 1) / kStepPixels);
      std::byte* table = table_mem + std::size_t(g) * table_bytes;
      if constexpr (kPack16) {
        if (by_unit)
          detail::gather_panel_int8(in, win, int8::detail::k_table_at(table, cin / 16 * taps),
                                    std::size_t(cin / 16 * taps), kb_count, n0, steps * kStepPixels,
                                    n_total, panel);
      }
      // Other inputs: gathered 12 pixels at a time, each pixel's 16-byte units then moved to its
      // tile row.
      const int8::detail::KTable ktable =
          by_value ? int8::detail::k_table_at(table, w.k) : int8::detail::KTable{};
      for (int p0 = 0; !by_unit && p0 < steps * kStepPixels; p0 += NT) {
        int8::detail::gather_tile<InPack>(in, win, g, cin, w.k4, n0 + std::size_t(p0), n_total,
                                          ktable, gathered);
        for (int j = 0; j < NT && p0 + j < steps * kStepPixels; ++j) {
          const int p = p0 + j;
          std::uint8_t* row =
              panel + std::size_t(p / kTileRows) * tile_bytes + std::size_t(p % kTileRows) * 64;
          for (std::size_t u = 0; u < std::size_t(w.k4) / 4; ++u)
            std::memcpy(row + (u / 4) * 1024 + (u % 4) * 16,
                        gathered + (u * NT + std::size_t(j)) * 16, 16);
        }
      }
      const int p0 = mpairs * part / mparts, p1 = mpairs * (part + 1) / mparts;
      for (int pair = p0; pair < p1; ++pair) {
        const int mb = pair * 2;
        const bool two = mb + 1 < mblocks;
        const std::int8_t* b = w.block(g, mb);
        for (std::size_t kb0 = 0; kb0 < kb_count; kb0 += kKBlock) {
          const std::size_t kb1 = std::min(kb_count, kb0 + kKBlock);
          for (int s = 0; s < steps; ++s) {
            std::int32_t* c = parked + std::size_t(s) * 4 * kTileRows * 16;
            const std::uint8_t* a0 = panel + std::size_t(2 * s) * tile_bytes;
            if (two)
              detail::step_int8<true>(a0, tile_bytes, b, bstride, kb0, kb1, kb0 == 0, c);
            else
              detail::step_int8<false>(a0, tile_bytes, b, bstride, kb0, kb1, kb0 == 0, c);
            if (kb1 != kb_count) continue;
            const std::size_t ns = n0 + std::size_t(s) * kStepPixels;
            for (int half = 0; half < (two ? 2 : 1); ++half) {
              const int m0 = (mb + half) * int8::kBlockM;
              const int valid = std::min(int8::kBlockM, w.m - m0);
              const std::size_t slot = std::size_t(g) * std::size_t(w.m_pad) + std::size_t(m0);
              for (int t = 0; t < 2; ++t)
                for (int j = 0; j < kTileRows; ++j) {
                  const std::size_t n = ns + std::size_t(t * kTileRows + j);
                  if (n >= n_total) break;
                  int8::detail::store_block<TO, OutPack>(
                      out, c + (std::size_t(t * 2 + half) * kTileRows + std::size_t(j)) * 16,
                      g * w.m + m0, valid, n, e, slot, act);
                }
            }
          }
        }
      }
    }
    _tile_release();
  }
}
#else
template <class TO, int InPack, int OutPack, class Act>
void conv_gemm_int8(const MatView<i8, InPack>&, const MatView<TO, OutPack>&,
                    const int8::PackedWeights&, const int8::ConvWindow&, const int8::Epilogue&,
                    const Act&, std::uint8_t*, int) {
  static_assert(sizeof(TO) == 0,
                "amx::conv_gemm_int8 needs AMX-TILE and AMX-INT8 (kInt8Available)");
}
#endif

}  // namespace infer::kernels::amx
