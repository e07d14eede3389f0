// The fast GPU convolution: an implicit GEMM, on the tensor cores through cooperative matrices
// where the device has them and storage is f16 (shaders/conv_gemm_tc.comp, tiles of 32 x 64 per
// subgroup gathered im2col-wise; stride-1 windows of up to 9 taps from a shared input tile with
// its halo, shaders/conv_halo_tc.comp), with fp32 FMAs otherwise (shaders/conv_gemm.comp, 64 x 64
// tiles); bias, residual and activation in the epilogue. Its weights are laid out at load
// (conv_gemm_weights). And the matrix-vector product of InnerProduct over one sample
// (shaders/gemv.comp), weight-bandwidth bound.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <infer/vulkan/convolution.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/conv_gemm_f16.hpp>
#include <infer_shaders/conv_gemm_f32.hpp>
#include <infer_shaders/conv_gemm_reduce_f16.hpp>
#include <infer_shaders/conv_gemm_reduce_f32.hpp>
#include <infer_shaders/conv_gemm_tc_coopmat.hpp>
#include <infer_shaders/conv_halo_tc_coopmat.hpp>
#include <infer_shaders/gemv_f16.hpp>
#include <infer_shaders/gemv_f32.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::vk {

/// Which arithmetic the GEMM convolution uses: the device's best (cooperative matrices for f16
/// storage where the device has them, through the halo kernel where the layer fits it
/// (conv_halo_fits), else FMA), or one named (a test or benchmark comparing them; naming
/// cooperative matrices on a device without them, or the halo kernel for a layer it does not fit,
/// is an error). cooperative_matrix is the im2col kernel (shaders/conv_gemm_tc.comp),
/// cooperative_matrix_halo the halo kernel (shaders/conv_halo_tc.comp).
enum class GemmPath { best, fma, cooperative_matrix, cooperative_matrix_halo };

/// Whether a convolution with `in_per_group` input channels per group runs as a GEMM. With one
/// channel per group (depthwise) the reduction is the window alone: the direct kernel.
constexpr bool conv_uses_gemm(int in_per_group) { return in_per_group > 1; }

/// Whether a convolution layer of `in_c` input channels in `group` groups runs as a GEMM on 3-D
/// blobs: several channels per group, and not a small input (conv_small_input: its own kernel).
constexpr bool conv_runs_gemm(int in_c, int group, int kernel_w, int kernel_h) {
  return group >= 1 && in_c % group == 0 && conv_uses_gemm(in_c / group) &&
         !conv_small_input(in_c, group, kernel_w, kernel_h);
}

/// K of the GEMM padded to the kernel's step of 32.
constexpr int conv_gemm_k_pad(int k) { return (k + 31) / 32 * 32; }

/// Weights in ncnn's order [outc][in_per_group][kh][kw] laid out for conv_gemm.comp:
/// [outc][K_pad], k = (ky * kw + kx) * in_per_group + ic, zeros past K.
inline std::vector<float> conv_gemm_weights(std::span<const float> ncnn, int outc, int in_per_group,
                                            int kernel_h, int kernel_w) {
  const int taps = kernel_h * kernel_w, K = in_per_group * taps, K_pad = conv_gemm_k_pad(K);
  std::vector<float> out(std::size_t(outc) * std::size_t(K_pad), 0.f);
  if (ncnn.size() != std::size_t(outc) * std::size_t(K)) return {};
  for (int oc = 0; oc < outc; ++oc)
    for (int ic = 0; ic < in_per_group; ++ic)
      for (int t = 0; t < taps; ++t)
        out[std::size_t(oc) * std::size_t(K_pad) + std::size_t(t * in_per_group + ic)] =
            ncnn[(std::size_t(oc) * std::size_t(in_per_group) + std::size_t(ic)) *
                     std::size_t(taps) +
                 std::size_t(t)];
  return out;
}

/// The tensor-core kernel's workgroup: sg_m x sg_n subgroups (each 1, 2 or 4, at most 8 in all),
/// each computing wt_m x wt_n products of 16 x 16 (16 wt_m output channels x 16 wt_n pixels;
/// wt_m 1 or 2, wt_n 2 or 4), stepping through K by bk (32 or 64). The halo kernel reads sg_m
/// and sg_n only.
struct TcTile {
  int sg_m = 0, sg_n = 0;  ///< 0: conv_gemm_tc_tile's choice
  int bk = 0;              ///< 0: conv_gemm_tc_tile's choice
  int wt_m = 2, wt_n = 4;  ///< a subgroup's products (ignored where sg_m or sg_n is 0)

