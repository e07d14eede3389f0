// DeconvolutionDepthWise against a scatter-form grouped reference: depthwise (group == channels ==
// num_output, its own kernel) and grouped cases whose output channel packs straddle groups, with
// strides, dilation, pads, output_pad, output_w/h, no bias, every fused activation, fold_affine,
// weights from ModelBinFromArrays and .bin bytes (f32 and f16 tags), and the error paths.
#include <array>
#include <cmath>
#include <cstdint>
#include <infer/io/model_bin.hpp>
#include <infer/layers/deconvolution_depthwise.hpp>
#include <random>

#include "support/fused_instances.hpp"
#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::DeconvolutionDepthWise;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

/// ncnn's activation_ss, written from its definitions.
float activation_ref(float x, int type, std::array<float, 2> p) {
  switch (type) {
    case 1:
      return x > 0.f ? x : 0.f;
    case 2:
      return x > 0.f ? x : x * p[0];
    case 3:
      return x < p[0] ? p[0] : x > p[1] ? p[1] : x;
    case 4:
      return 1.f / (1.f + std::exp(-x));
    case 5:
      return x * std::tanh(std::log(std::exp(x) + 1.f));
    case 6: {
      const float lower = -p[1] / p[0], upper = 1.f / p[0] + lower;
      return x < lower ? 0.f : x > upper ? x : x * (x * p[0] + p[1]);
    }
    default:
      return x;
  }
}

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Params {
  int channels = 1, num_output = 1, group = 1;
  int kernel = 3, stride = 1, dilation = 1, pad = 0, output_pad = 0, output_size = 0;
  bool bias = true;
  int act = 0;
  std::array<float, 2> act_params{};
};

DeconvolutionDepthWise make_layer(const Params& p) {
  DeconvolutionDepthWise d;
  d.num_output = p.num_output;
  d.group = p.group;
  d.kernel_w = d.kernel_h = p.kernel;
  d.stride_w = d.stride_h = p.stride;
  d.dilation_w = d.dilation_h = p.dilation;
  d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = p.pad;
  d.output_pad_right = d.output_pad_bottom = p.output_pad;
  d.output_w = d.output_h = p.output_size;
  d.bias_term = p.bias;
  d.activation = {p.act, p.act_params};
  d.weight_data_size = p.kernel * p.kernel * (p.channels / p.group) * p.num_output;
  d.weight_data = random_values(std::size_t(d.weight_data_size), unsigned(d.weight_data_size));
  if (p.bias) d.bias_data = random_values(std::size_t(p.num_output), 91);
  return d;
}

/// The grouped transposed convolution by its definition: output channel o of group g = o / (n /
/// group) takes the input channels of group g; pixel (x, y) of input channel q adds
/// in * w[o][q - g * channels_g][ky][kx] at (x * stride + kx * dilation, y * stride + ky *
/// dilation) of the uncut output, which output_pad extends; then the border is cut.
RefTensor deconvolution_ref(const RefTensor& in, const DeconvolutionDepthWise& l) {
  const int w = in.shape.w, h = in.shape.h;
  const int cg = in.shape.c / l.group, nog = l.num_output / l.group;
  const int fw = (w - 1) * l.stride_w + l.dilation_w * (l.kernel_w - 1) + 1 + l.output_pad_right;
  const int fh = (h - 1) * l.stride_h + l.dilation_h * (l.kernel_h - 1) + 1 + l.output_pad_bottom;
  std::vector<double> full(std::size_t(l.num_output) * fw * fh, 0.0);
  for (int o = 0; o < l.num_output; ++o)
    for (int qq = 0; qq < cg; ++qq)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int ky = 0; ky < l.kernel_h; ++ky)
            for (int kx = 0; kx < l.kernel_w; ++kx) {
              const int q = o / nog * cg + qq;
              const int oy = y * l.stride_h + ky * l.dilation_h;
              const int ox = x * l.stride_w + kx * l.dilation_w;
              const float wv =
                  l.weight_data[((std::size_t(o) * cg + qq) * l.kernel_h + ky) * l.kernel_w + kx];
              full[(std::size_t(o) * fh + oy) * fw + ox] += double(in.at(x, y, 0, q)) * wv;
            }
  int left = 0, top = 0, outw = fw, outh = fh;
  if (l.pad_left > 0) {
    left = top = l.pad_left;
    outw = fw - 2 * l.pad_left;
    outh = fh - 2 * l.pad_left;
  } else if (l.output_w > 0) {
    const int wcut = fw - l.output_w, hcut = fh - l.output_h;
    const bool upper = l.pad_left == -233;  // ONNX SAME_UPPER: the odd pixel is cut at the end
    left = upper ? wcut / 2 : wcut - wcut / 2;
    top = upper ? hcut / 2 : hcut - hcut / 2;
    outw = l.output_w;
    outh = l.output_h;
  }
  RefTensor out(Shape::of(outw, outh, l.num_output));
  for (int o = 0; o < l.num_output; ++o)
    for (int y = 0; y < outh; ++y)
      for (int x = 0; x < outw; ++x) {
        const double v = full[(std::size_t(o) * fh + y + top) * fw + x + left] +
                         (l.bias_term ? l.bias_data[std::size_t(o)] : 0.f);
        out.at(x, y, 0, o) = activation_ref(float(v), l.activation.type, l.activation.params);
      }
  return out;
}

