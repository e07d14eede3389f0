// Convolution against a plain-loop f32 reference over every float type and pack: 1x1, 3x3 (stride
// 1 and 2), dilated 5x5, asymmetric and SAME (-233/-234) pads, every fused activation, odd channel
// counts and 1-wide/1-high inputs; forward_fused with a functor; fold_affine; load() from arrays
// and from .bin bytes (f32 and f16 tags, truncated); shape inference at compile time; error paths.
// The GEMM paths (1x1 in place, 1x1 stride 2, im2col) get awkward channel and pixel counts, and the
// direct fallback one case of its own. Winograd (3x3 stride 1, >= 16 channels, packed inputs) gets
// maps smaller than a tile, edge tiles, asymmetric pads with a pad value, several chunks, output
// channels that leave a partial block and an unpacked output, every activation, and the F(6x6)
// variant through the kernel directly.
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <infer/kernels/winograd.hpp>
#include <infer/layers/convolution.hpp>
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
using infer::layers::Convolution;
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

/// Plain convolution on logical indices: zero-based output (ox, oy, oc) reads input
/// (ox * stride + kx * dilation - pad_left, ...) or pad_value outside the input.
RefTensor conv_ref(const RefTensor& in, const Convolution& c) {
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
  RefTensor out(Shape::of(outw, outh, c.num_output));
  for (int oc = 0; oc < c.num_output; ++oc) {
    for (int oy = 0; oy < outh; ++oy) {
      for (int ox = 0; ox < outw; ++ox) {
        double sum = c.bias_term ? c.bias_data[std::size_t(oc)] : 0.0;
        for (int ic = 0; ic < cin; ++ic) {
          for (int ky = 0; ky < kh; ++ky) {
            for (int kx = 0; kx < kw; ++kx) {
              const int iy = oy * sh + ky * dh - pt, ix = ox * sw + kx * dw - pl;
              const float v =
                  (iy >= 0 && iy < h && ix >= 0 && ix < w) ? in.at(ix, iy, 0, ic) : c.pad_value;
              sum += double(v) *
                     c.weight_data[((std::size_t(oc) * cin + ic) * kh + ky) * kw + std::size_t(kx)];
            }
          }
        }
        out.at(ox, oy, 0, oc) = activation_ref(float(sum), c.activation);
      }
    }
  }
  return out;
}

/// `c` with weight_data_size and random weights (and bias when bias_term) for `cin` inputs.
Convolution with_weights(Convolution c, int cin, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  c.weight_data_size = c.kernel_w * or_w(c.kernel_h, c.kernel_w) * cin * c.num_output;
  c.weight_data.resize(std::size_t(c.weight_data_size));
  for (float& v : c.weight_data) v = dist(rng);
  c.bias_data.clear();
  if (c.bias_term)
    for (int i = 0; i < c.num_output; ++i) c.bias_data.push_back(dist(rng));
  return c;
}

/// The bf16-storage tolerance of `c` on the tester's inputs (|x| <= 3). On AVX512_BF16 the layer
/// multiplies in bf16 (kernels/bf16.hpp): each product of rounded weight and input is off by at
/// most 2^-8 of |w x|, so a GEMM output by at most 2^-8 of S = max over output channels of
/// (3 sum |w| + |bias|), a bound of every pre-activation output; Winograd also rounds its
/// transformed inputs and weights, whose sums its output transform scales by up to 8 x 8:
/// measured (Intel Xeon, AVX512_BF16) up to 6e-2 of the largest output, about 1.5e-2 of S, held
/// to 3e-2 of S. Plus bf16's default (the output's own rounding). Elsewhere bf16's default.
infer::test::Tolerance bf16_tolerance(const Convolution& c) {
  infer::test::Tolerance t = infer::test::default_tolerance(ElemType::bf16);
  if (!infer::kernels::bf16dot::kAvailable) return t;
  const std::size_t per = c.weight_data.size() / std::size_t(c.num_output);
  float bound = 0.f;
  for (int o = 0; o < c.num_output; ++o) {
    float sum = 0.f;
    for (std::size_t i = 0; i < per; ++i) sum += std::fabs(c.weight_data[std::size_t(o) * per + i]);
    const float b = c.bias_term ? std::fabs(c.bias_data[std::size_t(o)]) : 0.f;
    bound = std::max(bound, 3.f * sum + b);
  }
  const bool winograd = c.uses_winograd(4) || c.uses_winograd(8) || c.uses_winograd(16);
  t.abs += (winograd ? 3e-2f : 1.05f / 256.f) * bound;
  return t;
}

void sweep(const Convolution& c, const std::string& what, const std::vector<Shape>& shapes) {
  LayerTester(c, what)
      .reference([c](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{conv_ref(in[0], c)};
      })
      .shapes(shapes)
      .tolerance(ElemType::f32, 1e-4f, 1e-4f)
      .tolerance(ElemType::bf16, bf16_tolerance(c))
      .run();
}

/// f32 tolerance of Winograd F(4x4, 3x3). The transforms add and subtract inputs with
/// coefficients up to 5 (B^T) and 8 (A^T) on each axis, so the rounding errors of f32 grow with
/// those intermediates rather than with the output: on these random values (inputs in [-3, 3],
/// weights in [-0.5, 0.5]) the error measured against the f64 reference is up to 1.5e-4 x
/// (|want| + 1) at 64 channels (3e-4 at |want| ~ 50), 2x that for F(6x6); 5e-4 + 5e-4 |want|
/// leaves 3x margin. f16/bf16 keep their defaults: their output rounding dominates.
constexpr float kWinogradAbs = 5e-4f, kWinogradRel = 5e-4f;

void sweep_winograd(const Convolution& c, const std::string& what,
                    const std::vector<Shape>& shapes) {
  LayerTester(c, what)
      .reference([c](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{conv_ref(in[0], c)};
      })
      .shapes(shapes)
      .tolerance(ElemType::f32, kWinogradAbs, kWinogradRel)
      .tolerance(ElemType::bf16, bf16_tolerance(c))
      .run();
}

/// Output shape from infer_shapes, or dims 0 on failure (usable in static_assert).
constexpr Shape inferred(const Convolution& c, Shape in) {
  Shape out[1];
  return c.infer_shapes(std::span<const Shape>(&in, 1), out).ok() ? out[0] : Shape{};
}

// 3x3 stride 2 SAME_UPPER over 7x6: ceil(7/2) x ceil(6/2); weight_data_size implies 3 inputs.
static_assert(inferred(Convolution{.num_output = 8,
                                   .kernel_w = 3,
                                   .stride_w = 2,
                                   .pad_left = kPadSameUpper,
                                   .weight_data_size = 8 * 3 * 9},
                       Shape::of(7, 6, 3)) == Shape::of(4, 3, 8));
