// Helpers of the whole-model tests (test_net.cpp, models/test_generated_models.cpp): a
// deterministic input and the relative difference of two f32 pack-1 outputs.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/mat.hpp>

namespace infer::test {

/// A deterministic input in [-1, 1] of `shape` (f32, pack 1).
inline Mat make_model_input(Shape shape) {
  Mat m;
  REQUIRE(m.create(shape, ElemType::f32, 1).ok());
  const std::size_t plane = std::size_t(shape.w) * shape.h * shape.d;
  for (int c = 0; c < shape.c; ++c) {
    float* p = static_cast<float*>(m.channel(c).data());
    for (std::size_t i = 0; i < plane; ++i) p[i] = float(std::sin(0.37 * double(i) + 1.3 * c));
  }
  return m;
}

/// max |a - b| / max(max |b|, 1e-6) over logical elements (both f32 pack 1); every value of `a`
/// must be finite.
inline double relative_error(const Mat& a, const Mat& b) {
  REQUIRE(a.shape() == b.shape());
  const Shape s = a.shape();
  const std::size_t plane = std::size_t(s.w) * s.h * s.d;
  double diff = 0, mag = 0;
  std::size_t not_finite = 0;
  for (int c = 0; c < s.c; ++c) {
    const float* pa = static_cast<const float*>(a.channel(c).data());
    const float* pb = static_cast<const float*>(b.channel(c).data());
    for (std::size_t i = 0; i < plane; ++i) {
      not_finite += !std::isfinite(pa[i]);
      diff = std::max(diff, double(std::fabs(pa[i] - pb[i])));
      mag = std::max(mag, double(std::fabs(pb[i])));
    }
  }
  CHECK(not_finite == 0);
  return diff / std::max(mag, 1e-6);
}

}  // namespace infer::test
