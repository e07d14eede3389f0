// Deconvolution against a scatter-form reference (each input pixel adds its weighted kernel into
// the uncut output, then the border is cut): kernels, strides, dilations, asymmetric pads,
// output_pad, output_w/h with -233/-234, no bias, every fused activation, fold_affine, weights
// from ModelBinFromArrays and .bin bytes (f32 and f16 tags), and the error paths. Every case runs
// the packed GEMM (Deconvolution::algorithm()); one case checks that it is the one prepared.
#include <array>
#include <cmath>
#include <cstdint>
#include <infer/io/model_bin.hpp>
#include <infer/layers/deconvolution.hpp>
#include <random>

#include "support/fused_instances.hpp"
#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Deconvolution;
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

/// The geometry of one parameter set; weights are random.
struct Params {
  int channels = 1, num_output = 1;
  int kernel_w = 3, kernel_h = 3;
  int stride_w = 1, stride_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;
  int output_pad_right = 0, output_pad_bottom = 0;
  int output_w = 0, output_h = 0;
  bool bias = true;
  int act = 0;
  std::array<float, 2> act_params{};
};

Deconvolution make_layer(const Params& p) {
  Deconvolution d;
  d.num_output = p.num_output;
  d.kernel_w = p.kernel_w;
  d.kernel_h = p.kernel_h;
  d.stride_w = p.stride_w;
  d.stride_h = p.stride_h;
  d.dilation_w = p.dilation_w;
  d.dilation_h = p.dilation_h;
  d.pad_left = p.pad_left;
  d.pad_right = p.pad_right;
  d.pad_top = p.pad_top;
  d.pad_bottom = p.pad_bottom;
  d.output_pad_right = p.output_pad_right;
  d.output_pad_bottom = p.output_pad_bottom;
  d.output_w = p.output_w;
  d.output_h = p.output_h;
  d.bias_term = p.bias;
  d.activation = {p.act, p.act_params};
  d.weight_data_size = p.kernel_w * p.kernel_h * p.channels * p.num_output;
  d.weight_data = random_values(std::size_t(d.weight_data_size), unsigned(d.weight_data_size));
  if (p.bias) d.bias_data = random_values(std::size_t(p.num_output), 77);
  return d;
}

