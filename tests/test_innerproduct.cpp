// InnerProduct against plain loops over the logical input: flattened 1-D to 4-D inputs, ncnn's
// batch-of-rows 2-D form, odd output counts, no bias, every fused activation, fold_affine, weights
// from ModelBinFromArrays and from .bin bytes (f32 and f16 tags), and the error paths.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <infer/io/model_bin.hpp>
#include <infer/layers/innerproduct.hpp>
#include <random>

#include "support/fused_instances.hpp"
#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::InnerProduct;
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

InnerProduct make_layer(int num_input, int num_output, bool bias, int act_type = 0,
                        std::array<float, 2> act_params = {}) {
  InnerProduct ip;
  ip.num_output = num_output;
  ip.bias_term = bias;
  ip.weight_data_size = num_input * num_output;
  ip.activation = {act_type, act_params};
  ip.weight_data = random_values(std::size_t(num_input) * num_output, unsigned(num_input * 31));
  if (bias) ip.bias_data = random_values(std::size_t(num_output), unsigned(num_output * 7));
  return ip;
}

/// The reference: a RefTensor's values are already in the flattened (c, d, h, w) order.
RefTensor innerproduct_ref(const RefTensor& in, const InnerProduct& ip) {
  const int n = ip.weight_data_size / ip.num_output;
  const bool rows = in.shape.dims == 2 && in.shape.w == n && in.shape.h > 1;
  const int batch = rows ? in.shape.h : 1;
  RefTensor out(rows ? Shape::of(ip.num_output, batch) : Shape::of(ip.num_output));
  for (int r = 0; r < batch; ++r) {
    for (int o = 0; o < ip.num_output; ++o) {
      double sum = ip.bias_term ? ip.bias_data[std::size_t(o)] : 0.0;
      for (int k = 0; k < n; ++k)
        sum += double(in.v[std::size_t(r) * n + k]) * ip.weight_data[std::size_t(o) * n + k];
      out.v[std::size_t(r) * ip.num_output + o] =
          activation_ref(float(sum), ip.activation.type, ip.activation.params);
    }
  }
  return out;
}

/// bf16 storage multiplies in bf16 on AVX512_BF16 (the one-sample product): its error grows with
/// the sum of |w x|; measured within 1e-2 of the largest output, held to 2e-2.
constexpr float kBf16Peak = 2e-2f;

void sweep(const InnerProduct& ip, const std::string& what, const std::vector<Shape>& shapes) {
  LayerTester(ip, what)
      .reference([ip](const std::vector<RefTensor>& in) {
        return std::vector<RefTensor>{innerproduct_ref(in[0], ip)};
      })
      .shapes(shapes)
      .tolerance(ElemType::f32, 1e-4f, 1e-4f)
      .tolerance(ElemType::bf16, infer::test::bf16_products(kBf16Peak))
      .run();
}

constexpr Shape rows_shape() {
  InnerProduct ip;
  ip.num_output = 5;
  ip.weight_data_size = 20 * 5;
  const Shape in[] = {Shape::of(20, 6)};
  Shape out[1];
  return ip.infer_shapes(in, out).ok() ? out[0] : Shape{};
}
static_assert(rows_shape() == Shape::of(5, 6), "a batch of rows keeps its rows");

}  // namespace

TEST_CASE("InnerProduct on 1-D input", "[layer][innerproduct]") {
  sweep(make_layer(37, 5, true), "InnerProduct 37->5", {Shape::of(37)});
  sweep(make_layer(64, 16, true), "InnerProduct 64->16", {Shape::of(64)});
  sweep(make_layer(48, 33, true), "InnerProduct 48->33", {Shape::of(48)});
  sweep(make_layer(1, 8, true), "InnerProduct 1->8", {Shape::of(1)});
  // Several weight blocks with a partial last one, num_input not a multiple of the k unrolling;
  // the second is large enough to run on two threads.
  sweep(make_layer(301, 40, true), "InnerProduct 301->40", {Shape::of(301)});
  sweep(make_layer(1030, 70, true, 1), "InnerProduct 1030->70 relu", {Shape::of(1030)});
}

