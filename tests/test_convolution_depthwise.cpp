// ConvolutionDepthWise against a plain-loop grouped-convolution reference over every float type
// and pack: depthwise (group == channels == num_output) with every kernel shape, stride, dilation,
// pad form and fused activation (the 3x3 / 5x5 stride 1 / 2 fast kernels on awkward shapes and
// channel counts); grouped convolutions whose groups do and do not fill whole packs (the latter
// unpacked, vectorized across pixels); a channel multiplier; group 1; fold_affine; load(); errors.
#include <cmath>
#include <infer/layers/convolution_depthwise.hpp>
#include <random>

#include "support/fused_instances.hpp"
#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::ActivationParam;
using infer::layers::ConvolutionDepthWise;
using infer::layers::kPadSameLower;
using infer::layers::kPadSameUpper;
using infer::layers::kSameAs;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

/// ncnn's fused activations, written from their definitions.
float activation_ref(float x, const ActivationParam& a) {
  const float p0 = a.params[0], p1 = a.params[1];
  switch (a.type) {
    case 1:
      return x > 0.f ? x : 0.f;
    case 2:
      return x > 0.f ? x : x * p0;
    case 3:
      return std::min(std::max(x, p0), p1);
    case 4:
      return 1.f / (1.f + std::exp(-x));
    case 5:
      return x * std::tanh(std::log(1.f + std::exp(x)));
    case 6: {
      const float lower = -p1 / p0, upper = 1.f / p0 + lower;
      return x < lower ? 0.f : x > upper ? x : x * (x * p0 + p1);
    }
    default:
      return x;
  }
}

int or_w(int v, int w) { return v == kSameAs ? w : v; }

/// Grouped convolution on logical indices: output channel oc of group g = oc / (num_output /
/// group) reads input channels [g * cin_g, (g + 1) * cin_g), pad_value outside the input.
RefTensor conv_ref(const RefTensor& in, const ConvolutionDepthWise& c) {
  const int kw = c.kernel_w, kh = or_w(c.kernel_h, kw);
  const int dw = c.dilation_w, dh = or_w(c.dilation_h, dw);
  const int sw = c.stride_w, sh = or_w(c.stride_h, sw);
  int pl = c.pad_left, pt = or_w(c.pad_top, pl), pr = or_w(c.pad_right, pl),
      pb = or_w(c.pad_bottom, pt);
  const int w = in.shape.w, h = in.shape.h, cin = in.shape.c;
  const int ew = dw * (kw - 1) + 1, eh = dh * (kh - 1) + 1;
  if (pl == kPadSameUpper || pl == kPadSameLower) {
    // ONNX auto_pad: ceil(n / stride) outputs, total pad (out - 1) * stride + extent - n.
    auto total = [](int n, int e, int s) { return std::max(0, ((n + s - 1) / s - 1) * s + e - n); };
    const int tw = total(w, ew, sw), th = total(h, eh, sh);
    const bool upper = pl == kPadSameUpper;
    pl = upper ? tw / 2 : (tw + 1) / 2;
    pr = tw - pl;
    pt = upper ? th / 2 : (th + 1) / 2;
    pb = th - pt;
  }
  const int outw = (w + pl + pr - ew) / sw + 1, outh = (h + pt + pb - eh) / sh + 1;
  const int cin_g = cin / c.group, cout_g = c.num_output / c.group;
  RefTensor out(Shape::of(outw, outh, c.num_output));
  for (int oc = 0; oc < c.num_output; ++oc) {
    const int g = oc / cout_g;
    for (int oy = 0; oy < outh; ++oy) {
      for (int ox = 0; ox < outw; ++ox) {
        double sum = c.bias_term ? c.bias_data[std::size_t(oc)] : 0.0;
        for (int i = 0; i < cin_g; ++i) {
          for (int ky = 0; ky < kh; ++ky) {
            for (int kx = 0; kx < kw; ++kx) {
              const int iy = oy * sh + ky * dh - pt, ix = ox * sw + kx * dw - pl;
              const float v = (iy >= 0 && iy < h && ix >= 0 && ix < w)
                                  ? in.at(ix, iy, 0, g * cin_g + i)
                                  : c.pad_value;
              sum +=
                  double(v) *
                  c.weight_data[((std::size_t(oc) * cin_g + i) * kh + ky) * kw + std::size_t(kx)];
            }
          }
        }
        out.at(ox, oy, 0, oc) = activation_ref(float(sum), c.activation);
      }
    }
  }
  return out;
}