/// The transposed convolution by its definition: input pixel (x, y) of channel q adds
/// in * w[o][q][ky][kx] at (x * stride_w + kx * dilation_w, y * stride_h + ky * dilation_h) of
/// the uncut output, which output_pad extends right and down; then the border is cut.
RefTensor deconvolution_ref(const RefTensor& in, const Deconvolution& l) {
  const int w = in.shape.w, h = in.shape.h, channels = in.shape.c;
  const int fw = (w - 1) * l.stride_w + l.dilation_w * (l.kernel_w - 1) + 1 + l.output_pad_right;
  const int fh = (h - 1) * l.stride_h + l.dilation_h * (l.kernel_h - 1) + 1 + l.output_pad_bottom;
  std::vector<double> full(std::size_t(l.num_output) * fw * fh, 0.0);
  for (int o = 0; o < l.num_output; ++o)
    for (int q = 0; q < channels; ++q)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int ky = 0; ky < l.kernel_h; ++ky)
            for (int kx = 0; kx < l.kernel_w; ++kx) {
              const int oy = y * l.stride_h + ky * l.dilation_h;
              const int ox = x * l.stride_w + kx * l.dilation_w;
              const float wv =
                  l.weight_data[((std::size_t(o) * channels + q) * l.kernel_h + ky) * l.kernel_w +
                                kx];
              full[(std::size_t(o) * fh + oy) * fw + ox] += double(in.at(x, y, 0, q)) * wv;
            }
  int left = 0, top = 0, outw = fw, outh = fh;
  if (l.pad_left > 0 || l.pad_right > 0 || l.pad_top > 0 || l.pad_bottom > 0) {
    left = l.pad_left;
    top = l.pad_top;
    outw = fw - l.pad_left - l.pad_right;
    outh = fh - l.pad_top - l.pad_bottom;
  } else if (l.output_w > 0 && l.output_h > 0) {
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

void sweep(const Deconvolution& d, const std::string& what, const std::vector<Shape>& shapes) {
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

/// Only the keys a .param line would give: kernel_h, stride_h and the other pads follow ncnn's
/// defaults (kSameAs).
constexpr Deconvolution stride2_layer() {
  Deconvolution d;
  d.num_output = 4;
  d.kernel_w = 4;
  d.stride_w = 2;
  d.pad_left = 1;
  d.weight_data_size = 4 * 4 * 3 * 4;
  return d;
}
constexpr Shape stride2_shape() {
  const Shape in[] = {Shape::of(5, 6, 3)};
  Shape out[1];
  return stride2_layer().infer_shapes(in, out).ok() ? out[0] : Shape{};
}
static_assert(stride2_shape() == Shape::of(10, 12, 4), "4x4 stride 2 pad 1 doubles w and h");

}  // namespace

TEST_CASE("Deconvolution 3x3 stride 1", "[layer][deconvolution]") {
  Params p;
  p.channels = 4;
  p.num_output = 8;
  sweep(make_layer(p), "Deconvolution 3x3 s1 4->8",
        shapes_with(4, {{5, 4}, {1, 1}, {7, 1}, {1, 6}}));
  p.channels = 3;
  p.num_output = 5;
  sweep(make_layer(p), "Deconvolution 3x3 s1 3->5", shapes_with(3, {{4, 3}, {1, 1}}));
}

TEST_CASE("Deconvolution 4x4 stride 2 pad 1", "[layer][deconvolution]") {
  Params p;
  p.channels = 16;
  p.num_output = 24;
  p.kernel_w = p.kernel_h = 4;
  p.stride_w = p.stride_h = 2;
  p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
  sweep(make_layer(p), "Deconvolution 4x4 s2 p1 16->24",
        shapes_with(16, {{5, 4}, {1, 1}, {3, 7}, {12, 12}}));
  p.channels = 8;
  p.num_output = 16;
  sweep(make_layer(p), "Deconvolution 4x4 s2 p1 8->16", shapes_with(8, {{4, 4}, {1, 3}}));
}

TEST_CASE("Deconvolution runs the packed GEMM on every group-1 shape", "[layer][deconvolution]") {
  using infer::kernels::gemm::kAvailable;
  STATIC_REQUIRE(Deconvolution::uses_gemm() == kAvailable);
  STATIC_REQUIRE((Deconvolution::algorithm() == Deconvolution::Algorithm::gemm) == kAvailable);
  // Kernels 2x2 to 4x4 and 3x2, strides 1 to 3, dilation 2 (with stride 2 it leaves odd output
  // phases bias-only), cut pads and output_pad, channel counts that no pack or GEMM block divides
  // (output packs 8, 4 and 1 under input pack 16), more than one 32-channel GEMM block (thread
  // split), partial pixel tiles, 1x1 inputs, and wide maps (below).
  struct Case {
    const char* what;
    Params p;
    std::vector<Shape> shapes;
  };
  std::vector<Case> cases;
  auto add = [&](const char* what, std::initializer_list<std::array<int, 2>> wh, auto edit) {
    Params p;
    edit(p);
    cases.push_back({what, p, shapes_with(p.channels, wh)});
  };
  add("2x2 s2 24->40", {{7, 5}, {1, 1}, {13, 3}}, [](Params& p) {
    p.channels = 24;
    p.num_output = 40;
    p.kernel_w = p.kernel_h = 2;
    p.stride_w = p.stride_h = 2;
  });
  add("3x3 s1 p1 20->36 relu", {{9, 7}, {1, 3}}, [](Params& p) {
    p.channels = 20;
    p.num_output = 36;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    p.act = 1;
  });
  add("4x4 s2 p1 12->33 leaky", {{5, 7}, {11, 6}}, [](Params& p) {
    p.channels = 12;
    p.num_output = 33;
    p.kernel_w = p.kernel_h = 4;
    p.stride_w = p.stride_h = 2;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
    p.act = 2;
    p.act_params = {0.1f, 0.f};
  });
  add("3x3 s3 output_pad 2,1 16->20 no bias", {{4, 5}, {1, 1}}, [](Params& p) {
    p.channels = 16;
    p.num_output = 20;
    p.stride_w = p.stride_h = 3;
    p.output_pad_right = 2;
    p.output_pad_bottom = 1;
    p.bias = false;
  });
  add("4x4 s2 d2 pads 2,1,0,3 output_pad 1 8->48 hardswish", {{6, 5}, {1, 1}}, [](Params& p) {
    p.channels = 8;
    p.num_output = 48;
    p.kernel_w = p.kernel_h = 4;
    p.stride_w = p.stride_h = 2;
    p.dilation_w = p.dilation_h = 2;
    p.pad_left = 2;
    p.pad_right = 1;
    p.pad_top = 0;
    p.pad_bottom = 3;
    p.output_pad_right = p.output_pad_bottom = 1;
    p.act = 6;
    p.act_params = {0.2f, 0.5f};
  });
  add("3x3 s2 d2 5->17", {{5, 4}}, [](Params& p) {
    p.channels = 5;
    p.num_output = 17;
    p.stride_w = p.stride_h = 2;
    p.dilation_w = p.dilation_h = 2;
  });
  add("3x2 s3x2 d1x2 32->64", {{10, 9}, {3, 1}}, [](Params& p) {
    p.channels = 32;
    p.num_output = 64;
    p.kernel_h = 2;
    p.stride_w = 3;
    p.stride_h = 2;
    p.dilation_h = 2;
  });
  // Outputs over 1000 wide: the accumulator holds a few output rows, so the input is walked in
  // bands whose shared rows carry over; rows cut at the top; output_pad rows past the last band's
  // reach (stride 1, output_pad 3) are bias alone.
  add("4x4 s2 pads 1,2,3,1 wide 8->40", {{600, 9}}, [](Params& p) {
    p.channels = 8;
    p.num_output = 40;
    p.kernel_w = p.kernel_h = 4;
    p.stride_w = p.stride_h = 2;
    p.pad_left = 1;
    p.pad_right = 2;
    p.pad_top = 3;
    p.pad_bottom = 1;
  });
  add("3x3 s1 pad_top 2 output_pad 0,3 wide 4->8", {{1100, 5}}, [](Params& p) {
    p.channels = 4;
    p.num_output = 8;
    p.pad_top = 2;
    p.output_pad_bottom = 3;
  });
  for (const Case& c : cases) {
    const Deconvolution d = make_layer(c.p);
    if constexpr (kAvailable) {
      // prepare lays the weights out as GEMM blocks, the only layout forward<.., Pack> accepts.
      for (int pack : {1, 4, 8, 16}) {
        INFO(c.what << " pack " << pack);
        Deconvolution prepared = d;
        REQUIRE(prepared.prepare(ElemType::f32, pack, Option{}).ok());
        REQUIRE(prepared.packed_blocks.empty());
        REQUIRE(prepared.packed_weight.size() ==
                infer::kernels::deconvolution_gemm_weights_size(c.p.channels, c.p.num_output,
                                                                c.p.kernel_w * c.p.kernel_h));
        REQUIRE(prepared.packed_bias.size() == infer::kernels::gemm::bias_size(c.p.num_output));
      }
    }
    sweep(d, fmt::format("Deconvolution GEMM {}", c.what), c.shapes);
  }
}

TEST_CASE("Deconvolution's forward refuses weights laid out for the direct kernel",
          "[layer][deconvolution]") {
  if constexpr (infer::kernels::gemm::kAvailable) {
    Params p;
    p.channels = 16;
    p.num_output = 16;
    Deconvolution d = make_layer(p);
    REQUIRE(infer::layers::detail::deconv_prepare(d, 1, 16, "Deconvolution").ok());
    Mat in(Shape::of(3, 3, 16), ElemType::f32, 16), out;
    in.fill(1.f);
    const infer::Status st = d.forward<float, 16>(in, out, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("weights are not prepared for pack 16"));
  }
}

TEST_CASE("Deconvolution takes ncnn's defaults for the parameters it leaves unset",
          "[layer][deconvolution]") {
  Params p;
  p.channels = 3;
  p.num_output = 4;
  p.kernel_w = p.kernel_h = 4;
  p.stride_w = p.stride_h = 2;
  p.dilation_w = p.dilation_h = 2;
  p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
  p.output_pad_right = p.output_pad_bottom = 1;
  const Deconvolution full = make_layer(p);
  Deconvolution d = stride2_layer();
  d.dilation_w = 2;
  d.output_pad_right = 1;
  d.bias_term = 1;
  d.weight_data = full.weight_data;
  d.bias_data = full.bias_data;
  LayerTester(d, "Deconvolution with kSameAs fields")
      .reference([full](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{deconvolution_ref(in[0], full)};
      })
      .shapes(shapes_with(3, {{5, 6}, {1, 1}}))
      .tolerance(ElemType::f32, 1e-4f, 1e-4f)
      .run();
}

TEST_CASE("Deconvolution dilation and asymmetric geometry", "[layer][deconvolution]") {
  Params p;
  p.channels = 8;
  p.num_output = 5;
  p.dilation_w = p.dilation_h = 2;
  sweep(make_layer(p), "Deconvolution 3x3 d2 8->5", shapes_with(8, {{6, 5}, {2, 1}}));

  p = {};
  p.channels = 5;
  p.num_output = 7;
  p.kernel_w = 3;
  p.kernel_h = 2;
  p.stride_w = 2;
  p.stride_h = 1;
  p.dilation_w = 1;
  p.dilation_h = 2;
  p.pad_left = 1;
  p.pad_right = 0;
  p.pad_top = 2;
  p.pad_bottom = 1;
  sweep(make_layer(p), "Deconvolution 3x2 s2x1 d1x2 pads 1,0,2,1 5->7",
        shapes_with(5, {{4, 5}, {1, 3}}));
}

TEST_CASE("Deconvolution output_pad", "[layer][deconvolution]") {
  Params p;
  p.channels = 3;
  p.num_output = 16;
  p.stride_w = p.stride_h = 2;
  p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = 1;
  p.output_pad_right = p.output_pad_bottom = 1;
  sweep(make_layer(p), "Deconvolution 3x3 s2 p1 output_pad 1", shapes_with(3, {{4, 3}, {1, 1}}));
  p = {};  // no pads: the output keeps the extra bias-only column and row
  p.channels = 12;
  p.num_output = 12;
  p.kernel_w = p.kernel_h = 2;
  p.stride_w = p.stride_h = 2;
  p.output_pad_right = 1;
  p.output_pad_bottom = 2;
  p.act = 4;
  sweep(make_layer(p), "Deconvolution 2x2 s2 output_pad 1,2 sigmoid",
        shapes_with(12, {{3, 4}, {1, 1}}));
}

TEST_CASE("Deconvolution output_w/output_h", "[layer][deconvolution]") {
  for (int pad : {-233, -234}) {
    Params p;
    p.channels = 8;
    p.num_output = 8;
    p.stride_w = p.stride_h = 2;
    p.pad_left = p.pad_right = p.pad_top = p.pad_bottom = pad;
    p.output_w = 10;
    p.output_h = 9;
    // 5x5 gives 11x11 uncut (cuts 1 and 2), 6x4 gives 13x9 (cuts 3 and 0).
    sweep(make_layer(p), fmt::format("Deconvolution output 10x9 pad {}", pad),
          shapes_with(8, {{5, 5}, {6, 4}}));
  }
}

TEST_CASE("Deconvolution without bias", "[layer][deconvolution]") {
  Params p;
  p.channels = 8;
  p.num_output = 16;
  p.bias = false;
  sweep(make_layer(p), "Deconvolution 3x3 no bias", shapes_with(8, {{4, 3}, {1, 1}}));
}

TEST_CASE("Deconvolution with every fused activation", "[layer][deconvolution]") {
  const struct {
    int type;
    std::array<float, 2> params;
  } acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-0.5f, 0.75f}},
              {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const auto& a : acts) {
    Params p;
    p.channels = 4;
    p.num_output = 8;
    p.stride_w = p.stride_h = 2;
    p.act = a.type;
    p.act_params = a.params;
    sweep(make_layer(p), fmt::format("Deconvolution activation_type={}", a.type),
          shapes_with(4, {{3, 3}}));
  }
}

