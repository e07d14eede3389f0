// The GPU transposed-convolution kernel against a scalar definition in scatter form (each input
// value times each tap added into the uncut output in double, then the cut, bias and activation):
// kernels 2, 3, 4 and non-square, strides 1, 2, 3 and unequal, dilation, pads (asymmetric),
// output_pad, the output_w/h forms (SAME_UPPER and SAME_LOWER splits), grouped and depthwise,
// odd channel counts and sizes, with and without bias, fused activations, every pair of input and
// output packs (1, 4), f32 and f16 storage, the output filled with NaN first; then its errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/deconvolution.hpp>
#include <limits>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::test::RefTensor;
using infer::vk::Activation;
using infer::vk::DeconvolutionParams;
using infer::vk::GpuActivation;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;

namespace {

/// A transposed convolution as the layer's parameters give it (before the cut is resolved),
/// configured by chained setters.
struct Case {
  int c = 4, outc = 4, w = 5, h = 5;
  int kernel_w = 3, kernel_h = 3;
  int stride_w = 1, stride_h = 1;
  int dil = 1;
  int pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;
  int output_pad_right = 0, output_pad_bottom = 0;
  int output_w = 0, output_h = 0;  ///< with `same`: the output size
  int same = 0;                    ///< 233: SAME_UPPER (odd cut at the end), 234: SAME_LOWER
  int groups = 1;
  GpuActivation act;
  bool bias = true;