/// `c` with weight_data_size and random weights (and bias) for `cin` inputs.
ConvolutionDepthWise with_weights(ConvolutionDepthWise c, int cin, unsigned seed = 11) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  c.weight_data_size = c.kernel_w * or_w(c.kernel_h, c.kernel_w) * (cin / c.group) * c.num_output;
  c.weight_data.resize(std::size_t(c.weight_data_size));
  for (float& v : c.weight_data) v = dist(rng);
  c.bias_data.clear();
  if (c.bias_term)
    for (int i = 0; i < c.num_output; ++i) c.bias_data.push_back(dist(rng));
  return c;
}

/// A depthwise layer over `channels` channels.
ConvolutionDepthWise depthwise(ConvolutionDepthWise c, int channels) {
  c.num_output = channels;
  c.group = channels;
  return with_weights(c, channels);
}

void sweep(const ConvolutionDepthWise& c, const std::string& what,
           const std::vector<Shape>& shapes) {
  LayerTester(c, what)
      .reference([c](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{conv_ref(in[0], c)};
      })
      .shapes(shapes)
      .tolerance(ElemType::f32, 1e-4f, 1e-4f)
      // Grouped forms run Convolution's GEMM per group, in bf16 on AVX512_BF16.
      .tolerance(ElemType::bf16, infer::test::bf16_products(2e-2f))
      .run();
}

constexpr Shape inferred(const ConvolutionDepthWise& c, Shape in) {
  Shape out[1];
  return c.infer_shapes(std::span<const Shape>(&in, 1), out).ok() ? out[0] : Shape{};
}

// Depthwise 3x3 stride 2 pad 1 over 9x8x16: 5x4x16.
static_assert(inferred(ConvolutionDepthWise{.num_output = 16,
                                            .kernel_w = 3,
                                            .stride_w = 2,
                                            .pad_left = 1,
                                            .weight_data_size = 16 * 9,
                                            .group = 16},
                       Shape::of(9, 8, 16)) == Shape::of(5, 4, 16));
// Grouped: 8 inputs in 2 groups, 12 outputs: 3x3 weights 12 * 4 * 9; SAME_LOWER keeps 7x5.
static_assert(inferred(ConvolutionDepthWise{.num_output = 12,
                                            .kernel_w = 3,
                                            .pad_left = kPadSameLower,
                                            .weight_data_size = 12 * 4 * 9,
                                            .group = 2},
                       Shape::of(7, 5, 8)) == Shape::of(7, 5, 12));
// A group that does not divide num_output fails.
static_assert(inferred(ConvolutionDepthWise{.num_output = 12,
                                            .kernel_w = 3,
                                            .weight_data_size = 12 * 9,
                                            .group = 5},
                       Shape::of(7, 5, 12))
                  .dims == 0);

static_assert(infer::check_layer<ConvolutionDepthWise>());
static_assert(infer::PreparedLayer<ConvolutionDepthWise>);
static_assert(infer::ShapePreparedLayer<ConvolutionDepthWise>);
static_assert(infer::FoldsAffine<ConvolutionDepthWise>);
static_assert(infer::io::LoadsWeights<ConvolutionDepthWise>);
static_assert(infer::FusesActivation<ConvolutionDepthWise, float, 16, infer::act::Clip>);

}  // namespace