  constexpr int rows() const { return 16 * wt_m * sg_m; }    ///< output channels a workgroup
  constexpr int pixels() const { return 16 * wt_n * sg_n; }  ///< pixels a workgroup
};

/// The shared memory of a tensor-core tile, in bytes, as shaders/conv_gemm_tc.comp declares it:
/// the weight and input tiles (rows of bk / 8 16-byte units plus one of padding), whose memory
/// each subgroup's epilogue scratch (16 wt_n pixel columns of 16 f32 plus padding) reuses, and
/// the tile's bias in f32.
constexpr std::size_t conv_gemm_tc_shared_bytes(TcTile t) {
  const std::size_t tiles = std::size_t(t.rows() + t.pixels()) * std::size_t(t.bk / 8 + 1);
  const std::size_t scratch = std::size_t(t.sg_m * t.sg_n) * std::size_t(16 * t.wt_n) * 5;
  return (tiles > scratch ? tiles : scratch) * 16 + std::size_t(t.rows()) * 4;
}

/// Whether shaders/conv_gemm_tc.comp runs tile `t`: the shapes its doc names, and a step's weight
/// and input units (16 bytes, eight of k) shared out evenly, at least one an invocation.
constexpr bool conv_gemm_tc_tile_valid(TcTile t) {
  auto pow2 = [](int s) { return s == 1 || s == 2 || s == 4; };
  if (!pow2(t.sg_m) || !pow2(t.sg_n) || t.sg_m * t.sg_n > 8 || (t.bk != 32 && t.bk != 64) ||
      (t.wt_m != 1 && t.wt_m != 2) || (t.wt_n != 2 && t.wt_n != 4))
    return false;
  const int threads = 32 * t.sg_m * t.sg_n, units = t.bk / 8;
  return t.rows() * units % threads == 0 && t.rows() * units >= threads &&
         t.pixels() * units % threads == 0 && t.pixels() * units >= threads;
}

/// How the automatic tile choice treats small layers (conv_gemm_tc_tile): subgroups of wt_m x
/// wt_n products where a layer has fewer than `per_unit` subgroup tiles of 32 x 64 a compute
/// unit; wt_m 0 (the default): as the other layers.
struct TcSmallRule {
  int wt_m = 0, wt_n = 0, per_unit = 0;
};

/// The small-layer rule the automatic choice uses: none (TcSmallRule{}) unless
/// INFER_VULKAN_TC_SMALL names one, to compare rules on whole networks: "AxB" subgroups of A x B
/// products (A 1 or 2, B 2 or 4) below 4 subgroup tiles a unit, "AxB/P" below P; a value it
/// cannot read, or "0", leaves none. No rule is the default yet: one short H100 sitting timed
/// "1x2" 15-19% faster on MnasNet, MobileNetV2/V3 and 7% on EfficientNet-B0 (README, "The Vulkan
/// backend"), but the tests of every product shape and the other networks are still to run there.
inline TcSmallRule conv_gemm_tc_small_rule() {
  static const TcSmallRule rule = [] {
    const char* env = std::getenv("INFER_VULKAN_TC_SMALL");
    int a = 0, b = 0, p = 4;
    if (env && std::sscanf(env, "%dx%d/%d", &a, &b, &p) >= 2 && (a == 1 || a == 2) &&
        (b == 2 || b == 4) && p > 0)
      return TcSmallRule{a, b, p};
    return TcSmallRule{};
  }();
  return rule;
}

