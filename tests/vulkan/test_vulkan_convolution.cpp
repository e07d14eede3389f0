// The GPU convolution kernels against a scalar definition (sums in double over the values as
// stored): the direct kernel and the implicit GEMM (its FMA path everywhere, its cooperative-matrix
// path where the device has one) on 1x1, 3x3 padded, strided, dilated, 5x5 and 7x7 windows,
// grouped and depthwise, inputs of 1 to 4 channels (their own direct kernel), odd channel counts
// and sizes, several 64 x 64 tiles with partial edges,
// with and without bias, fused activations, a fused residual sum at either pack, every pair of
// input and output packs (1, 4) they read, f32 and f16 storage, and on the tensor cores every
// workgroup tile; then their errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/conv_gemm.hpp>
#include <infer/vulkan/convolution.hpp>
#include <utility>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::test::RefTensor;
using infer::vk::Activation;
using infer::vk::ConvolutionParams;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;

namespace {

struct Case {
  int c, outc, w, h;
  ConvolutionParams p;
  bool bias = true;
};

/// The output extent along one axis: taps that start inside the padded input.
int out_extent(int in, int kernel, int dilation, int stride, int pad_begin, int pad_end) {
  return (in + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) / stride + 1;
}

float activate(const infer::vk::GpuActivation& a, double x) {
  const float p0 = a.p0, p1 = a.p1;
  switch (a.kind) {
    case Activation::relu:
    case Activation::leaky_relu:
      return float(x > 0 ? x : x * p0);
    case Activation::clip:
      return float(std::min(std::max(x, double(p0)), double(p1)));
    case Activation::hardswish:
      return float(x * std::min(std::max(x * p0 + p1, 0.0), 1.0));
    case Activation::sigmoid:
      return float(1 / (1 + std::exp(-x)));
    default:
      return float(x);
  }
}

RefTensor reference(const RefTensor& in, const std::vector<float>& weights,
                    const std::vector<float>& bias, int outc, int outw, int outh,
                    const ConvolutionParams& p, const RefTensor* residual = nullptr) {
  RefTensor out(Shape::of(outw, outh, outc));
  const int per_in = in.shape.c / p.group, per_out = outc / p.group;
  for (int oc = 0; oc < outc; ++oc)
    for (int y = 0; y < outh; ++y)
      for (int x = 0; x < outw; ++x) {
        double sum = bias.empty() ? 0.0 : bias[std::size_t(oc)];
        for (int k = 0; k < per_in; ++k) {
          const int ic = (oc / per_out) * per_in + k;
          for (int ky = 0; ky < p.kernel_h; ++ky)
            for (int kx = 0; kx < p.kernel_w; ++kx) {
              const int ix = x * p.stride_w - p.pad_left + kx * p.dilation_w;
              const int iy = y * p.stride_h - p.pad_top + ky * p.dilation_h;
              const std::size_t wi =
                  ((std::size_t(oc) * per_in + k) * p.kernel_h + ky) * p.kernel_w + kx;
              const bool inside = ix >= 0 && iy >= 0 && ix < in.shape.w && iy < in.shape.h;
              sum += (inside ? double(in.at(ix, iy, 0, ic)) : double(p.pad_value)) * weights[wi];
            }
        }
        if (residual) sum += double(residual->at(x, y, 0, oc));
        out.at(x, y, 0, oc) = activate(p.act, sum);
      }
  return out;
}

/// Values rounded as `type` stores them.
std::vector<float> stored(const std::vector<float>& v, ElemType type) {
  if (type == ElemType::f32) return v;
  std::vector<float> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = infer::f16_to_f32(infer::f32_to_f16(v[i]));
  return r;
}

/// Runs one case on the device at (type, in_pack, out_pack); returns the output as f32.
/// Which kernel runs a case: the direct one, or the GEMM on one of its paths.
/// The GEMM kernels split K where the output has few tiles (gemm_*), or not at all (*_whole).
/// gemm_halo*: the tensor-core halo kernel (strides 1, pack-4 input of a multiple of 8 channels a
/// group).
enum class Kernel {
  direct,
  gemm_fma,
  gemm_coopmat,
  gemm_fma_whole,
  gemm_coopmat_whole,
  gemm_halo,
  gemm_halo_whole
};

/// Whether `kernel` is one of the halo kernel's runs.
bool is_halo(Kernel kernel) {
  return kernel == Kernel::gemm_halo || kernel == Kernel::gemm_halo_whole;
}

/// How a case runs: the kernel, its tensor-core tile (0 x 0: the automatic one), and a residual
/// added before the activation (null: none) at pack res_pack.
struct Run {
  Kernel kernel = Kernel::direct;
  infer::vk::TcTile tile;
  const RefTensor* residual = nullptr;
  int res_pack = 1;
};

/// A gate (a value per input channel) that multiplies the input as the GEMM gathers it, then
/// `act`; null values: none.
struct GateRun {
  const RefTensor* values = nullptr;
  infer::vk::GpuActivation act;
};

RefTensor run_gpu(const Case& k, const RefTensor& in, const std::vector<float>& weights,
                  const std::vector<float>& bias, int outw, int outh, ElemType type, int in_pack,
                  int out_pack, infer::vk::PipelineCache& cache, const Run& run,
                  const GateRun& gate_run = {}) {
  infer::vk::Context& ctx = *g_ctx;
  const Kernel kernel = run.kernel;
  const infer::Mat host_in = host_mat(in, type, in_pack);
  const infer::Mat host_r =
      run.residual ? host_mat(*run.residual, type, run.res_pack) : infer::Mat();
  const infer::Mat host_g =
      gate_run.values ? host_mat(*gate_run.values, type, 1) : infer::Mat();
  const std::vector<float> laid =
      kernel == Kernel::direct ? weights
                               : infer::vk::conv_gemm_weights(weights, k.outc, k.c / k.p.group,
                                                              k.p.kernel_h, k.p.kernel_w);
  RefTensor wt(Shape::of(int(laid.size()))), bt(Shape::of(std::max<int>(1, int(bias.size()))));
  wt.v = laid;
  if (!bias.empty()) bt.v = bias;
  const infer::Mat host_w = host_mat(wt, type, 1), host_b = host_mat(bt, type, 1);
  const Shape out_shape = Shape::of(outw, outh, k.outc);
  const std::size_t out_bytes = infer::packed_layout(out_shape, type, out_pack).bytes;
  const std::size_t total =
      host_in.bytes() + host_w.bytes() + host_b.bytes() + host_r.bytes() + host_g.bytes() +
      out_bytes + 1536;
  auto dev = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  std::size_t at = 0;
  auto place = [&](const Shape& s, int pack, std::size_t bytes) {
    const infer::vk::VkMat m(dev->get(), at, s, type, pack);
    at += (bytes + 255) / 256 * 256;
    return m;
  };
  const infer::vk::VkMat d_in = place(host_in.shape(), in_pack, host_in.bytes());
  const infer::vk::VkMat d_w = place(host_w.shape(), 1, host_w.bytes());
  const infer::vk::VkMat d_b = place(host_b.shape(), 1, host_b.bytes());
  const infer::vk::VkMat d_out = place(out_shape, out_pack, out_bytes);
  const infer::vk::VkMat d_r =
      run.residual ? place(host_r.shape(), run.res_pack, host_r.bytes()) : infer::vk::VkMat();
  const infer::vk::VkMat d_g =
      gate_run.values ? place(host_g.shape(), 1, host_g.bytes()) : infer::vk::VkMat();
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  std::size_t staged = 0;
  for (auto [h, d] : {std::pair{&host_in, &d_in}, std::pair{&host_w, &d_w},
                      std::pair{&host_b, &d_b}, std::pair{&host_r, &d_r},
                      std::pair{&host_g, &d_g}}) {
    if (h->empty()) continue;
    REQUIRE(infer::vk::upload(**cmd, *h, **staging, staged, *d).ok());
    staged += (h->bytes() + 255) / 256 * 256;
  }
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  ConvolutionParams p = k.p;
  if (run.residual) p.residual = &d_r;
  if (gate_run.values) {
    p.gate = &d_g;
    p.gate_act = gate_run.act;
  }
  const infer::Status rec =
      kernel == Kernel::direct
          ? infer::vk::record_convolution(recorder, d_in, d_out, d_w, k.bias ? &d_b : nullptr, p)
          : infer::vk::record_conv_gemm(
                recorder, d_in, d_out, d_w, k.bias ? &d_b : nullptr, p,
                kernel == Kernel::gemm_fma || kernel == Kernel::gemm_fma_whole
                    ? infer::vk::GemmPath::fma
                : is_halo(kernel) ? infer::vk::GemmPath::cooperative_matrix_halo
                                  : infer::vk::GemmPath::cooperative_matrix,
                kernel == Kernel::gemm_fma_whole || kernel == Kernel::gemm_coopmat_whole ||
                        kernel == Kernel::gemm_halo_whole
                    ? 1
                    : 0,
                run.tile);
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, d_out, **staging, 0).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, 0, d_out, out).ok());
  return infer::test::from_mat(out);
}

}  // namespace