// 5x3 kernel, dilation 2 (extents 9 x 5), pads l1 r0 t2 b0: (10 + 1 - 9) + 1 by (6 + 2 - 5) + 1.
static_assert(inferred(Convolution{.num_output = 4,
                                   .kernel_w = 5,
                                   .dilation_w = 2,
                                   .pad_left = 1,
                                   .weight_data_size = 4 * 2 * 15,
                                   .kernel_h = 3,
                                   .pad_top = 2,
                                   .pad_right = 0,
                                   .pad_bottom = 0},
                       Shape::of(10, 6, 2)) == Shape::of(3, 4, 4));
// Wrong channel count and a kernel larger than the input fail.
static_assert(inferred(Convolution{.num_output = 8, .kernel_w = 3, .weight_data_size = 8 * 3 * 9},
                       Shape::of(7, 6, 4))
                  .dims == 0);
static_assert(inferred(Convolution{.num_output = 8, .kernel_w = 3, .weight_data_size = 8 * 3 * 9},
                       Shape::of(2, 6, 3))
                  .dims == 0);

// The algorithm is known at compile time from the parameters and the pack.
static_assert(!infer::kernels::gemm::kAvailable ||
              Convolution{
                  .num_output = 64, .kernel_w = 3, .pad_left = 1, .weight_data_size = 64 * 64 * 9}
                      .algorithm(4) == Convolution::Algorithm::winograd);
static_assert(!infer::kernels::gemm::kAvailable ||
              Convolution{
                  .num_output = 64, .kernel_w = 3, .stride_w = 2, .weight_data_size = 64 * 64 * 9}
                      .algorithm(4) == Convolution::Algorithm::gemm);

static_assert(infer::check_layer<Convolution>());
static_assert(infer::PreparedLayer<Convolution>);
static_assert(infer::ShapePreparedLayer<Convolution>);
static_assert(infer::FoldsAffine<Convolution>);
static_assert(infer::io::LoadsWeights<Convolution>);
static_assert(infer::ShapeInferable<Convolution>);
static_assert(infer::FusesActivation<Convolution, infer::f16, 8, infer::act::HardSwish>);
static_assert(infer::FusesResidual<Convolution, infer::bf16, 4, infer::act::ReLU>);

}  // namespace

