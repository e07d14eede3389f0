// Reproducible random test data: n floats uniform in [lo, hi) from std::mt19937(seed).
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace infer::test {

inline std::vector<float> uniform(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace infer::test
