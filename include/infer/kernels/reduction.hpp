// Reduction kernels: an operation folds values into f32 accumulators, either a whole contiguous
// run into one accumulator or a run element-wise into as many accumulators. Each operation also
// says how two partial results combine (partial sums of squares add, partial maxima take the max).
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <infer/element.hpp>

namespace infer::kernels {

/// Sum of x.
struct ReduceSum {
  static constexpr float init = 0.f;
  static float step(float a, float x) { return a + x; }
  static float combine(float a, float b) { return a + b; }
};
/// Sum of |x|.
struct ReduceAbsSum {
  static constexpr float init = 0.f;
  static float step(float a, float x) { return a + std::fabs(x); }
  static float combine(float a, float b) { return a + b; }
};
/// Sum of x^2.
struct ReduceSumSq {
  static constexpr float init = 0.f;
  static float step(float a, float x) { return a + x * x; }
  static float combine(float a, float b) { return a + b; }
};
/// Sum of exp(x).
struct ReduceSumExp {
  static constexpr float init = 0.f;
  static float step(float a, float x) { return a + std::exp(x); }
  static float combine(float a, float b) { return a + b; }
};
/// Maximum (from -FLT_MAX, as ncnn).
struct ReduceMax {
  static constexpr float init = -FLT_MAX;
  static float step(float a, float x) { return std::max(a, x); }
  static float combine(float a, float b) { return std::max(a, b); }
};
/// Minimum (from FLT_MAX, as ncnn).
struct ReduceMin {
  static constexpr float init = FLT_MAX;
  static float step(float a, float x) { return std::min(a, x); }
  static float combine(float a, float b) { return std::min(a, b); }
};
/// Product.
struct ReduceProd {
  static constexpr float init = 1.f;
  static float step(float a, float x) { return a * x; }
  static float combine(float a, float b) { return a * b; }
};

/// acc = Op::combine(acc, fold of the n values at src).
template <class Op,          ///< ReduceSum, ReduceMax, ...
          StorageElement T>  ///< storage type; arithmetic is f32
void reduce_run(const T* src, std::size_t n, float& acc) {
  float a = Op::init;
  for (std::size_t i = 0; i < n; ++i) a = Op::step(a, to_f32(src[i]));
  acc = Op::combine(acc, a);
}

/// acc[i] = Op::step(acc[i], src[i]) for n values: a run whose positions are all kept.
template <class Op,          ///< ReduceSum, ReduceMax, ...
          StorageElement T>  ///< storage type; arithmetic is f32
void reduce_elementwise(const T* src, std::size_t n, float* acc) {
  for (std::size_t i = 0; i < n; ++i) acc[i] = Op::step(acc[i], to_f32(src[i]));
}

/// acc[i] = Op::combine(acc[i], part[i]) for n partial results.
template <class Op>  ///< ReduceSum, ReduceMax, ...
void reduce_combine(const float* part, std::size_t n, float* acc) {
  for (std::size_t i = 0; i < n; ++i) acc[i] = Op::combine(acc[i], part[i]);
}

}  // namespace infer::kernels