TEST_CASE("Vulkan convolution matches the scalar definition", "[vulkan][convolution]") {
  auto conv = [](int kw, int kh, int dil, int stride, int pad, int group, Activation act = {},
                 float p0 = 0.f, float p1 = 0.f) {
    ConvolutionParams p;
    p.kernel_w = kw;
    p.kernel_h = kh;
    p.dilation_w = p.dilation_h = dil;
    p.stride_w = p.stride_h = stride;
    p.pad_left = p.pad_top = pad;
    p.group = group;
    p.act = {act, p0, p1};
    return p;
  };
  const Case cases[] = {
      {8, 12, 7, 5, conv(1, 1, 1, 1, 0, 1)},
      {4, 8, 9, 7, conv(3, 3, 1, 1, 1, 1, Activation::relu)},
      {3, 16, 11, 9, conv(3, 3, 1, 2, 1, 1, Activation::leaky_relu, 0.1f)},  // RGB first layer
      {8, 4, 12, 10, conv(3, 3, 2, 1, 2, 1, Activation::clip, -0.5f, 0.5f)},
      {5, 7, 9, 8, conv(5, 5, 1, 1, 2, 1), false},  // odd channels
      {4, 8, 15, 13, conv(7, 7, 1, 2, 3, 1, Activation::hardswish, 1.f / 6, 0.5f)},
      {8, 8, 10, 9, conv(3, 3, 1, 1, 1, 2)},                           // 2 groups
      {12, 12, 9, 9, conv(3, 3, 1, 2, 1, 12, Activation::sigmoid)},    // depthwise
      {8, 8, 10, 7, conv(5, 5, 2, 1, 4, 8, Activation::relu), false},  // depthwise, dilated
      {16, 8, 6, 5, conv(3, 1, 1, 1, 0, 4)},                           // 3x1, 4 groups
      // Several GEMM tiles: M 70 and N 143 (partial tiles on both), K 612 (many steps, padded;
      // split in 5 parts of 128 by the automatic choice).
      {68, 70, 13, 11, conv(3, 3, 1, 1, 1, 1, Activation::relu)},
      {96, 132, 9, 9, conv(1, 1, 1, 2, 0, 1)},                                // 1x1 stride 2
      {18, 30, 10, 7, conv(3, 3, 1, 1, 1, 3, Activation::leaky_relu, 0.2f)},  // 6 in per group
      {24, 24, 11, 10, conv(3, 3, 2, 1, 2, 3)},  // 8 per group, dilated
      // Inputs of at most 4 channels (conv_small_input.comp on the direct path): one channel,
      // 5 outputs (a partial row of 8); two channels, 37 outputs (two blocks of 32, the second
      // partial), 5x5 dilated; RGB over several tiles of 64 pixels with 64 outputs; 4 channels
      // 7x7 (K 196, the most it takes); 3 channels 9x9 (K 243: the other kernels).
      {1, 5, 9, 7, conv(3, 3, 1, 1, 1, 1, Activation::relu)},
      {2, 37, 13, 11, conv(5, 5, 2, 1, 3, 1, Activation::clip, -0.5f, 0.5f)},
      {3, 64, 37, 29, conv(3, 3, 1, 2, 1, 1, Activation::relu)},
      {4, 12, 17, 15, conv(7, 7, 1, 2, 3, 1), false},
      {3, 8, 12, 11, conv(9, 9, 1, 1, 4, 1)},
      // The tensor-core halo kernel's forms (strides 1, 2 to 9 taps, a multiple of 8 channels a
      // group): 40 channels (the last chunk of 16 half used), 70 outputs (two tiles of 64, the
      // second partial) over 37 x 19 (three tiles of 16 columns, the last partial, and two of 16
      // rows); 72 channels split in two parts; a 2x2 window without padding; a 1x3 column; 16 a
      // group in 2 groups dilated 2 with clipping.
      {40, 70, 37, 19, conv(3, 3, 1, 1, 1, 1, Activation::relu)},
      {72, 36, 20, 18, conv(3, 3, 1, 1, 1, 1, Activation::leaky_relu, 0.1f)},
      {16, 24, 17, 9, conv(2, 2, 1, 1, 0, 1)},
      {32, 16, 18, 14, conv(1, 3, 1, 1, 1, 1, Activation::relu)},
      {32, 32, 21, 12, conv(3, 3, 2, 1, 2, 2, Activation::clip, -0.5f, 0.5f)},
  };
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 1;
  int index = 0;
  for (const Case& k : cases) {
    const ConvolutionParams& p = k.p;
    const int pad_end = p.pad_left;  // symmetric padding in these cases
    const int outw = out_extent(k.w, p.kernel_w, p.dilation_w, p.stride_w, p.pad_left, pad_end);
    const int outh = out_extent(k.h, p.kernel_h, p.dilation_h, p.stride_h, p.pad_top, pad_end);
    const int per_in = k.c / p.group;
    // Every other case adds a residual, at pack 4 where the output channels allow it, else 1.
    const bool with_residual = index++ % 2 == 1;
    const int res_pack = k.outc % 4 == 0 && index % 4 == 0 ? 4 : 1;
    for (ElemType type : {ElemType::f32, ElemType::f16}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      const RefTensor raw = random_tensor(Shape::of(k.w, k.h, k.c), ++seed);
      RefTensor in(raw.shape);
      in.v = stored(raw.v, type);
      const std::vector<float> weights = stored(
          random_tensor(Shape::of(k.outc * per_in * p.kernel_w * p.kernel_h), ++seed, -0.5f, 0.5f)
              .v,
          type);
      const std::vector<float> bias =
          k.bias ? stored(random_tensor(Shape::of(k.outc), ++seed).v, type) : std::vector<float>{};
      RefTensor residual(Shape::of(outw, outh, k.outc));
      residual.v = stored(random_tensor(residual.shape, ++seed).v, type);
      const RefTensor* res = with_residual ? &residual : nullptr;
      const RefTensor want = reference(in, weights, bias, k.outc, outw, outh, p, res);
      std::vector<Run> runs = {{Kernel::direct, {}, res, res_pack}};
      if (infer::vk::conv_uses_gemm(per_in)) {
        runs.push_back({Kernel::gemm_fma, {}, res, res_pack});
        runs.push_back({Kernel::gemm_fma_whole, {}, res, res_pack});
        if (type == ElemType::f16 && g_ctx->info().cooperative_matrix) {
          runs.push_back({Kernel::gemm_coopmat, {}, res, res_pack});
          runs.push_back({Kernel::gemm_coopmat_whole, {}, res, res_pack});
          // Every tensor-core tile and K step on the case of several tiles (K split and whole)
          // and on the odd-channel one (whole): subgroups of 2 x 4 products at both K steps,
          // the smaller products at a step of 32 (each tile is a pipeline of its own, and
          // building hundreds of them outlasts a GPU machine's call).
          const bool multi_tile = k.outc == 70, odd = k.c == 5;
          const std::pair<int, int> products[] = {{2, 4}, {1, 4}, {2, 2}, {1, 2}};
          if (multi_tile || odd)
            for (const auto& [wt_m, wt_n] : products)
              for (int bk : {32, 64})
                for (int sg_m : {1, 2, 4})
                  for (int sg_n : {1, 2, 4})
                    if (const infer::vk::TcTile t{sg_m, sg_n, bk, wt_m, wt_n};
                        (bk == 32 || wt_m * wt_n == 8) && infer::vk::conv_gemm_tc_tile_valid(t) &&
                        infer::vk::conv_gemm_tc_shared_bytes(t) <=
                            g_ctx->info().max_shared_memory) {
                      if (multi_tile) runs.push_back({Kernel::gemm_coopmat, t, res, res_pack});
                      runs.push_back({Kernel::gemm_coopmat_whole, t, res, res_pack});
                    }
          if (infer::vk::conv_halo_fits(p, per_in, 4)) {
            runs.push_back({Kernel::gemm_halo, {}, res, res_pack});
            runs.push_back({Kernel::gemm_halo_whole, {}, res, res_pack});
            // Every halo tile on the case of several tiles, K split and whole.
            if (k.c == 40)
              for (int sg_m : {1, 2})
                for (int sg_n : {1, 2, 4})
                  if (const infer::vk::TcTile t{sg_m, sg_n, 16};
                      infer::vk::conv_halo_shared_bytes(t, p) <= g_ctx->info().max_shared_memory) {
                    runs.push_back({Kernel::gemm_halo, t, res, res_pack});
                    runs.push_back({Kernel::gemm_halo_whole, t, res, res_pack});
                  }
          }
        }
      }
      // On a CPU implementation (lavapipe in CI, where each pipeline is an LLVM compile of about
      // a second), a case runs half of its (input pack, output pack) pairs, alternating from case
      // to case and between the two types, so every pair of every kernel still runs on about
      // half the cases; a GPU runs every pair.
      const bool cpu_device = g_ctx->info().kind == "cpu";
      int pairs = 0;
      for (int in_pack : {1, 4})
        for (int out_pack : {1, 4}) pairs += k.c % in_pack == 0 && k.outc % out_pack == 0;
      for (const Run& run : runs)
        for (int in_pack : {1, 4})
          for (int out_pack : {1, 4}) {
            if (k.c % in_pack || k.outc % out_pack) continue;
            // The halo kernel takes pack-4 input; a chosen tile: the widest packs only.
            if (is_halo(run.kernel) && in_pack != 4) continue;
            if (run.tile.sg_m != 0 &&
                (in_pack != (k.c % 4 == 0 ? 4 : 1) || out_pack != (k.outc % 4 == 0 ? 4 : 1)))
              continue;
            const int pair = (in_pack / 4) * 2 + out_pack / 4;
            if (cpu_device && pairs > 1 && (pair + index + int(type)) % 2 != 0) continue;
            const RefTensor got =
                run_gpu(k, in, weights, bias, outw, outh, type, in_pack, out_pack, cache, run);
            REQUIRE(got.v.size() == want.v.size());
            // f32: sums in another order; f16: the output rounded to 11 bits (and, on the tensor
            // cores, products of f16 values summed in f32: the same inputs as the reference).
            const auto [bad, first] =
                infer::vk::test::mismatches(got.v, want.v, type == ElemType::f32 ? 1e-4f : 4e-3f);
            INFO(fmt::format(
                "{}x{} dil {} stride {} pad {} group {} act {} c {} -> {} ({}x{}), {} "
                "in pack {} out pack {}, kernel {} tile {}x{} step {}, residual {} "
                "(pack {}): {} wrong, first at {}: got {} want {}",
                p.kernel_w, p.kernel_h, p.dilation_w, p.stride_w, p.pad_left, p.group,
                int(p.act.kind), k.c, k.outc, outw, outh, infer::to_string(type), in_pack, out_pack,
                int(run.kernel), run.tile.sg_m, run.tile.sg_n, run.tile.bk, run.residual != nullptr,
                run.res_pack, bad, first, got.v[first], want.v[first]));
            CHECK(bad == 0);
          }
    }
  }
}

