// Element conversions: the scalar ones against independent definitions (exact widening, search for
// the nearest value with ties to even), and every vector path (simd::load/store at each width the
// target has, kernels::cast/quantize/dequantize) against the scalar ones, bit for bit.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <infer/element.hpp>
#include <infer/kernels/cast.hpp>
#include <infer/simd.hpp>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using infer::bf16;
using infer::f16;
using infer::i8;
namespace simd = infer::simd;
namespace kernels = infer::kernels;

std::string hex(std::uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*X", digits, static_cast<unsigned>(v));
  return buf;
}

std::uint32_t bits_of(float v) { return std::bit_cast<std::uint32_t>(v); }
std::uint32_t bits_of(f16 v) { return v.bits; }
std::uint32_t bits_of(bf16 v) { return v.bits; }
std::uint32_t bits_of(i8 v) { return static_cast<std::uint8_t>(v); }
float float_of(std::uint32_t bits) { return std::bit_cast<float>(bits); }

template <class T>
constexpr int hex_digits = sizeof(T) * 2;

/// Collects the mismatches of a sweep over many inputs: the first few fail with their bit patterns,
/// and finish() fails once more with the total, so a passing sweep is one assertion, not millions.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}

  template <class In, class Out>
  void check(In input, Out got, Out want) {
    if (bits_of(got) == bits_of(want)) return;
    if (++count_ <= kReported) {
      INFO(what_ << ": input " << hex(bits_of(input), hex_digits<In>) << " got "
                 << hex(bits_of(got), hex_digits<Out>) << " want "
                 << hex(bits_of(want), hex_digits<Out>));
      CHECK(bits_of(got) == bits_of(want));
    }
  }

  void finish() const {
    INFO(what_ << ": " << count_ << " mismatches");
    CHECK(count_ == 0);
  }

 private:
  static constexpr int kReported = 8;
  std::string what_;
  long count_ = 0;
};

/// Calls f.template operator()<W>() for every native batch width W.
template <class F>
void for_each_width(F&& f) {
  if constexpr (simd::has_width<4>) f.template operator()<4>();
  if constexpr (simd::has_width<8>) f.template operator()<8>();
  if constexpr (simd::has_width<16>) f.template operator()<16>();
}

/// Widens in[] through simd::load<W>; in.size() must be a multiple of W.
template <int W, class T>
std::vector<float> load_all(const std::vector<T>& in) {
  std::vector<float> out(in.size(), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < in.size(); i += W)
    simd::load<W>(in.data() + i).store_unaligned(&out[i]);
  return out;
}

/// Narrows in[] through simd::store<W>; in.size() must be a multiple of W.
template <int W, class T>
std::vector<T> store_all(const std::vector<float>& in) {
  std::vector<T> out(in.size());
  for (std::size_t i = 0; i < in.size(); i += W) {
    simd::store<W>(out.data() + i, simd::fbatch<W>::load_unaligned(&in[i]));
  }
  return out;
}

std::vector<float> pad_to_16(std::vector<float> v) {
  while (v.size() % 16 != 0) v.push_back(0.0f);
  return v;
}

/// Every f16 or bf16 bit pattern.
template <class T>
std::vector<T> all_patterns() {
  std::vector<T> v(65536);
  for (std::uint32_t b = 0; b < 65536; ++b) v[b] = T::from_bits(static_cast<std::uint16_t>(b));
  return v;
}

bool is_nan_bits(f16 h) { return (h.bits & 0x7FFF) > 0x7C00; }
bool is_nan_bits(bf16 h) { return (h.bits & 0x7FFF) > 0x7F80; }

/// Value of every non-negative f16 pattern from 0 to 0x7C00, computed from the definition; the
/// pattern of infinity stands for 65536, where the exponent range would continue.
std::vector<double> f16_magnitudes() {
  std::vector<double> v;
  for (int b = 0; b <= 0x7C00; ++b) {
    const int e = b >> 10, m = b & 0x3FF;
    v.push_back(e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25));
  }
  return v;
}

/// The same for bf16, from 0 to 0x7F80 (standing for 2^128).
std::vector<double> bf16_magnitudes() {
  std::vector<double> v;
  for (std::uint32_t b = 0; b < 0x7F80; ++b) v.push_back(float_of(b << 16));
  v.push_back(std::ldexp(1.0, 128));
  return v;
}