  Case& channels(int in, int out) { c = in, outc = out; return *this; }
  Case& input(int iw, int ih) { w = iw, h = ih; return *this; }
  Case& kernel(int kw, int kh) { kernel_w = kw, kernel_h = kh; return *this; }
  Case& stride(int sw, int sh) { stride_w = sw, stride_h = sh; return *this; }
  Case& dilation(int d) { dil = d; return *this; }
  Case& pads(int l, int r, int t, int b) {
    pad_left = l, pad_right = r, pad_top = t, pad_bottom = b;
    return *this;
  }
  Case& output_pad(int r, int b) { output_pad_right = r, output_pad_bottom = b; return *this; }
  /// ncnn's output_w/output_h with pads of -233 (upper) or -234 (lower).
  Case& output_size(int ow, int oh, int pad) {
    output_w = ow, output_h = oh, same = pad;
    return *this;
  }
  Case& group(int g) { groups = g; return *this; }
  Case& activation(Activation kind, float p0 = 0.f, float p1 = 0.f) {
    act = {kind, p0, p1};
    return *this;
  }
  Case& no_bias() { bias = false; return *this; }
};

/// The uncut output's extent along an axis.
int full_extent(int in, int kernel, int dilation, int stride, int output_pad) {
  return (in - 1) * stride + dilation * (kernel - 1) + 1 + output_pad;
}

/// The recorder's parameters and the output shape, the cut resolved as ncnn does.
std::pair<DeconvolutionParams, Shape> resolve(const Case& k) {
  DeconvolutionParams p;
  p.kernel_w = k.kernel_w;
  p.kernel_h = k.kernel_h;
  p.dilation_w = p.dilation_h = k.dil;
  p.stride_w = k.stride_w;
  p.stride_h = k.stride_h;
  p.group = k.groups;
  p.act = k.act;
  const int fw = full_extent(k.w, k.kernel_w, k.dil, k.stride_w, k.output_pad_right);
  const int fh = full_extent(k.h, k.kernel_h, k.dil, k.stride_h, k.output_pad_bottom);
  if (k.same != 0) {
    const int wcut = fw - k.output_w, hcut = fh - k.output_h;
    p.offset_x = k.same == 233 ? wcut / 2 : wcut - wcut / 2;
    p.offset_y = k.same == 233 ? hcut / 2 : hcut - hcut / 2;
    return {p, Shape::of(k.output_w, k.output_h, k.outc)};
  }
  p.offset_x = k.pad_left;
  p.offset_y = k.pad_top;
  return {p, Shape::of(fw - k.pad_left - k.pad_right, fh - k.pad_top - k.pad_bottom, k.outc)};
}

float activate(const GpuActivation& a, double x) {
  const double p0 = a.p0, p1 = a.p1;
  switch (a.kind) {
    case Activation::relu:
    case Activation::leaky_relu:
      return float(x > 0 ? x : x * p0);
    case Activation::clip:
      return float(std::min(std::max(x, p0), p1));
    case Activation::sigmoid:
      return float(1 / (1 + std::exp(-x)));
    case Activation::mish:
      return float(x * std::tanh(std::log1p(std::exp(x))));
    case Activation::hardswish:
      return float(x * std::min(std::max(x * p0 + p1, 0.0), 1.0));
    case Activation::swish:
      return float(x / (1 + std::exp(-x)));
    case Activation::tanh:
      return float(std::tanh(x));
    default:
      return float(x);
  }
}

/// Scatter form: input (q, sy, sx) times tap (ky, kx) of output channel o lands on uncut output
/// (sy * stride_h + ky * dilation, sx * stride_w + kx * dilation); weights [o][q of its
/// group][ky][kx].
RefTensor reference(const Case& k, const RefTensor& in, const std::vector<float>& weights,
                    const std::vector<float>& bias) {
  const auto [p, out_shape] = resolve(k);
  const int fw = full_extent(k.w, k.kernel_w, k.dil, k.stride_w, k.output_pad_right);
  const int fh = full_extent(k.h, k.kernel_h, k.dil, k.stride_h, k.output_pad_bottom);
  const int per_in = k.c / k.groups, per_out = k.outc / k.groups;
  std::vector<double> full(std::size_t(k.outc) * fh * fw, 0.0);
  for (int o = 0; o < k.outc; ++o)
    for (int qq = 0; qq < per_in; ++qq) {
      const int q = (o / per_out) * per_in + qq;
      for (int sy = 0; sy < k.h; ++sy)
        for (int sx = 0; sx < k.w; ++sx)
          for (int ky = 0; ky < k.kernel_h; ++ky)
            for (int kx = 0; kx < k.kernel_w; ++kx) {
              const int uy = sy * k.stride_h + ky * k.dil;
              const int ux = sx * k.stride_w + kx * k.dil;
              const std::size_t wi =
                  ((std::size_t(o) * per_in + qq) * k.kernel_h + ky) * k.kernel_w + kx;
              full[(std::size_t(o) * fh + uy) * fw + ux] +=
                  double(in.at(sx, sy, 0, q)) * weights[wi];
            }
    }
  RefTensor out(out_shape);
  for (int o = 0; o < k.outc; ++o)
    for (int y = 0; y < out_shape.h; ++y)
      for (int x = 0; x < out_shape.w; ++x) {
        const double b = bias.empty() ? 0.0 : bias[std::size_t(o)];
        const std::size_t at =
            (std::size_t(o) * fh + std::size_t(y + p.offset_y)) * fw + std::size_t(x + p.offset_x);
        out.at(x, y, 0, o) = activate(k.act, full[at] + b);
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

/// Runs one case on the device at (type, in_pack, out_pack), the output NaN before; returns it
/// as f32.
RefTensor run_gpu(const Case& k, const RefTensor& in, const std::vector<float>& weights,
                  const std::vector<float>& bias, ElemType type, int in_pack, int out_pack,
                  infer::vk::PipelineCache& cache) {
  infer::vk::Context& ctx = *g_ctx;
  const auto [p, out_shape] = resolve(k);
  RefTensor wt(Shape::of(int(weights.size()))), bt(Shape::of(std::max<int>(1, int(bias.size()))));
  wt.v = weights;
  if (!bias.empty()) bt.v = bias;
  const infer::Mat host_in = host_mat(in, type, in_pack);
  const infer::Mat host_w = host_mat(wt, type, 1), host_b = host_mat(bt, type, 1);
  const infer::Mat host_nan =
      host_mat(RefTensor(out_shape, std::numeric_limits<float>::quiet_NaN()), type, out_pack);
  const infer::Mat* hosts[] = {&host_in, &host_w, &host_b, &host_nan};
  std::size_t total = 0;
  for (const infer::Mat* h : hosts) total += (h->bytes() + 255) / 256 * 256;
  auto dev = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  std::vector<infer::vk::VkMat> blobs;
  std::size_t at = 0;
  for (const infer::Mat* h : hosts) {
    blobs.emplace_back(dev->get(), at, h->shape(), type, h->elempack());
    at += (h->bytes() + 255) / 256 * 256;
  }
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  for (std::size_t i = 0; i < blobs.size(); ++i)
    REQUIRE(infer::vk::upload(**cmd, *hosts[i], **staging, blobs[i].offset(), blobs[i]).ok());
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  const infer::Status rec = infer::vk::record_deconvolution(
      recorder, blobs[0], blobs[3], blobs[1], k.bias ? &blobs[2] : nullptr, p);
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, blobs[3], **staging, 0).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, 0, blobs[3], out).ok());
  return infer::test::from_mat(out);
}

}  // namespace

