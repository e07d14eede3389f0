// C++ source text of layer values: each layer printed as an aggregate initializer
// (`infer::layers::Convolution{64, 7, ...}`), field by field in declaration order, so a generated
// header rebuilds exactly the layer the .param describes as a constant expression. Used by
// infer-gen; layers are plain aggregates, which is what makes this possible without reflection.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <fmt/core.h>
#include <infer/small_vector.hpp>
#include <infer/status.hpp>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace infer::io {

namespace detail {

/// Converts to anything: counts an aggregate's fields by trying initializers.
struct AnyField {
  template <class T>
  constexpr operator T() const;  // NOLINT: declared only, used in unevaluated contexts
};

template <class T, std::size_t... I>
constexpr bool brace_constructible(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyField{})...}; };
}

/// The number of fields of aggregate T (at most 40).
template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (N > 40) {
    return N;
  } else if constexpr (brace_constructible<T>(std::make_index_sequence<N + 1>{})) {
    return field_count<T, N + 1>();
  } else {
    return N;
  }
}

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_small_vector : std::false_type {};
template <class T, std::size_t N>
struct is_small_vector<SmallVector<T, N>> : std::true_type {};
template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

}  // namespace detail

/// Prints values as C++ initializers; error() says what could not be printed.
class SourcePrinter {
 public:
  template <class T>
  std::string text(const T& v) {
    using V = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<V, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::is_integral_v<V>) {
      // The most negative value is not a literal: -2147483648 is -(2147483648), a long.
      if (std::is_signed_v<V> && v == std::numeric_limits<V>::min())
        return fmt::format("({} - 1)", v + 1);
      return fmt::format("{}", v);
    } else if constexpr (std::is_enum_v<V>) {
      return fmt::format("{}", static_cast<std::underlying_type_t<V>>(v));
    } else if constexpr (std::is_floating_point_v<V>) {
      if (!std::isfinite(v)) {
        fail("a parameter is not finite");
        return "0.f";
      }
      // Nine significant digits round-trip every float.
      std::string s = fmt::format("{:.9g}", v);
      if (s.find_first_of(".e") == std::string::npos) s += ".";
      return s + "f";
    } else if constexpr (detail::is_std_array<V>::value || detail::is_small_vector<V>::value) {
      return list(v.begin(), v.end());
    } else if constexpr (detail::is_std_vector<V>::value) {
      // Weights and prepared data: empty in a layer built from parameters only.
      if (!v.empty()) fail("a std::vector member holds values (only empty ones can be constexpr)");
      return "{}";
    } else if constexpr (std::is_aggregate_v<V>) {
      return aggregate(v);
    } else {
      static_assert(std::is_aggregate_v<V>, "SourcePrinter: a member type it cannot print");
      return {};
    }
  }

  /// An aggregate with the trailing fields that equal a value-initialized V's left out, so
  /// defaults stay defaults in the printed source.
  template <class V>
  std::string trimmed(const V& v) {
    std::vector<std::string> mine = fields(v);
    const std::vector<std::string> defaults = fields(V{});
    while (!mine.empty() && mine.back() == defaults[mine.size() - 1]) mine.pop_back();
    return join(mine);
  }

  const std::string& error() const { return error_; }

 private:
  template <class It>
  std::string list(It first, It last) {
    std::string s = "{";
    for (It i = first; i != last; ++i) s += (i == first ? "" : ", ") + text(*i);
    return s + "}";
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string s = "{";
    bool first = true;
    for (const std::string& p : parts) {
      s += (first ? "" : ", ") + p;
      first = false;
    }
    return s + "}";
  }

  void fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
  }

  template <class V>
  std::string aggregate(const V& v) {
    return join(fields(v));
  }

  template <class V>
  std::vector<std::string> fields(const V& v) {
    constexpr std::size_t kFields = detail::field_count<V>();
    static_assert(kFields <= 40, "SourcePrinter: aggregates of more than 40 fields");
    if constexpr (kFields == 0) {
      return {};
  } else if constexpr (kFields == 1) {
    const auto& [m0] = v;
    return std::vector<std::string>{text(m0)};
  } else if constexpr (kFields == 2) {
    const auto& [m0, m1] = v;
    return std::vector<std::string>{text(m0), text(m1)};
  } else if constexpr (kFields == 3) {
    const auto& [m0, m1, m2] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2)};
  } else if constexpr (kFields == 4) {
    const auto& [m0, m1, m2, m3] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3)};
  } else if constexpr (kFields == 5) {
    const auto& [m0, m1, m2, m3, m4] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4)};
  } else if constexpr (kFields == 6) {
    const auto& [m0, m1, m2, m3, m4, m5] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5)};
  } else if constexpr (kFields == 7) {
    const auto& [m0, m1, m2, m3, m4, m5, m6] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6)};
  } else if constexpr (kFields == 8) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7)};
  } else if constexpr (kFields == 9) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8)};
  } else if constexpr (kFields == 10) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9)};
  } else if constexpr (kFields == 11) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10)};
  } else if constexpr (kFields == 12) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11)};
  } else if constexpr (kFields == 13) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12)};
  } else if constexpr (kFields == 14) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13)};
  } else if constexpr (kFields == 15) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14)};
  } else if constexpr (kFields == 16) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15)};
  } else if constexpr (kFields == 17) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16)};
  } else if constexpr (kFields == 18) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17)};
  } else if constexpr (kFields == 19) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18)};
  } else if constexpr (kFields == 20) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19)};
  } else if constexpr (kFields == 21) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20)};
  } else if constexpr (kFields == 22) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21)};
  } else if constexpr (kFields == 23) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22)};
  } else if constexpr (kFields == 24) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23)};
  } else if constexpr (kFields == 25) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24)};
  } else if constexpr (kFields == 26) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25)};
  } else if constexpr (kFields == 27) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26)};
  } else if constexpr (kFields == 28) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27)};
  } else if constexpr (kFields == 29) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28)};
  } else if constexpr (kFields == 30) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29)};
  } else if constexpr (kFields == 31) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30)};
  } else if constexpr (kFields == 32) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31)};
  } else if constexpr (kFields == 33) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32)};
  } else if constexpr (kFields == 34) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33)};
  } else if constexpr (kFields == 35) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34)};
  } else if constexpr (kFields == 36) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34), text(m35)};
  } else if constexpr (kFields == 37) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35, m36] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34), text(m35), text(m36)};
  } else if constexpr (kFields == 38) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35, m36, m37] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34), text(m35), text(m36), text(m37)};
  } else if constexpr (kFields == 39) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35, m36, m37, m38] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34), text(m35), text(m36), text(m37), text(m38)};
  } else if constexpr (kFields == 40) {
    const auto& [m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15, m16, m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32, m33, m34, m35, m36, m37, m38, m39] = v;
    return std::vector<std::string>{text(m0), text(m1), text(m2), text(m3), text(m4), text(m5), text(m6), text(m7), text(m8), text(m9), text(m10), text(m11), text(m12), text(m13), text(m14), text(m15), text(m16), text(m17), text(m18), text(m19), text(m20), text(m21), text(m22), text(m23), text(m24), text(m25), text(m26), text(m27), text(m28), text(m29), text(m30), text(m31), text(m32), text(m33), text(m34), text(m35), text(m36), text(m37), text(m38), text(m39)};
    }
  }

  std::string error_;
};

}  // namespace infer::io
