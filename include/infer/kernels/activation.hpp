// Activation functors. Each works on a float and on an xsimd float batch alike, so one definition
// serves the standalone activation layers, the scalar paths and the fused epilogues of the
// convolution kernels (where the functor is a template parameter).
#pragma once

#include <cmath>
#include <infer/detail/xsimd.hpp>

namespace infer::act {

namespace detail {
// xsimd has no scalar select/max for plain floats that mirrors the batch one; these make the
// functors below generic over float and batch<float, A>.
inline float select(bool c, float a, float b) { return c ? a : b; }
template <class B>
B select(const typename B::batch_bool_type& c, const B& a, const B& b) {
  return xsimd::select(c, a, b);
}
inline float vmax(float a, float b) { return a > b ? a : b; }  // NaN-propagating like maxps(b,a)
inline float vmin(float a, float b) { return a < b ? a : b; }
template <class B>
B vmax(const B& a, const B& b) {
  return xsimd::max(a, b);
}
template <class B>
B vmin(const B& a, const B& b) {
  return xsimd::min(a, b);
}
template <class V>
V splat(float v) {
  return V(v);
}
}  // namespace detail

/// y = x
struct Identity {
  template <class V>
  V operator()(V x) const {
    return x;
  }
};

/// ncnn ReLU: y = x > 0 ? x : x * slope (slope 0: plain ReLU).
struct ReLU {
  float slope = 0.f;
  template <class V>
  V operator()(V x) const {
    const V zero = detail::splat<V>(0.f);
    if (slope == 0.f) return detail::vmax(x, zero);
    return detail::select(x > zero, x, x * detail::splat<V>(slope));
  }
};

/// ncnn Clip: y = min(max(x, min), max).
struct Clip {
  float min = -3.4028235e38f;
  float max = 3.4028235e38f;
  template <class V>
  V operator()(V x) const {
    return detail::vmin(detail::vmax(x, detail::splat<V>(min)), detail::splat<V>(max));
  }
};

/// y = 1 / (1 + exp(-x))
struct Sigmoid {
  template <class V>
  V operator()(V x) const {
    using std::exp;
    using xsimd::exp;
    const V one = detail::splat<V>(1.f);
    return one / (one + exp(-x));
  }
};

/// y = tanh(x)
struct TanH {
  template <class V>
  V operator()(V x) const {
    using std::tanh;
    using xsimd::tanh;
    return tanh(x);
  }
};

/// y = x * sigmoid(x)
struct Swish {
  template <class V>
  V operator()(V x) const {
    return x * Sigmoid{}(x);
  }
};

/// y = x * tanh(ln(1 + exp(x)))
struct Mish {
  template <class V>
  V operator()(V x) const {
    using std::exp;
    using std::log1p;
    using std::tanh;
    using xsimd::exp;
    using xsimd::log1p;
    using xsimd::tanh;
    // softplus(x) == x to float precision above 20, and exp would overflow far above it.
    const V big = detail::splat<V>(20.f);
    const V sp = detail::select(x > big, x, log1p(exp(detail::vmin(x, big))));
    return x * tanh(sp);
  }
};

/// ncnn HardSigmoid: y = clamp(alpha * x + beta, 0, 1).
struct HardSigmoid {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <class V>
  V operator()(V x) const {
    const V t = x * detail::splat<V>(alpha) + detail::splat<V>(beta);
    return detail::vmin(detail::vmax(t, detail::splat<V>(0.f)), detail::splat<V>(1.f));
  }
};

/// ncnn HardSwish: y = x * clamp(alpha * x + beta, 0, 1).
struct HardSwish {
  float alpha = 0.2f;
  float beta = 0.5f;
  template <class V>
  V operator()(V x) const {
    return x * HardSigmoid{alpha, beta}(x);
  }
};

/// ncnn ELU: y = x < 0 ? alpha * (exp(x) - 1) : x.
struct ELU {
  float alpha = 0.1f;
  template <class V>
  V operator()(V x) const {
    using std::expm1;
    using xsimd::expm1;
    const V zero = detail::splat<V>(0.f);
    return detail::select(x < zero, detail::splat<V>(alpha) * expm1(x), x);
  }
};

/// ncnn GELU: exact y = x * (1 + erf(x / sqrt 2)) / 2, or with fast_gelu the tanh approximation
/// y = x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2.
struct GELU {
  bool fast = false;
  template <class V>
  V operator()(V x) const {
    using std::erf;
    using std::tanh;
    using xsimd::erf;
    using xsimd::tanh;
    const V half = detail::splat<V>(0.5f), one = detail::splat<V>(1.f);
    if (fast) {
      const V inner = detail::splat<V>(0.79788456f) * (x + detail::splat<V>(0.044715f) * x * x * x);
      return half * x * (one + tanh(inner));
    }
    return half * x * (one + erf(x * detail::splat<V>(0.70710678f)));
  }
};

/// y = x * scale (ncnn Dropout at inference).
struct ScaleBy {
  float scale = 1.f;
  template <class V>
  V operator()(V x) const {
    return x * detail::splat<V>(scale);
  }
};

}  // namespace infer::act