/// The tile for `groups` groups of M output channels over N pixels and K_pad = `k_pad` on a device
/// of `units` compute units (0: unknown, taken as 64) with `shared` bytes of shared memory a
/// workgroup: 4 x 1 subgroups (128 channels x 64 pixels) where the group has more than 64
/// channels, else 2 x 1; 2 x 1 too where 4 x 1 tiles alone would give every unit a workgroup
/// (then more, smaller workgroups even out the last wave); K steps by 32. Large products (at
/// least 256 channels, 784 pixels and 1152 of K: VGG's and wide ResNets' 3x3 layers at 28x28 and
/// above) take 4 x 2 subgroups stepping by 64, twice the products per value loaded. Smaller tiles
/// where the shared memory is short.
/// On the H100/H200 (timings in benchmarks/bench_gpu_conv) a workgroup's time goes mostly to
/// gathering its input tile, which its invocations share: 128 invocations over 64 pixels beat
/// smaller tiles on the layers measured, and wider ones (more pixels) except on large products
/// (4 x 2 stepping by 64: 57-60 us against 85-89 on VGG's 3x3 layer of 256 channels at 56x56,
/// but 17 against 14 us on ResNet-50's at 14x14); rows past M cost less than the gather they save.
/// Filling the device is otherwise left to splitting K (conv_gemm_splits).
/// Small layers (`small`: fewer than small.per_unit subgroup tiles of 32 x 64 a compute unit) take
/// subgroups of small.wt_m x small.wt_n products instead, as many down M as cover it (at most 4)
/// and then across N up to 4 in all: fewer products in sequence on each subgroup and more
/// subgroups over the same output. On an H100 a small layer's time was mostly the tile's fixed
/// path (bench_gpu_conv: MnasNet's 1x1 layers 6.5-9.4 us on any 2 x 4-product tile, a step's
/// floor 2-2.6 us); with 1 x 2 products MnasNet's forward went from 0.45 to 0.37 ms.
constexpr TcTile conv_gemm_tc_tile(int M, std::size_t N, int k_pad, int groups, std::uint32_t units,
                                   std::uint32_t shared, TcSmallRule small = {}) {
  constexpr TcTile large{4, 2, 64};
  if (M >= 256 && N >= 784 && k_pad >= 1152 && conv_gemm_tc_shared_bytes(large) <= shared)
    return large;
  const std::size_t u = units ? units : 64;
  const std::size_t subgroup_tiles =
      (std::size_t(M) + 31) / 32 * ((N + 63) / 64) * std::size_t(groups);
  if (small.wt_m > 0 && subgroup_tiles < std::size_t(small.per_unit) * u) {
    // Subgroups down M until they cover it (at most 4), then across N up to 4 subgroups in all.
    TcTile s{1, 1, 32, small.wt_m, small.wt_n};
    while (s.sg_m < 4 && s.rows() < M) s.sg_m *= 2;
    while (s.sg_m * s.sg_n < 4 && conv_gemm_tc_tile_valid({s.sg_m, 2 * s.sg_n, 32, s.wt_m, s.wt_n}))
      s.sg_n *= 2;
    if (conv_gemm_tc_tile_valid(s) && conv_gemm_tc_shared_bytes(s) <= shared) return s;
  }
  TcTile t{M > 64 ? 4 : 2, 1, 32};
  const std::size_t tiles4 = (std::size_t(M) + 127) / 128 * ((N + 63) / 64) * std::size_t(groups);
  if (tiles4 >= u) t.sg_m = 2;
  while (t.sg_m > 1 && conv_gemm_tc_shared_bytes(t) > shared) t.sg_m /= 2;
  return t;
}

/// Whether the tensor-core halo kernel (shaders/conv_halo_tc.comp) takes a convolution of
/// `in_per_group` input channels a group at input pack `in_pack`: strides 1, a window of 2 to 9
/// taps (its weights for a chunk of 16 channels, every tap, share 48 KB with the input tile),
/// pack-4 input of a multiple of 8 channels a group (a 16-byte unit is eight channels of a pixel,
/// and a tap's eight channels one aligned unit of the weights).
constexpr bool conv_halo_fits(const ConvolutionParams& cp, int in_per_group, int in_pack) {
  const int taps = cp.kernel_w * cp.kernel_h;
  return cp.stride_w == 1 && cp.stride_h == 1 && taps >= 2 && taps <= 9 && in_pack == 4 &&
         in_per_group % 8 == 0 && in_per_group > 0;
}

