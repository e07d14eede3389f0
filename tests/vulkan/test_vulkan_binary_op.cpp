// The GPU element-wise binary kernel against a scalar definition (double, over the values as
// stored): every BinaryOp operation on same-shape operands and on each of ncnn's broadcasts
// (per-channel vector 3-D or 1-D, one-value blob, 1-D along w or h, 2-D and 3-D operands of a
// higher rank, extent-1 axes, a lower-rank first operand), the with_scalar form, in place,
// mixed packs, coefficients; Eltwise product, weighted sum and max over 2 to 4 inputs (in place
// too); f32 and f16 storage, packs 1 and 4; then the errors, on the device and on a recorder that
// only counts.
#include <fmt/ranges.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <infer/layers/binary_op.hpp>
#include <infer/vulkan/binary_op.hpp>
#include <infer/vulkan/command.hpp>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::test::RefTensor;
using infer::vk::BinaryOpKind;
using infer::vk::EltwiseKind;
using infer::vk::VkMat;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::nan_mat;
using infer::vk::test::run_on_device;

namespace {

constexpr BinaryOpKind kAllOps[] = {BinaryOpKind::add,  BinaryOpKind::sub,   BinaryOpKind::mul,
                                    BinaryOpKind::div,  BinaryOpKind::max,   BinaryOpKind::min,
                                    BinaryOpKind::pow,  BinaryOpKind::rsub,  BinaryOpKind::rdiv,
                                    BinaryOpKind::rpow, BinaryOpKind::atan2, BinaryOpKind::ratan2};

const char* name(BinaryOpKind op) {
  constexpr const char* names[] = {"add", "sub",  "mul",  "div",  "max",   "min",
                                   "pow", "rsub", "rdiv", "rpow", "atan2", "ratan2"};
  return names[int(op)];
}

const char* name(EltwiseKind k) {
  constexpr const char* names[] = {"prod", "sum", "max"};
  return names[int(k)];
}

std::string describe(const Shape& s) { return infer::vk::detail::describe_shape(s); }

double apply(BinaryOpKind op, double x, double y) {
  switch (op) {
    case BinaryOpKind::add:
      return x + y;
    case BinaryOpKind::sub:
      return x - y;
    case BinaryOpKind::mul:
      return x * y;
    case BinaryOpKind::div:
      return x / y;
    case BinaryOpKind::max:
      return std::max(x, y);
    case BinaryOpKind::min:
      return std::min(x, y);
    case BinaryOpKind::pow:
      return std::pow(x, y);
    case BinaryOpKind::rsub:
      return y - x;
    case BinaryOpKind::rdiv:
      return y / x;
    case BinaryOpKind::rpow:
      return std::pow(y, x);
    case BinaryOpKind::atan2:
      return std::atan2(x, y);
    case BinaryOpKind::ratan2:
      return std::atan2(y, x);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// Values of magnitude 0.25 to 3 (no division blows up), of either sign unless `positive` (bases
/// of pow, which is NaN for a negative base and a fractional exponent), rounded to `type` as the
/// device will hold them.
RefTensor values(const Shape& s, unsigned seed, bool positive, ElemType type) {
  RefTensor t = infer::vk::test::random_tensor(s, seed, 0.25f, 3.f);
  std::mt19937 rng(seed * 7919u + 1u);
  if (!positive)
    for (float& v : t.v)
      if (rng() & 1u) v = -v;
  RefTensor stored(s);
  stored.v = infer::test::from_mat(host_mat(t, type, 1)).v;
  return stored;
}

/// Operand t's value at output position (x, y, z, c) of a rank-out_dims output, beside the other
/// operand's shape: ncnn's broadcasting written over logical coordinates.
double operand_at(const RefTensor& t, int out_dims, const Shape& other, int x, int y, int z,
                  int c) {
  const Shape& s = t.shape;
  const auto pick = [](int i, int n) { return n == 1 ? 0 : i; };
  if (s.dims == out_dims) return t.at(pick(x, s.w), pick(y, s.h), pick(z, s.d), pick(c, s.c));
  if (s.dims == 1) {
    const bool outer = s.w == (out_dims == 2 ? other.h : other.c);
    return t.v[std::size_t(pick(outer ? (out_dims == 2 ? y : c) : x, s.w))];
  }
  if (s.dims == 2)
    return out_dims == 3 ? t.at(pick(y, s.w), pick(c, s.h)) : t.at(pick(z, s.w), pick(c, s.h));
  return t.at(pick(y, s.w), pick(z, s.h), 0, pick(c, s.c));  // 3-D in 4-D
}

/// The pack a blob of shape s takes in a run at `pack`: that pack where it divides the packing
/// axis, else 1.
int pack_for(const Shape& s, int pack) { return s.packed_extent() % pack == 0 ? pack : 1; }


/// Counts the wrong values of `got` and names the first (position and both values).
void compare(const RefTensor& got, const RefTensor& want, ElemType type, const std::string& what) {
  REQUIRE(got.shape == want.shape);
  const double tol = type == ElemType::f32 ? 1e-5 : 4e-3;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < want.v.size(); ++i)
    if (!(std::abs(double(got.v[i]) - want.v[i]) <= tol * (1 + std::abs(double(want.v[i])))) &&
        bad++ == 0)
      first = i;
  const Shape& s = want.shape;
  const std::size_t plane = std::size_t(s.w) * s.h;
  INFO(fmt::format("{}: {} of {} wrong, first at x {} y {} z {} c {}: got {} want {}", what, bad,
                   want.v.size(), first % s.w, first / s.w % s.h, first / plane % s.d,
                   first / (plane * s.d), got.v[first], want.v[first]));
  CHECK(bad == 0);
}

/// One BinaryOp on the device against the reference: out = op(ca * a, cb * b) with b a blob or
/// the with_scalar constant; out apart from the inputs or in place on a.
class BinaryOpTester {
 public:
  BinaryOpTester& a(const Shape& s) {
    a_ = s;
    return *this;
  }
  BinaryOpTester& b(const Shape& s) {
    b_ = s;
    return *this;
  }
  /// The with_scalar form: b is this constant.
  BinaryOpTester& scalar(float v) {
    scalar_ = v;
    return *this;
  }
  BinaryOpTester& op(BinaryOpKind k) {
    op_ = k;
    return *this;
  }
  BinaryOpTester& type(ElemType t) {
    type_ = t;
    return *this;
  }
  /// Every blob at this pack where it divides the blob's packing axis, else at 1.
  BinaryOpTester& pack(int p) {
    pack_ = p;
    return *this;
  }
  /// The output is a's memory.
  BinaryOpTester& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  /// The output is b's memory.
  BinaryOpTester& inplace_on_b(bool v) {
    inplace_b_ = v;
    return *this;
  }
  BinaryOpTester& coeffs(float ca, float cb) {
    ca_ = ca;
    cb_ = cb;
    return *this;
  }
  BinaryOpTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test(infer::vk::PipelineCache& cache) const {
    const bool with_scalar = scalar_.has_value();
    Shape out_shape = a_;
    if (!with_scalar) REQUIRE(infer::layers::detail::broadcast_shape(a_, b_, out_shape).ok());
    const bool pow_base_a = op_ == BinaryOpKind::pow, pow_base_b = op_ == BinaryOpKind::rpow;
    const RefTensor ta = values(a_, seed_, !with_scalar && (pow_base_a || pow_base_b), type_);
    const RefTensor tb = values(b_, seed_ + 1000, pow_base_a || pow_base_b, type_);
    RefTensor want(out_shape);
    const Shape& o = out_shape;
    for (int c = 0; c < o.c; ++c)
      for (int z = 0; z < o.d; ++z)
        for (int y = 0; y < o.h; ++y)
          for (int x = 0; x < o.w; ++x) {
            const double va = operand_at(ta, o.dims, b_, x, y, z, c);
            const double vb =
                with_scalar ? double(*scalar_) : operand_at(tb, o.dims, a_, x, y, z, c);
            want.at(x, y, z, c) = float(apply(op_, double(ca_) * va, double(cb_) * vb));
          }
    const int pa = pack_for(a_, pack_), pb = pack_for(b_, pack_), po = pack_for(o, pack_);
    const std::string what = fmt::format(
        "{} a {} pack {}, {}, out pack {}{}, coeffs {} {}, {}", name(op_), describe(a_), pa,
        with_scalar ? fmt::format("scalar {}", *scalar_)
                    : fmt::format("b {} pack {}", describe(b_), pb),
        po,
        inplace_     ? " in place on a"
        : inplace_b_ ? " in place on b"
                     : "",
        ca_, cb_, infer::to_string(type_));
    INFO(what);
    std::vector<infer::Mat> hosts{host_mat(ta, type_, pa)};
    if (!with_scalar) hosts.push_back(host_mat(tb, type_, pb));
    if (!inplace_ && !inplace_b_) hosts.push_back(nan_mat(o, type_, po));
    const std::size_t result = inplace_ ? 0 : inplace_b_ ? 1 : hosts.size() - 1;
    const auto record = [&](infer::vk::Recorder& rec, const std::vector<VkMat>& m) {
      const VkMat* b = with_scalar ? nullptr : &m[1];
      return infer::vk::record_binary_op(rec, m[0], b, m[result], op_, scalar_.value_or(0.f), ca_,
                                         cb_);
    };
    const RefTensor got = run_on_device(hosts, result, cache, record);
    compare(got, want, type_, what);
  }

 private:
  Shape a_ = Shape::of(7, 5, 12), b_ = Shape::of(7, 5, 12);
  std::optional<float> scalar_;
  BinaryOpKind op_ = BinaryOpKind::add;
  ElemType type_ = ElemType::f32;
  int pack_ = 1;
  bool inplace_ = false, inplace_b_ = false;
  float ca_ = 1.f, cb_ = 1.f;
  unsigned seed_ = 1;
};

/// One Eltwise on the device against the reference: op over `inputs` of one shape, the sum
/// weighted by coeffs; out apart from the inputs or in place on one of them.
class EltwiseTester {
 public:
  EltwiseTester& shape(const Shape& s) {
    shape_ = s;
    return *this;
  }
  EltwiseTester& inputs(int n) {
    inputs_ = n;
    return *this;
  }
  EltwiseTester& kind(EltwiseKind k) {
    kind_ = k;
    return *this;
  }
  EltwiseTester& coeffs(std::vector<float> c) {
    coeffs_ = std::move(c);
    return *this;
  }
  EltwiseTester& type(ElemType t) {
    type_ = t;
    return *this;
  }
  /// Every blob at this pack where it divides the packing axis, else at 1.
  EltwiseTester& pack(int p) {
    pack_ = p;
    return *this;
  }
  /// Input i at pack 1 whatever pack() says.
  EltwiseTester& unpacked_input(int i) {
    unpacked_ = i;
    return *this;
  }
  /// The output is input i's memory (-1: apart).
  EltwiseTester& inplace_on(int i) {
    inplace_on_ = i;
    return *this;
  }
  EltwiseTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test(infer::vk::PipelineCache& cache) const {
    std::vector<RefTensor> in;
    for (int i = 0; i < inputs_; ++i)
      in.push_back(values(shape_, seed_ + unsigned(i) * 100, false, type_));
    const bool weighted = kind_ == EltwiseKind::sum && !coeffs_.empty();
    RefTensor want(shape_);
    for (std::size_t v = 0; v < want.v.size(); ++v) {
      double acc = 0;
      for (int i = 0; i < inputs_; ++i) {
        const double x =
            double(in[std::size_t(i)].v[v]) * (weighted ? coeffs_[std::size_t(i)] : 1.0);
        acc = i == 0                       ? x
              : kind_ == EltwiseKind::prod ? acc * x
              : kind_ == EltwiseKind::sum  ? acc + x
                                           : std::max(acc, x);
      }
      want.v[v] = float(acc);
    }
    const int p = pack_for(shape_, pack_);
    const std::string what = fmt::format(
        "Eltwise {} of {} {} inputs, pack {}{}{}{}, {}", name(kind_), inputs_, describe(shape_), p,
        unpacked_ >= 0 ? fmt::format(" (input {} pack 1)", unpacked_) : "",
        weighted ? fmt::format(", coeffs {}", fmt::join(coeffs_, " ")) : "",
        inplace_on_ >= 0 ? fmt::format(", in place on input {}", inplace_on_) : "",
        infer::to_string(type_));
    INFO(what);
    std::vector<infer::Mat> hosts;
    for (int i = 0; i < inputs_; ++i)
      hosts.push_back(host_mat(in[std::size_t(i)], type_, i == unpacked_ ? 1 : p));
    if (inplace_on_ < 0) hosts.push_back(nan_mat(shape_, type_, p));
    const std::size_t result = inplace_on_ >= 0 ? std::size_t(inplace_on_) : hosts.size() - 1;
    const RefTensor got = run_on_device(
        hosts, result, cache, [&](infer::vk::Recorder& rec, const std::vector<VkMat>& m) {
          std::vector<const VkMat*> ptrs;
          for (int i = 0; i < inputs_; ++i) ptrs.push_back(&m[std::size_t(i)]);
          return infer::vk::record_eltwise(rec, ptrs, m[result], kind_, coeffs_);
        });
    compare(got, want, type_, what);
  }

 private:
  Shape shape_ = Shape::of(7, 5, 12);
  int inputs_ = 3;
  EltwiseKind kind_ = EltwiseKind::sum;
  std::vector<float> coeffs_;
  ElemType type_ = ElemType::f32;
  int pack_ = 1;
  int unpacked_ = -1;
  int inplace_on_ = -1;
  unsigned seed_ = 1;
};

std::vector<ElemType> storage_types() {
  std::vector<ElemType> t{ElemType::f32};
  if (g_ctx->info().fp16_storage) t.push_back(ElemType::f16);
  return t;
}

}  // namespace

TEST_CASE("Vulkan BinaryOp matches the scalar definition for every op and broadcast",
          "[vulkan][binary_op]") {
  struct Case {
    Shape a, b;
    const char* what;
  };
  const Case cases[] = {
      {Shape::of(7, 5, 12), Shape::of(7, 5, 12), "same shape"},
      {Shape::of(3, 1, 4), Shape::of(3, 1, 4), "same shape, one row"},
      {Shape::of(13), Shape::of(13), "1-D, odd"},
      {Shape::of(20), Shape::of(20), "1-D"},
      {Shape::of(5, 8), Shape::of(5, 8), "2-D"},
      {Shape::of(3, 2, 5, 8), Shape::of(3, 2, 5, 8), "4-D"},
      {Shape::of(7, 5, 12), Shape::of(1, 1, 12), "per-channel 3-D"},
      {Shape::of(7, 5, 12), Shape::of(12), "per-channel 1-D"},
      {Shape::of(7, 5, 12), Shape::of(1), "one-value blob"},
      {Shape::of(7, 5, 12), Shape::of(7), "1-D along w"},
      {Shape::of(7, 5, 12), Shape::of(7, 1, 12), "extent-1 h"},
      {Shape::of(7, 5, 12), Shape::of(7, 5, 1), "extent-1 channels"},
      {Shape::of(7, 5, 12), Shape::of(5, 12), "2-D in 3-D"},
      {Shape::of(12), Shape::of(7, 5, 12), "lower-rank a"},
      {Shape::of(5, 8), Shape::of(8), "1-D along h of 2-D"},
      {Shape::of(3, 2, 5, 8), Shape::of(2, 5, 8), "3-D in 4-D"},
      {Shape::of(3, 2, 5, 8), Shape::of(5, 8), "2-D in 4-D"},
      {Shape::of(3, 2, 5, 8), Shape::of(1, 1, 1, 8), "per-channel 4-D"},
  };
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 0;
  for (ElemType type : storage_types())
    for (const Case& k : cases)
      for (int pack : {1, 4}) {
        Shape out;
        REQUIRE(infer::layers::detail::broadcast_shape(k.a, k.b, out).ok());
        if (pack_for(out, pack) != pack) continue;
        for (BinaryOpKind op : kAllOps) {
          INFO(k.what);
          BinaryOpTester().a(k.a).b(k.b).op(op).type(type).pack(pack).seed(++seed).test(cache);
        }
      }
}

TEST_CASE("Vulkan BinaryOp with_scalar, apart and in place", "[vulkan][binary_op]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 300;
  for (ElemType type : storage_types())
    for (const Shape& s : {Shape::of(7, 5, 12), Shape::of(13), Shape::of(3, 1, 4)})
      for (int pack : {1, 4}) {
        if (pack_for(s, pack) != pack) continue;
        for (BinaryOpKind op : kAllOps)
          for (bool inplace : {false, true}) {
            // pow's scalar is an odd integer exponent of signed bases; rpow's a positive base.
            const float scalar = op == BinaryOpKind::pow    ? 3.f
                                 : op == BinaryOpKind::rpow ? 1.5f
                                                            : -1.75f;
            BinaryOpTester()
                .a(s)
                .scalar(scalar)
                .op(op)
                .type(type)
                .pack(pack)
                .inplace(inplace)
                .seed(++seed)
                .test(cache);
          }
      }
}

TEST_CASE("Vulkan BinaryOp in place on a (b broadcast or not) and on b", "[vulkan][binary_op]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 600;
  for (ElemType type : storage_types())
    for (int pack : {1, 4})
      for (BinaryOpKind op : kAllOps)
        for (const Shape& b :
             {Shape::of(7, 5, 12), Shape::of(12), Shape::of(1, 1, 12), Shape::of(1)})
          BinaryOpTester()
              .a(Shape::of(7, 5, 12))
              .b(b)
              .op(op)
              .type(type)
              .pack(pack)
              .inplace(true)
              .seed(++seed)
              .test(cache);
  // out = op(a, b) into b's memory: a broadcast (per-channel) or not.
  for (ElemType type : storage_types())
    for (int pack : {1, 4})
      for (BinaryOpKind op : kAllOps)
        for (const Shape& a : {Shape::of(7, 5, 12), Shape::of(12)})
          BinaryOpTester()
              .a(a)
              .b(Shape::of(7, 5, 12))
              .op(op)
              .type(type)
              .pack(pack)
              .inplace_on_b(true)
              .seed(++seed)
              .test(cache);
}

TEST_CASE("Vulkan BinaryOp scales its operands by the coefficients", "[vulkan][binary_op]") {
  infer::vk::PipelineCache cache(*g_ctx);
  for (ElemType type : storage_types())
    for (int pack : {1, 4})
      for (BinaryOpKind op : {BinaryOpKind::add, BinaryOpKind::mul, BinaryOpKind::max}) {
        BinaryOpTester()
            .a(Shape::of(7, 5, 12))
            .b(Shape::of(12))
            .op(op)
            .coeffs(0.5f, -2.f)
            .type(type)
            .pack(pack)
            .test(cache);
        BinaryOpTester()
            .a(Shape::of(7, 5, 12))
            .scalar(1.25f)
            .op(op)
            .coeffs(-1.5f, 3.f)
            .type(type)
            .pack(pack)
            .inplace(true)
            .test(cache);
      }
}

TEST_CASE("Vulkan BinaryOp: pow of a zero or negative base as std::pow", "[vulkan][binary_op]") {
  infer::vk::PipelineCache cache(*g_ctx);
  RefTensor a(Shape::of(8));
  a.v = {-2.f, -0.5f, 0.f, -0.f, -3.f, 0.f, -1.5f, -0.f};
  RefTensor b(Shape::of(8));
  b.v = {3.f, 2.f, 2.f, 3.f, -2.f, -1.f, 0.5f, -3.f};
  std::vector<infer::Mat> hosts{host_mat(a, ElemType::f32, 1), host_mat(b, ElemType::f32, 1),
                                nan_mat(Shape::of(8), ElemType::f32, 1)};
  const RefTensor got =
      run_on_device(hosts, 2, cache, [](infer::vk::Recorder& rec, const std::vector<VkMat>& m) {
        return infer::vk::record_binary_op(rec, m[0], &m[1], m[2], BinaryOpKind::pow);
      });
  for (std::size_t i = 0; i < 8; ++i) {
    const float want = std::pow(a.v[i], b.v[i]);
    CAPTURE(i, a.v[i], b.v[i], got.v[i], want);
    if (std::isnan(want)) {
      CHECK(std::isnan(got.v[i]));
    } else {
      CHECK(std::signbit(got.v[i]) == std::signbit(want));
      CHECK((got.v[i] == want || std::abs(got.v[i] - want) <= 1e-5f * (1 + std::abs(want))));
    }
  }
}

TEST_CASE("Vulkan Eltwise matches the scalar definition", "[vulkan][binary_op][eltwise]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 900;
  for (ElemType type : storage_types())
    for (const Shape& s : {Shape::of(7, 5, 12), Shape::of(13), Shape::of(3, 1, 4), Shape::of(5, 8)})
      for (int pack : {1, 4}) {
        if (pack_for(s, pack) != pack) continue;
        for (EltwiseKind kind : {EltwiseKind::prod, EltwiseKind::sum, EltwiseKind::max}) {
          const auto t = [&] {
            return EltwiseTester().shape(s).kind(kind).type(type).pack(pack).seed(seed += 10);
          };
          t().test(cache);
          t().coeffs({0.5f, -1.5f, 2.f}).test(cache);  // product and max ignore them
          t().inputs(2).test(cache);
          t().inputs(4).coeffs({1.f, -1.f, 0.25f, 3.f}).test(cache);
          t().inplace_on(0).test(cache);
          t().inplace_on(2).coeffs({0.5f, -1.5f, 2.f}).test(cache);
          if (pack == 4) t().unpacked_input(1).test(cache);
        }
      }
}

TEST_CASE("Vulkan BinaryOp and Eltwise reject what does not fit, saying what",
          "[vulkan][binary_op][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  const infer::vk::Buffer* b0 = buf->get();
  const VkMat a(b0, 0, Shape::of(7, 5, 12), ElemType::f32, 1);
  const VkMat b_same(b0, 4096, Shape::of(7, 5, 12), ElemType::f32, 1);
  const VkMat out(b0, 8192, Shape::of(7, 5, 12), ElemType::f32, 1);
  const VkMat b_w5(b0, 4096, Shape::of(5), ElemType::f32, 1);
  const VkMat out_c8(b0, 8192, Shape::of(7, 5, 8), ElemType::f32, 1);
  const VkMat b_f16(b0, 4096, Shape::of(7, 5, 12), ElemType::f16, 1);
  const VkMat a_p8(b0, 0, Shape::of(7, 5, 16), ElemType::f32, 8);
  const VkMat odd_p4(b0, 0, Shape::of(13), ElemType::f32, 4);
  const VkMat out_shifted(b0, 64, Shape::of(7, 5, 12), ElemType::f32, 1);
  const VkMat in_out_shifted(b0, 8192 + 64, Shape::of(7, 5, 12), ElemType::f32, 1);
  const VkMat per_channel_on_out(b0, 8192, Shape::of(12), ElemType::f32, 1);
  const VkMat huge(b0, 0, Shape::of(65536, 32768, 4), ElemType::f32, 1);
  const VkMat a_f16(b0, 0, Shape::of(7, 5, 12), ElemType::f16, 1);
  const VkMat unbound;

  infer::vk::test::FakeRecorder rec({"counting device", true});
  const auto binary = [&](const VkMat& x, const VkMat* y, const VkMat& o,
                          BinaryOpKind op = BinaryOpKind::add) {
    return infer::vk::record_binary_op(rec, x, y, o, op);
  };
  const auto fails_with = [](const infer::Status& s, const std::string& text) {
    INFO(text);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(text));
  };
  CHECK(binary(a, &b_same, out).ok());
  CHECK(binary(a, nullptr, a).ok());
  CHECK(rec.dispatches == 2);
  fails_with(binary(a, &b_w5, out),
             "a (3-D 7x5x12 f32 pack 1) and b (1-D 5 f32 pack 1) do not broadcast: seen as 3-D, "
             "their extents along w are 7 and 5");
  fails_with(binary(a, &b_same, out_c8),
             "the output is 3-D 7x5x8 f32 pack 1, the inputs give 3-D 7x5x12");
  fails_with(binary(a, &b_f16, out), "storage types differ: a f32, b f16");
  fails_with(binary(a_p8, nullptr, a_p8), "pack 8 (the kernel reads packs 1 and 4)");
  fails_with(binary(odd_p4, nullptr, odd_p4), "its packing axis (13) is not a multiple of pack 4");
  fails_with(binary(a, &b_same, out, BinaryOpKind(12)), "op_type must be 0 to 11, got 12");
  fails_with(binary(a, &b_same, out_shifted),
             "a (3-D 7x5x12 f32 pack 1 at byte 0) overlaps the output");
  fails_with(binary(a, &per_channel_on_out, out),
             "b (1-D 12 f32 pack 1 at byte 8192) overlaps the output");
  fails_with(binary(unbound, nullptr, out), "a is an unbound blob");
  fails_with(binary(huge, nullptr, huge), "of 8589934592 values is beyond 2^31");
  infer::vk::test::FakeRecorder no_fp16({"counting device", false});
  fails_with(infer::vk::record_binary_op(no_fp16, a_f16, nullptr, a_f16, BinaryOpKind::mul),
             "counting device has no 16-bit storage");