TEST_CASE("Vulkan deconvolution matches the scalar definition", "[vulkan][deconvolution]") {
  const Case cases[] = {
      // FCN-style 2x upsampling, the pads cutting 1 from each side.
      Case().channels(4, 8).input(5, 4).kernel(4, 4).stride(2, 2).pads(1, 1, 1, 1)
          .activation(Activation::relu),
      // Odd channels, stride 1, no bias.
      Case().channels(3, 5).input(7, 6).no_bias(),
      // Stride 2 with output_pad and asymmetric pads.
      Case().channels(8, 4).input(6, 5).stride(2, 2).pads(1, 2, 2, 0).output_pad(1, 1)
          .activation(Activation::leaky_relu, 0.1f),
      // 2x2 stride 2: taps do not overlap.
      Case().channels(4, 4).input(5, 5).kernel(2, 2).stride(2, 2).activation(Activation::sigmoid),
      // Dilation 2, stride 2.
      Case().channels(5, 6).input(5, 6).stride(2, 2).dilation(2)
          .activation(Activation::clip, -0.5f, 0.5f),
      // Stride 3 over a 2x2 kernel: outputs no tap reaches hold the bias alone (output_pad 2
      // adds more of them).
      Case().channels(4, 4).input(4, 3).kernel(2, 2).stride(3, 3).output_pad(2, 2),
      // output_w/h, SAME_UPPER (the odd column of the cut at the end) and SAME_LOWER.
      Case().channels(4, 8).input(6, 5).stride(2, 2).output_size(12, 9, 233),
      Case().channels(4, 8).input(6, 5).stride(2, 2).output_size(12, 9, 234)
          .activation(Activation::swish),
      // 2 groups.
      Case().channels(8, 12).input(5, 5).stride(2, 2).pads(1, 1, 1, 1).group(2)
          .activation(Activation::hardswish, 1.f / 6, 0.5f),
      // 4 groups of 2 in, 2 out: a pack of 4 outputs straddles two groups; 3x2, strides 1x2.
      Case().channels(8, 8).input(7, 4).kernel(3, 2).stride(1, 2).group(4)
          .activation(Activation::tanh),
      // Depthwise 4x4 stride 2.
      Case().channels(12, 12).input(6, 5).kernel(4, 4).stride(2, 2).pads(1, 1, 1, 1).group(12)
          .activation(Activation::mish),
      // Depthwise, odd channels, no bias, dilation 2.
      Case().channels(7, 7).input(5, 4).dilation(2).group(7).no_bias(),
  };
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 1;
  for (const Case& k : cases) {
    const Shape out_shape = resolve(k).second;
    const int per_in = k.c / k.groups;
    for (ElemType type : {ElemType::f32, ElemType::f16}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      const RefTensor raw = random_tensor(Shape::of(k.w, k.h, k.c), ++seed);
      RefTensor in(raw.shape);
      in.v = stored(raw.v, type);
      const std::vector<float> weights =
          stored(random_tensor(Shape::of(k.outc * per_in * k.kernel_w * k.kernel_h), ++seed,
                               -0.5f, 0.5f).v, type);
      const std::vector<float> bias =
          k.bias ? stored(random_tensor(Shape::of(k.outc), ++seed).v, type) : std::vector<float>{};
      const RefTensor want = reference(k, in, weights, bias);
      for (int in_pack : {1, 4})
        for (int out_pack : {1, 4}) {
          if (k.c % in_pack || k.outc % out_pack) continue;
          const RefTensor got = run_gpu(k, in, weights, bias, type, in_pack, out_pack, cache);
          REQUIRE(got.v.size() == want.v.size());
          // f32: sums in another order; f16: the output rounded to 11 bits.
          const auto [bad, first] =
              infer::vk::test::mismatches(got.v, want.v, type == ElemType::f32 ? 1e-4f : 4e-3f);
          INFO(fmt::format("{}x{} stride {}x{} dil {} pads {} {} {} {} output_pad {} {} output "
                           "{}x{} same {} group {} act {} c {} -> {} ({}x{}), {} in pack {} out "
                           "pack {}: {} wrong, first at {}: got {} want {}",
                           k.kernel_w, k.kernel_h, k.stride_w, k.stride_h, k.dil, k.pad_left,
                           k.pad_right, k.pad_top, k.pad_bottom, k.output_pad_right,
                           k.output_pad_bottom, k.output_w, k.output_h, k.same, k.groups,
                           int(k.act.kind), k.c, k.outc, out_shape.w, out_shape.h,
                           infer::to_string(type), in_pack, out_pack, bad, first, got.v[first],
                           want.v[first]));
          CHECK(bad == 0);
        }
    }
  }
}