void sweep(const DeconvolutionDepthWise& d, const std::string& what,
           const std::vector<Shape>& shapes) {
  LayerTester(d, what)
      .reference([d](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{deconvolution_ref(in[0], d)};
      })
      .shapes(shapes)
      .tolerance(ElemType::f32, 1e-4f, 1e-4f)
      .run();
}

std::vector<Shape> shapes_with(int c, std::initializer_list<std::array<int, 2>> wh) {
  std::vector<Shape> s;
  for (auto [w, h] : wh) s.push_back(Shape::of(w, h, c));
  return s;
}

Params depthwise(int channels) {
  Params p;
  p.channels = p.num_output = p.group = channels;
  return p;
}

constexpr Shape grouped_shape() {
  DeconvolutionDepthWise d;
  d.num_output = 12;
  d.group = 4;
  d.kernel_w = 3;
  d.stride_w = 2;
  d.output_w = 8;  // the parameters ncnn defaults to another one are left at kSameAs
  d.pad_left = -233;
  d.weight_data_size = 3 * 3 * 2 * 12;
  const Shape in[] = {Shape::of(4, 4, 8)};
  Shape out[1];
  return d.infer_shapes(in, out).ok() ? out[0] : Shape{};
}
static_assert(grouped_shape() == Shape::of(8, 8, 12), "output_w/h with -233 sets the size");

}  // namespace

TEST_CASE("DeconvolutionDepthWise depthwise", "[layer][deconvolution_depthwise]") {
  Params p = depthwise(16);
  p.pad = 1;
  sweep(make_layer(p), "DeconvolutionDepthWise dw16 3x3 s1 p1",
        shapes_with(16, {{5, 4}, {1, 1}, {24, 20}}));
  p = depthwise(8);
  p.kernel = 4;
  p.stride = 2;
  p.pad = 1;
  sweep(make_layer(p), "DeconvolutionDepthWise dw8 4x4 s2 p1", shapes_with(8, {{4, 3}, {1, 2}}));
  p = depthwise(3);
  p.dilation = 2;
  p.stride = 2;
  p.output_pad = 1;
  p.bias = false;
  sweep(make_layer(p), "DeconvolutionDepthWise dw3 d2 s2 output_pad 1 no bias",
        shapes_with(3, {{4, 3}, {1, 1}}));
  p = depthwise(12);
  p.stride = 2;
  p.output_size = 7;
  for (int pad : {-233, -234}) {
    p.pad = pad;
    sweep(make_layer(p), fmt::format("DeconvolutionDepthWise dw12 output 7x7 pad {}", pad),
          shapes_with(12, {{4, 4}, {3, 3}}));
  }
}

TEST_CASE("DeconvolutionDepthWise grouped", "[layer][deconvolution_depthwise]") {
  const struct {
    int channels, num_output, group;
  } cases[] = {
      {8, 12, 4},   // 2 inputs and 3 outputs a group: packs of 4 outputs straddle groups
      {6, 4, 2},    // unpacked input
      {16, 32, 2},  // packs of outputs inside one group
      {16, 8, 8},   // one output per group
      {4, 8, 1},    // one group: plain Deconvolution
      {8, 16, 8},   // one input per group, two outputs
  };
  for (const auto& c : cases) {
    Params p;
    p.channels = c.channels;
    p.num_output = c.num_output;
    p.group = c.group;
    p.stride = 2;
    p.pad = 1;
    p.output_pad = 1;
    sweep(make_layer(p),
          fmt::format("DeconvolutionDepthWise {}->{} group {}", c.channels, c.num_output, c.group),
          shapes_with(c.channels, {{4, 3}, {1, 1}}));
  }
}

