// Element types a tensor can hold, and the exact scalar conversions between them. The scalar
// conversions are the reference the SIMD paths in simd.hpp must match bit for bit.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace infer {

/// IEEE 754 binary16, kept as its bit pattern so that no arithmetic happens on it by accident.
struct f16 {
  std::uint16_t bits;  ///< Sign, 5 exponent bits, 10 mantissa bits.

  /// Wraps a raw bit pattern.
  static constexpr f16 from_bits(std::uint16_t b) { return f16{b}; }
  /// Bitwise equality: a NaN equals itself, +0 differs from -0.
  friend constexpr bool operator==(f16, f16) = default;
};

/// bfloat16: the upper half of an IEEE binary32, kept as its bit pattern.
struct bf16 {
  std::uint16_t bits;  ///< Sign, 8 exponent bits, 7 mantissa bits.

  /// Wraps a raw bit pattern.
  static constexpr bf16 from_bits(std::uint16_t b) { return bf16{b}; }
  /// Bitwise equality: a NaN equals itself, +0 differs from -0.
  friend constexpr bool operator==(bf16, bf16) = default;
};

using f32 = float;
using i8 = std::int8_t;
using i32 = std::int32_t;

/// Run-time tag of an element type, for code that does not know the type statically.
enum class ElemType : std::uint8_t { f32, f16, bf16, i8, i32 };

/// Any type a tensor can hold.
template <class T>
concept Element = std::same_as<T, f32> || std::same_as<T, f16> || std::same_as<T, bf16> ||
    std::same_as<T, i8> || std::same_as<T, i32>;

/// A type weights and activations are stored in, convertible to and from float by to_f32/from_f32.
template <class T>
concept StorageElement =
    std::same_as<T, f32> || std::same_as<T, f16> || std::same_as<T, bf16> || std::same_as<T, i8>;

/// The run-time tag of an element type.
/// @tparam T one of the Element types.
template <Element T>
inline constexpr ElemType elem_type_v = std::same_as<T, f32>    ? ElemType::f32
                                        : std::same_as<T, f16>  ? ElemType::f16
                                        : std::same_as<T, bf16> ? ElemType::bf16
                                        : std::same_as<T, i8>   ? ElemType::i8
                                                                : ElemType::i32;

/// Size in bytes of one element of type t.
constexpr std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::f32:
    case ElemType::i32:
      return 4;
    case ElemType::f16:
    case ElemType::bf16:
      return 2;
    case ElemType::i8:
      return 1;
  }
  return 0;
}

/// Short name of t, as used in benchmark and test names.
constexpr std::string_view to_string(ElemType t) {
  switch (t) {
    case ElemType::f32:
      return "f32";
    case ElemType::f16:
      return "f16";
    case ElemType::bf16:
      return "bf16";
    case ElemType::i8:
      return "i8";
    case ElemType::i32:
      return "i32";
  }
  return "?";
}

// NaN rule for every conversion below that narrows or widens a NaN, chosen to match F16C's
// vcvtph2ps/vcvtps2ph (measured): NaN stays NaN, sign kept, quiet bit set, payload truncated
// (narrowing keeps the top mantissa bits; widening appends zeros). bf16_to_f32 is the exception:
// it is a plain 16-bit shift, in hardware and here alike, so a signalling bf16 NaN stays
// signalling.

/// Exact widening of a binary16 to float.
constexpr float f16_to_f32(f16 h) {
  const std::uint32_t sign = std::uint32_t{h.bits & 0x8000u} << 16;
  const std::uint32_t exp = (h.bits >> 10) & 0x1Fu;
  const std::uint32_t mant = h.bits & 0x3FFu;
  std::uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13) | (mant != 0 ? 0x00400000u : 0u);
  } else if (exp != 0) {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // A subnormal half is mant * 2^-24; every one of them is a normal float.
    const int top = std::bit_width(mant) - 1;
    bits = sign | (static_cast<std::uint32_t>(top + 127 - 24) << 23) |
           ((mant << (23 - top)) & 0x7FFFFFu);
  }
  return std::bit_cast<float>(bits);
}

/// Narrowing of a float to binary16, rounding to nearest, ties to even; overflow gives infinity.
constexpr f16 f32_to_f16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) {
    return f16{static_cast<std::uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x3FFu))};
  }
  if (a >= 0x477FF000u) {  // 65520 and up: at least halfway past the largest half, 65504.
    return f16{static_cast<std::uint16_t>(sign | 0x7C00u)};
  }
  if (a >= 0x38800000u) {  // 2^-14, the smallest normal half.
    // Rebias the exponent, then round on the 13 dropped bits; a mantissa carry bumps the exponent.
    const std::uint32_t r = a - ((127u - 15u) << 23);
    return f16{static_cast<std::uint16_t>(sign | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13))};
  }
  if (a <= 0x33000000u) {  // 2^-25 and below round to zero (2^-25 itself is a tie to even 0).
    return f16{sign};
  }
  // Subnormal result: the value in units of 2^-24 is m * 2^(e - 126), rounded.
  const std::uint32_t e = a >> 23;
  const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126 - e;  // 14..24
  std::uint32_t q = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;  // may carry into the smallest normal
  return f16{static_cast<std::uint16_t>(sign | q)};
}

/// Exact widening of a bfloat16 to float.
constexpr float bf16_to_f32(bf16 h) { return std::bit_cast<float>(std::uint32_t{h.bits} << 16); }

/// Narrowing of a float to bfloat16, rounding to nearest, ties to even; subnormals are kept.
constexpr bf16 f32_to_bf16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
    return bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
  }
  return bf16{static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}

/// ncnn's int8 quantization: round half away from zero, clamp to [-127, 127]; NaN gives 0.
constexpr std::int8_t float2int8(float v) {
  if (v != v) return 0;
  if (v >= 127.0f) return 127;
  if (v <= -127.0f) return -127;
  const float a = v < 0 ? -v : v;
  auto t = static_cast<int>(a);
  if (a - static_cast<float>(t) >= 0.5f) ++t;  // exact: a < 127 leaves room for the fraction
  return static_cast<std::int8_t>(v < 0 ? -t : t);
}

/// Widens one stored element to float; an i8 becomes its integer value (its scale lives elsewhere).
/// @tparam T the storage type.
template <StorageElement T>
constexpr float to_f32(T v) {
  if constexpr (std::same_as<T, f16>) {
    return f16_to_f32(v);
  } else if constexpr (std::same_as<T, bf16>) {
    return bf16_to_f32(v);
  } else {
    return static_cast<float>(v);
  }
}

/// Narrows a float to one stored element; i8 rounds and saturates as float2int8.
/// @tparam T the storage type.
template <StorageElement T>
constexpr T from_f32(float v) {
  if constexpr (std::same_as<T, f16>) {
    return f32_to_f16(v);
  } else if constexpr (std::same_as<T, bf16>) {
    return f32_to_bf16(v);
  } else if constexpr (std::same_as<T, i8>) {
    return float2int8(v);
  } else {
    return v;
  }
}

}  // namespace infer