TEST_CASE("Vulkan deconvolution rejects what does not fit, saying what",
          "[vulkan][deconvolution][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  const infer::vk::VkMat in(buf->get(), 0, Shape::of(5, 5, 4), ElemType::f32, 1);
  const infer::vk::VkMat out(buf->get(), 4096, Shape::of(11, 11, 6), ElemType::f32, 1);
  const infer::vk::VkMat w(buf->get(), 12288, Shape::of(6 * 4 * 9), ElemType::f32, 1);
  const infer::vk::VkMat w_short(buf->get(), 12288, Shape::of(100), ElemType::f32, 1);
  const infer::vk::VkMat b_short(buf->get(), 16384, Shape::of(5), ElemType::f32, 1);
  DeconvolutionParams p;
  p.kernel_w = p.kernel_h = 3;
  p.stride_w = p.stride_h = 2;
  infer::vk::CommandRecorder rec(**cmd, cache);
  CHECK(infer::vk::record_deconvolution(rec, in, out, w, nullptr, p).ok());
  auto message = [&](const infer::vk::VkMat& bottom, const infer::vk::VkMat& weights,
                     const infer::vk::VkMat* bias, const DeconvolutionParams& q) {
    const infer::Status s = infer::vk::record_deconvolution(rec, bottom, out, weights, bias, q);
    REQUIRE_FALSE(s.ok());
    return s.message();
  };
  CHECK_THAT(message(in, w_short, nullptr, p), Catch::Contains("100 weights, expected 216"));
  CHECK_THAT(message(in, w, &b_short, p), Catch::Contains("5 bias values for 6 output"));
  DeconvolutionParams grouped = p;
  grouped.group = 3;
  CHECK_THAT(message(in, w, nullptr, grouped),
             Catch::Contains("group 3 must divide 4 input and 6 output"));
  DeconvolutionParams zero = p;
  zero.dilation_h = 0;
  CHECK_THAT(message(in, w, nullptr, zero), Catch::Contains("must be >= 1"));
  DeconvolutionParams negative = p;
  negative.offset_x = -233;
  CHECK_THAT(message(in, w, nullptr, negative), Catch::Contains("must not be negative"));
  const infer::vk::VkMat flat(buf->get(), 0, Shape::of(25, 4), ElemType::f32, 1);
  CHECK_THAT(message(flat, w, nullptr, p), Catch::Contains("must be 3-D"));
  const infer::vk::VkMat half(buf->get(), 0, Shape::of(5, 5, 4), ElemType::f16, 1);
  CHECK_THAT(message(half, w, nullptr, p), Catch::Contains("storage types differ"));
  const infer::vk::VkMat packed8(buf->get(), 0, Shape::of(5, 5, 8), ElemType::f32, 8);
  CHECK_THAT(message(packed8, w, nullptr, p), Catch::Contains("pack 8"));
}
