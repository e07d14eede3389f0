// LayerNorm against a scalar definition (mean and variance in double) over its three run forms
// (whole 1-D blob, rows, 3-D channels), with and without gamma/beta, every float type and pack, in
// place and not; then as a built-in layer of infer::Net: a layer added as one header, its keys
// read by its own load_param and its weights by its load.
#include <cmath>
#include <cstring>
#include <infer/io/ncnn_layers.hpp>
#include <infer/layers/layer_norm.hpp>
#include <infer/net.hpp>
#include <random>

#include "support/layer_tester.hpp"

using infer::Shape;
using infer::layers::LayerNorm;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

std::vector<float> random_values(int n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

/// Runs of `len` consecutive values of the row-major reference (w fastest), each normalized.
RefTensor layer_norm_ref(const RefTensor& in, int len, float eps, const std::vector<float>& gamma,
                         const std::vector<float>& beta) {
  RefTensor out = in;
  for (std::size_t start = 0; start < in.v.size(); start += std::size_t(len)) {
    double mean = 0, var = 0;
    for (int k = 0; k < len; ++k) mean += in.v[start + std::size_t(k)];
    mean /= len;
    for (int k = 0; k < len; ++k) {
      const double d = in.v[start + std::size_t(k)] - mean;
      var += d * d;
    }
    var /= len;
    for (int k = 0; k < len; ++k) {
      const double y = (in.v[start + std::size_t(k)] - mean) / std::sqrt(var + eps);
      out.v[start + std::size_t(k)] =
          float(gamma.empty() ? y : y * gamma[std::size_t(k)] + beta[std::size_t(k)]);
    }
  }
  return out;
}

void sweep(const Shape& s, int affine_size) {
  for (bool affine : {false, true}) {
    LayerNorm layer{affine_size, 1e-5f, affine};
    if (affine) {
      layer.gamma_data = random_values(affine_size, 0.5f, 2.f, 3);
      layer.beta_data = random_values(affine_size, -1.f, 1.f, 4);
    }
    LayerTester(layer, fmt::format("LayerNorm affine_size={} affine={}", affine_size, affine))
        .reference([&](const std::vector<RefTensor>& in) {
          return std::vector{
              layer_norm_ref(in[0], affine_size, layer.eps, layer.gamma_data, layer.beta_data)};
        })
        .shapes({s})
        .run();
  }
}

}  // namespace

TEST_CASE("LayerNorm over a whole 1-D blob", "[layer][layer_norm]") {
  for (int w : {1, 7, 16, 48, 768}) sweep(Shape::of(w), w);
}

TEST_CASE("LayerNorm over rows (2-D, and 3-D with affine_size = w)", "[layer][layer_norm]") {
  for (const Shape& s : {Shape::of(5, 3), Shape::of(768, 16), Shape::of(3, 32), Shape::of(1, 4)})
    sweep(s, s.w);
  for (const Shape& s : {Shape::of(7, 3, 5), Shape::of(16, 2, 32), Shape::of(9, 1, 4)})
    sweep(s, s.w);
}

TEST_CASE("LayerNorm over 3-D channels (affine_size = w * h)", "[layer][layer_norm]") {
  for (const Shape& s : {Shape::of(7, 3, 5), Shape::of(4, 4, 16), Shape::of(5, 3, 24)})
    sweep(s, s.w * s.h);
}

TEST_CASE("LayerNorm rejects a shape affine_size does not fit", "[layer][layer_norm]") {
  const LayerNorm layer{6, 1e-5f, false};
  std::vector<Shape> out(1);
  const Shape ok[] = {Shape::of(2, 3, 4)}, bad[] = {Shape::of(5, 3, 4)}, rows[] = {Shape::of(6, 2)};
  CHECK(layer.infer_shapes(ok, out).ok());  // w * h = 6
  CHECK(layer.infer_shapes(rows, out).ok());
  CHECK_FALSE(layer.infer_shapes(bad, out).ok());
  const Shape four_d[] = {Shape::of(6, 1, 1, 2)};
  CHECK_FALSE(layer.infer_shapes(four_d, out).ok());
}

namespace {
constexpr const char* kParam =
    "7767517\n"
    "2 2\n"
    "Input in 0 1 data 0=12 1=3 2=8\n"
    "LayerNorm ln 1 1 data out 0=12 1=0.0001 2=1\n";
}

TEST_CASE("LayerNorm is a built-in layer of infer::Net, from its header alone", "[layer_norm][net]") {
  CHECK(infer::io::is_supported_ncnn_type("LayerNorm"));
  infer::Net net;
  REQUIRE(net.load_param_text(kParam, "ln.param").ok());
  const std::vector<float> gamma = random_values(12, 0.5f, 2.f, 5),
                           beta = random_values(12, -1.f, 1.f, 6);
  std::vector<std::byte> bin((gamma.size() + beta.size()) * sizeof(float));
  std::memcpy(bin.data(), gamma.data(), gamma.size() * sizeof(float));
  std::memcpy(bin.data() + gamma.size() * sizeof(float), beta.data(), beta.size() * sizeof(float));
  const infer::Status loaded = net.load_model(std::span<const std::byte>(bin), "ln.bin");
  INFO((loaded.ok() ? std::string() : loaded.message()));
  REQUIRE(loaded.ok());

  RefTensor in(Shape::of(12, 3, 8));
  const std::vector<float> values = random_values(int(in.v.size()), -3.f, 3.f, 7);
  in.v = values;
  const infer::Mat input = infer::test::to_mat(in);
  auto out = net.run(input);
  INFO((out.ok() ? std::string() : out.message()));
  REQUIRE(out.ok());
  const RefTensor want = layer_norm_ref(in, 12, 1e-4f, gamma, beta);
  const RefTensor got = infer::test::from_mat(*out);
  REQUIRE(got.v.size() == want.v.size());
  for (std::size_t i = 0; i < want.v.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got.v[i] - want.v[i]) < 1e-4f);
  }
}

TEST_CASE("LayerNorm's load_param errors name file, line, layer and key", "[layer_norm][net]") {
  const std::pair<const char*, const char*> cases[] = {
      {"0=0", "key 0: affine_size must be >= 1, got 0"},
      {"0=12 1=-1", "key 1: eps must be >= 0"},
      {"0=12 2=3", "key 2: affine must be 0 or 1, got 3"},
      {"0=12 5=1", "key 5"},
  };
  for (const auto& [keys, message] : cases) {
    CAPTURE(keys);
    infer::Net net;
    const std::string text = fmt::format(
        "7767517\n2 2\nInput in 0 1 data 0=12 1=3 2=8\nLayerNorm ln 1 1 data out {}\n", keys);
    const infer::Status st = net.load_param_text(text, "ln.param");
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("ln.param: line 4") &&
                                 Catch::Contains("LayerNorm 'ln'") && Catch::Contains(message));
  }
}