TEST_CASE("Convolution kernel sizes, strides, dilation and pads", "[layer][convolution]") {
  sweep(with_weights({.num_output = 24, .kernel_w = 1, .bias_term = 1}, 16), "1x1 16->24 bias",
        {Shape::of(13, 11, 16), Shape::of(1, 1, 16), Shape::of(1, 9, 16), Shape::of(7, 1, 16)});
  sweep(with_weights({.num_output = 5, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 3),
        "3x3 s1 pad1 3->5 bias",
        {Shape::of(5, 7, 3), Shape::of(1, 1, 3), Shape::of(1, 6, 3), Shape::of(9, 1, 3)});
  sweep(with_weights({.num_output = 24, .kernel_w = 3, .stride_w = 2}, 16), "3x3 s2 16->24",
        {Shape::of(9, 9, 16), Shape::of(10, 8, 16), Shape::of(3, 3, 16)});
  sweep(with_weights({.num_output = 8, .kernel_w = 5, .dilation_w = 2, .bias_term = 1}, 8),
        "5x5 dilation 2 8->8", {Shape::of(13, 12, 8), Shape::of(9, 9, 8)});
  sweep(with_weights({.num_output = 12,
                      .kernel_w = 3,
                      .stride_w = 2,
                      .pad_left = 1,
                      .bias_term = 1,
                      .kernel_h = 2,
                      .stride_h = 1,
                      .pad_top = 2,
                      .pad_right = 0,
                      .pad_bottom = 1,
                      .pad_value = -0.5f},
                     4),
        "3x2 s2x1 pads l1 r0 t2 b1 value -0.5 4->12",
        {Shape::of(6, 5, 4), Shape::of(2, 1, 4), Shape::of(8, 1, 4)});
  sweep(with_weights({.num_output = 5,
                      .kernel_w = 2,
                      .dilation_w = 3,
                      .pad_left = 0,
                      .dilation_h = 1,
                      .pad_top = 1},
                     16),
        "2x2 dilation 3x1 pad t1 b1 16->5", {Shape::of(8, 4, 16), Shape::of(4, 1, 16)});
  sweep(with_weights({.num_output = 32, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 16),
        "3x3 pad1 16->32 (threaded)", {Shape::of(20, 18, 16)});
}

TEST_CASE("Convolution GEMM paths on awkward sizes", "[layer][convolution][gemm]") {
  // 1x1 stride 1 reads the input in place; pixel counts off the register tile (12 or 6), w = 1 and
  // h = 1 leave edge tiles; num_output 5, 17 and 40 leave a partial block of output channels.
  for (int cin : {3, 16, 24}) {
    for (int cout : {5, 17, 40}) {
      sweep(with_weights({.num_output = cout, .kernel_w = 1, .bias_term = cout != 17}, cin),
            fmt::format("1x1 s1 {}->{}", cin, cout),
            {Shape::of(13, 11, cin), Shape::of(1, 1, cin), Shape::of(1, 9, cin),
             Shape::of(7, 1, cin), Shape::of(5, 5, cin)});
    }
  }
  sweep(with_weights({.num_output = 17, .kernel_w = 1, .pad_left = 1, .bias_term = 1}, 16),
        "1x1 s1 pad1 16->17 (in place on the padded input)",
        {Shape::of(6, 5, 16), Shape::of(1, 1, 16)});
  // 1x1 stride 2: the subsampled input is gathered into the workspace.
  sweep(with_weights({.num_output = 17, .kernel_w = 1, .stride_w = 2, .bias_term = 1}, 24),
        "1x1 s2 24->17",
        {Shape::of(9, 9, 24), Shape::of(1, 1, 24), Shape::of(2, 7, 24), Shape::of(14, 1, 24)});
  sweep(with_weights({.num_output = 40, .kernel_w = 1, .stride_w = 2}, 3), "1x1 s2 3->40",
        {Shape::of(10, 8, 3), Shape::of(1, 3, 3)});
  // im2col: 3x3 stride 1 (packed inputs of 24 -> 40 channels take Winograd, pack 1 the GEMM) and
  // 2, dilation.
  sweep(with_weights({.num_output = 40, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 24),
        "3x3 s1 pad1 24->40",
        {Shape::of(13, 7, 24), Shape::of(1, 1, 24), Shape::of(14, 1, 24), Shape::of(1, 5, 24)});
  sweep(with_weights({.num_output = 17, .kernel_w = 3, .stride_w = 2, .pad_left = 1}, 3),
        "3x3 s2 pad1 3->17", {Shape::of(11, 9, 3), Shape::of(1, 1, 3), Shape::of(2, 6, 3)});
  sweep(with_weights({.num_output = 5, .kernel_w = 3, .stride_w = 2, .bias_term = 1}, 16),
        "3x3 s2 16->5", {Shape::of(9, 10, 16), Shape::of(3, 3, 16)});
  sweep(with_weights({.num_output = 17, .kernel_w = 3, .dilation_w = 2, .pad_left = 2}, 16),
        "3x3 dilation 2 pad2 16->17", {Shape::of(7, 8, 16), Shape::of(1, 1, 16)});
  // Small maps and many output channel blocks: two threads split the blocks, each packing the
  // input itself (the 1x1 edge tile in place, the 3x3 gather); the 1x1 map is too little work
  // for a second thread.
  sweep(with_weights({.num_output = 130, .kernel_w = 1, .bias_term = 1}, 48),
        "1x1 s1 48->130 (threads split the channels)",
        {Shape::of(7, 7, 48), Shape::of(9, 5, 48), Shape::of(1, 1, 48)});
  sweep(with_weights({.num_output = 136, .kernel_w = 3, .stride_w = 2, .pad_left = 1}, 32),
        "3x3 s2 pad1 32->136 (threads split the channels)",
        {Shape::of(13, 13, 32), Shape::of(8, 9, 32)});
  // Enough tiles for several chunks per thread.
  sweep(with_weights({.num_output = 40, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 16),
        "3x3 pad1 16->40 (threaded chunks)", {Shape::of(30, 29, 16)});
}

TEST_CASE("Convolution GEMM epilogue applies every activation", "[layer][convolution][gemm]") {
  const ActivationParam acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-1.f, 1.5f}},
                                  {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const ActivationParam& a : acts) {
    Convolution c1 =
        with_weights({.num_output = 17, .kernel_w = 1, .bias_term = 1}, 16, unsigned(a.type));
    c1.activation = a;
    sweep(c1, fmt::format("1x1 16->17 activation {}", a.type),
          {Shape::of(13, 2, 16), Shape::of(1, 1, 16)});
    Convolution c3 = with_weights(
        {.num_output = 40, .kernel_w = 3, .stride_w = 2, .pad_left = 1, .bias_term = 1}, 24,
        unsigned(a.type) + 10);
    c3.activation = a;
    sweep(c3, fmt::format("3x3 s2 24->40 activation {}", a.type), {Shape::of(9, 7, 24)});
  }
}

TEST_CASE("Convolution chooses Winograd for 3x3 stride 1 with enough channels",
          "[layer][convolution][winograd]") {
  using Algorithm = Convolution::Algorithm;
  const Convolution c = with_weights({.num_output = 16, .kernel_w = 3, .pad_left = 1}, 16);
  if constexpr (infer::kernels::gemm::kAvailable) {
    REQUIRE(c.algorithm(4) == Algorithm::winograd);
    REQUIRE(c.algorithm(1) == Algorithm::gemm);  // pack 1 stays on the GEMM
    REQUIRE(with_weights({.num_output = 15, .kernel_w = 3}, 16).algorithm(4) == Algorithm::gemm);
    REQUIRE(with_weights({.num_output = 16, .kernel_w = 3}, 12).algorithm(4) == Algorithm::gemm);
    REQUIRE(with_weights({.num_output = 16, .kernel_w = 3, .stride_w = 2}, 16).algorithm(4) ==
            Algorithm::gemm);
    REQUIRE(with_weights({.num_output = 16, .kernel_w = 3, .dilation_w = 2}, 16).algorithm(4) ==
            Algorithm::gemm);
    REQUIRE(with_weights({.num_output = 16, .kernel_w = 3, .kernel_h = 1}, 16).algorithm(4) ==
            Algorithm::gemm);
    // F(2x2) on output maps of at most 16 x 16 pixels, F(4x4) above and where the shape is not
    // known; the other algorithms do not follow the shape.
    REQUIRE(c.algorithm(4, Shape::of(16, 16, 16)) == Algorithm::winograd_small);
    REQUIRE(c.algorithm(4, Shape::of(7, 7, 16)) == Algorithm::winograd_small);
    REQUIRE(c.algorithm(4, Shape::of(64, 4, 16)) == Algorithm::winograd_small);
    REQUIRE(c.algorithm(4, Shape::of(17, 16, 16)) == Algorithm::winograd);
    REQUIRE(c.algorithm(4, Shape{}) == Algorithm::winograd);
    REQUIRE(c.algorithm(4, Shape::of(7, 7, 12)) == Algorithm::winograd);  // rejected: kept
    REQUIRE(c.algorithm(1, Shape::of(7, 7, 16)) == Algorithm::gemm);
    REQUIRE(
        with_weights({.num_output = 16, .kernel_w = 3}, 16).algorithm(4, Shape::of(18, 18, 16)) ==
        Algorithm::winograd_small);  // pad 0: 16 x 16 out
  } else {
    REQUIRE(c.algorithm(4) == Algorithm::direct);
  }
}

TEST_CASE("Convolution Winograd path on awkward sizes", "[layer][convolution][winograd]") {
  // 24 inputs (packs 1, 4, 8), 40 outputs (a partial block of output channels): maps smaller
  // than one 4x4 tile, edge tiles on both axes, 1-wide and 1-high maps with pad 1. The runner
  // prepares for each shape: maps up to 16 x 16 run F(2x2), 19x17 and 24x14 F(4x4).
  sweep_winograd(
      with_weights({.num_output = 40, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 24),
      "winograd 3x3 pad1 24->40 bias",
      {Shape::of(7, 7, 24), Shape::of(13, 11, 24), Shape::of(1, 1, 24), Shape::of(1, 6, 24),
       Shape::of(9, 1, 24), Shape::of(4, 4, 24), Shape::of(19, 17, 24), Shape::of(24, 14, 24)});
  // Pad 0, 17 outputs: the output is unpacked (pack 1) whatever the input pack.
  sweep_winograd(
      with_weights({.num_output = 17, .kernel_w = 3}, 16), "winograd 3x3 pad0 16->17",
      {Shape::of(13, 11, 16), Shape::of(3, 3, 16), Shape::of(3, 8, 16), Shape::of(21, 19, 16)});
  // Asymmetric pads with a pad value, read bounds-checked by the input transform.
  sweep_winograd(with_weights({.num_output = 32,
                               .kernel_w = 3,
                               .pad_left = 2,
                               .bias_term = 1,
                               .pad_top = 0,
                               .pad_right = 1,
                               .pad_bottom = 3,
                               .pad_value = -0.5f},
                              32),
                 "winograd 3x3 pads l2 r1 t0 b3 value -0.5 32->32", {Shape::of(10, 6, 32)});
  // 64 -> 64 on 40x38: 100 tiles in several chunks, split over the threads.
  sweep_winograd(with_weights({.num_output = 64, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 64),
                 "winograd 3x3 pad1 64->64 (several chunks)", {Shape::of(40, 38, 64)});
  // SAME padding resolves to pad 1.
  sweep_winograd(with_weights({.num_output = 16, .kernel_w = 3, .pad_left = kPadSameUpper}, 16),
                 "winograd 3x3 SAME 16->16", {Shape::of(5, 9, 16)});
}

TEST_CASE("Convolution Winograd epilogue applies every activation",
          "[layer][convolution][winograd]") {
  const ActivationParam acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-1.f, 1.5f}},
                                  {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const ActivationParam& a : acts) {
    Convolution c = with_weights({.num_output = 24, .kernel_w = 3, .pad_left = 1, .bias_term = 1},
                                 16, unsigned(a.type) + 20);
    c.activation = a;
    sweep_winograd(c, fmt::format("winograd 3x3 16->24 activation {}", a.type),
                   {Shape::of(9, 6, 16), Shape::of(20, 15, 16)});  // F(2x2), F(4x4)
  }
}

TEST_CASE("Convolution runs the Winograd tile it was prepared for on any map",
          "[layer][convolution][winograd]") {
  // prepare()'s shape picks the tile; forward runs that tile whatever map it is given: F(2x2)
  // prepared for 7x7 run on 23x21, F(4x4) (no shape) on 6x5, each against the reference.
  using Algorithm = Convolution::Algorithm;
  if constexpr (infer::kernels::gemm::kAvailable) {
    constexpr int kP = infer::simd::has_width<16> ? 16 : 4;
    Convolution c =
        with_weights({.num_output = 32, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 32);
    struct Case {
      Shape prepared, run;
      Algorithm algo;
    };
    for (const Case& k :
         {Case{Shape::of(7, 7, 32), Shape::of(23, 21, 32), Algorithm::winograd_small},
          Case{Shape{}, Shape::of(6, 5, 32), Algorithm::winograd}}) {
      Option opt;
      REQUIRE(c.prepare(ElemType::f32, kP, opt, k.prepared).ok());
      REQUIRE(c.prepared_algo == k.algo);
      REQUIRE(c.chosen(kP) == k.algo);
      RefTensor in(k.run);
      std::mt19937 rng(11);
      std::uniform_real_distribution<float> dist(-3.f, 3.f);
      for (float& v : in.v) v = dist(rng);
      const RefTensor want = conv_ref(in, c);
      Mat packed;
      REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, kP, opt).ok());
      for (int threads : {1, 2}) {
        opt.num_threads = threads;
        Mat out;
        REQUIRE(c.forward<infer::f32, kP>(packed, out, opt).ok());
        // forward_with names the algorithm: the prepared one runs, another is an error.
        Mat other;
        if (k.algo == Algorithm::winograd_small)
          CHECK_FALSE(c.forward_with<infer::f32, kP, Algorithm::winograd>(packed, other, opt,
                                                                          infer::act::Identity{})
                          .ok());
        else
          CHECK_FALSE(c.forward_with<infer::f32, kP, Algorithm::winograd_small>(
                           packed, other, opt, infer::act::Identity{})
                          .ok());
        Mat flat;
        REQUIRE(infer::convert(out, flat, ElemType::f32, 1, opt).ok());
        const RefTensor got = infer::test::from_mat(flat);
        REQUIRE(got.v.size() == want.v.size());
        float worst = 0.f;
        for (std::size_t i = 0; i < want.v.size(); ++i)
          worst = std::max(worst, std::fabs(got.v[i] - want.v[i]) / (1.f + std::fabs(want.v[i])));
        INFO("algorithm " << int(k.algo) << " on " << k.run.w << "x" << k.run.h << " threads "
                          << threads << " max relative error " << worst);
        CHECK(worst <= kWinogradAbs + kWinogradRel);
      }
    }
  }
}

TEST_CASE("Winograd F(6x6, 3x3) kernel against the reference", "[convolution][winograd]") {
  // The layer runs F(4x4); the kernel's F(6x6) variant is checked here, f32 pack 16 (pack 4 where
  // the target has no 16-lane batch). F(6x6)'s transforms have larger coefficients (A^T up to 32,
  // B^T 5.25, G 1/180): measured max |error| 2.6e-4 here (outputs up to ~35), 1e-3 allowed.
  namespace wk = infer::kernels::winograd;
  if constexpr (infer::kernels::gemm::kAvailable) {
    constexpr int kP = infer::simd::has_width<16> ? 16 : 4;
    const int cin = 32, cout = 48;
    const Convolution c =
        with_weights({.num_output = cout, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, cin);
    for (const Shape& s : {Shape::of(13, 11, cin), Shape::of(2, 7, cin), Shape::of(40, 31, cin)}) {
      RefTensor in(s);
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> dist(-3.f, 3.f);
      for (float& v : in.v) v = dist(rng);
      const RefTensor want = conv_ref(in, c);
      std::vector<float> weights(wk::weights_size<6>(cout, cin));
      wk::transform_weights<6>(c.weight_data.data(), weights.data(), cin, cout);
      std::vector<float> bias(infer::kernels::gemm::bias_size(cout));
      infer::kernels::gemm::pack_bias(c.bias_data.data(), bias.data(), cout);
      Option opt;
      Mat packed;
      REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, kP, opt).ok());
      Mat out(Shape::of(s.w, s.h, cout), ElemType::f32, kP);
      out.fill(std::nanf(""));
      for (int threads : {1, 2}) {
        std::vector<float> workspace(std::size_t(threads) *
                                     wk::plan<6>(s.w, s.h, cin, cout, threads).workspace());
        wk::convolution_winograd<float, kP, kP, 6>(
            packed.view<float, kP>(), 1, 1, 0.f, out.view<float, kP>(), weights.data(), bias.data(),
            infer::act::Identity{}, workspace.data(), threads);
        const RefTensor got = infer::test::from_mat(out);
        float worst = 0.f;
        for (std::size_t i = 0; i < want.v.size(); ++i)
          worst =
              std::max(worst, std::isnan(got.v[i]) ? INFINITY : std::fabs(got.v[i] - want.v[i]));
        INFO("F(6x6) " << s.w << "x" << s.h << " threads " << threads << " max |error| " << worst);
        CHECK(worst <= 1e-3f);
      }
    }
  }
}