/// Whether the automatic choice takes the halo kernel for a layer it fits: at least 256 input
/// channels a group, an output at least 12 columns wide, and a product of at least 2^28
/// multiply-adds a group (M x N x K). Measured on an H100 (bench_gpu_conv and whole networks,
/// 2026-12-06): the halo kernel ran VGG-16's 3x3 layers of 256 and 512 channels 1.3-1.5x faster
/// than the im2col kernel (256 at 56x56 37 against 54 us, 512 at 28x28 39 against 52, 512 at
/// 14x14 14 against 22), those of 64 and 128 channels at 224x224 and 112x112 slower (60 against
/// 53, 47 against 41: a group's few chunks of 16 channels leave each workgroup a short loop of
/// steps), and ResNet-50's 3x3 layers, products of 1.2e8 multiply-adds that take 12-13 us on
/// either kernel (their fixed path, not their products), within 8% either way, the im2col kernel
/// ahead on the whole network (ResNet-50 0.825 against 0.837 ms, ResNet-18 0.393 against 0.401).
/// Its tiles are 16 columns wide, so a map of 7 columns would leave more than half of each
/// product unused.
constexpr bool conv_halo_preferred(int in_per_group, int outw, double mults) {
  return in_per_group >= 256 && outw >= 12 && mults >= double(1 << 28);
}

/// The shared memory of a halo tile (sg_m x sg_n subgroups; bk unused) for window `cp`, in bytes,
/// as shaders/conv_halo_tc.comp declares it: the weights of a chunk for every tap and the input
/// tile with its halo (rows of two 16-byte units plus one of padding), whose memory the epilogue's
/// scratch reuses, and the tile's bias in f32.
constexpr std::size_t conv_halo_shared_bytes(TcTile t, const ConvolutionParams& cp) {
  const std::size_t taps = std::size_t(cp.kernel_w * cp.kernel_h);
  const std::size_t rows = std::size_t(4 * t.sg_n + (cp.kernel_h - 1) * cp.dilation_h);
  const std::size_t cols = std::size_t(16 + (cp.kernel_w - 1) * cp.dilation_w);
  const std::size_t tiles = (taps * std::size_t(32 * t.sg_m) + rows * cols) * 3;
  const std::size_t scratch = std::size_t(t.sg_m * t.sg_n) * 64 * 5;
  return (tiles > scratch ? tiles : scratch) * 16 + std::size_t(32 * t.sg_m) * 4;
}

/// The halo kernel's tile for M output channels a group over an output of `outh` rows: 2 x 4
/// subgroups (64 channels x 16 rows of 16 pixels), 1 x ... where M is at most 32, fewer rows where
/// the map has fewer, smaller tiles where the shared memory is short (sg_n 0: none fits).
constexpr TcTile conv_halo_tile(int M, int outh, const ConvolutionParams& cp,
                                std::uint32_t shared) {
  TcTile t{M > 32 ? 2 : 1, outh > 8 ? 4 : outh > 4 ? 2 : 1, 0};
  while (conv_halo_shared_bytes(t, cp) > shared && (t.sg_n > 1 || t.sg_m > 1)) {
    if (t.sg_n > 1)
      t.sg_n /= 2;
    else
      t.sg_m /= 2;
  }
  if (conv_halo_shared_bytes(t, cp) > shared) t.sg_n = 0;
  return t;
}

/// Where the automatic choice takes the halo kernel, from INFER_VULKAN_HALO in the environment
/// (to compare the kernels on whole networks): "0" nowhere (every convolution on the im2col
/// kernel), "all" wherever it fits, anything else or unset where conv_halo_preferred says.
enum class HaloUse { never, preferred, all };
inline HaloUse conv_halo_use() {
  static const HaloUse use = [] {
    const char* env = std::getenv("INFER_VULKAN_HALO");
    const std::string_view v = env ? env : "";
    return v == "0" ? HaloUse::never : v == "all" ? HaloUse::all : HaloUse::preferred;
  }();
  return use;
}

/// How many parts K is split into when a convolution's output has `tiles` workgroup tiles (all
/// groups) and K_pad = `k_pad`, on a device of `units` compute units (0: unknown, taken as 64).
/// Tensor-core tiles (`coop`): enough workgroups for about one and a half on each unit, each part
/// at least 64 of K (two steps); on the FMA kernel, four on each unit, each part at least 128 of
/// K. A workgroup's loads wait on memory with little arithmetic between them and only other
/// workgroups hide that wait; 1 where the tiles alone are enough.
constexpr int conv_gemm_splits(std::size_t tiles, int k_pad, std::uint32_t units,
                               bool coop = false) {
  const std::size_t u = units ? units : 64;
  const std::size_t target = coop ? u + u / 2 : 4 * u;
  if (tiles == 0 || tiles >= target) return 1;
  const int want = int((target + tiles - 1) / tiles);
  const int most = k_pad / (coop ? 64 : 128);
  return std::max(1, std::min(want, most));
}