/// Independent reference for a narrowing of a non-NaN float: the pattern whose magnitude is
/// nearest to |x| in the sorted table, ties to the even pattern; beyond the table, infinity.
std::uint16_t nearest_even(float x, const std::vector<double>& magnitudes, std::uint16_t sign_bit) {
  const double a = std::fabs(static_cast<double>(x));
  const auto last = static_cast<std::uint16_t>(magnitudes.size() - 1);
  std::uint16_t r = last;
  if (a < magnitudes.back()) {
    const auto hi = static_cast<std::uint16_t>(
        std::upper_bound(magnitudes.begin(), magnitudes.end(), a) - magnitudes.begin());
    const auto lo = static_cast<std::uint16_t>(hi - 1);
    // Twice the distance comparison, exact in double: 2a against lo + hi.
    const double twice = 2 * a, sum = magnitudes[lo] + magnitudes[hi];
    r = magnitudes[lo] == a ? lo : twice < sum ? lo : twice > sum ? hi : (lo % 2 == 0 ? lo : hi);
  }
  return static_cast<std::uint16_t>(r | (std::signbit(x) ? sign_bit : 0));
}

/// Float inputs for a narrowing to T: every T value, each midpoint between neighbours and the
/// floats either side of it, boundary cases, NaNs with payloads, and random bit patterns.
template <class T>
std::vector<float> narrowing_inputs() {
  std::vector<float> v;
  for (T h : all_patterns<T>()) v.push_back(infer::to_f32(h));
  const std::vector<double> mag = std::is_same_v<T, f16> ? f16_magnitudes() : bf16_magnitudes();
  for (std::size_t i = 0; i + 1 < mag.size(); ++i) {
    const auto mid = static_cast<float>((mag[i] + mag[i + 1]) / 2);
    if (static_cast<double>(mid) != (mag[i] + mag[i + 1]) / 2)
      FAIL("midpoint " << i << " is not a float");
    for (float m : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      v.push_back(m);
      v.push_back(-m);
    }
  }
  const float specials[] = {0.0f,
                            -0.0f,
                            std::ldexp(1.0f, -24),
                            std::ldexp(1.0f, -25),
                            std::nextafter(std::ldexp(1.0f, -25), 1.0f),
                            std::nextafter(std::ldexp(1.0f, -25), 0.0f),
                            std::ldexp(3.0f, -25),
                            std::ldexp(1.0f, -14),
                            std::ldexp(1023.5f, -24),
                            std::nextafter(std::ldexp(1.0f, -14), 0.0f),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::denorm_min(),
                            std::nextafter(std::numeric_limits<float>::min(), 0.0f),
                            65504.0f,
                            65519.0f,
                            std::nextafter(65520.0f, 0.0f),
                            65520.0f,
                            65536.0f,
                            std::numeric_limits<float>::max(),
                            INFINITY,
                            -INFINITY};
  for (float s : specials) {
    v.push_back(s);
    v.push_back(-s);
  }
  for (std::uint32_t nan :
       {0x7FC00000u, 0x7F800001u, 0x7F802000u, 0x7F801FFFu, 0x7FBFFFFFu, 0x7FC00001u, 0x7FFFE000u,
        0x7FFFFFFFu, 0x7FA5A5A5u, 0x7F810000u, 0x7F808000u, 0x7F80FFFFu}) {
    v.push_back(float_of(nan));
    v.push_back(float_of(nan | 0x80000000u));
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < (1 << 20); ++i) v.push_back(float_of(rng()));
  // The same number again with exponents near the half range, where most rounding happens.
  std::uniform_int_distribution<std::uint32_t> exponent(98, 145);
  for (int i = 0; i < (1 << 20); ++i) {
    v.push_back(float_of((rng() & 0x807FFFFFu) | (exponent(rng) << 23)));
  }
  return v;
}

/// The NaN rule (measured on F16C): sign kept, quiet bit set, top payload bits kept.
std::uint16_t expected_nan(float x, std::uint16_t exponent_and_quiet, int dropped_bits) {
  const std::uint32_t b = bits_of(x);
  return static_cast<std::uint16_t>(((b >> 16) & 0x8000) | exponent_and_quiet |
                                    ((b & 0x7FFFFF) >> dropped_bits));
}