TEST_CASE("Convolution keeps the direct kernel for huge num_input x kernel",
          "[layer][convolution]") {
  // 9800 inputs x 9 positions exceed the GEMM's per-thread panel limit (16 MiB of 8 x 6 pixels on
  // AVX2, of 8 x 12 on AVX-512).
  const Convolution c = with_weights({.num_output = 3, .kernel_w = 3, .bias_term = 1}, 9800);
  REQUIRE_FALSE(c.uses_gemm());
  REQUIRE(with_weights({.num_output = 3, .kernel_w = 3}, 16).uses_gemm());
  sweep(c, "3x3 9800->3 direct", {Shape::of(3, 4, 9800)});
}

TEST_CASE("Convolution SAME pads (-233 upper, -234 lower)", "[layer][convolution]") {
  for (int code : {kPadSameUpper, kPadSameLower}) {
    // Even kernel extents and stride 2 give odd total pads, which the two codes split apart.
    sweep(with_weights({.num_output = 4,
                        .kernel_w = 4,
                        .stride_w = 2,
                        .pad_left = code,
                        .bias_term = 1,
                        .kernel_h = 3,
                        .pad_value = 0.25f},
                       8),
          fmt::format("4x3 s2 pad {} 8->4", code),
          {Shape::of(7, 6, 8), Shape::of(8, 8, 8), Shape::of(1, 1, 8), Shape::of(2, 5, 8)});
    sweep(with_weights({.num_output = 16, .kernel_w = 3, .dilation_w = 2, .pad_left = code}, 4),
          fmt::format("3x3 dilation 2 pad {} 4->16", code), {Shape::of(6, 7, 4)});
  }
}