TEST_CASE("Vulkan GEMM convolution gathers its input through a fused gate",
          "[vulkan][convolution]") {
  // A squeeze-excitation multiply fused into the convolution reading it: the GEMM gathers
  // act(x[c] * gate[c]); taps outside the input read the pad value, ungated. 1x1 and 3x3
  // windows, a nonzero pad value, stride 2, groups (each group's channels at its offset of the
  // gate), odd channel counts (the value-by-value gather), a residual, the split and whole K, the
  // gate's activation none, ReLU or sigmoid; the FMA kernel everywhere, the tensor cores where
  // the device has them (their four-channel gather gates where the units reach shared memory).
  auto conv = [](int k, int stride, int pad, int group, float pad_value, Activation act = {}) {
    ConvolutionParams p;
    p.kernel_w = p.kernel_h = k;
    p.stride_w = p.stride_h = stride;
    p.pad_left = p.pad_top = pad;
    p.group = group;
    p.pad_value = pad_value;
    p.act = {act, 0.f, 0.f};
    return p;
  };
  struct GateCase {
    Case k;
    Activation gate_act;
    bool residual;
  };
  const GateCase cases[] = {
      {{72, 40, 9, 7, conv(1, 1, 0, 1, 0.f)}, Activation::relu, false},  // mobilenet_v3's form
      {{36, 20, 7, 6, conv(3, 1, 1, 1, 0.25f, Activation::relu)}, Activation::none, true},
      {{13, 24, 11, 5, conv(3, 2, 1, 1, -0.5f)}, Activation::sigmoid, false},  // odd channels
      {{24, 24, 11, 10, conv(3, 1, 1, 3, 0.f)}, Activation::relu, true},       // 8 a group
      {{96, 132, 9, 9, conv(1, 1, 0, 1, 0.f)}, Activation::none, true},        // split K
      // The halo kernel's: a nonzero pad value (ungated) at the halo's edges, 16 a group.
      {{32, 40, 19, 13, conv(3, 1, 1, 2, 0.5f)}, Activation::sigmoid, true},
  };
  infer::vk::PipelineCache cache(*g_ctx);
  const bool cpu_device = g_ctx->info().kind == "cpu";
  unsigned seed = 500;
  int index = 0;
  for (const GateCase& gc : cases) {
    const Case& k = gc.k;
    const ConvolutionParams& p = k.p;
    const int outw = out_extent(k.w, p.kernel_w, 1, p.stride_w, p.pad_left, p.pad_left);
    const int outh = out_extent(k.h, p.kernel_h, 1, p.stride_h, p.pad_top, p.pad_top);
    ++index;
    for (ElemType type : {ElemType::f32, ElemType::f16}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      RefTensor in = random_tensor(Shape::of(k.w, k.h, k.c), ++seed);
      in.v = stored(in.v, type);
      RefTensor gate = random_tensor(Shape::of(k.c), ++seed, -1.f, 1.f);
      gate.v = stored(gate.v, type);
      const std::vector<float> weights = stored(
          random_tensor(Shape::of(k.outc * (k.c / p.group) * p.kernel_w * p.kernel_h), ++seed,
                        -0.5f, 0.5f)
              .v,
          type);
      const std::vector<float> bias = stored(random_tensor(Shape::of(k.outc), ++seed).v, type);
      RefTensor residual(Shape::of(outw, outh, k.outc));
      residual.v = stored(random_tensor(residual.shape, ++seed).v, type);
      const RefTensor* res = gc.residual ? &residual : nullptr;
      const infer::vk::GpuActivation gate_act{gc.gate_act, 0.f, 0.f};
      // The reference convolves the gated input (the pad value stays as it is).
      RefTensor gated(in.shape);
      for (int c = 0; c < k.c; ++c)
        for (int y = 0; y < k.h; ++y)
          for (int x = 0; x < k.w; ++x)
            gated.at(x, y, 0, c) =
                activate(gate_act, double(in.at(x, y, 0, c)) * gate.v[std::size_t(c)]);
      const RefTensor want = reference(gated, weights, bias, k.outc, outw, outh, p, res);
      std::vector<Kernel> kernels = {Kernel::gemm_fma, Kernel::gemm_fma_whole};
      if (type == ElemType::f16 && g_ctx->info().cooperative_matrix)
        kernels.insert(kernels.end(), {Kernel::gemm_coopmat, Kernel::gemm_coopmat_whole});
      if (type == ElemType::f16 && g_ctx->info().cooperative_matrix &&
          infer::vk::conv_halo_fits(p, k.c / p.group, 4))
        kernels.insert(kernels.end(), {Kernel::gemm_halo, Kernel::gemm_halo_whole});
      int run_index = 0;
      for (Kernel kernel : kernels)
        for (int in_pack : {1, 4})
          for (int out_pack : {1, 4}) {
            if (k.c % in_pack || k.outc % out_pack) continue;
            if (is_halo(kernel) && in_pack != 4) continue;
            // On a CPU implementation (each pipeline an LLVM compile) a quarter of the runs,
            // rotating from case to case so that every kernel and pack pair still runs.
            if (cpu_device && (run_index++ + index) % 4 != 0) continue;
            const Run run{kernel, {}, res, k.outc % 4 == 0 ? 4 : 1};
            const RefTensor got = run_gpu(k, in, weights, bias, outw, outh, type, in_pack,
                                          out_pack, cache, run, GateRun{&gate, gate_act});
            REQUIRE(got.v.size() == want.v.size());
            // f16: the gated values are rounded to f16 before the tensor cores' products.
            const auto [bad, first] =
                infer::vk::test::mismatches(got.v, want.v, type == ElemType::f32 ? 1e-4f : 4e-3f);
            INFO(fmt::format("{}x{} stride {} pad {} ({}) group {} c {} -> {}, {} in pack {} out "
                             "pack {}, kernel {}, gate act {}, residual {}: {} wrong, first at "
                             "{}: got {} want {}",
                             p.kernel_w, p.kernel_h, p.stride_w, p.pad_left, p.pad_value, p.group,
                             k.c, k.outc, infer::to_string(type), in_pack, out_pack, int(kernel),
                             int(gc.gate_act), gc.residual, bad, first, got.v[first],
                             want.v[first]));
            CHECK(bad == 0);
          }
    }
  }
}