TEST_CASE("DeconvolutionDepthWise with every fused activation",
          "[layer][deconvolution_depthwise]") {
  const struct {
    int type;
    std::array<float, 2> params;
  } acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-0.5f, 0.75f}},
              {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const auto& a : acts) {
    Params p = depthwise(8);
    p.act = a.type;
    p.act_params = a.params;
    sweep(make_layer(p), fmt::format("DeconvolutionDepthWise dw8 activation_type={}", a.type),
          shapes_with(8, {{3, 3}}));
    Params g;
    g.channels = 4;
    g.num_output = 8;
    g.group = 2;
    g.act = a.type;
    g.act_params = a.params;
    sweep(make_layer(g), fmt::format("DeconvolutionDepthWise 4->8 g2 activation_type={}", a.type),
          shapes_with(4, {{3, 2}}));
  }
}

TEST_CASE("DeconvolutionDepthWise forward_fused takes the activation as a functor",
          "[layer][deconvolution_depthwise]") {
  for (int group : {16, 4}) {
    Params p = depthwise(16);
    p.group = group;
    DeconvolutionDepthWise d = make_layer(p);
    Option opt;
    REQUIRE(d.prepare(ElemType::f32, 16, opt).ok());
    RefTensor in(Shape::of(3, 4, 16));
    in.v = random_values(in.v.size(), 5);
    Mat packed;
    REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, 16, opt).ok());
    Mat out;
    REQUIRE(d.forward_fused<float, 16>(packed, out, opt, infer::act::HardSwish{0.2f, 0.5f}).ok());
    REQUIRE(out.elempack() == 16);
    DeconvolutionDepthWise hs = d;
    hs.activation = {6, {0.2f, 0.5f}};
    const RefTensor want = deconvolution_ref(in, hs), got = infer::test::from_mat(out);
    REQUIRE(got.shape == want.shape);
    for (std::size_t i = 0; i < want.v.size(); ++i)
      REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-5));
  }
}

TEST_CASE("DeconvolutionDepthWise fold_affine equals the affine map after it",
          "[layer][deconvolution_depthwise]") {
  for (int group : {8, 2}) {
    Params p = depthwise(8);
    p.group = group;
    p.bias = group == 2;
    const DeconvolutionDepthWise original = make_layer(p);
    const std::vector<float> a = random_values(8, 5), b = random_values(8, 6);
    DeconvolutionDepthWise folded = original;
    REQUIRE(folded.fold_affine(a, b).ok());
    LayerTester(folded, fmt::format("DeconvolutionDepthWise folded (group {})", group))
        .reference([&](const std::vector<RefTensor>& in) {
          RefTensor out = deconvolution_ref(in[0], original);
          const std::size_t plane = std::size_t(out.shape.w) * out.shape.h;
          for (std::size_t i = 0; i < out.v.size(); ++i)
            out.v[i] = out.v[i] * a[i / plane] + b[i / plane];
          return std::vector<RefTensor>{out};
        })
        .shapes(shapes_with(8, {{3, 2}}))
        .tolerance(ElemType::f32, 1e-4f, 1e-4f)
        .run();
  }
}

namespace {

void append_u32(std::vector<std::byte>& bytes, std::uint32_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  bytes.insert(bytes.end(), p, p + 4);
}
void append_f32(std::vector<std::byte>& bytes, const std::vector<float>& v) {
  const auto* p = reinterpret_cast<const std::byte*>(v.data());
  bytes.insert(bytes.end(), p, p + v.size() * 4);
}
void append_f16(std::vector<std::byte>& bytes, const std::vector<float>& v) {
  for (float x : v) {
    const std::uint16_t bits = infer::f32_to_f16(x).bits;
    const auto* p = reinterpret_cast<const std::byte*>(&bits);
    bytes.insert(bytes.end(), p, p + 2);
  }
  while (bytes.size() % 4) bytes.push_back(std::byte{0});
}

}  // namespace