TEST_CASE("Convolution fused activations (9=activation_type 0..6)", "[layer][convolution]") {
  const ActivationParam acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-1.f, 1.5f}},
                                  {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const ActivationParam& a : acts) {
    Convolution c = with_weights({.num_output = 8, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 4,
                                 unsigned(a.type));
    c.activation = a;
    sweep(c, fmt::format("3x3 pad1 4->8 activation {}", a.type),
          {Shape::of(6, 5, 4), Shape::of(1, 3, 4)});
  }
}

TEST_CASE("Convolution forward_fused takes the activation functor", "[layer][convolution]") {
  const Convolution c =
      with_weights({.num_output = 8, .kernel_w = 3, .pad_left = 1, .bias_term = 1}, 4);
  RefTensor in(Shape::of(6, 5, 4));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  for (float& v : in.v) v = dist(rng);
  Convolution ref = c;
  ref.activation = {2, {0.25f, 0.f}};
  const RefTensor want = conv_ref(in, ref);

  Option opt;
  Convolution prepared = c;
  REQUIRE(prepared.prepare(ElemType::f32, 4, opt).ok());
  Mat in4;
  REQUIRE(infer::convert(infer::test::to_mat(in), in4, ElemType::f32, 4, opt).ok());
  Mat out;
  const Status st = prepared.forward_fused<float, 4>(in4, out, opt, infer::act::ReLU{0.25f});
  INFO((st.ok() ? std::string("ok") : st.message()));
  REQUIRE(st.ok());
  REQUIRE(out.elempack() == 4);  // pack_for(8 outputs, 4)
  const RefTensor got = infer::test::from_mat(out);
  REQUIRE(got.shape == want.shape);
  for (std::size_t i = 0; i < want.v.size(); ++i)
    REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-4));
}

namespace {

/// A convolution of `cin` -> `outc` channels over a w x h input: a kernel x kernel window, its
/// stride, pad and dilation, and ncnn's activation type `act` (2, 3 and 6 with parameters).
struct WindowCase {
  int cin, outc, w, h, kernel, stride, pad, dilation, act;
};

/// The layer of `k` with random weights and bias from `seed`.
Convolution window_case_layer(const WindowCase& k, unsigned seed) {
  Convolution c = with_weights({.num_output = k.outc,
                                .kernel_w = k.kernel,
                                .dilation_w = k.dilation,
                                .stride_w = k.stride,
                                .pad_left = k.pad,
                                .bias_term = 1},
                               k.cin, seed);
  c.activation = {k.act, k.act == 2   ? std::array<float, 2>{0.1f, 0.f}
                         : k.act == 3 ? std::array<float, 2>{-1.f, 2.f}
                         : k.act == 6 ? std::array<float, 2>{1.f / 6, 0.5f}
                                      : std::array<float, 2>{0.f, 0.f}};
  return c;
}

/// An input of `k`'s shape, uniform in [-3, 3).
RefTensor window_case_input(const WindowCase& k, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  RefTensor in(Shape::of(k.w, k.h, k.cin));
  for (float& v : in.v) v = dist(rng);
  return in;
}

}  // namespace