template <class T>
void check_narrowing(const char* name, T (*scalar)(float)) {
  constexpr bool is_f16 = std::is_same_v<T, f16>;
  const std::vector<float> in = pad_to_16(narrowing_inputs<T>());
  const std::vector<double> mag = is_f16 ? f16_magnitudes() : bf16_magnitudes();
  const std::uint16_t sign_bit = 0x8000;

  std::vector<T> want(in.size());
  Mismatches ref(std::string(name) + " scalar vs nearest-even search");
  for (std::size_t i = 0; i < in.size(); ++i) {
    want[i] = scalar(in[i]);
    const T expected = T::from_bits(std::isnan(in[i]) ? (is_f16 ? expected_nan(in[i], 0x7E00, 13)
                                                                : expected_nan(in[i], 0x7FC0, 16))
                                                      : nearest_even(in[i], mag, sign_bit));
    ref.check(in[i], want[i], expected);
  }
  ref.finish();

  for_each_width([&]<int W>() {
    Mismatches mm(std::string(name) + " simd::store<" + std::to_string(W) + ">");
    const std::vector<T> got = store_all<W, T>(in);
    for (std::size_t i = 0; i < in.size(); ++i) mm.check(in[i], got[i], want[i]);
    mm.finish();
  });

  // An odd length leaves a scalar tail.
  const std::size_t n = in.size() - 13;
  std::vector<T> got(in.size(), T::from_bits(0x5555));
  kernels::cast(in.data(), got.data(), n);
  Mismatches mm(std::string(name) + " kernels::cast");
  for (std::size_t i = 0; i < n; ++i) mm.check(in[i], got[i], want[i]);
  for (std::size_t i = n; i < in.size(); ++i) mm.check(in[i], got[i], T::from_bits(0x5555));
  mm.finish();
}

template <class T>
void check_widening(const char* name, float (*scalar)(T), float (*expected)(T)) {
  const std::vector<T> in = all_patterns<T>();
  std::vector<float> want(in.size());
  Mismatches ref(std::string(name) + " scalar vs definition");
  for (std::size_t i = 0; i < in.size(); ++i) {
    want[i] = scalar(in[i]);
    ref.check(in[i], want[i], expected(in[i]));
  }
  ref.finish();

  for_each_width([&]<int W>() {
    Mismatches mm(std::string(name) + " simd::load<" + std::to_string(W) + ">");
    const std::vector<float> got = load_all<W>(in);
    for (std::size_t i = 0; i < in.size(); ++i) mm.check(in[i], got[i], want[i]);
    mm.finish();
  });

  const std::size_t n = in.size() - 7;
  std::vector<float> got(in.size(), -1.0f);
  kernels::cast(in.data(), got.data(), n);
  Mismatches mm(std::string(name) + " kernels::cast");
  for (std::size_t i = 0; i < n; ++i) mm.check(in[i], got[i], want[i]);
  for (std::size_t i = n; i < in.size(); ++i) mm.check(in[i], got[i], -1.0f);
  mm.finish();
}

// Definitions written independently of element.hpp's bit manipulation.
float f16_by_definition(f16 h) {
  const int e = (h.bits >> 10) & 0x1F, m = h.bits & 0x3FF;
  const bool negative = (h.bits & 0x8000) != 0;
  if (e == 0x1F && m != 0) {  // the NaN rule
    return float_of((negative ? 0x80000000u : 0u) | 0x7FC00000u | (std::uint32_t(m) << 13));
  }
  const float magnitude = e == 0x1F ? INFINITY
                          : e == 0  ? std::ldexp(static_cast<float>(m), -24)
                                    : std::ldexp(static_cast<float>(1024 + m), e - 25);
  return negative ? -magnitude : magnitude;
}

float bf16_by_definition(bf16 h) { return float_of(std::uint32_t{h.bits} << 16); }

}  // namespace

// Compile-time: the conversions are constexpr and the type traits hold.
static_assert(infer::f16_to_f32(f16::from_bits(0x3C00)) == 1.0f);
static_assert(infer::f32_to_f16(1.0f) == f16::from_bits(0x3C00));
static_assert(infer::f32_to_f16(65520.0f) == f16::from_bits(0x7C00));
static_assert(infer::bf16_to_f32(bf16::from_bits(0x3F80)) == 1.0f);
static_assert(infer::f32_to_bf16(1.0f) == bf16::from_bits(0x3F80));
static_assert(infer::float2int8(-0.5f) == -1);
static_assert(infer::float2int8(std::numeric_limits<float>::quiet_NaN()) == 0);
static_assert(infer::f32_to_f16(std::bit_cast<float>(0xFF800001u)).bits == 0xFE00);
static_assert(infer::to_f32(i8{-7}) == -7.0f);
static_assert(infer::from_f32<i8>(300.0f) == 127);

