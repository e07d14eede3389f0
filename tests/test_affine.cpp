// BatchNorm, Scale (weights and two-blob forms) and Bias against scalar definitions, parameters
// indexed along ncnn's per-"channel" axis (w for 1-D, h for 2-D, c for 3-D/4-D).
#include <cmath>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/bias.hpp>
#include <infer/layers/scale.hpp>
#include <random>

#include "support/layer_tester.hpp"

namespace L = infer::layers;
using infer::Shape;
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

/// Index along the packing axis of logical element (x, y, z, c).
int axis_index(const Shape& s, int x, int y, int c) {
  return s.dims == 1 ? x : s.dims == 2 ? y : c;
}

template <class F>
RefTensor map_axis(const RefTensor& in, F f) {
  RefTensor out = in;
  const Shape s = in.shape;
  for (int c = 0; c < s.c; ++c)
    for (int z = 0; z < s.d; ++z)
      for (int y = 0; y < s.h; ++y)
        for (int x = 0; x < s.w; ++x)
          out.at(x, y, z, c) = f(in.at(x, y, z, c), axis_index(s, x, y, c));
  return out;
}

const std::vector<Shape> kShapes = {
    Shape::of(1),          Shape::of(7),         Shape::of(48),        Shape::of(5, 1),
    Shape::of(9, 16),      Shape::of(3, 20),     Shape::of(1, 1, 1),   Shape::of(5, 7, 3),
    Shape::of(1, 9, 16),   Shape::of(13, 1, 20), Shape::of(17, 3, 24), Shape::of(3, 4, 2, 12),
    Shape::of(2, 3, 5, 7), Shape::of(61, 37, 32)};

}  // namespace

TEST_CASE("BatchNorm", "[layer][batchnorm]") {
  for (const Shape& s : kShapes) {
    const int n = s.packed_extent();
    const auto slope = random_values(n, 0.5f, 2.f, 1), mean = random_values(n, -1.f, 1.f, 2),
               var = random_values(n, 0.1f, 3.f, 3), bias = random_values(n, -1.f, 1.f, 4);
    L::BatchNorm bn{n, 1e-3f, {}, {}};
    REQUIRE(bn.load(slope, mean, var, bias).ok());
    LayerTester(bn, "BatchNorm eps=1e-3")
        .reference([&](const std::vector<RefTensor>& in) {
          return std::vector{map_axis(in[0], [&](float x, int i) {
            return float((x - mean[i]) / std::sqrt(double(var[i]) + 1e-3) * slope[i] + bias[i]);
          })};
        })
        .shapes({s})
        .run();
  }
}

TEST_CASE("BatchNorm rejects mismatched weights and inputs", "[layer][batchnorm]") {
  L::BatchNorm bn{4, 0.f, {}, {}};
  auto st = bn.load({1, 1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0});
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("expected 4 values"));
  REQUIRE(bn.load({1, 1, 1, 1}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}).ok());
  infer::Mat m(Shape::of(3, 3, 5));
  infer::Mat out;
  auto r = infer::run_layer<float>(bn, m, out, 1, infer::Placement::out_of_place, {});
  REQUIRE_FALSE(r.ok());
  REQUIRE_THAT(r.message(), Catch::Contains("expected 4"));
}

TEST_CASE("Scale with weights", "[layer][scale]") {
  for (bool bias_term : {false, true}) {
    for (const Shape& s : kShapes) {
      const int n = s.packed_extent();
      const auto scale = random_values(n, -2.f, 2.f, 5), bias = random_values(n, -1.f, 1.f, 6);
      L::Scale layer{n, bias_term, scale, bias_term ? bias : std::vector<float>{}};
      LayerTester(layer, fmt::format("Scale bias_term={}", bias_term))
          .reference([&](const std::vector<RefTensor>& in) {
            return std::vector{map_axis(
                in[0], [&](float x, int i) { return x * scale[i] + (bias_term ? bias[i] : 0.f); })};
          })
          .shapes({s})
          .run();
    }
  }
}

TEST_CASE("Scale with a second input", "[layer][scale]") {
  for (bool bias_term : {false, true}) {
    for (const Shape& s : kShapes) {
      const int n = s.packed_extent();
      const auto bias = random_values(n, -1.f, 1.f, 7);
      L::Scale layer{-233, bias_term, {}, bias_term ? bias : std::vector<float>{}};
      LayerTester(layer, fmt::format("Scale two-blob bias_term={}", bias_term))
          .reference([&](const std::vector<RefTensor>& in) {
            return std::vector{map_axis(in[0], [&](float x, int i) {
              return x * in[1].v[std::size_t(i)] + (bias_term ? bias[i] : 0.f);
            })};
          })
          .inputs({s, Shape::of(n)})
          .run();
    }
  }
}

TEST_CASE("Scale rejects a wrong scale size", "[layer][scale]") {
  L::Scale layer{3, false, {1, 2, 3}, {}};
  infer::Mat m(Shape::of(2, 2, 4));
  infer::Mat out;
  auto r = infer::run_layer<float>(layer, m, out, 1, infer::Placement::out_of_place, {});
  REQUIRE_FALSE(r.ok());
  REQUIRE_THAT(r.message(), Catch::Contains("scale_data_size is 3"));
}

TEST_CASE("Bias", "[layer][bias]") {
  for (const Shape& s : kShapes) {
    const int n = s.dims >= 3 ? s.c : 1;
    const auto bias = random_values(n, -2.f, 2.f, 8);
    LayerTester(L::Bias{n, bias}, "Bias")
        .reference([&](const std::vector<RefTensor>& in) {
          RefTensor out = in[0];
          const Shape sh = out.shape;
          for (int c = 0; c < sh.c; ++c)
            for (int z = 0; z < sh.d; ++z)
              for (int y = 0; y < sh.h; ++y)
                for (int x = 0; x < sh.w; ++x) out.at(x, y, z, c) += bias[std::size_t(c)];
          return std::vector{out};
        })
        .shapes({s})
        .run();
  }
}