TEST_CASE("Convolution: a stem of few pack-1 channels into a packed output (convolution_stem)",
          "[layer][convolution][gemm]") {
  // An f32 pack-1 input of 1 to 4 channels whose output the graph plans at a wider pack runs
  // kernels::gemm::convolution_stem: broadcasts straight from the padded input, one row of
  // kWidth channels for a block with no more live (8 outputs, 24's last block), rows moved back
  // at a row's end, single pixels on rows narrower than a tile. Every pack a planned output may
  // hold, against the reference.
  using Case = WindowCase;
  const Case cases[] = {
      {3, 8, 41, 23, 3, 2, 1, 1, 2},    // yolo-fastest's 3 -> 8, 3x3 s2, leaky ReLU
      {3, 64, 37, 29, 3, 2, 0, 1, 1},   // squeezenet's conv1 form, no pad
      {3, 24, 30, 17, 3, 2, 1, 1, 6},   // 24: a block of 16 and one of 8; hardswish
      {3, 37, 19, 21, 7, 2, 3, 1, 0},   // ResNet's 7x7 s2 form, a partial last block
      {1, 16, 13, 9, 5, 1, 2, 2, 3},    // one channel, dilated 5x5, clip
      {2, 12, 6, 5, 3, 1, 1, 1, 1},     // rows narrower than a tile
      {4, 8, 9, 40, 1, 1, 0, 1, 0},     // 1x1, four channels
      {3, 96, 35, 35, 11, 4, 2, 1, 1},  // AlexNet's 11x11 s4 form
  };
  std::mt19937 rng(11);
  int index = 0;
  for (const Case& k : cases) {
    Convolution c = window_case_layer(k, unsigned(20 + index++));
    const RefTensor in = window_case_input(k, rng);
    const RefTensor want = conv_ref(in, c);
    Option opt;
    REQUIRE(c.prepare(ElemType::f32, 1, opt).ok());
    const Mat in1 = infer::test::to_mat(in);
    for (int pack : {4, 8, 16}) {
      if (pack > infer::simd::max_width || k.outc % pack != 0) continue;
      for (int threads : {1, 2}) {
        CAPTURE(k.cin, k.outc, k.w, k.h, k.kernel, k.stride, k.pad, k.dilation, k.act, pack,
                threads);
        opt.num_threads = threads;
        Mat out;
        REQUIRE(out.create(want.shape, ElemType::f32, pack).ok());
        const Status st = c.forward<float, 1>(in1, out, opt);
        INFO((st.ok() ? std::string("ok") : st.message()));
        REQUIRE(st.ok());
        REQUIRE(out.elempack() == pack);
        const RefTensor got = infer::test::from_mat(out);
        REQUIRE(got.shape == want.shape);
        for (std::size_t i = 0; i < want.v.size(); ++i)
          REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-4).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("Convolution: a packed input on the GEMM into a wider planned output",
          "[layer][convolution][gemm]") {
  // At f32 on the GEMM, an input at pack 4 or 8 whose output the graph plans at a wider pack
  // (cpu_wide_out_packs: the pack its readers run at) is stored at that pack by the epilogue,
  // with no repack after it: 1x1 expansions (YOLO-Fastest's 4 -> 24, 8 -> 32), a strided 3x3, a
  // dilated 5x5, fewer than Winograd's 16 channels at 3x3 stride 1; partial pixel tiles. Each
  // against the reference, in f32 and, where the CPU multiplies in bf16, with bf16 arithmetic.
  using Case = WindowCase;
  const Case cases[] = {
      {4, 24, 23, 19, 1, 1, 0, 1, 2},  // 1x1 4 -> 24 (pack 4 -> 8), leaky ReLU
      {8, 32, 17, 9, 1, 1, 0, 1, 1},   // 1x1 8 -> 32 (pack 8 -> 16, 4 -> 8 or 16)
      {8, 48, 21, 13, 3, 2, 1, 1, 6},  // 3x3 stride 2, hardswish
      {4, 16, 11, 7, 3, 1, 1, 1, 3},   // 3x3 stride 1 of 4 channels: the GEMM, not Winograd
      {8, 64, 19, 15, 5, 1, 4, 2, 0},  // 5x5 dilated 2
  };
  std::mt19937 rng(13);
  int index = 0;
  int wider_runs = 0;
  for (const Case& k : cases) {
    Convolution c = window_case_layer(k, unsigned(40 + index++));
    const RefTensor in = window_case_input(k, rng);
    const RefTensor want = conv_ref(in, c);
    // bf16 arithmetic multiplies the inputs and weights rounded to bf16, whose products f32
    // holds exactly: the reference on rounded values leaves the sums' order alone.
    Convolution cr = c;
    for (float& v : cr.weight_data) v = infer::test::round_bf16(v);
    RefTensor in_r = in;
    for (float& v : in_r.v) v = infer::test::round_bf16(v);
    const RefTensor want_bf16 = conv_ref(in_r, cr);
    for (int in_pack : {4, 8}) {
      if (in_pack > infer::simd::max_width || k.cin % in_pack != 0) continue;
      REQUIRE(c.algorithm(in_pack) == Convolution::Algorithm::gemm);
      REQUIRE((c.cpu_wide_out_packs() & unsigned(in_pack)) != 0);
      for (const bool bf16 : {false, true}) {
        if (bf16 && !infer::kernels::bf16dot::kAvailable) continue;
        Option opt;
        opt.bf16_arithmetic = bf16;
        REQUIRE(c.prepare(ElemType::f32, in_pack, opt).ok());
        Mat packed_in;
        REQUIRE(
            infer::convert(infer::test::to_mat(in), packed_in, ElemType::f32, in_pack, opt).ok());
        const RefTensor& expect = bf16 ? want_bf16 : want;
        for (int out_pack : {in_pack, 8, 16}) {
          if (out_pack < in_pack || out_pack > infer::simd::max_width || k.outc % out_pack != 0)
            continue;
          for (int threads : {1, 2}) {
            CAPTURE(k.cin, k.outc, k.w, k.h, k.kernel, k.stride, k.act, in_pack, out_pack, bf16,
                    threads);
            opt.num_threads = threads;
            Mat out;
            REQUIRE(out.create(want.shape, ElemType::f32, out_pack).ok());
            Status st;
            infer::layers::detail::with_pack<8>(in_pack, [&](auto p) {
              constexpr int P = decltype(p)::value;
              if constexpr (P > 1) st = c.forward<float, P>(packed_in, out, opt);
            });
            INFO((st.ok() ? std::string("ok") : st.message()));
            REQUIRE(st.ok());
            REQUIRE(out.elempack() == out_pack);
            wider_runs += out_pack > in_pack;
            const RefTensor got = infer::test::from_mat(out);
            REQUIRE(got.shape == want.shape);
            for (std::size_t i = 0; i < expect.v.size(); ++i)
              REQUIRE(got.v[i] == Approx(expect.v[i]).margin(1e-4).epsilon(1e-4));
          }
        }
      }
    }
  }
  CHECK(wider_runs > 0);
}

namespace {

/// A Convolution with a residual sum taken in, as the composer fuses ResNet's shortcut: inputs
/// (x, r), output act(conv(x) + bias + r) through forward_residual, its activation the layer's.
struct ConvolutionResidual {
  static constexpr std::string_view ncnn_type = "ConvolutionResidual";
  Convolution conv;
  using storage = infer::storage_list<infer::f32, infer::f16, infer::bf16>;
  using packs = infer::all_packs;
  Status prepare(ElemType type, int pack, const Option& opt, const Shape& in) {
    return conv.prepare(type, pack, opt, in);
  }
  Status prepare(ElemType type, int pack, const Option& opt) {
    return conv.prepare(type, pack, opt);
  }
  template <infer::StorageElement T, int Pack>
  Status forward(std::span<const Mat> in, std::span<Mat> out, const Option& opt) const {
    return infer::layers::with_activation(conv.activation, [&](const auto& a) {
      return conv.forward_residual<T, Pack>(in[0], in[1], out[0], opt, a);
    });
  }
};

/// conv_ref with the residual added before the activation.
RefTensor conv_residual_ref(const RefTensor& x, const RefTensor& r, Convolution c) {
  const ActivationParam a = c.activation;
  c.activation = {};
  RefTensor out = conv_ref(x, c);
  REQUIRE(out.shape == r.shape);
  for (std::size_t i = 0; i < out.v.size(); ++i) out.v[i] = activation_ref(out.v[i] + r.v[i], a);
  return out;
}

}  // namespace

TEST_CASE("Convolution forward_residual adds the residual in every algorithm's epilogue",
          "[layer][convolution][residual]") {
  // Each float algorithm on odd shapes, every type and pack the tester sweeps (the residual at
  // the output's pack, as the composer plans it): the 1x1 GEMM read in place, at pack 1 its
  // pixel tiles (7 channels), the im2col GEMM (3x3 stride 2, dilated 3x3), Winograd F(4x4) and
  // F(2x2) (3x3 stride 1 on more and fewer than kWinogradSmallPixels outputs), the direct kernel
  // (9800 inputs), with activations that do not commute with the sum.
  struct Case {
    int cin, outc, kernel, stride, pad, dilation, act;
    Shape in;
    const char* what;
  };
  const Case cases[] = {
      {16, 24, 1, 1, 0, 1, 1, Shape::of(9, 7, 16), "1x1 16->24 ReLU"},
      {7, 7, 1, 1, 0, 1, 3, Shape::of(13, 11, 7), "1x1 7->7 clip (pack 1)"},
      {24, 32, 3, 2, 1, 1, 2, Shape::of(10, 9, 24), "3x3 s2 24->32 leaky"},
      {8, 12, 3, 1, 2, 2, 6, Shape::of(7, 8, 8), "3x3 dilation 2 8->12 hardswish"},
      {16, 16, 3, 1, 1, 1, 1, Shape::of(18, 15, 16), "3x3 16->16 Winograd F(4x4) ReLU"},
      {32, 16, 3, 1, 1, 1, 4, Shape::of(9, 7, 32), "3x3 32->16 Winograd F(2x2) sigmoid"},
      {9800, 3, 3, 1, 1, 1, 0, Shape::of(3, 4, 9800), "3x3 9800->3 direct"},
  };
  int index = 0;
  for (const Case& k : cases) {
    Convolution c = window_case_layer(
        {k.cin, k.outc, k.in.w, k.in.h, k.kernel, k.stride, k.pad, k.dilation, k.act},
        unsigned(40 + index++));
    const Shape out = inferred(c, k.in);
    REQUIRE(out.dims == 3);
    const bool winograd = c.uses_winograd(4) || c.uses_winograd(8) || c.uses_winograd(16);
    LayerTester(ConvolutionResidual{c}, k.what)
        .reference([c](const std::vector<RefTensor>& in) {
          return std::vector<RefTensor>{conv_residual_ref(in[0], in[1], c)};
        })
        .inputs({k.in, out})
        .tolerance(ElemType::f32, winograd ? kWinogradAbs : 1e-4f, winograd ? kWinogradRel : 1e-4f)
        .tolerance(ElemType::bf16, bf16_tolerance(c))
        .run();
  }
}

TEST_CASE("Convolution forward_residual: the stem kernel, and residuals that do not match",
          "[layer][convolution][residual]") {
  // A 3-channel pack-1 input into an output planned at a wider pack runs convolution_stem, which
  // adds the residual too.
  Convolution c = with_weights(
      {.num_output = 16, .kernel_w = 3, .stride_w = 2, .pad_left = 1, .bias_term = 1}, 3, 61);
  c.activation = {1, {}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  RefTensor x(Shape::of(21, 17, 3));
  for (float& v : x.v) v = dist(rng);
  const Shape out_shape = inferred(c, x.shape);
  RefTensor r(out_shape);
  for (float& v : r.v) v = dist(rng);
  const RefTensor want = conv_residual_ref(x, r, c);
  Option opt;
  REQUIRE(c.prepare(ElemType::f32, 1, opt).ok());
  for (int pack : {4, 8, 16}) {
    if (pack > infer::simd::max_width) continue;
    CAPTURE(pack);
    Mat res, top;
    REQUIRE(infer::convert(infer::test::to_mat(r), res, ElemType::f32, pack, opt).ok());
    REQUIRE(top.create(out_shape, ElemType::f32, pack).ok());
    const Status st =
        c.forward_residual<float, 1>(infer::test::to_mat(x), res, top, opt, infer::act::ReLU{});
    INFO((st.ok() ? std::string("ok") : st.message()));
    REQUIRE(st.ok());
    REQUIRE(top.elempack() == pack);
    const RefTensor got = infer::test::from_mat(top);
    for (std::size_t i = 0; i < want.v.size(); ++i)
      REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-4).epsilon(1e-4));
  }
  // A residual of another shape or pack: an error naming both, not a read out of bounds.
  Convolution g = with_weights({.num_output = 8, .kernel_w = 1, .bias_term = 1}, 8, 62);
  REQUIRE(g.prepare(ElemType::f32, 8, opt).ok());
  Mat in8, wrong, top;
  REQUIRE(
      infer::convert(infer::test::to_mat(RefTensor(Shape::of(5, 4, 8))), in8, ElemType::f32, 8, opt)
          .ok());
  REQUIRE(wrong.create(Shape::of(4, 4, 8), ElemType::f32, 8).ok());
  Status st = g.forward_residual<float, 8>(in8, wrong, top, opt, infer::act::Identity{});
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("residual") && Catch::Contains("does not match"));
  REQUIRE(wrong.create(Shape::of(5, 4, 8), ElemType::f32, 1).ok());
  st = g.forward_residual<float, 8>(in8, wrong, top, opt, infer::act::Identity{});
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("does not match"));
}

