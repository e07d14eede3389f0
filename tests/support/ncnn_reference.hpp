// What the tests that compare infer with ncnn's own outputs share (tests/data/ncnn_int8,
// tests/data/ncnn_nets): ncnn_run's input, bit for bit, and raw f32 files.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <infer/mat.hpp>
#include <iterator>
#include <vector>

namespace infer::test {

/// sinf through a pointer the optimizer cannot see through.
inline float (*volatile kSinf)(float) = [](float x) { return std::sin(x); };

/// ncnn_run's input: sin(i * 0.001) * 0.5 + 0.5 over channel, row, column.
inline Mat ncnn_run_input(int c, int h, int w) {
  Mat m;
  REQUIRE(m.create(Shape::of(w, h, c), ElemType::f32, 1).ok());
  long k = 0;
  for (int q = 0; q < c; ++q) {
    float* p = static_cast<float*>(m.channel(q).data());
    for (int i = 0; i < w * h; ++i) {
      // libm's sinf, called value by value as ncnn_run calls it: a vectorized loop would take
      // glibc's SIMD sinf (declared for OpenMP builds), which differs in the last bits and moves
      // inputs across quantization steps.
      const float s = kSinf(float(k++) * 0.001f);
      p[i] = s * 0.5f + 0.5f;
    }
  }
  return m;
}

/// A raw little-endian f32 file.
inline std::vector<float> read_f32(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  INFO(path.string());
  REQUIRE(f.good());
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace infer::test
