// A vector of at most N values held inline: layer parameters that are lists (Slice's sizes,
// Eltwise's coefficients, Crop's axes) stay usable in constant expressions, so a layer holding
// them can live in a constexpr graph, which a std::vector with elements cannot.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace infer {

/// Up to N values of T (a literal type) with the parts of std::vector's interface layers use.
/// Giving more than N values keeps the first N and marks the vector overflowed(); layers report
/// that as an error.
template <class T, std::size_t N>
class SmallVector {
 public:
  constexpr SmallVector() = default;
  constexpr SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  constexpr SmallVector(const std::vector<T>& values) {  // NOLINT: implicit, like a list
    assign(values.begin(), values.end());
  }

  static constexpr std::size_t capacity() { return N; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  /// Whether more than N values were given (the extra ones are not held).
  constexpr bool overflowed() const { return overflowed_; }

  constexpr T& operator[](std::size_t i) { return values_[i]; }
  constexpr const T& operator[](std::size_t i) const { return values_[i]; }
  constexpr T* data() { return values_.data(); }
  constexpr const T* data() const { return values_.data(); }
  constexpr T* begin() { return values_.data(); }
  constexpr T* end() { return values_.data() + size_; }
  constexpr const T* begin() const { return values_.data(); }
  constexpr const T* end() const { return values_.data() + size_; }

  constexpr void push_back(const T& v) {
    if (size_ < N) {
      values_[size_++] = v;
    } else {
      overflowed_ = true;
    }
  }
  constexpr void clear() {
    size_ = 0;
    overflowed_ = false;
  }

  friend constexpr bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.overflowed_ == b.overflowed_ && std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return !a.overflowed_ && std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  template <class It>
  constexpr void assign(It first, It last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }

  std::array<T, N> values_{};
  std::size_t size_ = 0;
  bool overflowed_ = false;
};

}  // namespace infer