TEST_CASE("ConvolutionDepthWise depthwise kernels, strides, dilation and pads",
          "[layer][convolution_depthwise]") {
  const std::vector<int> channel_counts = {16, 24, 12, 3};
  for (int ch : channel_counts) {
    sweep(depthwise({.kernel_w = 3, .pad_left = 1, .bias_term = 1}, ch),
          fmt::format("dw 3x3 s1 pad1 c{}", ch),
          {Shape::of(7, 6, ch), Shape::of(1, 1, ch), Shape::of(1, 5, ch), Shape::of(6, 1, ch)});
  }
  sweep(depthwise({.kernel_w = 1, .bias_term = 1}, 32), "dw 1x1 c32", {Shape::of(5, 4, 32)});
  sweep(depthwise({.kernel_w = 3, .stride_w = 2}, 16), "dw 3x3 s2 c16",
        {Shape::of(9, 9, 16), Shape::of(10, 7, 16), Shape::of(3, 3, 16)});
  sweep(depthwise({.kernel_w = 5, .dilation_w = 2, .pad_left = 4, .bias_term = 1}, 8),
        "dw 5x5 dilation 2 pad 4 c8", {Shape::of(11, 9, 8), Shape::of(1, 1, 8)});
  sweep(depthwise({.kernel_w = 5, .dilation_w = 2}, 4), "dw 5x5 dilation 2 c4",
        {Shape::of(11, 9, 4), Shape::of(9, 10, 4)});
  sweep(depthwise({.kernel_w = 3,
                   .stride_w = 1,
                   .pad_left = 2,
                   .bias_term = 1,
                   .kernel_h = 2,
                   .stride_h = 2,
                   .pad_top = 0,
                   .pad_right = 1,
                   .pad_bottom = 3,
                   .pad_value = 1.5f},
                  12),
        "dw 3x2 s1x2 pads l2 r1 t0 b3 value 1.5 c12", {Shape::of(5, 6, 12), Shape::of(1, 1, 12)});
  for (int code : {kPadSameUpper, kPadSameLower}) {
    sweep(depthwise({.kernel_w = 4, .stride_w = 2, .pad_left = code, .bias_term = 1, .kernel_h = 3},
                    16),
          fmt::format("dw 4x3 s2 pad {} c16", code),
          {Shape::of(7, 6, 16), Shape::of(8, 9, 16), Shape::of(1, 1, 16)});
  }
  sweep(depthwise({.kernel_w = 3, .pad_left = 1, .bias_term = 1}, 64), "dw 3x3 c64 (threaded)",
        {Shape::of(40, 30, 64)});
}

TEST_CASE("ConvolutionDepthWise 3x3 / 5x5 stride 1 / 2 fast kernels on awkward shapes",
          "[layer][convolution_depthwise]") {
  // Widths around the interior tile (8 outputs at AVX-512 3x3, 4 at 5x5) and its remainder, odd
  // extents, w = 1 / h = 1 (all border), inputs smaller than the kernel with padding.
  for (int k : {3, 5}) {
    for (int s : {1, 2}) {
      for (int ch : {3, 5, 17, 48}) {
        const int pad = k / 2;
        sweep(depthwise({.kernel_w = k, .stride_w = s, .pad_left = pad, .bias_term = 1}, ch),
              fmt::format("dw {}x{} s{} pad {} c{}", k, k, s, pad, ch),
              {Shape::of(23, 7, ch), Shape::of(1, 1, ch), Shape::of(1, 6, ch), Shape::of(9, 1, ch),
               Shape::of(2 * k + 3, k + 2, ch)});
      }
      // No padding: every window inside, tiles to the right edge.
      sweep(depthwise({.kernel_w = k, .stride_w = s}, 16),
            fmt::format("dw {}x{} s{} pad 0 c16", k, k, s),
            {Shape::of(37, 6, 16), Shape::of(k, k, 16), Shape::of(k + 1, k + 4, 16)});
      // Asymmetric pads, a pad value, SAME padding.
      sweep(depthwise({.kernel_w = k,
                       .stride_w = s,
                       .pad_left = 2,
                       .bias_term = 1,
                       .pad_top = 0,
                       .pad_right = 1,
                       .pad_bottom = 3,
                       .pad_value = -0.75f},
                      12),
            fmt::format("dw {}x{} s{} pads l2 r1 t0 b3 value -0.75 c12", k, k, s),
            {Shape::of(19, 8, 12), Shape::of(2, 3, 12)});
      sweep(depthwise({.kernel_w = k, .stride_w = s, .pad_left = kPadSameUpper}, 8),
            fmt::format("dw {}x{} s{} SAME_UPPER c8", k, k, s),
            {Shape::of(20, 9, 8), Shape::of(4, 4, 8)});
      // Every fused activation through each kernel.
      const ActivationParam acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-1.f, 1.5f}},
                                      {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
      for (const ActivationParam& a : acts) {
        ConvolutionDepthWise c =
            depthwise({.kernel_w = k, .stride_w = s, .pad_left = 1, .bias_term = 1}, 20);
        c.activation = a;
        sweep(c, fmt::format("dw {}x{} s{} c20 activation {}", k, k, s, a.type),
              {Shape::of(21, 5, 20)});
      }
    }
  }
  // Big enough to thread over channel groups and rows.
  sweep(depthwise({.kernel_w = 3, .stride_w = 2, .pad_left = 1, .bias_term = 1}, 48),
        "dw 3x3 s2 c48 (threaded)", {Shape::of(57, 41, 48)});
  sweep(depthwise({.kernel_w = 5, .pad_left = 2, .bias_term = 1}, 32), "dw 5x5 s1 c32 (threaded)",
        {Shape::of(40, 29, 32)});
}

