// Bulk element conversion and int8 (de)quantization over plain arrays. The scalar namespace holds
// the element-by-element reference the vector kernels must match bit for bit.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <infer/element.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

/// A storage type cast() converts; i8 is excluded because it needs a scale (see quantize()).
template <class T>
concept CastElement = StorageElement<T> && !std::same_as<T, i8>;

namespace scalar {

/// Reference for kernels::cast.
/// @tparam From source element type.
/// @tparam To destination element type.
template <CastElement From, CastElement To>
void cast(const From* src, To* dst, std::size_t n) {
  if constexpr (std::same_as<From, To>) {
    std::copy_n(src, n, dst);  // not through f32, which would quiet a signalling NaN
  } else {
    for (std::size_t i = 0; i < n; ++i) dst[i] = from_f32<To>(to_f32(src[i]));
  }
}

/// Reference for kernels::quantize.
inline void quantize(const float* src, std::int8_t* dst, std::size_t n, float scale) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = float2int8(src[i] * scale);
}

/// Reference for kernels::dequantize.
inline void dequantize(const std::int8_t* src, float* dst, std::size_t n, float scale) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]) * scale;
}

}  // namespace scalar

namespace detail {

/// Runs store(dst, op(load(src))) over the whole packs of the widest batch and returns how many
/// elements that covered; the caller finishes the tail with the scalar reference.
template <StorageElement From, StorageElement To, class Op>
std::size_t convert_packs(const From* src, To* dst, std::size_t n, Op op) {
  constexpr int pack = simd::max_width;
  std::size_t i = 0;
  if constexpr (pack > 1) {
    for (; i + pack <= n; i += pack) simd::store<pack>(dst + i, op(simd::load<pack>(src + i)));
  }
  return i;
}

}  // namespace detail

/// Converts n elements from src to dst (no overlap), through float, rounding to nearest even:
/// f16 and bf16 widen exactly, narrowing follows from_f32. Same type is a plain copy.
/// @tparam From source element type.
/// @tparam To destination element type.
template <CastElement From, CastElement To>
void cast(const From* src, To* dst, std::size_t n) {
  if constexpr (std::same_as<From, To>) {
    std::copy_n(src, n, dst);
  } else {
    const std::size_t i = detail::convert_packs(src, dst, n, [](auto v) { return v; });
    scalar::cast(src + i, dst + i, n - i);
  }
}

/// dst[i] = float2int8(src[i] * scale) for n elements; scale is the quantization scale.
inline void quantize(const float* src, std::int8_t* dst, std::size_t n, float scale) {
  const std::size_t i = detail::convert_packs(src, dst, n, [scale](auto v) { return v * scale; });
  scalar::quantize(src + i, dst + i, n - i, scale);
}

/// dst[i] = src[i] * scale for n elements; scale is the dequantization scale (1 / quant scale).
inline void dequantize(const std::int8_t* src, float* dst, std::size_t n, float scale) {
  const std::size_t i = detail::convert_packs(src, dst, n, [scale](auto v) { return v * scale; });
  scalar::dequantize(src + i, dst + i, n - i, scale);
}

}  // namespace infer::kernels