/// Records top = act(conv(gate(bottom), weights) + bias + residual) as an implicit GEMM. Blobs
/// 3-D, of one storage type, packs 1 or 4; `weights` laid out by conv_gemm_weights; `bias` may be
/// null, so may cp.residual and cp.gate (gate(x)[c] = cp.gate_act(x[c] * gate[c]), the pad value
/// not gated). `path` picks the arithmetic; `splits` how many parts K is summed in (0:
/// conv_gemm_splits; above 1 the partial sums go through the recorder's scratch memory and a
/// second kernel adds them up); `tile` the tensor-core workgroup (a benchmark comparing them).
/// Mismatches are errors naming them.
inline Status record_conv_gemm(Recorder& rec, const VkMat& bottom, const VkMat& top,
                               const VkMat& weights, const VkMat* bias, const ConvolutionParams& cp,
                               GemmPath path = GemmPath::best, int splits = 0, TcTile tile = {}) {
  const Shape& in = bottom.shape();
  const Shape& out = top.shape();
  if (in.dims != 3 || out.dims != 3)
    return make_error("Vulkan GEMM convolution: blobs must be 3-D, got {}-D input and {}-D output",
                      in.dims, out.dims);
  INFER_TRY(detail::check_conv(rec, bottom, top, weights, bias, cp, in.c, out.c,
                               "Vulkan GEMM convolution"));
  const int K = in.c / cp.group * cp.kernel_h * cp.kernel_w, K_pad = conv_gemm_k_pad(K);
  if (weights.shape().total() != std::size_t(out.c) * std::size_t(K_pad))
    return make_error(
        "Vulkan GEMM convolution: {} weights, expected {} ({} outputs x K {} padded "
        "to {}; lay them out with conv_gemm_weights)",
        weights.shape().total(), std::size_t(out.c) * std::size_t(K_pad), out.c, K, K_pad);
  if (bias && bias->shape().total() != std::size_t(out.c))
    return make_error("Vulkan GEMM convolution: {} bias values for {} output channels",
                      bias->shape().total(), out.c);
  const bool f16 = bottom.type() == ElemType::f16;
  bool coop = false;
  switch (path) {
    case GemmPath::best:
      coop = f16 && rec.cooperative_matrix();
      break;
    case GemmPath::fma:
      break;
    case GemmPath::cooperative_matrix:
    case GemmPath::cooperative_matrix_halo:
      if (!f16 || !rec.cooperative_matrix())
        return make_error(
            "Vulkan GEMM convolution: cooperative matrices asked for, {} (storage "
            "{}, device {})",
            !f16 ? "which take f16 storage" : "which the device does not offer",
            to_string(bottom.type()), rec.device_name());
      coop = true;
      break;
  }
  const int M = out.c / cp.group, cin = in.c / cp.group;
  const std::size_t pixels = std::size_t(out.w) * std::size_t(out.h);
  const bool halo_fits = conv_halo_fits(cp, cin, bottom.elempack());
  if (path == GemmPath::cooperative_matrix_halo && !halo_fits)
    return make_error(
        "Vulkan GEMM convolution: the halo kernel asked for, which takes strides 1, 2 to 9 taps "
        "and pack-4 input of a multiple of 8 channels a group (got stride {}x{}, {}x{} window, "
        "input pack {}, {} channels a group)",
        cp.stride_w, cp.stride_h, cp.kernel_w, cp.kernel_h, bottom.elempack(), cin);
  bool halo = path == GemmPath::cooperative_matrix_halo;
  if (path == GemmPath::best && coop && halo_fits &&
      conv_halo_tile(M, out.h, cp, rec.max_shared_memory()).sg_n > 0) {
    const HaloUse use = conv_halo_use();
    const double mults = double(M) * double(pixels) * double(K);
    halo = use == HaloUse::all ||
           (use == HaloUse::preferred && conv_halo_preferred(cin, out.w, mults));
  }
  if (halo) {
    const TcTile chosen = conv_halo_tile(M, out.h, cp, rec.max_shared_memory());
    if (tile.sg_m == 0 || tile.sg_n == 0) tile = chosen;
    tile.bk = 16;
    if ((tile.sg_m != 1 && tile.sg_m != 2) || (tile.sg_n != 1 && tile.sg_n != 2 && tile.sg_n != 4))
      return make_error(
          "Vulkan GEMM convolution: a halo tile of {} x {} subgroups (1 or 2 by 1, 2 or 4)",
          tile.sg_m, tile.sg_n);
    if (conv_halo_shared_bytes(tile, cp) > rec.max_shared_memory())
      return make_error(
          "Vulkan GEMM convolution: a halo tile of {} x {} subgroups for a {}x{} window "
          "dilated {}x{} needs {} bytes of shared memory, {} has {}",
          tile.sg_m, tile.sg_n, cp.kernel_w, cp.kernel_h, cp.dilation_w, cp.dilation_h,
          conv_halo_shared_bytes(tile, cp), rec.device_name(), rec.max_shared_memory());
  } else if (coop) {
    const TcTile chosen = conv_gemm_tc_tile(M, pixels, K_pad, cp.group, rec.compute_units(),
                                            rec.max_shared_memory(), conv_gemm_tc_small_rule());
    if (tile.sg_m == 0 || tile.sg_n == 0)
      tile.sg_m = chosen.sg_m, tile.sg_n = chosen.sg_n, tile.wt_m = chosen.wt_m,
      tile.wt_n = chosen.wt_n;
    if (tile.bk == 0) tile.bk = chosen.bk;
    if (!conv_gemm_tc_tile_valid(tile))
      return make_error(
          "Vulkan GEMM convolution: a tensor-core tile of {} x {} subgroups of {} x {} products "
          "stepping by {} (subgroups 1, 2 or 4 a side, at most 8; products 1 or 2 by 2 or 4; "
          "step 32 or 64; a step's weight and input units a whole number an invocation)",
          tile.sg_m, tile.sg_n, tile.wt_m, tile.wt_n, tile.bk);
    if (conv_gemm_tc_shared_bytes(tile) > rec.max_shared_memory())
      return make_error(
          "Vulkan GEMM convolution: a tensor-core tile of {} x {} subgroups of {} x {} products "
          "stepping by {} needs {} bytes of shared memory, {} has {}",
          tile.sg_m, tile.sg_n, tile.wt_m, tile.wt_n, tile.bk, conv_gemm_tc_shared_bytes(tile),
          rec.device_name(), rec.max_shared_memory());
  }
  // The halo kernel's subgroups are 32 channels x 64 pixels (its tiles' shape is below).
  const std::size_t tile_m = !coop ? 64 : halo ? std::size_t(32 * tile.sg_m) : std::size_t(tile.rows());
  const std::size_t tile_n = !coop ? 64 : halo ? std::size_t(64 * tile.sg_n) : std::size_t(tile.pixels());
  const std::size_t m_tiles = (std::size_t(M) + tile_m - 1) / tile_m;
  // The halo kernel's tiles are blocks of 16 columns x 4 sg_n rows, numbered along the rows.
  const std::size_t n_tiles = halo ? std::size_t((out.w + 15) / 16) *
                                         std::size_t((out.h + 4 * tile.sg_n - 1) / (4 * tile.sg_n))
                                   : (pixels + tile_n - 1) / tile_n;
  if (n_tiles > 65535 || m_tiles > 65535 || cp.group > 65535)
    return make_error(
        "Vulkan GEMM convolution: {} pixels, {} channels per group and {} groups "
        "exceed the dispatch limits (65535 tiles of {} x {} a dimension)",
        pixels, M, cp.group, tile_m, tile_n);
  const std::size_t tiles = n_tiles * m_tiles * std::size_t(cp.group);
  // The halo kernel splits the channels (chunks of 16, each part at least two), the im2col
  // kernels K (each part a whole number of their steps).
  const int chunks = (cin + 15) / 16;
  if (splits <= 0)
    splits = halo ? conv_gemm_splits(tiles, chunks * 32, rec.compute_units(), true)
                  : conv_gemm_splits(tiles, K_pad, rec.compute_units(), coop);
  int k_split = 0;
  if (halo) {
    k_split = (chunks + splits - 1) / splits * 16;
    splits = (cin + k_split - 1) / k_split;
  } else {
    const int step = coop ? tile.bk : 32;
    k_split = ((K_pad + step - 1) / step + splits - 1) / splits * step;
    splits = (K_pad + k_split - 1) / k_split;
  }
  if (std::size_t(splits) * std::size_t(cp.group) > 65535)
    return make_error("Vulkan GEMM convolution: {} splits of {} groups exceed the dispatch limit",
                      splits, cp.group);
  if (splits > 1 && out.c > 65535)
    return make_error("Vulkan GEMM convolution: {} output channels, at most 65535 when K is split",
                      out.c);
  VkMat partial;
  if (splits > 1) {
    auto s = rec.scratch(std::size_t(splits) * std::size_t(out.c) * pixels * 4);
    INFER_TRY(s);
    partial = *s;
    INFER_TRY(rec.barrier());  // earlier users of the scratch memory are done with it
  }
  const ShaderCode code{halo   ? "conv_halo_tc.comp (cooperative matrix)"
                        : coop ? "conv_gemm_tc.comp (cooperative matrix)"
                        : f16  ? "conv_gemm.comp (f16)"
                               : "conv_gemm.comp (f32)",
                        halo   ? std::span<const std::uint32_t>(shaders::conv_halo_tc_coopmat)
                        : coop ? std::span<const std::uint32_t>(shaders::conv_gemm_tc_coopmat)
                        : f16  ? std::span<const std::uint32_t>(shaders::conv_gemm_f16)
                               : std::span<const std::uint32_t>(shaders::conv_gemm_f32),
                        7, 14 * 4};
  const auto [res_pack, res_cstep] = detail::residual_layout(cp);
  std::array<SpecValue, 26> spec{};
  const auto shared = detail::conv_spec(cp, bottom.elempack(), top.elempack(), bias != nullptr);
  std::copy(shared.begin(), shared.end(), spec.begin());
  // The split kernel stores partial sums; the residual comes in at the reduction then.
  spec[14] = SpecValue::of(17, splits > 1 ? 1 : 0);
  spec[15] = SpecValue::of(18, splits > 1 ? 0 : res_pack);
  // Which gather the kernels compile (four channels of a pixel at once, or value by value): a
  // constant, so that a pipeline holds one (the other's registers cost it occupancy).
  spec[16] = SpecValue::of(22, bottom.elempack() == 4 && (in.c / cp.group) % 4 == 0 ? 1 : 0);
  // A fused gate scales the input as it is gathered, then the multiply's activation.
  spec[17] = SpecValue::of(23, cp.gate ? 1 : 0);
  spec[18] = SpecValue::of(24, cp.gate ? int(cp.gate_act.kind) : 0);
  spec[19] = SpecValue::of(25, cp.gate_act.p0);
  spec[20] = SpecValue::of(26, cp.gate_act.p1);
  spec[21] = SpecValue::of(19, coop ? tile.sg_m : 1);
  spec[22] = SpecValue::of(20, coop ? tile.sg_n : 1);
  spec[23] = SpecValue::of(21, coop ? tile.bk : 32);
  spec[24] = SpecValue::of(27, coop ? tile.wt_m : 2);
  spec[25] = SpecValue::of(28, coop ? tile.wt_n : 4);
  const std::int32_t push[14] = {in.w,        in.h,       in.c,  std::int32_t(bottom.cstep()),
                                 out.w,       out.h,      out.c, std::int32_t(top.cstep()),
                                 cp.pad_left, cp.pad_top, K,     K_pad,
                                 k_split,     res_cstep};
  const VkMat* none = &weights;  // bindings without a blob name one, unread
  const VkMat* blobs[] = {&bottom,
                          &top,
                          &weights,
                          bias ? bias : none,
                          splits > 1 ? &partial : none,
                          cp.residual ? cp.residual : none,
                          cp.gate ? cp.gate : none};
  const std::uint32_t threads = coop ? std::uint32_t(32 * tile.sg_m * tile.sg_n) : 128u;
  INFER_TRY(rec.dispatch(
      code, {threads, 1, 1}, std::span<const SpecValue>(spec.data(), coop ? (halo ? 24 : 26) : 21), blobs,
      std::as_bytes(std::span(push)),
      {std::uint32_t(n_tiles), std::uint32_t(m_tiles), std::uint32_t(cp.group * splits)}));
  if (splits == 1) return {};
  INFER_TRY(rec.barrier());
  const ShaderCode reduce{f16 ? "conv_gemm_reduce.comp (f16)" : "conv_gemm_reduce.comp (f32)",
                          f16 ? std::span<const std::uint32_t>(shaders::conv_gemm_reduce_f16)
                              : std::span<const std::uint32_t>(shaders::conv_gemm_reduce_f32),
                          4, 5 * 4};
  const SpecValue rspec[] = {SpecValue::of(3, top.elempack()),   SpecValue::of(4, bias ? 1 : 0),
                             SpecValue::of(5, int(cp.act.kind)), SpecValue::of(6, cp.act.p0),
                             SpecValue::of(7, cp.act.p1),        SpecValue::of(8, res_pack)};
  const std::int32_t rpush[5] = {out.c, std::int32_t(pixels), splits, std::int32_t(top.cstep()),
                                 res_cstep};
  const VkMat* rblobs[] = {&partial, &top, bias ? bias : &partial,
                           cp.residual ? cp.residual : &partial};
  return rec.dispatch(reduce, {64, 1, 1}, rspec, rblobs, std::as_bytes(std::span(rpush)),
                      {std::uint32_t((pixels + 63) / 64), std::uint32_t(out.c), 1u});
}