TEST_CASE("ConvolutionDepthWise fused activations (9=activation_type 0..6)",
          "[layer][convolution_depthwise]") {
  const ActivationParam acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-1.f, 1.5f}},
                                  {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const ActivationParam& a : acts) {
    ConvolutionDepthWise c = depthwise({.kernel_w = 3, .pad_left = 1, .bias_term = 1}, 16);
    c.activation = a;
    sweep(c, fmt::format("dw 3x3 c16 activation {}", a.type), {Shape::of(5, 4, 16)});
    ConvolutionDepthWise grouped =
        with_weights({.num_output = 8, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 2}, 8,
                     unsigned(a.type));
    grouped.activation = a;
    sweep(grouped, fmt::format("grouped 8->8 g2 activation {}", a.type), {Shape::of(5, 4, 8)});
  }
}

TEST_CASE("ConvolutionDepthWise group convolutions run the Winograd tile of the map",
          "[layer][convolution_depthwise]") {
  // 64 -> 64 in 2 groups (32 -> 32), 3x3 pad 1, as AlexNet's conv4 and conv5: each group a
  // Convolution on Winograd, prepared for one group of the input (the runner passes its shape):
  // F(2x2) on 7x7, F(4x4) on 19x17. f32 within Convolution's Winograd bound (test_convolution.cpp);
  // bf16 (on AVX512_BF16 the GEMMs multiply the transformed inputs and weights rounded to bf16,
  // whose rounding F(4x4)'s output transform scales by up to 8 x 8) within its bf16 bound
  // (test_bf16.cpp): on these shapes 7.2e-2 of the largest output by a scalar model of those
  // roundings (the GEMM's 2e-2 failed 183 of 20672 values on an AMD Zen 4); held to 1.2e-1 as
  // there. Elsewhere bf16's default.
  const ConvolutionDepthWise c = with_weights(
      {.num_output = 64, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 2}, 64);
  if constexpr (infer::kernels::gemm::kAvailable) {
    using A = infer::layers::Convolution::Algorithm;
    REQUIRE(c.algorithm(4) == ConvolutionDepthWise::Algorithm::group_gemm);
    REQUIRE(c.layout(4, Shape::of(7, 7, 64)) == int(A::winograd_small) + 1);
    REQUIRE(c.layout(4, Shape::of(19, 17, 64)) == int(A::winograd) + 1);
    REQUIRE(c.layout(4, Shape{}) == int(A::winograd) + 1);
    ConvolutionDepthWise p = c;
    Option opt;
    REQUIRE(p.prepare(ElemType::f32, 4, opt, Shape::of(7, 7, 64)).ok());
    REQUIRE(p.group_convs.size() == 2);
    CHECK(p.group_convs[1].prepared_algo == A::winograd_small);
  }
  LayerTester(c, "64->64 g2 3x3 (Winograd per group)")
      .reference([c](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{conv_ref(in[0], c)};
      })
      .shapes({Shape::of(7, 7, 64), Shape::of(19, 17, 64)})
      .tolerance(ElemType::f32, 5e-4f, 5e-4f)
      .tolerance(ElemType::bf16, infer::test::bf16_products(1.2e-1f))
      .run();
}