TEST_CASE("InnerProduct flattens 2-D, 3-D and 4-D input", "[layer][innerproduct]") {
  // Every shape holds 96 values: packed along w, h or c by 1 to 16 before flattening.
  const std::vector<Shape> shapes = {Shape::of(96),       Shape::of(96, 1),     Shape::of(4, 24),
                                     Shape::of(3, 2, 16), Shape::of(2, 3, 16),  Shape::of(1, 1, 96),
                                     Shape::of(8, 4, 3),  Shape::of(2, 2, 3, 8)};
  sweep(make_layer(96, 17, true), "InnerProduct 96->17", shapes);
  sweep(make_layer(96, 32, true), "InnerProduct 96->32", shapes);
  sweep(make_layer(240, 33, true), "InnerProduct 240->33", {Shape::of(5, 4, 12)});
}

TEST_CASE("InnerProduct on a batch of rows (2-D, w == num_input)", "[layer][innerproduct]") {
  const std::vector<Shape> shapes = {Shape::of(20, 2),  Shape::of(20, 3),  Shape::of(20, 8),
                                     Shape::of(20, 12), Shape::of(20, 16), Shape::of(20, 48)};
  sweep(make_layer(20, 5, true), "InnerProduct rows 20->5", shapes);
  sweep(make_layer(20, 16, false), "InnerProduct rows 20->16 no bias", shapes);
  // Row tiles with a partial last one, several output blocks with a partial last one, and enough
  // work for two threads.
  sweep(make_layer(37, 35, true, 2, {0.1f, 0.f}), "InnerProduct rows 37->35 leaky",
        {Shape::of(37, 9), Shape::of(37, 24), Shape::of(37, 40)});
}

TEST_CASE("InnerProduct without bias", "[layer][innerproduct]") {
  sweep(make_layer(24, 33, false), "InnerProduct 24->33 no bias",
        {Shape::of(24), Shape::of(2, 3, 4), Shape::of(1, 1, 24)});
}

TEST_CASE("InnerProduct with every fused activation", "[layer][innerproduct]") {
  const struct {
    int type;
    std::array<float, 2> params;
  } acts[] = {{0, {}}, {1, {}}, {2, {0.1f, 0.f}}, {3, {-0.5f, 0.75f}},
              {4, {}}, {5, {}}, {6, {0.2f, 0.5f}}};
  for (const auto& a : acts) {
    sweep(make_layer(24, 16, true, a.type, a.params),
          fmt::format("InnerProduct 24->16 activation_type={}", a.type),
          {Shape::of(24), Shape::of(24, 8), Shape::of(2, 3, 4)});
  }
}

TEST_CASE("InnerProduct forward_fused takes the activation as a functor", "[layer][innerproduct]") {
  InnerProduct ip = make_layer(32, 8, true);
  Option opt;
  REQUIRE(ip.prepare(ElemType::f32, 4, opt).ok());
  RefTensor in(Shape::of(2, 2, 8));
  in.v = random_values(in.v.size(), 99);
  Mat packed;
  REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, 4, opt).ok());
  Mat out;
  REQUIRE(ip.forward_fused<float, 4>(packed, out, opt, infer::act::ReLU{0.25f}).ok());
  REQUIRE(out.elempack() == 4);
  InnerProduct leaky = ip;
  leaky.activation = {2, {0.25f, 0.f}};
  const RefTensor want = innerproduct_ref(in, leaky), got = infer::test::from_mat(out);
  REQUIRE(got.shape == want.shape);
  for (std::size_t i = 0; i < want.v.size(); ++i)
    REQUIRE(got.v[i] == Approx(want.v[i]).margin(1e-5));
}

TEST_CASE("InnerProduct fold_affine equals the affine map after it", "[layer][innerproduct]") {
  for (bool bias : {false, true}) {
    const InnerProduct original = make_layer(24, 12, bias);
    const std::vector<float> a = random_values(12, 5), b = random_values(12, 6);
    InnerProduct folded = original;
    REQUIRE(folded.fold_affine(a, b).ok());
    REQUIRE(folded.bias_term);
    LayerTester(folded, fmt::format("InnerProduct folded (bias_term {})", bias))
        .reference([&](const std::vector<RefTensor>& in) {
          RefTensor out = innerproduct_ref(in[0], original);
          for (std::size_t i = 0; i < out.v.size(); ++i)
            out.v[i] = out.v[i] * a[i % 12] + b[i % 12];
          return std::vector<RefTensor>{out};
        })
        .shapes({Shape::of(24), Shape::of(24, 4), Shape::of(2, 3, 4)})
        .tolerance(ElemType::f32, 1e-4f, 1e-4f)
        .tolerance(ElemType::bf16, infer::test::bf16_products(kBf16Peak))
        .run();
  }
  InnerProduct relu = make_layer(4, 4, true, 1);
  const std::vector<float> ones(4, 1.f);
  auto st = relu.fold_affine(ones, ones);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("fused activation_type 1"));
  InnerProduct plain = make_layer(4, 4, true);
  st = plain.fold_affine(std::vector<float>(3, 1.f), {});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("needs 4 scales"));
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