TEST_CASE("DeconvolutionDepthWise loads weights in ncnn's order",
          "[layer][deconvolution_depthwise][io]") {
  Params p = depthwise(5);  // 45 weights: the f16 buffer needs padding
  const DeconvolutionDepthWise want = make_layer(p);
  std::vector<float> w = want.weight_data;
  for (float& x : w) x = std::round(x * 64.f) / 64.f;  // exact in f16
  DeconvolutionDepthWise params = want;
  params.weight_data.clear();
  params.bias_data.clear();

  SECTION("from arrays") {
    DeconvolutionDepthWise d = params;
    infer::io::ModelBinFromArrays mb({w, want.bias_data});
    REQUIRE(d.load(mb).ok());
    REQUIRE(d.weight_data == w);
    REQUIRE(d.bias_data == want.bias_data);
  }
  for (std::uint32_t tag : {infer::io::kTagF32, infer::io::kTagF16}) {
    DYNAMIC_SECTION("from .bin bytes, tag " << tag) {
      std::vector<std::byte> bytes;
      append_u32(bytes, tag);
      tag == infer::io::kTagF16 ? append_f16(bytes, w) : append_f32(bytes, w);
      append_f32(bytes, want.bias_data);
      DeconvolutionDepthWise d = params;
      infer::io::ModelBinFromMemory mb(bytes);
      REQUIRE(d.load(mb).ok());
      REQUIRE(mb.offset() == bytes.size());
      REQUIRE(d.weight_data == w);
      REQUIRE(d.bias_data == want.bias_data);
      sweep(d, "DeconvolutionDepthWise loaded", shapes_with(5, {{3, 2}}));
    }
  }
  SECTION("errors") {
    DeconvolutionDepthWise d = params;
    infer::io::ModelBinFromArrays missing_bias({w});
    auto st = d.load(missing_bias);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("DeconvolutionDepthWise: bias_data"));
    infer::io::ModelBinFromArrays wrong_count({std::vector<float>(44), want.bias_data});
    st = d.load(wrong_count);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("holds 44 values, the layer expects 45"));
    DeconvolutionDepthWise bad_group = params;
    bad_group.group = 2;
    infer::io::ModelBinFromArrays mb({w, want.bias_data});
    st = bad_group.load(mb);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("num_output must be a multiple of group"));
  }
}

TEST_CASE("DeconvolutionDepthWise rejects bad parameters and inputs",
          "[layer][deconvolution_depthwise]") {
  auto with = [](auto edit) {
    Params p;
    p.channels = 4;
    p.num_output = 8;
    p.group = 2;
    DeconvolutionDepthWise d = make_layer(p);
    edit(d);
    return d;
  };
  const struct {
    DeconvolutionDepthWise layer;
    Shape in;
    const char* message;
  } bad[] = {
      {with([](DeconvolutionDepthWise&) {}), Shape::of(3, 3, 6),
       "has 6 channels, the weights take 4"},
      {with([](DeconvolutionDepthWise&) {}), Shape::of(3, 3, 2, 4), "expects a 3-D input"},
      {with([](DeconvolutionDepthWise& d) { d.group = 3; }), Shape::of(3, 3, 4),
       "num_output must be a multiple of group"},
      {with([](DeconvolutionDepthWise& d) { d.group = 0; }), Shape::of(3, 3, 4),
       "group must be positive"},
      {with([](DeconvolutionDepthWise& d) { d.group = 8; }), Shape::of(3, 3, 4),
       "has 4 channels, the weights take 16"},
      {with([](DeconvolutionDepthWise& d) { d.weight_data_size = 70; }), Shape::of(3, 3, 4),
       "weight_data_size must be kernel_w * kernel_h * (input channels / group) * num_output"},
      {with([](DeconvolutionDepthWise& d) {
         d.output_w = d.output_h = 4;
         d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = -234;
         d.stride_w = 0;
       }),
       Shape::of(3, 3, 4), "stride_w and stride_h must be positive"},
  };
  for (const auto& b : bad) {
    INFO(b.message);
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(b.layer, in, out, 4, Placement::out_of_place, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(),
                 Catch::Contains(b.message) && Catch::Contains("DeconvolutionDepthWise"));
    std::vector<Shape> shapes(1);
    const Shape ins[] = {b.in};
    REQUIRE_FALSE(b.layer.infer_shapes(ins, shapes).ok());
  }

  // Prepared for the depthwise layout, then made grouped: forward notices the stale layout.
  Params p = depthwise(4);
  DeconvolutionDepthWise d = make_layer(p);
  REQUIRE(d.prepare(ElemType::f32, 4, Option{}).ok());
  d.group = 2;
  d.weight_data_size = 3 * 3 * 2 * 4;
  d.weight_data.resize(std::size_t(d.weight_data_size));
  Mat in(Shape::of(3, 3, 4), ElemType::f32, 4), out;
  in.fill(1.f);
  auto st = d.forward<float, 4>(in, out, Option{});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("not prepared for pack 4"));
  REQUIRE(d.prepare(ElemType::f32, 4, Option{}).ok());
  REQUIRE(d.forward<float, 4>(in, out, Option{}).ok());
}