  const auto eltwise = [&](std::vector<const VkMat*> in, const VkMat& o, EltwiseKind k,
                           std::vector<float> coeffs = {}) {
    return infer::vk::record_eltwise(rec, in, o, k, coeffs);
  };
  rec.dispatches = rec.barriers = 0;
  CHECK(eltwise({&a, &b_same, &a}, out, EltwiseKind::sum, {1.f, 2.f, 3.f}).ok());
  CHECK(rec.dispatches == 2);
  CHECK(rec.barriers == 1);  // between the dispatches; the caller barriers after
  fails_with(eltwise({&a}, out, EltwiseKind::sum), "takes at least 2 inputs, got 1");
  fails_with(eltwise({&a, &b_same}, out, EltwiseKind::sum, {1.f, 2.f, 3.f}),
             "3 coeffs given for 2 inputs");
  CHECK(eltwise({&a, &b_same}, out, EltwiseKind::max, {1.f, 2.f, 3.f}).ok());  // ignored, as ncnn
  fails_with(eltwise({&a, &b_w5}, out, EltwiseKind::prod),
             "input 1 is 1-D 5 f32 pack 1 but the output is 3-D 7x5x12 f32 pack 1");
  fails_with(eltwise({&a, nullptr}, out, EltwiseKind::prod), "input 1 is null");
  fails_with(eltwise({&out, &out, &out}, out, EltwiseKind::sum),
             "inputs 0, 1 and 2 are all the output's memory");
  fails_with(eltwise({&a, &b_same}, out, EltwiseKind(3)),
             "op_type must be 0 (prod), 1 (sum) or 2 (max), got 3");
  fails_with(eltwise({&a, &b_same, &in_out_shifted}, out, EltwiseKind::sum),
             "input 2 (3-D 7x5x12 f32 pack 1 at byte 8256) overlaps the output (3-D 7x5x12 f32 "
             "pack 1 at byte 8192)");
  rec.dispatches = 0;
  fails_with(eltwise({&a, &b_same, &b_f16}, out, EltwiseKind::sum),
             "input 2 is 3-D 7x5x12 f16 pack 1");
  CHECK(rec.dispatches == 0);  // an error records nothing
}