TEST_CASE("element type traits", "[element]") {
  using infer::ElemType;
  STATIC_REQUIRE(sizeof(f16) == 2);
  STATIC_REQUIRE(sizeof(bf16) == 2);
  STATIC_REQUIRE(std::is_trivially_copyable_v<f16>);
  STATIC_REQUIRE(infer::Element<infer::i32>);
  STATIC_REQUIRE_FALSE(infer::Element<std::int64_t>);
  STATIC_REQUIRE_FALSE(infer::Element<char>);
  STATIC_REQUIRE_FALSE(infer::StorageElement<infer::i32>);
  STATIC_REQUIRE(infer::StorageElement<i8>);
  CHECK(infer::elem_type_v<float> == ElemType::f32);
  CHECK(infer::elem_type_v<f16> == ElemType::f16);
  CHECK(infer::elem_type_v<bf16> == ElemType::bf16);
  CHECK(infer::elem_type_v<i8> == ElemType::i8);
  CHECK(infer::elem_type_v<infer::i32> == ElemType::i32);
  CHECK(infer::elem_size(ElemType::f32) == 4);
  CHECK(infer::elem_size(ElemType::f16) == 2);
  CHECK(infer::elem_size(ElemType::bf16) == 2);
  CHECK(infer::elem_size(ElemType::i8) == 1);
  CHECK(infer::elem_size(ElemType::i32) == 4);
  CHECK(infer::to_string(ElemType::f32) == "f32");
  CHECK(infer::to_string(ElemType::f16) == "f16");
  CHECK(infer::to_string(ElemType::bf16) == "bf16");
  CHECK(infer::to_string(ElemType::i8) == "i8");
  CHECK(infer::to_string(ElemType::i32) == "i32");
  CHECK(simd::max_width == (simd::has_width<16>  ? 16
                            : simd::has_width<8> ? 8
                            : simd::has_width<4> ? 4
                                                 : 1));
}

TEST_CASE("f16 -> f32, every bit pattern, scalar and vector", "[element][f16]") {
  check_widening<f16>("f16->f32", infer::f16_to_f32, f16_by_definition);
}

TEST_CASE("bf16 -> f32, every bit pattern, scalar and vector", "[element][bf16]") {
  check_widening<bf16>("bf16->f32", infer::bf16_to_f32, bf16_by_definition);
}

TEST_CASE("f32 -> f16 rounds to nearest even, scalar and vector", "[element][f16]") {
  check_narrowing<f16>("f32->f16", infer::f32_to_f16);
}

TEST_CASE("f32 -> bf16 rounds to nearest even, scalar and vector", "[element][bf16]") {
  check_narrowing<bf16>("f32->bf16", infer::f32_to_bf16);
}

TEMPLATE_TEST_CASE("16-bit -> f32 -> 16-bit is the identity except on NaN", "[element]", f16,
                   bf16) {
  const std::vector<TestType> in = all_patterns<TestType>();
  std::vector<float> wide(in.size());
  std::vector<TestType> back(in.size());
  kernels::cast(in.data(), wide.data(), in.size());
  kernels::cast(wide.data(), back.data(), in.size());
  Mismatches mm("round trip");
  for (std::size_t i = 0; i < in.size(); ++i) {
    const TestType scalar = infer::from_f32<TestType>(infer::to_f32(in[i]));
    mm.check(in[i], back[i], scalar);
    if (is_nan_bits(in[i])) {
      // NaN stays NaN with its sign; compared as (is NaN, sign) folded into one pattern.
      const auto nan_and_sign = [](TestType h) {
        return TestType::from_bits((is_nan_bits(h) ? 1 : 0) | (h.bits & 0x8000));
      };
      mm.check(in[i], nan_and_sign(scalar), nan_and_sign(in[i]));
    } else {
      mm.check(in[i], scalar, in[i]);
    }
  }
  mm.finish();
}