TEST_CASE("Convolution fold_affine equals convolution then affine", "[layer][convolution]") {
  for (int bias : {0, 1}) {
    const Convolution c =
        with_weights({.num_output = 12, .kernel_w = 3, .pad_left = 1, .bias_term = bias}, 8);
    std::vector<float> a(12), b(12);
    for (int i = 0; i < 12; ++i) {
      a[std::size_t(i)] = 0.5f + 0.1f * float(i);
      b[std::size_t(i)] = 0.3f - 0.05f * float(i);
    }
    Convolution folded = c;
    REQUIRE(folded.fold_affine(a, b).ok());
    REQUIRE(folded.bias_term == 1);
    LayerTester(folded, fmt::format("folded 3x3 8->12 bias {}", bias))
        .reference([c, a, b](const std::vector<RefTensor>& in) {
          RefTensor out = conv_ref(in[0], c);
          const std::size_t plane = std::size_t(out.shape.w) * out.shape.h;
          for (std::size_t i = 0; i < out.v.size(); ++i)
            out.v[i] = out.v[i] * a[i / plane] + b[i / plane];
          return std::vector<RefTensor>{out};
        })
        .shapes({Shape::of(5, 4, 8)})
        .tolerance(ElemType::f32, 1e-4f, 1e-4f)
        .tolerance(ElemType::bf16, bf16_tolerance(folded))
        .run();
  }
  Convolution c = with_weights({.num_output = 4, .kernel_w = 1}, 4);
  const std::vector<float> three(3, 1.f), four(4, 1.f);
  Status st = c.fold_affine(three, four);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("fold_affine needs 4 values"));
  c.activation = {1, {}};
  st = c.fold_affine(four, four);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("activation_type 1"));
}

