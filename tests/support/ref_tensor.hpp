// The plain tensor the scalar references work on: a logical shape and dense f32 values, index
// ((c * d + z) * h + y) * w + x. Independent of Mat's packing, so a reference cannot inherit a
// layout bug from the code it checks.
#pragma once

#include <cstring>
#include <infer/convert.hpp>
#include <infer/mat.hpp>
#include <stdexcept>
#include <vector>

namespace infer::test {

struct RefTensor {
  Shape shape;
  std::vector<float> v;

  RefTensor() = default;
  explicit RefTensor(const Shape& s, float fill = 0.f) : shape(s), v(s.total(), fill) {}

  std::size_t index(int x, int y = 0, int z = 0, int c = 0) const {
    return ((std::size_t(c) * shape.d + z) * shape.h + y) * shape.w + x;
  }
  float& at(int x, int y = 0, int z = 0, int c = 0) { return v[index(x, y, z, c)]; }
  float at(int x, int y = 0, int z = 0, int c = 0) const { return v[index(x, y, z, c)]; }
};

/// An f32 pack-1 Mat holding the tensor's values.
inline Mat to_mat(const RefTensor& t) {
  Mat m(t.shape, ElemType::f32, 1);
  const std::size_t plane = std::size_t(t.shape.w) * t.shape.h * t.shape.d;
  const int channels = t.shape.dims >= 3 ? t.shape.c : 1;
  const std::size_t per = t.shape.dims >= 3 ? plane : t.shape.total();
  for (int q = 0; q < channels; ++q)
    std::memcpy(m.channel_data(q), t.v.data() + q * per, per * sizeof(float));
  return m;
}

/// An f32 pack-1 Mat of `shape` holding `values` (in RefTensor's order: w fastest).
inline Mat mat_of(const Shape& shape, const std::vector<float>& values) {
  RefTensor t(shape);
  if (t.v.size() != values.size())
    throw std::invalid_argument("mat_of: the values do not fill the shape");
  t.v = values;
  return to_mat(t);
}

/// The values of any Mat (any type, any pack) as a RefTensor; i8 values are read as integers.
inline RefTensor from_mat(const Mat& m) {
  Option opt;
  Mat f;
  Status s = convert(m, f, ElemType::f32, 1, opt);
  if (!s.ok()) return {};
  RefTensor t(f.shape());
  const std::size_t plane = std::size_t(f.w()) * f.h() * f.d();
  for (int q = 0; q < f.c(); ++q)
    std::memcpy(t.v.data() + q * plane, f.channel_data(q), plane * sizeof(float));
  return t;
}

/// `v` rounded to bf16 (to nearest, ties to even) and back: what bf16 arithmetic multiplies.
inline float round_bf16(float v) { return infer::bf16_to_f32(infer::f32_to_bf16(v)); }

}  // namespace infer::test