TEST_CASE("hand-picked rounding cases", "[element]") {
  struct Case {
    float in;
    std::uint16_t f16_bits;
    std::uint16_t bf16_bits;
  };
  const Case cases[] = {
      {1.0f, 0x3C00, 0x3F80},
      {1.0f + 0x1p-11f, 0x3C00, 0x3F80},      // f16 tie between 1 and 1 + 2^-10: even is 1
      {1.0f + 3 * 0x1p-11f, 0x3C02, 0x3F80},  // f16 tie: even is 1 + 2^-9
      {1.0f + 0x1p-8f, 0x3C04, 0x3F80},       // bf16 tie between 1 and 1 + 2^-7: even is 1
      {1.0f + 3 * 0x1p-8f, 0x3C0C, 0x3F82},   // bf16 tie: even is 1 + 2^-6
      {0x1p-24f, 0x0001, 0x3380},             // smallest f16 subnormal
      {0x1p-25f, 0x0000, 0x3300},             // f16 tie between 0 and 2^-24: 0
      {0x1.000002p-25f, 0x0001, 0x3300},      // just above that tie
      {3 * 0x1p-25f, 0x0002, 0x33C0},         // f16 tie between 1 and 2 units: 2
      {0x1p-14f, 0x0400, 0x3880},             // smallest f16 normal
      {1023.5f * 0x1p-24f, 0x0400, 0x3880},   // tie after the largest f16 subnormal: up
      {65504.0f, 0x7BFF, 0x4780},             // largest f16
      {65519.996f, 0x7BFF, 0x4780},           // just under the f16 overflow tie
      {65520.0f, 0x7C00, 0x4780},             // the overflow tie goes to infinity
      {-65520.0f, 0xFC00, 0xC780},
      {0x1p-130f, 0x0000, 0x0008},     // f32 subnormal, kept by bf16
      {-0x1.8p-133f, 0x8000, 0x8002},  // bf16 subnormal tie between 1 and 2 units: 2
      {0x1.4p-132f, 0x0000, 0x0002},   // bf16 subnormal tie between 2 and 3 units: 2
      {0x1p-134f, 0x0000, 0x0000},     // bf16 tie between 0 and 1 unit: 0
      {std::numeric_limits<float>::max(), 0x7C00, 0x7F80},
      {-0.0f, 0x8000, 0x8000},
  };
  for (const Case& c : cases) {
    CAPTURE(hex(bits_of(c.in), 8));
    CHECK(hex(infer::f32_to_f16(c.in).bits, 4) == hex(c.f16_bits, 4));
    CHECK(hex(infer::f32_to_bf16(c.in).bits, 4) == hex(c.bf16_bits, 4));
  }
  CHECK(infer::f16_to_f32(f16::from_bits(0x0001)) == 0x1p-24f);
  CHECK(infer::f16_to_f32(f16::from_bits(0x7BFF)) == 65504.0f);
  CHECK(infer::f16_to_f32(f16::from_bits(0x7C00)) == INFINITY);
}

TEST_CASE("float2int8 rounds half away from zero and saturates", "[element][int8]") {
  struct Case {
    float in;
    int out;
  };
  const Case cases[] = {{0.5f, 1},       {-0.5f, -1},      {1.5f, 2},         {2.5f, 3},
                        {-2.5f, -3},     {0.49999997f, 0}, {-0.49999997f, 0}, {126.5f, 127},
                        {127.4f, 127},   {127.5f, 127},    {300.0f, 127},     {-300.0f, -127},
                        {-127.5f, -127}, {-128.0f, -127},  {INFINITY, 127},   {-INFINITY, -127},
                        {NAN, 0},        {-NAN, 0},        {0.0f, 0},         {-0.0f, 0},
                        {1e-40f, 0},     {-1.4999999f, -1}};
  for (const Case& c : cases) {
    CAPTURE(c.in, hex(bits_of(c.in), 8));
    CHECK(int{infer::float2int8(c.in)} == c.out);
  }
}

namespace {

/// Random quantization inputs with the awkward ones mixed in: ties, near-ties, specials.
std::vector<float> quantize_inputs(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-200.0f, 200.0f);
  std::uniform_int_distribution<int> pick(0, 9), k(-130, 130);
  const float specials[] = {NAN,          -NAN, INFINITY, -INFINITY, 0.49999997f,
                            -0.49999997f, 0.0f, -0.0f,    1e-40f,    3e38f};
  std::vector<float> v(n);
  for (float& x : v) {
    const int p = pick(rng);
    x = p < 5 ? value(rng) : p < 8 ? static_cast<float>(k(rng)) + 0.5f : specials[pick(rng)];
  }
  return v;
}

constexpr std::size_t kGuard = 17;