TEST_CASE("Inputs of at most 4 channels in one group run on their own kernel, others on the GEMM",
          "[vulkan][convolution]") {
  using infer::vk::conv_runs_gemm;
  using infer::vk::conv_small_input;
  CHECK(conv_small_input(3, 1, 3, 3));        // VGG's and MobileNet's first layers
  CHECK(conv_small_input(3, 1, 7, 7));        // ResNet's
  CHECK(conv_small_input(1, 1, 5, 5));        // a gray image
  CHECK(conv_small_input(4, 1, 7, 7));        // K 196
  CHECK_FALSE(conv_small_input(3, 1, 9, 9));  // K 243: more weights than its shared memory holds
  CHECK_FALSE(conv_small_input(5, 1, 3, 3));
  CHECK_FALSE(conv_small_input(4, 2, 3, 3));  // grouped
  CHECK_FALSE(conv_runs_gemm(3, 1, 3, 3));
  CHECK(conv_runs_gemm(3, 1, 9, 9));
  CHECK(conv_runs_gemm(16, 1, 1, 1));
  CHECK(conv_runs_gemm(8, 2, 3, 3));
  CHECK_FALSE(conv_runs_gemm(8, 8, 3, 3));  // depthwise
}

TEST_CASE("Vulkan convolution rejects what does not fit, saying what",
          "[vulkan][convolution][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  const infer::vk::VkMat in(buf->get(), 0, Shape::of(5, 5, 4), ElemType::f32, 1);
  const infer::vk::VkMat out(buf->get(), 4096, Shape::of(3, 3, 6), ElemType::f32, 1);
  const infer::vk::VkMat w(buf->get(), 8192, Shape::of(6 * 4 * 9), ElemType::f32, 1);
  const infer::vk::VkMat w_short(buf->get(), 8192, Shape::of(100), ElemType::f32, 1);
  ConvolutionParams p;
  p.kernel_w = p.kernel_h = 3;
  infer::vk::CommandRecorder rec(**cmd, cache);
  CHECK(infer::vk::record_convolution(rec, in, out, w, nullptr, p).ok());
  auto message = [&](const infer::vk::VkMat& weights, const ConvolutionParams& q) {
    const infer::Status s = infer::vk::record_convolution(rec, in, out, weights, nullptr, q);
    REQUIRE_FALSE(s.ok());
    return s.message();
  };
  CHECK_THAT(message(w_short, p), Catch::Contains("100 weights, expected 216"));
  ConvolutionParams grouped = p;
  grouped.group = 3;
  CHECK_THAT(message(w, grouped), Catch::Contains("group 3 must divide 4 input and 6 output"));
  ConvolutionParams zero = p;
  zero.stride_w = 0;
  CHECK_THAT(message(w, zero), Catch::Contains("must be >= 1"));
  const infer::vk::VkMat packed8(buf->get(), 0, Shape::of(5, 5, 8), ElemType::f32, 8);
  const infer::Status pack8 = infer::vk::record_convolution(rec, packed8, out, w, nullptr, p);
  REQUIRE_FALSE(pack8.ok());
  CHECK_THAT(pack8.message(), Catch::Contains("pack 8"));

  // The GEMM kernel: weights in ncnn's order (not laid out for it), cooperative matrices where
  // they cannot run, a 1-D blob.
  const infer::vk::VkMat w_gemm(buf->get(), 8192, Shape::of(6 * 64), ElemType::f32, 1);
  CHECK(infer::vk::record_conv_gemm(rec, in, out, w_gemm, nullptr, p).ok());
  const infer::Status unlaid = infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p);
  REQUIRE_FALSE(unlaid.ok());
  CHECK_THAT(unlaid.message(),
             Catch::Contains("216 weights, expected 384") && Catch::Contains("conv_gemm_weights"));
  const infer::Status coop = infer::vk::record_conv_gemm(rec, in, out, w_gemm, nullptr, p,
                                                         infer::vk::GemmPath::cooperative_matrix);
  REQUIRE_FALSE(coop.ok());
  CHECK_THAT(coop.message(), Catch::Contains("cooperative matrices asked for, which take f16"));
  const infer::vk::VkMat flat(buf->get(), 0, Shape::of(100), ElemType::f32, 1);
  const infer::Status one_d = infer::vk::record_conv_gemm(rec, flat, out, w_gemm, nullptr, p);
  REQUIRE_FALSE(one_d.ok());
  CHECK_THAT(one_d.message(), Catch::Contains("must be 3-D, got 1-D input"));

  // A residual that is not the output's shape or type, a tensor-core tile out of range.
  const infer::vk::VkMat wrong(buf->get(), 12288, Shape::of(3, 3, 5), ElemType::f32, 1);
  ConvolutionParams with_res = p;
  with_res.residual = &wrong;
  const infer::Status res = infer::vk::record_conv_gemm(rec, in, out, w_gemm, nullptr, with_res);
  REQUIRE_FALSE(res.ok());
  CHECK_THAT(res.message(), Catch::Contains("residual 3x3x5 (3-D), output 3x3x6 (3-D)"));
  const infer::vk::VkMat half(buf->get(), 12288, Shape::of(3, 3, 6), ElemType::f16, 1);
  with_res.residual = &half;
  const infer::Status res_type = infer::vk::record_convolution(rec, in, out, w, nullptr, with_res);
  REQUIRE_FALSE(res_type.ok());
  CHECK_THAT(res_type.message(), Catch::Contains("residual storage f16, the blobs' is f32"));
  // A gate: a value per input channel, 1-D, of the blobs' type, on the GEMM kernels only.
  const infer::vk::VkMat gate(buf->get(), 12288, Shape::of(4), ElemType::f32, 1);
  const infer::vk::VkMat gate5(buf->get(), 12288, Shape::of(5), ElemType::f32, 1);
  const infer::vk::VkMat gate3d(buf->get(), 12288, Shape::of(1, 1, 4), ElemType::f32, 1);
  const infer::vk::VkMat gate16(buf->get(), 12288, Shape::of(4), ElemType::f16, 1);
  ConvolutionParams gated = p;
  gated.gate = &gate;
  CHECK(infer::vk::record_conv_gemm(rec, in, out, w_gemm, nullptr, gated).ok());
  const infer::Status direct = infer::vk::record_convolution(rec, in, out, w, nullptr, gated);
  REQUIRE_FALSE(direct.ok());
  CHECK_THAT(direct.message(), Catch::Contains("a gate is fused only into the GEMM kernels"));
  for (const auto& [g, want] :
       {std::pair{&gate5, "a gate of 5 values (1-D) for 4 input channels"},
        std::pair{&gate3d, "a gate of 4 values (3-D) for 4 input channels"},
        std::pair{&gate16, "gate storage f16, the blobs' is f32"}}) {
    gated.gate = g;
    const infer::Status st = infer::vk::record_conv_gemm(rec, in, out, w_gemm, nullptr, gated);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains(want));
  }
  if (g_ctx->info().cooperative_matrix && g_ctx->info().fp16_storage) {
    const infer::vk::VkMat in16(buf->get(), 0, Shape::of(5, 5, 4), ElemType::f16, 1);
    const infer::vk::VkMat out16(buf->get(), 4096, Shape::of(3, 3, 6), ElemType::f16, 1);
    const infer::vk::VkMat w16(buf->get(), 8192, Shape::of(6 * 64), ElemType::f16, 1);
    const infer::Status tile = infer::vk::record_conv_gemm(
        rec, in16, out16, w16, nullptr, p, infer::vk::GemmPath::cooperative_matrix, 0, {4, 4});
    REQUIRE_FALSE(tile.ok());
    CHECK_THAT(tile.message(), Catch::Contains("a tensor-core tile of 4 x 4 subgroups"));
  }
}