TEST_CASE("ConvolutionDepthWise grouped convolution", "[layer][convolution_depthwise]") {
  // 16 -> 32 in 2 groups (8 -> 16 each): packed per group at packs 4 and 8, pack 1 at 16.
  sweep(with_weights({.num_output = 32, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 2},
                     16),
        "16->32 g2", {Shape::of(6, 5, 16), Shape::of(1, 1, 16)});
  // 32 -> 64 in 2 groups (16 -> 32), 5x5 pad 2 stride 2, as AlexNet's conv2: the per-group GEMM
  // at every pack above 1.
  sweep(with_weights({.num_output = 64,
                      .kernel_w = 5,
                      .stride_w = 2,
                      .pad_left = 2,
                      .bias_term = 1,
                      .group = 2},
                     32),
        "32->64 g2 5x5 s2", {Shape::of(9, 7, 32)});
  // 8 -> 12 in 2 groups (4 -> 6): 6 outputs never fill a pack of 4, so pack 1 with a repack.
  sweep(with_weights({.num_output = 12, .kernel_w = 3, .stride_w = 2, .group = 2}, 8),
        "8->12 g2 s2", {Shape::of(7, 6, 8), Shape::of(3, 3, 8)});
  // 12 -> 6 in 3 groups (4 -> 2): pack-1 output.
  sweep(with_weights(
            {.num_output = 6, .kernel_w = 3, .pad_left = kPadSameUpper, .bias_term = 1, .group = 3},
            12),
        "12->6 g3 SAME", {Shape::of(5, 5, 12)});
  // Channel multiplier 2 (group == channels, num_output == 2 * channels).
  sweep(with_weights({.num_output = 8, .kernel_w = 3, .pad_left = 1, .group = 4}, 4),
        "4->8 g4 (multiplier 2)", {Shape::of(6, 4, 4)});
  // group 1 is a plain convolution.
  sweep(with_weights({.num_output = 5, .kernel_w = 3, .bias_term = 1, .group = 1}, 3), "3->5 g1",
        {Shape::of(5, 4, 3)});
  // 24 -> 24 in 4 groups (6 -> 6): packs 4 and 8 take the pack-1 fallback with a repack to 8.
  sweep(with_weights({.num_output = 24, .kernel_w = 2, .bias_term = 1, .group = 4}, 24),
        "24->24 g4 2x2", {Shape::of(5, 5, 24)});
  // Big enough to thread: 32 -> 64 in 4 groups.
  sweep(with_weights({.num_output = 64, .kernel_w = 3, .pad_left = 1, .group = 4}, 32),
        "32->64 g4 (threaded)", {Shape::of(16, 12, 32)});
  // Groups of exactly one pack (RegNet's form), every group at once
  // (kernels::convolution_grouped_pack, tiles of 8 pixels across rows, a last tile of 1 to 8):
  // 8 per group at pack 8, stride 1 on 7x7 and 14x14 (RegNet's maps) and stride 2; 16 per group
  // at pack 16, dilated, with a ReLU. 4 per group runs unpacked at every pack (kNarrowGroup).
  sweep(with_weights({.num_output = 64, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 16},
                     64),
        "64->64 g16 (4 per group)", {Shape::of(13, 5, 64), Shape::of(7, 7, 64)});
  // Last tiles of 1 (7x7), 4 (14x14), 7 (5x3), 2 (5x2) and a lone pixel.
  sweep(with_weights({.num_output = 64, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 8},
                     64),
        "64->64 g8 (8 per group)",
        {Shape::of(7, 7, 64), Shape::of(14, 14, 64), Shape::of(5, 3, 64), Shape::of(5, 2, 64),
         Shape::of(1, 1, 64)});
  sweep(with_weights({.num_output = 64,
                      .kernel_w = 3,
                      .stride_w = 2,
                      .pad_left = 1,
                      .bias_term = 1,
                      .group = 8},
                     64),
        "64->64 g8 (8 per group) stride 2", {Shape::of(19, 11, 64), Shape::of(3, 3, 64)});
  ConvolutionDepthWise wide = with_weights(
      {.num_output = 48, .kernel_w = 3, .dilation_w = 2, .pad_left = 2, .bias_term = 1, .group = 3},
      48);
  wide.activation = {1, {0.f, 0.f}};
  sweep(wide, "48->48 g3 (16 per group) dilation 2 relu", {Shape::of(21, 7, 48)});
  // 1x1 windows at horizontal stride 1 and 2 run along rows (runs of tiles of 8, a tile of 4, then
  // single pixels). Stride 1 without padding: a band of rows is one run (49 = 6x8 + 1, 20 = 2x8 +
  // 4, 23 = 2x8 + 4 + 3 singles, 14x14 threaded, a lone pixel). With padding, or at stride 2
  // (vertical 1 or 3), a run per row. Stride 3 takes the general tiles.
  sweep(with_weights({.num_output = 64, .kernel_w = 1, .bias_term = 1, .group = 8}, 64),
        "64->64 g8 1x1 (8 per group)",
        {Shape::of(7, 7, 64), Shape::of(5, 4, 64), Shape::of(23, 1, 64), Shape::of(14, 14, 64),
         Shape::of(1, 1, 64)});
  sweep(with_weights({.num_output = 64, .kernel_w = 1, .pad_left = 1, .bias_term = 1, .group = 8},
                     64),
        "64->64 g8 1x1 pad 1", {Shape::of(9, 5, 64)});
  ConvolutionDepthWise pointwise16 = with_weights({.num_output = 48,
                                                   .kernel_w = 1,
                                                   .stride_w = 2,
                                                   .bias_term = 1,
                                                   .group = 3,
                                                   .kernel_h = 1,
                                                   .dilation_h = 1,
                                                   .stride_h = 3},
                                                  48);
  pointwise16.activation = {2, {0.1f, 0.f}};
  sweep(pointwise16, "48->48 g3 1x1 (16 per group) stride 2x3 leaky",
        {Shape::of(27, 10, 48), Shape::of(9, 9, 48), Shape::of(2, 2, 48)});
  sweep(with_weights({.num_output = 64, .kernel_w = 1, .stride_w = 2, .bias_term = 1, .group = 8},
                     64),
        "64->64 g8 1x1 stride 2", {Shape::of(19, 11, 64), Shape::of(33, 2, 64)});
  sweep(with_weights({.num_output = 64, .kernel_w = 1, .stride_w = 3, .bias_term = 1, .group = 8},
                     64),
        "64->64 g8 1x1 stride 3", {Shape::of(20, 8, 64)});
  // 1x1 groups of up to three whole packs in and out take the same runs (three output packs a
  // tile where the target has 32 registers, then one at a time), not a GEMM per group: 24 a group
  // at pack 8 (3 -> 3 packs), 24 -> 16 (3 -> 2) at pack 8, 48 a group at pack 16; wider groups
  // and pack 4 (6 packs a group) keep the GEMM.
  using A = ConvolutionDepthWise::Algorithm;
  const ConvolutionDepthWise w24 =
      with_weights({.num_output = 48, .kernel_w = 1, .bias_term = 1, .group = 2}, 48);
  CHECK(w24.algorithm(8) == A::grouped);
  CHECK(w24.algorithm(4) == A::group_gemm);
  sweep(w24, "48->48 g2 1x1 (24 per group)",
        {Shape::of(7, 7, 48), Shape::of(19, 11, 48), Shape::of(3, 1, 48)});
  ConvolutionDepthWise w24s2 = with_weights(
      {.num_output = 48, .kernel_w = 1, .stride_w = 2, .pad_left = 1, .bias_term = 1, .group = 2},
      48);
  w24s2.activation = {1, {0.f, 0.f}};
  CHECK(w24s2.algorithm(8) == A::grouped);
  sweep(w24s2, "48->48 g2 1x1 (24 per group) stride 2 pad 1 relu",
        {Shape::of(15, 9, 48), Shape::of(2, 3, 48)});
  const ConvolutionDepthWise narrowing =
      with_weights({.num_output = 32, .kernel_w = 1, .bias_term = 1, .group = 2}, 48);
  CHECK(narrowing.algorithm(8) == A::grouped);
  sweep(narrowing, "48->32 g2 1x1 (24 -> 16 per group)", {Shape::of(13, 6, 48)});
  const ConvolutionDepthWise w48 = with_weights(
      {.num_output = 96, .kernel_w = 1, .stride_w = 2, .bias_term = 1, .group = 2}, 96);
  CHECK(w48.algorithm(16) == A::grouped);
  CHECK(w48.algorithm(8) == A::group_gemm);
  sweep(w48, "96->96 g2 1x1 (48 per group) stride 2", {Shape::of(17, 6, 96)});
  const ConvolutionDepthWise w64 =
      with_weights({.num_output = 128, .kernel_w = 1, .bias_term = 1, .group = 2}, 128);
  CHECK(w64.algorithm(16) == A::group_gemm);
}