TEST_CASE("Deconvolution forward_fused takes the activation as a functor",
          "[layer][deconvolution]") {
  Params p;
  p.channels = 8;
  p.num_output = 8;
  Deconvolution d = make_layer(p);
  Option opt;
  REQUIRE(d.prepare(ElemType::f32, 8, opt).ok());
  RefTensor in(Shape::of(4, 3, 8));
  in.v = random_values(in.v.size(), 5);
  Mat packed;
  REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, 8, opt).ok());
  Mat out;
  REQUIRE(d.forward_fused<float, 8>(packed, out, opt, infer::act::Clip{-0.25f, 0.5f}).ok());
  REQUIRE(out.elempack() == 8);
  Deconvolution clip = d;
  clip.activation = {3, {-0.25f, 0.5f}};
  const RefTensor want = deconvolution_ref(in, clip), got = infer::test::from_mat(out);
  REQUIRE(got.shape == want.shape);
  for (std::size_t i = 0; i < want.v.size(); ++i)
    REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-5));
}

TEST_CASE("Deconvolution fold_affine equals the affine map after it", "[layer][deconvolution]") {
  for (bool bias : {false, true}) {
    Params p;
    p.channels = 4;
    p.num_output = 12;
    p.bias = bias;
    const Deconvolution original = make_layer(p);
    const std::vector<float> a = random_values(12, 5), b = random_values(12, 6);
    Deconvolution folded = original;
    REQUIRE(folded.fold_affine(a, b).ok());
    LayerTester(folded, fmt::format("Deconvolution folded (bias_term {})", bias))
        .reference([&](const std::vector<RefTensor>& in) {
          RefTensor out = deconvolution_ref(in[0], original);
          const std::size_t plane = std::size_t(out.shape.w) * out.shape.h;
          for (std::size_t i = 0; i < out.v.size(); ++i)
            out.v[i] = out.v[i] * a[i / plane] + b[i / plane];
          return std::vector<RefTensor>{out};
        })
        .shapes(shapes_with(4, {{3, 2}}))
        .tolerance(ElemType::f32, 1e-4f, 1e-4f)
        .run();
  }
  Params p;
  p.channels = 2;
  p.num_output = 4;
  p.act = 1;
  Deconvolution relu = make_layer(p);
  auto st = relu.fold_affine(std::vector<float>(4, 1.f), {});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Deconvolution: cannot fold"));
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

TEST_CASE("Deconvolution loads weights in ncnn's order", "[layer][deconvolution][io]") {
  Params p;
  p.channels = 3;
  p.num_output = 5;  // 3 * 5 * 9 = 135 weights: an odd count, so the f16 buffer needs padding
  const Deconvolution want = make_layer(p);
  std::vector<float> w = want.weight_data;
  for (float& x : w) x = std::round(x * 64.f) / 64.f;  // exact in f16
  Deconvolution params = want;
  params.weight_data.clear();
  params.bias_data.clear();

  SECTION("from arrays") {
    Deconvolution d = params;
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
      Deconvolution d = params;
      infer::io::ModelBinFromMemory mb(bytes);
      REQUIRE(d.load(mb).ok());
      REQUIRE(mb.offset() == bytes.size());
      REQUIRE(d.weight_data == w);
      REQUIRE(d.bias_data == want.bias_data);
      sweep(d, "Deconvolution loaded", shapes_with(3, {{3, 2}}));
    }
  }
  SECTION("errors") {
    Deconvolution d = params;
    infer::io::ModelBinFromArrays missing_bias({w});
    auto st = d.load(missing_bias);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("Deconvolution: bias_data"));
    infer::io::ModelBinFromArrays wrong_count({std::vector<float>(134), want.bias_data});
    st = d.load(wrong_count);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("Deconvolution: weight_data") &&
                                   Catch::Contains("holds 134 values, the layer expects 135"));
    std::vector<std::byte> int8;
    append_u32(int8, infer::io::kTagI8);
    infer::io::ModelBinFromMemory quantized(int8);
    st = d.load(quantized);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("int8"));
    Deconvolution no_size = params;
    no_size.weight_data_size = 0;
    infer::io::ModelBinFromArrays mb({w, want.bias_data});
    st = no_size.load(mb);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("weight_data_size must be"));
  }
}