namespace {

void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + 4);
}
void put_f32(std::vector<std::byte>& out, const std::vector<float>& v) {
  for (float x : v) put_u32(out, std::bit_cast<std::uint32_t>(x));
}

}  // namespace

TEST_CASE("Convolution load() reads ncnn's weight order", "[layer][convolution][io]") {
  // 3 inputs, 5 outputs, 3x3: 135 weights then 5 biases.
  const Convolution src = with_weights({.num_output = 5, .kernel_w = 3, .bias_term = 1}, 3);
  Convolution params = src;
  params.weight_data.clear();
  params.bias_data.clear();

  SECTION("from arrays") {
    infer::io::ModelBinFromArrays mb({src.weight_data, src.bias_data});
    Convolution c = params;
    REQUIRE(c.load(mb).ok());
    REQUIRE(c.weight_data == src.weight_data);
    REQUIRE(c.bias_data == src.bias_data);
    REQUIRE(mb.consumed() == 2);

    infer::io::ModelBinFromArrays short_mb({src.weight_data});
    const Status st = Convolution(params).load(short_mb);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("Convolution: bias_data"));
  }
  SECTION("from .bin bytes with the f32 tag") {
    std::vector<std::byte> bin;
    put_u32(bin, infer::io::kTagF32);
    put_f32(bin, src.weight_data);
    put_f32(bin, src.bias_data);
    infer::io::ModelBinFromMemory mb(bin);
    Convolution c = params;
    REQUIRE(c.load(mb).ok());
    REQUIRE(c.weight_data == src.weight_data);
    REQUIRE(c.bias_data == src.bias_data);
    REQUIRE(mb.offset() == bin.size());
  }
  SECTION("from .bin bytes with the f16 tag (odd count, padded to 4 bytes)") {
    std::vector<std::byte> bin;
    put_u32(bin, infer::io::kTagF16);
    std::vector<float> rounded;
    for (float w : src.weight_data) {
      const infer::f16 h = infer::f32_to_f16(w);
      rounded.push_back(infer::f16_to_f32(h));
      const auto* p = reinterpret_cast<const std::byte*>(&h.bits);
      bin.insert(bin.end(), p, p + 2);
    }
    bin.resize(bin.size() + 2);  // 135 halves: 270 bytes, aligned to 272
    put_f32(bin, src.bias_data);
    infer::io::ModelBinFromMemory mb(bin, "conv.bin");
    Convolution c = params;
    REQUIRE(c.load(mb).ok());
    REQUIRE(c.weight_data == rounded);
    REQUIRE(c.bias_data == src.bias_data);
    REQUIRE(mb.offset() == bin.size());

    // Runs with the loaded weights as the reference does.
    sweep(c, "3x3 3->5 f16-loaded", {Shape::of(5, 4, 3)});
  }
  SECTION("a truncated .bin names the offset") {
    std::vector<std::byte> bin;
    put_u32(bin, infer::io::kTagF32);
    put_f32(bin, src.weight_data);
    put_f32(bin, src.bias_data);
    bin.resize(bin.size() - 6);
    infer::io::ModelBinFromMemory mb(bin, "conv.bin");
    Convolution c = params;
    const Status st = c.load(mb);
    REQUIRE_FALSE(st.ok());
    // The bias starts after the 4-byte tag and 135 floats.
    REQUIRE_THAT(st.message(), Catch::Contains("Convolution: bias_data") &&
                                   Catch::Contains("conv.bin: offset 544") &&
                                   Catch::Contains("needs 20 bytes") &&
                                   Catch::Contains("only 14 left"));

    bin.resize(100);
    infer::io::ModelBinFromMemory mb2(bin, "conv.bin");
    const Status st2 = Convolution(params).load(mb2);
    REQUIRE_FALSE(st2.ok());
    REQUIRE_THAT(st2.message(), Catch::Contains("Convolution: weight_data") &&
                                    Catch::Contains("offset 4") &&
                                    Catch::Contains("needs 540 bytes"));
  }
}

TEST_CASE("Convolution errors", "[layer][convolution]") {
  Option opt;
  auto run = [&](const Convolution& c, const Shape& s) {
    Mat in(s);
    in.fill(1.f);
    Mat out;
    return infer::run_layer<float>(c, in, out, 4, Placement::out_of_place, opt);
  };
  const Convolution c = with_weights({.num_output = 5, .kernel_w = 3, .bias_term = 1}, 3);

  Status st = run(c, Shape::of(6, 6, 5));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Convolution: input 3-D 6x6x5") &&
                                 Catch::Contains("has 5 channels, weight_data_size 135 implies 3"));
  st = run(c, Shape::of(6, 6, 4));  // the runner packs 4 channels by 4, which 3 inputs cannot be
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(),
               Catch::Contains("pack 4 does not divide the 3 input channels weight_data_size 135"));

  st = run(c, Shape::of(6, 18));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("must be 3-D"));

  st = run(c, Shape::of(2, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("larger than the padded input"));

  Convolution bad_pad = c;
  bad_pad.pad_left = -1;
  st = run(bad_pad, Shape::of(6, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("pads must be >= 0"));

  Convolution int8 = c;  // quantized, but no scales given
  int8.int8_scale_term = 1;
  st = run(int8, Shape::of(6, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Convolution: 0 weight scales"));

  Convolution bad_act = c;
  bad_act.activation.type = 7;
  st = run(bad_act, Shape::of(6, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("activation_type 7"));

  Convolution unloaded = c;
  unloaded.weight_data.pop_back();
  st = run(unloaded, Shape::of(6, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("weight_data holds 134 values"));

  Convolution bad_size = c;
  bad_size.weight_data_size = 134;
  st = run(bad_size, Shape::of(6, 6, 3));
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("weight_data_size must be"));

  // forward without prepare, or prepared for another pack.
  Mat in(Shape::of(6, 6, 3));
  in.fill(1.f);
  Mat out;
  st = c.forward<float, 1>(in, out, opt);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Convolution: weights are not prepared for pack 1"));
  Convolution wide = with_weights({.num_output = 8, .kernel_w = 1}, 8);
  REQUIRE(wide.prepare(ElemType::f32, 8, opt).ok());
  Mat in8(Shape::of(4, 4, 8));
  in8.fill(1.f);
  st = wide.forward<float, 1>(in8, out, opt);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("not prepared for pack 1 (prepared for 8"));
  REQUIRE(wide.prepare(ElemType::f32, 1, opt).ok());
  REQUIRE(wide.forward<float, 1>(in8, out, opt).ok());
  Convolution narrow = c;
  st = narrow.prepare(ElemType::f32, 4, opt);  // 3 inputs cannot be packed by 4
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("pack 4 does not divide the 3 input channels"));
}