/// Values exact in f16, so an f16-tagged buffer loads to the same floats.
std::vector<float> f16_exact(std::size_t n, unsigned seed) {
  std::vector<float> v = random_values(n, seed);
  for (float& x : v) x = std::round(x * 64.f) / 64.f;
  return v;
}

}  // namespace

TEST_CASE("InnerProduct loads weights in ncnn's order", "[layer][innerproduct][io]") {
  const std::vector<float> w = f16_exact(15 * 5, 1), b = f16_exact(5, 2);
  InnerProduct params;
  params.num_output = 5;
  params.bias_term = true;
  params.weight_data_size = 75;
  InnerProduct want = params;
  want.weight_data = w;
  want.bias_data = b;

  SECTION("from arrays") {
    InnerProduct ip = params;
    infer::io::ModelBinFromArrays mb({w, b});
    REQUIRE(ip.load(mb).ok());
    REQUIRE(mb.consumed() == 2);
    REQUIRE(ip.weight_data == w);
    REQUIRE(ip.bias_data == b);
  }
  for (std::uint32_t tag : {infer::io::kTagF32, infer::io::kTagF16}) {
    DYNAMIC_SECTION("from .bin bytes, tag " << tag) {
      std::vector<std::byte> bytes;
      append_u32(bytes, tag);
      tag == infer::io::kTagF16 ? append_f16(bytes, w) : append_f32(bytes, w);
      append_f32(bytes, b);
      InnerProduct ip = params;
      infer::io::ModelBinFromMemory mb(bytes);
      REQUIRE(ip.load(mb).ok());
      REQUIRE(mb.offset() == bytes.size());
      REQUIRE(ip.weight_data == w);
      REQUIRE(ip.bias_data == b);
      sweep(ip, "InnerProduct loaded 15->5", {Shape::of(15), Shape::of(5, 3)});
    }
  }
  SECTION("errors") {
    InnerProduct ip = params;
    infer::io::ModelBinFromArrays missing_bias({w});
    auto st = ip.load(missing_bias);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("InnerProduct: bias_data"));
    infer::io::ModelBinFromArrays wrong_count({std::vector<float>(74), b});
    st = ip.load(wrong_count);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("holds 74 values, the layer expects 75"));
    std::vector<std::byte> short_bytes;
    append_u32(short_bytes, infer::io::kTagF32);
    append_f32(short_bytes, std::vector<float>(10));
    infer::io::ModelBinFromMemory truncated(short_bytes);
    st = ip.load(truncated);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("InnerProduct: weight_data"));
    InnerProduct int8 = params;
    int8.int8_scale_term = 1;
    infer::io::ModelBinFromArrays mb({w, b});
    st = int8.load(mb);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("weight_data_int8_scales"));  // scales missing
  }
}