TEST_CASE("Deconvolution rejects bad parameters and inputs", "[layer][deconvolution]") {
  Params base;
  base.channels = 4;
  base.num_output = 4;
  auto with = [&](auto edit) {
    Deconvolution d = make_layer(base);
    edit(d);
    return d;
  };
  const struct {
    Deconvolution layer;
    Shape in;
    const char* message;
    bool shape_check_fails = true;  ///< false where only the weight arrays are wrong
  } bad[] = {
      {with([](Deconvolution&) {}), Shape::of(5, 4), "expects a 3-D input (w, h, c)"},
      {with([](Deconvolution&) {}), Shape::of(5, 4, 5), "has 5 channels, the weights take 4"},
      {with([](Deconvolution& d) { d.output_w = d.output_h = 4; }), Shape::of(3, 3, 4),
       "output_w/output_h need pads of -233 (SAME_UPPER) or -234 (SAME_LOWER)"},
      {with([](Deconvolution& d) {
         d.output_w = d.output_h = 9;
         d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = -233;
       }),
       Shape::of(3, 3, 4), "output_w/output_h are larger than the uncut output"},
      {with([](Deconvolution& d) { d.pad_left = d.pad_right = 3; }), Shape::of(3, 3, 4),
       "the pads cut away the whole output"},
      {with([](Deconvolution& d) {
         d.pad_left = 1;
         d.pad_right = -233;
       }),
       Shape::of(3, 3, 4), "pads mix positive values with negative ones"},
      {with([](Deconvolution& d) { d.stride_h = 0; }), Shape::of(3, 3, 4),
       "stride_w and stride_h must be positive"},
      {with([](Deconvolution& d) { d.kernel_h = 0; }), Shape::of(3, 3, 4),
       "kernel_w and kernel_h must be positive"},
      {with([](Deconvolution& d) { d.dilation_w = 0; }), Shape::of(3, 3, 4),
       "dilation_w and dilation_h must be positive"},
      {with([](Deconvolution& d) { d.output_pad_right = -1; }), Shape::of(3, 3, 4),
       "output_pad_right and output_pad_bottom must not be negative"},
      {with([](Deconvolution& d) { d.num_output = 0; }), Shape::of(3, 3, 4),
       "num_output must be positive"},
      {with([](Deconvolution& d) { d.weight_data_size = 100; }), Shape::of(3, 3, 4),
       "weight_data_size must be kernel_w * kernel_h * (input channels / group) * num_output"},
      {with([](Deconvolution& d) { d.activation.type = 7; }), Shape::of(3, 3, 4),
       "activation_type must be one of ncnn's 0..6"},
      {with([](Deconvolution& d) { d.weight_data.resize(10); }), Shape::of(3, 3, 4),
       "weight_data holds 10 values, weight_data_size is 144", false},
      {with([](Deconvolution& d) { d.bias_data.resize(3); }), Shape::of(3, 3, 4),
       "bias_data holds 3 values, expected num_output = 4", false},
  };
  for (const auto& b : bad) {
    INFO(b.message);
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(b.layer, in, out, 4, Placement::out_of_place, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Deconvolution"));
    std::vector<Shape> shapes(1);
    const Shape ins[] = {b.in};
    const infer::ShapeCheck check = b.layer.infer_shapes(ins, shapes);
    REQUIRE(check.ok() != b.shape_check_fails);
  }

  // Forward without prepare (or prepared for another pack) names the missing step.
  Deconvolution d = make_layer(base);
  Mat in(Shape::of(3, 3, 4)), out;
  in.fill(1.f);
  auto st = d.forward<float, 1>(in, out, Option{});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Deconvolution: weights are not prepared for pack 1"));
  REQUIRE(d.prepare(ElemType::f32, 4, Option{}).ok());
  REQUIRE_FALSE(d.forward<float, 1>(in, out, Option{}).ok());
  REQUIRE(d.prepare(ElemType::f32, 1, Option{}).ok());
  REQUIRE(d.forward<float, 1>(in, out, Option{}).ok());
  REQUIRE_FALSE(d.prepare(ElemType::f32, 3, Option{}).ok());
}