std::vector<std::size_t> lengths() {
  std::vector<std::size_t> v;
  for (std::size_t n = 0; n <= 40; ++n) v.push_back(n);
  v.push_back(100'003);
  return v;
}

template <class From, class To>
void check_cast_lengths(std::mt19937& rng) {
  for (std::size_t n : lengths()) {
    std::vector<From> src(n);
    for (From& x : src) {
      if constexpr (std::is_same_v<From, float>) {
        x = rng() % 2 ? float_of(rng()) : std::ldexp(static_cast<float>(rng() % 4096) - 2048, -8);
      } else {
        x = From::from_bits(static_cast<std::uint16_t>(rng()));
      }
    }
    const To sentinel = infer::from_f32<To>(-3.0f);
    std::vector<To> got(n + kGuard, sentinel), want(n + kGuard, sentinel);
    kernels::cast(src.data(), got.data(), n);
    kernels::scalar::cast(src.data(), want.data(), n);
    Mismatches mm("cast n=" + std::to_string(n));
    for (std::size_t i = 0; i < n + kGuard; ++i) mm.check(i < n ? src[i] : From{}, got[i], want[i]);
    mm.finish();
  }
}

}  // namespace

TEST_CASE("cast kernels equal the scalar loop at every length", "[element][kernels]") {
  std::mt19937 rng(7);
  SECTION("f32->f16") { check_cast_lengths<float, f16>(rng); }
  SECTION("f16->f32") { check_cast_lengths<f16, float>(rng); }
  SECTION("f32->bf16") { check_cast_lengths<float, bf16>(rng); }
  SECTION("bf16->f32") { check_cast_lengths<bf16, float>(rng); }
  SECTION("f16->bf16") { check_cast_lengths<f16, bf16>(rng); }
  SECTION("bf16->f16") { check_cast_lengths<bf16, f16>(rng); }
  SECTION("f32->f32") { check_cast_lengths<float, float>(rng); }
  SECTION("f16->f16") { check_cast_lengths<f16, f16>(rng); }
}

TEST_CASE("quantize equals the scalar loop at every length", "[element][int8]") {
  std::mt19937 rng(11);
  for (float scale : {1.0f, 127.0f / 3.7f, 0.3f}) {
    for (std::size_t n : lengths()) {
      const std::vector<float> src = quantize_inputs(n, rng);
      std::vector<i8> got(n + kGuard, i8{-99}), want(n + kGuard, i8{-99});
      kernels::quantize(src.data(), got.data(), n, scale);
      kernels::scalar::quantize(src.data(), want.data(), n, scale);
      Mismatches mm("quantize scale=" + std::to_string(scale) + " n=" + std::to_string(n));
      for (std::size_t i = 0; i < n + kGuard; ++i) mm.check(i < n ? src[i] : 0.0f, got[i], want[i]);
      mm.finish();
    }
  }
}

TEST_CASE("simd::store to i8 equals float2int8 at every width", "[element][int8]") {
  std::mt19937 rng(13);
  const std::vector<float> in = pad_to_16(quantize_inputs(1 << 16, rng));
  for_each_width([&]<int W>() {
    const std::vector<i8> got = store_all<W, i8>(in);
    Mismatches mm("simd::store<" + std::to_string(W) + ", i8>");
    for (std::size_t i = 0; i < in.size(); ++i) mm.check(in[i], got[i], infer::float2int8(in[i]));
    mm.finish();
  });
}

TEST_CASE("dequantize equals the scalar loop at every length", "[element][int8]") {
  std::mt19937 rng(17);
  for (float scale : {1.0f, 3.7f / 127.0f, 1e-30f}) {
    for (std::size_t n : lengths()) {
      std::vector<i8> src(n);
      for (i8& x : src) x = static_cast<i8>(rng());
      std::vector<float> got(n + kGuard, -5.0f), want(n + kGuard, -5.0f);
      kernels::dequantize(src.data(), got.data(), n, scale);
      kernels::scalar::dequantize(src.data(), want.data(), n, scale);
      Mismatches mm("dequantize scale=" + std::to_string(scale) + " n=" + std::to_string(n));
      for (std::size_t i = 0; i < n + kGuard; ++i) mm.check(i < n ? src[i] : i8{}, got[i], want[i]);
      mm.finish();
    }
  }
}

TEST_CASE("simd::load from i8 is exact at every width", "[element][int8]") {
  std::vector<i8> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<i8>(i - 128);
  for_each_width([&]<int W>() {
    const std::vector<float> got = load_all<W>(in);
    Mismatches mm("simd::load<" + std::to_string(W) + ", i8>");
    for (std::size_t i = 0; i < in.size(); ++i) mm.check(in[i], got[i], static_cast<float>(in[i]));
    mm.finish();
  });
}