TEST_CASE("ConvolutionDepthWise groups narrower than a pack: vectorized across pixels",
          "[layer][convolution_depthwise]") {
  // kernels::convolution_grouped_planar (every grouped layer at pack 1 runs it too): register
  // tiles of 4 output channels (then 3, 2, 1) across pixel vectors (then one at a time); stride 1
  // on the padded input's grid (chunks that end inside a vector, rows that wrap inside a chunk,
  // the last rows gathered), other strides gathered.
  // ResNeXt's form, 2 and 4 channels a group, 3x3 pad 1, on maps of several chunks (threaded).
  sweep(with_weights({.num_output = 32, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 16},
                     32),
        "32->32 g16 (2 per group)", {Shape::of(45, 41, 32), Shape::of(7, 7, 32)});
  sweep(with_weights({.num_output = 32, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 8},
                     32),
        "32->32 g8 (4 per group)", {Shape::of(19, 13, 32)});
  // 4 a group: unpacked at stride 1; at stride 2 the grouped-pack kernel at pack 4.
  using A = ConvolutionDepthWise::Algorithm;
  for (int pack : {4, 8, 16}) {
    const ConvolutionDepthWise narrow =
        with_weights({.num_output = 32, .kernel_w = 3, .group = 8}, 32);
    CHECK(narrow.algorithm(pack) == A::grouped_unpacked);
  }
  const ConvolutionDepthWise strided =
      with_weights({.num_output = 32, .kernel_w = 3, .stride_w = 2, .group = 8}, 32);
  CHECK(strided.algorithm(4) == A::grouped);
  CHECK(strided.algorithm(16) == A::grouped_unpacked);
  // 1x1 stride 1 without padding (the grid is the output), 7 outputs a group (a tile of 4, then
  // 3), 5 inputs a group; a map narrower than a vector.
  ConvolutionDepthWise pointwise =
      with_weights({.num_output = 28, .kernel_w = 1, .bias_term = 1, .group = 4}, 20);
  pointwise.activation = {2, {0.1f, 0.f}};
  sweep(pointwise, "20->28 g4 1x1 (5 -> 7 per group) leaky",
        {Shape::of(67, 35, 20), Shape::of(3, 1, 20)});
  // Stride 2 and dilation 2 together, 5x3 window, 6 -> 5 per group (tiles of 4 and 1).
  sweep(with_weights({.num_output = 15,
                      .kernel_w = 5,
                      .dilation_w = 2,
                      .stride_w = 2,
                      .pad_left = 3,
                      .bias_term = 1,
                      .group = 3,
                      .kernel_h = 3,
                      .dilation_h = 1,
                      .stride_h = 1,
                      .pad_top = 1},
                     18),
        "18->15 g3 5x3 dilation 2x1 stride 2x1", {Shape::of(23, 9, 18)});
  // ShuffleNet v1's grouped 1x1 (group 8, 48 -> 12 per group: no pack holds whole groups) and a
  // window long enough that a chunk is one vector of pixels (K = 60 * 25).
  sweep(with_weights({.num_output = 96, .kernel_w = 1, .bias_term = 1, .group = 8}, 384),
        "384->96 g8 1x1 (48 -> 12 per group)", {Shape::of(14, 14, 384)});
  sweep(with_weights({.num_output = 6, .kernel_w = 5, .pad_left = 2, .group = 2}, 120),
        "120->6 g2 5x5 (60 -> 3 per group)", {Shape::of(9, 8, 120)});
}