TEST_CASE("InnerProduct rejects bad parameters and inputs", "[layer][innerproduct]") {
  auto run = [](const InnerProduct& ip, const Shape& s) {
    Mat in(s);
    in.fill(1.f);
    Mat out;
    return infer::run_layer<float>(ip, in, out, 4, Placement::out_of_place, Option{});
  };
  const struct {
    InnerProduct layer;
    Shape in;
    const char* message;
    bool shape_check_fails = true;  ///< false where only the weight arrays are wrong
  } bad[] = {
      {make_layer(12, 4, true), Shape::of(10), "holds 10 values, the weights take num_input = 12"},
      {make_layer(12, 4, true), Shape::of(3, 5), "holds 15 values"},
      {make_layer(12, 4, true), Shape::of(2, 2, 2), "holds 8 values"},
      {make_layer(12, 4, true, 7), Shape::of(12), "activation_type must be one of ncnn's 0..6"},
      {[] {
         InnerProduct ip = make_layer(12, 4, true);
         ip.num_output = 0;
         return ip;
       }(),
       Shape::of(12), "num_output must be positive"},
      {[] {
         InnerProduct ip = make_layer(12, 4, true);
         ip.weight_data_size = 50;
         return ip;
       }(),
       Shape::of(12), "weight_data_size must be a positive multiple of num_output"},
      {[] {
         InnerProduct ip = make_layer(12, 4, true);
         ip.weight_data.pop_back();
         return ip;
       }(),
       Shape::of(12), "weight_data holds 47 values, weight_data_size is 48", false},
      {[] {
         InnerProduct ip = make_layer(12, 4, true);
         ip.bias_data.clear();
         return ip;
       }(),
       Shape::of(12), "bias_data holds 0 values, expected num_output = 4", false},
      {[] {
         InnerProduct ip = make_layer(12, 4, true);
         ip.int8_scale_term = 2;
         return ip;
       }(),
       Shape::of(12), "InnerProduct: 0 weight scales", false},
  };
  for (const auto& b : bad) {
    auto st = run(b.layer, b.in);
    INFO(b.message);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("InnerProduct"));
    std::vector<Shape> out(1);
    const Shape in[] = {b.in};
    REQUIRE(b.layer.infer_shapes(in, out).ok() != b.shape_check_fails);
  }

  // Forward without prepare (or prepared for another pack) names the missing step.
  InnerProduct ip = make_layer(8, 4, true);
  Mat in(Shape::of(8)), out;
  in.fill(1.f);
  auto st = ip.forward<float, 1>(in, out, Option{});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("not prepared for pack 1"));
  REQUIRE(ip.prepare(ElemType::f32, 4, Option{}).ok());
  st = ip.forward<float, 1>(in, out, Option{});
  REQUIRE_FALSE(st.ok());
  REQUIRE(ip.prepare(ElemType::f32, 1, Option{}).ok());
  REQUIRE(ip.forward<float, 1>(in, out, Option{}).ok());
}

TEST_CASE("InnerProduct with Option::fp16_weights streams f16 weights", "[layer][innerproduct]") {
  // The one-sample product reads the weights rounded to f16: it matches a reference on the
  // rounded weights to f32 accuracy (tighter than the rounding itself, so the f16 copy is what ran),
  // at every pack and storage type; the batch-of-rows form keeps the f32 weights.
  const InnerProduct ip = make_layer(400, 40, true, 1);
  InnerProduct rounded = ip;
  for (float& w : rounded.weight_data) w = infer::f16_to_f32(infer::f32_to_f16(w));
  Option opt;
  opt.fp16_weights = true;
  RefTensor in(Shape::of(5, 5, 16));  // 16 channels: every pack divides them
  in.v = random_values(in.v.size(), 5);
  const RefTensor want = innerproduct_ref(in, rounded), exact = innerproduct_ref(in, ip);
  double rounding = 0;
  for (std::size_t i = 0; i < want.v.size(); ++i)
    rounding = std::max(rounding, double(std::abs(want.v[i] - exact.v[i])));
  REQUIRE(rounding > 1e-4);  // the rounding shows: the check below can tell the two apart
  for (int pack : {1, 4, 8, 16}) {
    InnerProduct layer = ip;
    REQUIRE(layer.prepare(ElemType::f32, pack, opt).ok());
    REQUIRE(layer.packed_weight_f16.size() == layer.packed_weight.size());
    Mat packed;
    REQUIRE(infer::convert(infer::test::to_mat(in), packed, ElemType::f32, pack, opt).ok());
    Mat out;
    if (pack == 1) REQUIRE(layer.forward<float, 1>(packed, out, opt).ok());
    if (pack == 4) REQUIRE(layer.forward<float, 4>(packed, out, opt).ok());
    if (pack == 8) REQUIRE(layer.forward<float, 8>(packed, out, opt).ok());
    if (pack == 16) REQUIRE(layer.forward<float, 16>(packed, out, opt).ok());
    const RefTensor got = infer::test::from_mat(out);
    REQUIRE(got.v.size() == want.v.size());
    for (std::size_t i = 0; i < want.v.size(); ++i)
      REQUIRE(got.v[i] == Approx(want.v[i]).margin(2e-5));
  }
  // Without the option no f16 copy is made.
  InnerProduct plain = ip;
  REQUIRE(plain.prepare(ElemType::f32, 4, Option{}).ok());
  CHECK(plain.packed_weight_f16.empty());
}