TEST_CASE("Tensor-core tiles fit the device's shared memory, or are refused saying so",
          "[vulkan][convolution][errors]") {
  auto buf = infer::vk::Buffer::create(*g_ctx, 1 << 17, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  const infer::vk::VkMat in(buf->get(), 0, Shape::of(9, 9, 96), ElemType::f16, 4);
  const infer::vk::VkMat out(buf->get(), 32768, Shape::of(9, 9, 128), ElemType::f16, 4);
  const infer::vk::VkMat w(buf->get(), 65536, Shape::of(128 * 96), ElemType::f16, 1);
  ConvolutionParams p;
  infer::vk::test::FakeRecorder rec({"small-shared device", true, true, 16384});
  // Without the small-layer rule (the default): the automatic tile (4 x 1 for 128 channels over
  // few pixels, 21 KB) shrinks to fit 16 KB; with pixels enough for a 4 x 1 tile on every unit
  // it is 2 x 1.
  constexpr infer::vk::TcSmallRule none{};
  CHECK(infer::vk::conv_gemm_tc_tile(64, 81, 864, 1, 132, 49152).sg_m == 2);
  CHECK(infer::vk::conv_gemm_tc_tile(128, 81, 864, 1, 132, 49152, none).sg_m == 4);
  CHECK(infer::vk::conv_gemm_tc_tile(128, 132 * 64, 864, 1, 132, 49152, none).sg_m == 2);
  CHECK(infer::vk::conv_gemm_tc_tile(64, 81, 864, 1, 132, 49152, none).sg_m == 2);
  // Large products take 4 x 2 subgroups stepping by 64, where the shared memory holds them.
  const infer::vk::TcTile large = infer::vk::conv_gemm_tc_tile(256, 56 * 56, 2304, 1, 132, 49152);
  CHECK((large.sg_m == 4 && large.sg_n == 2 && large.bk == 64 && large.wt_m == 2 &&
         large.wt_n == 4));
  CHECK(infer::vk::conv_gemm_tc_tile(256, 14 * 14, 2304, 1, 132, 49152, none).sg_n == 1);
  CHECK(infer::vk::conv_gemm_tc_tile(256, 56 * 56, 2304, 1, 132, 16384, none).sg_n == 1);
  CHECK(infer::vk::conv_gemm_tc_shared_bytes(infer::vk::TcTile{4, 1, 32}) > 16384);
  const infer::vk::TcTile chosen = infer::vk::conv_gemm_tc_tile(128, 81, 864, 1, 0, 16384, none);
  CHECK(infer::vk::conv_gemm_tc_shared_bytes(chosen) <= 16384);
  CHECK(chosen.sg_m == 2);
  // The small-layer rule (1 x 2 products below 4 subgroup tiles of 32 x 64 a unit): subgroups
  // down M until they cover it, then across N to 4 in all where a step's units share out.
  constexpr infer::vk::TcSmallRule small{1, 2, 4};
  auto is = [](infer::vk::TcTile t, int sg_m, int sg_n, int wt_m, int wt_n) {
    return t.sg_m == sg_m && t.sg_n == sg_n && t.wt_m == wt_m && t.wt_n == wt_n && t.bk == 32;
  };
  CHECK(is(infer::vk::conv_gemm_tc_tile(24, 56 * 56, 96, 1, 132, 49152, small), 2, 2, 1, 2));
  CHECK(is(infer::vk::conv_gemm_tc_tile(16, 56 * 56, 96, 1, 132, 49152, small), 1, 2, 1, 2));
  CHECK(is(infer::vk::conv_gemm_tc_tile(192, 7 * 7, 1152, 1, 132, 49152, small), 4, 1, 1, 2));
  CHECK(is(infer::vk::conv_gemm_tc_tile(80, 14 * 14, 480, 1, 132, 49152, small), 4, 1, 1, 2));
  CHECK(is(infer::vk::conv_gemm_tc_tile(80, 14 * 14, 480, 1, 132, 49152, {2, 2, 4}), 4, 1, 2, 2));
  // At 4 subgroup tiles a unit and more (528 on 132 units), the usual tiles.
  CHECK(is(infer::vk::conv_gemm_tc_tile(64, 264 * 64, 576, 1, 132, 49152, small), 2, 1, 2, 4));
  CHECK(is(infer::vk::conv_gemm_tc_tile(64, 263 * 64, 576, 1, 132, 49152, small), 4, 1, 1, 2));
  for (int M : {1, 5, 16, 17, 40, 64, 65, 100, 1000})
    for (const infer::vk::TcSmallRule r : {small, infer::vk::TcSmallRule{1, 4, 4},
                                           infer::vk::TcSmallRule{2, 2, 4}})
      CHECK(infer::vk::conv_gemm_tc_tile_valid(
          infer::vk::conv_gemm_tc_tile(M, 49, 1152, 1, 132, 49152, r)));
  // Tiles the kernel cannot share out: a step's 16 weight rows over 128 invocations.
  CHECK_FALSE(infer::vk::conv_gemm_tc_tile_valid({1, 4, 32, 1, 2}));
  CHECK_FALSE(infer::vk::conv_gemm_tc_tile_valid({2, 2, 32, 1, 3}));
  CHECK(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p,
                                    infer::vk::GemmPath::cooperative_matrix)
            .ok());
  CHECK(rec.dispatches >= 1);
  // A tile named by the caller that does not fit is an error, not a fault on the device.
  const infer::Status big = infer::vk::record_conv_gemm(
      rec, in, out, w, nullptr, p, infer::vk::GemmPath::cooperative_matrix, 1, {2, 4, 64});
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.message(),
             Catch::Contains("2 x 4 subgroups of 2 x 4 products stepping by 64 needs 46336 bytes "
                             "of shared memory, small-shared device has 16384"));
  // A tile the kernel cannot share out is refused, naming it.
  const infer::Status odd = infer::vk::record_conv_gemm(
      rec, in, out, w, nullptr, p, infer::vk::GemmPath::cooperative_matrix, 1, {1, 4, 32, 1, 2});
  REQUIRE_FALSE(odd.ok());
  CHECK_THAT(odd.message(), Catch::Contains("1 x 4 subgroups of 1 x 2 products stepping by 32"));
}