TEST_CASE("ConvolutionDepthWise fold_affine equals convolution then affine",
          "[layer][convolution_depthwise]") {
  const std::vector<ConvolutionDepthWise> layers = {
      depthwise({.kernel_w = 3, .pad_left = 1}, 16),
      with_weights({.num_output = 12, .kernel_w = 3, .pad_left = 1, .bias_term = 1, .group = 2},
                   8)};
  for (const ConvolutionDepthWise& c : layers) {
    const std::size_t n = std::size_t(c.num_output);
    std::vector<float> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = 1.5f - 0.1f * float(i);
      b[i] = -0.2f + 0.07f * float(i);
    }
    ConvolutionDepthWise folded = c;
    REQUIRE(folded.fold_affine(a, b).ok());
    LayerTester(folded, fmt::format("folded g{} -> {}", c.group, c.num_output))
        .reference([c, a, b](const std::vector<RefTensor>& in) {
          RefTensor out = conv_ref(in[0], c);
          const std::size_t plane = std::size_t(out.shape.w) * out.shape.h;
          for (std::size_t i = 0; i < out.v.size(); ++i)
            out.v[i] = out.v[i] * a[i / plane] + b[i / plane];
          return std::vector<RefTensor>{out};
        })
        .shapes({Shape::of(5, 4, c.group == c.num_output ? c.num_output : 8)})
        .tolerance(ElemType::f32, 1e-4f, 1e-4f)
        .tolerance(ElemType::bf16, infer::test::bf16_products(2e-2f))
        .run();
  }
}