/// Records top[o] = act(bias[o] + sum_k weights[o][k] * x[k]) for InnerProduct over one sample:
/// x the input (1-D, or 3-D read in ncnn's channel-row-column order), top 1-D of `outputs`,
/// weights [outputs][K] in ncnn's order. With f16 weights (and bias) the input and the output
/// may each be f32 or f16 (a squeeze-excitation block keeps its vectors in f32); with f32
/// weights everything is f32.
inline Status record_gemv(Recorder& rec, const VkMat& bottom, const VkMat& top,
                          const VkMat& weights, const VkMat* bias, const GpuActivation& act) {
  const Shape& in = bottom.shape();
  if ((in.dims != 1 && in.dims != 3) || top.shape().dims != 1)
    return make_error(
        "Vulkan inner product: a 1-D or 3-D input and a 1-D output, got {}-D and {}-D", in.dims,
        top.shape().dims);
  const bool f16 = weights.type() == ElemType::f16;
  if (bias && bias->type() != weights.type())
    return make_error("Vulkan inner product: weights {} and bias {} differ",
                      to_string(weights.type()), to_string(bias->type()));
  for (const VkMat* m : {&bottom, &top})
    if (m->type() != ElemType::f32 && m->type() != weights.type())
      return make_error("Vulkan inner product: {} {} with {} weights (f32, or the weights' type)",
                        m == &bottom ? "input" : "output", to_string(m->type()),
                        to_string(weights.type()));
  for (const VkMat* m : {&bottom, &top, &weights})
    INFER_TRY(check_blob(rec, *m, "Vulkan inner product"));
  const std::size_t K = in.total(), outputs = std::size_t(top.shape().w);
  if (weights.shape().total() != K * outputs)
    return make_error("Vulkan inner product: {} weights, expected {} ({} outputs x {} inputs)",
                      weights.shape().total(), K * outputs, outputs, K);
  if (bias && bias->shape().total() != outputs)
    return make_error("Vulkan inner product: {} bias values for {} outputs", bias->shape().total(),
                      outputs);
  const ShaderCode code{f16 ? "gemv.comp (f16)" : "gemv.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::gemv_f16)
                            : std::span<const std::uint32_t>(shaders::gemv_f32),
                        4, 5 * 4};
  const SpecValue spec[] = {SpecValue::of(3, bottom.elempack()),
                            SpecValue::of(4, bias ? 1 : 0),
                            SpecValue::of(5, int(act.kind)),
                            SpecValue::of(6, act.p0),
                            SpecValue::of(7, act.p1),
                            SpecValue::of(8, f16 && bottom.type() == ElemType::f32 ? 1 : 0),
                            SpecValue::of(9, f16 && top.type() == ElemType::f32 ? 1 : 0)};
  const bool flat = in.dims == 1;
  const std::int32_t push[5] = {flat ? 1 : in.w, flat ? 1 : in.h,
                                flat ? 1 : std::int32_t(bottom.cstep()), std::int32_t(K),
                                std::int32_t(outputs)};
  const VkMat* blobs[] = {&bottom, &top, &weights, bias ? bias : &weights};
  return rec.dispatch(code, {32, 8, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(outputs, 8));
}

}  // namespace infer::vk