TEST_CASE("The halo kernel takes stride-1 windows of pack-4 input, or is refused saying so",
          "[vulkan][convolution][errors]") {
  // Recorded on a device the test describes (nothing runs): which kernel the automatic choice
  // takes, the halo kernel's workgroups and split, its shared memory, its errors.
  auto buf = infer::vk::Buffer::create(*g_ctx, 4 << 20, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto conv = [](int k, int stride, int pad, int dilation) {
    ConvolutionParams p;
    p.kernel_w = p.kernel_h = k;
    p.stride_w = p.stride_h = stride;
    p.pad_left = p.pad_top = pad;
    p.dilation_w = p.dilation_h = dilation;
    return p;
  };
  const ConvolutionParams p3 = conv(3, 1, 1, 1);
  auto mats = [&](int w, int h, int c, int outc, int in_pack, int outw, int outh, int k) {
    const int K = infer::vk::conv_gemm_k_pad(c * k * k);
    return std::array{
        infer::vk::VkMat(buf->get(), 0, Shape::of(w, h, c), ElemType::f16, in_pack),
        infer::vk::VkMat(buf->get(), 1 << 20, Shape::of(outw, outh, outc), ElemType::f16, 4),
        infer::vk::VkMat(buf->get(), 2 << 20, Shape::of(outc * K), ElemType::f16, 1)};
  };
  infer::vk::test::FakeRecorder rec({"tensor-core device", true, true, 49152});
  rec.scratch_blob = infer::vk::VkMat(buf->get(), 0, Shape::of(1 << 16), ElemType::f32, 1);
  // 256 channels 3x3 over 28 x 28: tiles of 2 x 4 subgroups (64 channels x 16 rows of 16),
  // 2 x 2 blocks x 4 channel tiles; 16 workgroups, so the 16 chunks of 16 channels are split in
  // 6 parts (three chunks each, the last part one) and a second kernel sums them.
  if (infer::vk::conv_halo_use() == infer::vk::HaloUse::preferred) {
    const auto [in, out, w] = mats(28, 28, 256, 256, 4, 28, 28, 3);
    REQUIRE(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p3).ok());
    REQUIRE(rec.recorded.size() == 2);
    CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_halo_tc.comp"));
    CHECK(rec.recorded[0].local == std::array<std::uint32_t, 3>{256, 1, 1});
    CHECK(rec.recorded[0].groups == std::array<std::uint32_t, 3>{4, 4, 6});
    CHECK_THAT(rec.recorded[1].shader, Catch::Contains("conv_gemm_reduce.comp"));
    // The im2col kernel when asked for; and automatically below 256 channels a group, and for
    // a product under 2^28 multiply-adds (256 -> 96 over 20 x 18).
    rec.recorded.clear();
    REQUIRE(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p3,
                                        infer::vk::GemmPath::cooperative_matrix)
                .ok());
    CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_gemm_tc.comp"));
    for (const auto& [c, outc, side] : {std::tuple{128, 256, 28}, std::tuple{256, 96, 20}}) {
      const auto [in2, out2, w2] = mats(side, side, c, outc, 4, side, side, 3);
      rec.recorded.clear();
      REQUIRE(infer::vk::record_conv_gemm(rec, in2, out2, w2, nullptr, p3).ok());
      CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_gemm_tc.comp"));
    }
  }
  CHECK(infer::vk::conv_halo_preferred(512, 14, 512.0 * 196 * 4608));
  CHECK_FALSE(infer::vk::conv_halo_preferred(256, 14, 256.0 * 196 * 2304));
  CHECK_FALSE(infer::vk::conv_halo_preferred(128, 112, 128.0 * 112 * 112 * 1152));
  CHECK_FALSE(infer::vk::conv_halo_preferred(512, 7, 1e12));
  {
    // Narrower than the halo's 16 columns allow: the im2col kernel.
    const auto [in, out, w] = mats(9, 9, 256, 96, 4, 9, 9, 3);
    rec.recorded.clear();
    REQUIRE(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p3).ok());
    if (infer::vk::conv_halo_use() != infer::vk::HaloUse::all)
      CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_gemm_tc.comp"));
    // Named, it takes them: one block of 16 x 16 pixels over the 9 x 9 map, two channel tiles.
    rec.recorded.clear();
    REQUIRE(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, p3,
                                        infer::vk::GemmPath::cooperative_matrix_halo, 1)
                .ok());
    CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_halo_tc.comp"));
    CHECK(rec.recorded[0].groups == std::array<std::uint32_t, 3>{1, 2, 1});
  }
  // Forms it does not take: named, each is an error naming what is wrong; automatic, the
  // im2col kernel.
  {
    const auto [in, out, w] = mats(20, 18, 64, 96, 4, 10, 9, 3);
    const infer::Status st = infer::vk::record_conv_gemm(
        rec, in, out, w, nullptr, conv(3, 2, 1, 1), infer::vk::GemmPath::cooperative_matrix_halo);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("halo kernel asked for") &&
                                 Catch::Contains("got stride 2x2, 3x3 window, input pack 4"));
    rec.recorded.clear();
    REQUIRE(infer::vk::record_conv_gemm(rec, in, out, w, nullptr, conv(3, 2, 1, 1)).ok());
    CHECK_THAT(rec.recorded[0].shader, Catch::Contains("conv_gemm_tc.comp"));
  }
  for (const auto& [c, in_pack, want] : {std::tuple{64, 1, "input pack 1, 64 channels a group"},
                                         std::tuple{12, 4, "input pack 4, 12 channels a group"}}) {
    const auto [in, out, w] = mats(20, 18, c, 96, in_pack, 20, 18, 3);
    const infer::Status st = infer::vk::record_conv_gemm(
        rec, in, out, w, nullptr, p3, infer::vk::GemmPath::cooperative_matrix_halo);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains(want));
  }
  {
    // A 1x1 window is not the halo kernel's (nothing to share between taps).
    const auto [in, out, w] = mats(20, 18, 64, 96, 4, 20, 18, 1);
    const infer::Status st = infer::vk::record_conv_gemm(
        rec, in, out, w, nullptr, conv(1, 1, 0, 1), infer::vk::GemmPath::cooperative_matrix_halo);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("1x1 window"));
  }
  // Shared memory: 2 x 4 subgroups take 43 KB on a 3x3 window, 47 KB dilated 2; dilated 3 the
  // tile keeps 8 rows; on a 16 KB device no tile fits a 3x3 window (the automatic choice keeps
  // the im2col kernel), and a named one is refused, saying so.
  CHECK(infer::vk::conv_halo_shared_bytes({2, 4, 16}, p3) == 43456);
  CHECK(infer::vk::conv_halo_shared_bytes({2, 4, 16}, conv(3, 1, 2, 2)) == 47104);
  const infer::vk::TcTile t3 = infer::vk::conv_halo_tile(512, 28, conv(3, 1, 3, 3), 49152);
  CHECK((t3.sg_m == 2 && t3.sg_n == 2));
  CHECK(infer::vk::conv_halo_tile(32, 28, p3, 49152).sg_m == 1);
  CHECK(infer::vk::conv_halo_tile(512, 6, p3, 49152).sg_n == 2);
  CHECK(infer::vk::conv_halo_tile(512, 28, p3, 16384).sg_n == 0);
  infer::vk::test::FakeRecorder small_rec({"small-shared device", true, true, 16384});
  const auto [in, out, w] = mats(20, 18, 64, 96, 4, 20, 18, 3);
  REQUIRE(
      infer::vk::record_conv_gemm(small_rec, in, out, w, nullptr, p3, infer::vk::GemmPath::best, 1)
          .ok());
  CHECK_THAT(small_rec.recorded[0].shader, Catch::Contains("conv_gemm_tc.comp"));
  const infer::Status big =
      infer::vk::record_conv_gemm(small_rec, in, out, w, nullptr, p3,
                                  infer::vk::GemmPath::cooperative_matrix_halo, 1, {2, 4, 16});
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.message(), Catch::Contains("a halo tile of 2 x 4 subgroups for a 3x3 window "
                                            "dilated 1x1 needs 43456 bytes of shared memory, "
                                            "small-shared device has 16384"));
}