TEST_CASE("ConvolutionDepthWise load() reads weights then bias", "[layer][convolution_depthwise]") {
  const ConvolutionDepthWise src = depthwise({.kernel_w = 3, .bias_term = 1}, 8);
  ConvolutionDepthWise c = src;
  c.weight_data.clear();
  c.bias_data.clear();
  infer::io::ModelBinFromArrays mb({src.weight_data, src.bias_data});
  REQUIRE(c.load(mb).ok());
  REQUIRE(c.weight_data == src.weight_data);
  REQUIRE(c.bias_data == src.bias_data);

  ConvolutionDepthWise d = src;
  infer::io::ModelBinFromArrays wrong({std::vector<float>(10, 0.f)});
  const Status st = d.load(wrong);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("ConvolutionDepthWise: weight_data") &&
                                 Catch::Contains("holds 10 values, the layer expects 72"));
}

TEST_CASE("ConvolutionDepthWise errors", "[layer][convolution_depthwise]") {
  Option opt;
  auto run = [&](const ConvolutionDepthWise& c, const Shape& s) {
    Mat in(s);
    in.fill(1.f);
    Mat out;
    return infer::run_layer<float>(c, in, out, 4, Placement::out_of_place, opt);
  };
  const ConvolutionDepthWise c = depthwise({.kernel_w = 3, .pad_left = 1}, 8);

  Status st = run(c, Shape::of(6, 6, 12));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("ConvolutionDepthWise: input 3-D 6x6x12") &&
                                 Catch::Contains("has 12 channels, weight_data_size 72 implies 8"));

  st = run(c, Shape::of(6, 8));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("must be 3-D"));

  ConvolutionDepthWise bad_group = c;
  bad_group.group = 3;
  st = run(bad_group, Shape::of(6, 6, 8));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("group must be > 0 and divide num_output"));

  ConvolutionDepthWise int8 = c;
  int8.int8_scale_term = 2;
  st = run(int8, Shape::of(6, 6, 8));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("ConvolutionDepthWise: 0 weight scales"));

  Mat in(Shape::of(6, 6, 8));
  in.fill(1.f);
  Mat out;
  st = c.forward<float, 1>(in, out, opt);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(),
               Catch::Contains("ConvolutionDepthWise: weights are not prepared for pack 1"));
}
