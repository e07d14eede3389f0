// The GPU per-channel affine kernel (y = x * a[i] + b[i] along the packing axis) against a
// double-precision scalar definition: 1-D to 4-D blobs, packs 1 and 4, f32 and f16 storage, with
// a and b, either or neither, in place and not; then its errors. An output that is not in place
// starts as NaN, so a value left unwritten fails.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <infer/vulkan/affine.hpp>
#include <infer/vulkan/command.hpp>
#include <limits>
#include <string>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::test::RefTensor;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;
using infer::vk::test::nan_mat;
using infer::vk::test::run_on_device;

namespace {

/// The position of logical value `v` (index ((c * d + z) * h + y) * w + x) along the packing axis.
std::size_t packing_index(const Shape& s, std::size_t v) {
  if (s.dims == 1) return v;
  if (s.dims == 2) return v / std::size_t(s.w);
  return v / (std::size_t(s.w) * std::size_t(s.h) * std::size_t(s.d));
}

/// y = x * a[i] + b[i] in double; an empty a is 1, an empty b 0.
RefTensor reference(const RefTensor& in, const RefTensor* a, const RefTensor* b) {
  RefTensor out(in.shape);
  for (std::size_t v = 0; v < in.v.size(); ++v) {
    const std::size_t i = packing_index(in.shape, v);
    const double scale = a ? double(a->v[i]) : 1.0, shift = b ? double(b->v[i]) : 0.0;
    out.v[v] = float(double(in.v[v]) * scale + shift);
  }
  return out;
}


/// Values as stored at `type` (f16 rounds them).
RefTensor stored(const RefTensor& t, ElemType type) {
  RefTensor out(t.shape);
  out.v = infer::test::from_mat(host_mat(t, type, 1)).v;
  return out;
}

/// Checks record_affine on one configuration (chained setters, then test()): random inputs and
/// coefficients as stored at the type, against reference() of those stored values.
class AffineTester {
 public:
  explicit AffineTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}
  AffineTester& shape(Shape s) {
    shape_ = s;
    return *this;
  }
  AffineTester& type(ElemType t) {
    type_ = t;
    return *this;
  }
  AffineTester& pack(int p) {
    pack_ = p;
    return *this;
  }
  AffineTester& scale(bool has) {
    has_a_ = has;
    return *this;
  }
  AffineTester& shift(bool has) {
    has_b_ = has;
    return *this;
  }
  AffineTester& inplace(bool i) {
    inplace_ = i;
    return *this;
  }
  AffineTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test() const {
    const Shape coeffs = Shape::of(shape_.packed_extent());
    const RefTensor in = stored(random_tensor(shape_, seed_), type_);
    const RefTensor a = stored(random_tensor(coeffs, seed_ + 1000, -2.f, 2.f), type_);
    const RefTensor b = stored(random_tensor(coeffs, seed_ + 2000), type_);
    const RefTensor want = reference(in, has_a_ ? &a : nullptr, has_b_ ? &b : nullptr);
    const RefTensor got = run(in, a, b);
    REQUIRE(got.v.size() == want.v.size());
    const float tol = type_ == ElemType::f32 ? 1e-5f : 4e-3f;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want.v.size(); ++i)
      if (!(std::abs(got.v[i] - want.v[i]) <= tol * (1 + std::abs(want.v[i]))) && bad++ == 0)
        first = i;
    INFO(fmt::format(
        "affine{}{} of {}-D {}x{}x{}x{} {} pack {}{}: {} wrong, first at {} (packing index {}): "
        "got {} want {}",
        has_a_ ? " with a" : "", has_b_ ? " with b" : "", shape_.dims, shape_.w, shape_.h, shape_.d,
        shape_.c, infer::to_string(type_), pack_, inplace_ ? " in place" : "", bad, first,
        packing_index(shape_, first), got.v[first], want.v[first]));
    CHECK(bad == 0);
  }

 private:
  RefTensor run(const RefTensor& in, const RefTensor& a, const RefTensor& b) const {
    // The input, a, b, then (out of place) a NaN-filled output.
    std::vector<infer::Mat> hosts{host_mat(in, type_, pack_), host_mat(a, type_, 1),
                                  host_mat(b, type_, 1)};
    if (!inplace_) hosts.push_back(nan_mat(shape_, type_, pack_));
    const std::size_t out = inplace_ ? 0 : 3;
    return run_on_device(hosts, out, *cache_,
                         [&](infer::vk::Recorder& rec, const std::vector<infer::vk::VkMat>& m) {
                           return infer::vk::record_affine(rec, m[0], m[out],
                                                           has_a_ ? &m[1] : nullptr,
                                                           has_b_ ? &m[2] : nullptr);
                         });
  }

  infer::vk::PipelineCache* cache_;
  Shape shape_ = Shape::of(1);
  int pack_ = 1;
  ElemType type_ = ElemType::f32;
  bool has_a_ = true, has_b_ = true, inplace_ = false;
  unsigned seed_ = 1;
};

}  // namespace

TEST_CASE("Vulkan affine matches x * a + b along the packing axis", "[vulkan][affine]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const Shape shapes[] = {Shape::of(13),        Shape::of(12),       Shape::of(7, 8),
                          Shape::of(5, 3),      Shape::of(7, 5, 12), Shape::of(13, 1, 8),
                          Shape::of(5, 3, 4),   Shape::of(5, 3, 6),  Shape::of(3, 2, 5, 8),
                          Shape::of(1, 1, 1000)};
  unsigned seed = 1500;
  for (const Shape& s : shapes)
    for (ElemType type : {ElemType::f32, ElemType::f16})
      for (int pack : {1, 4})
        for (bool inplace : {false, true}) {
          if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
          if (s.packed_extent() % pack) continue;
          AffineTester(cache).shape(s).type(type).pack(pack).inplace(inplace).seed(++seed).test();
        }
}

TEST_CASE("Vulkan affine with a or b alone, or neither", "[vulkan][affine]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 1600;
  for (const Shape& s : {Shape::of(12), Shape::of(7, 8), Shape::of(7, 5, 12)})
    for (ElemType type : {ElemType::f32, ElemType::f16})
      for (int pack : {1, 4})
        for (bool has_a : {false, true})
          for (bool has_b : {false, true}) {
            if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
            if (has_a && has_b) continue;  // the case above
            AffineTester(cache)
                .shape(s)
                .type(type)
                .pack(pack)
                .scale(has_a)
                .shift(has_b)
                .inplace(pack == 4)
                .seed(++seed)
                .test();
          }
}

TEST_CASE("Vulkan affine rejects what does not fit, saying what", "[vulkan][affine][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  infer::vk::CommandRecorder rec(**cmd, cache);
  const auto blob = [&](std::size_t at, Shape s, int pack = 1, ElemType t = ElemType::f32) {
    return infer::vk::VkMat(buf->get(), at, s, t, pack);
  };
  const auto fails = [](const infer::Status& s, const char* says) {
    INFO(says);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(says));
  };
  const infer::vk::VkMat x = blob(0, Shape::of(7, 5, 12));
  const infer::vk::VkMat apart = blob(8192, Shape::of(7, 5, 12));
  const infer::vk::VkMat a = blob(16384, Shape::of(12)), b = blob(16640, Shape::of(12));
  CHECK(infer::vk::record_affine(rec, x, x, &a, &b).ok());
  CHECK(infer::vk::record_affine(rec, x, apart, &a, nullptr).ok());
  CHECK(infer::vk::record_affine(rec, x, apart, nullptr, nullptr).ok());
  fails(infer::vk::record_affine(rec, x, blob(1024, Shape::of(7, 5, 12)), &a, &b),
        "input and output partly share memory");
  fails(infer::vk::record_affine(rec, x, blob(8192, Shape::of(7, 5, 8)), &a, &b), "differ");
  fails(infer::vk::record_affine(rec, x, blob(8192, Shape::of(7, 5, 12), 4), &a, &b), "differ");
  const infer::vk::VkMat short_b = blob(16640, Shape::of(7));
  fails(infer::vk::record_affine(rec, x, x, &a, &short_b),
        "b must be 1-D of 12 f32 values at pack 1");
  const infer::vk::VkMat packed_a = blob(16384, Shape::of(12), 4);
  fails(infer::vk::record_affine(rec, x, x, &packed_a, &b),
        "a must be 1-D of 12 f32 values at pack 1");
  const infer::vk::VkMat flat_a = blob(16384, Shape::of(12, 1));
  fails(infer::vk::record_affine(rec, x, x, &flat_a, &b), "got 2-D 12x1x1x1 f32 pack 1");
  const infer::vk::VkMat half_a = blob(16384, Shape::of(12), 1, ElemType::f16);
  fails(infer::vk::record_affine(rec, x, x, &half_a, &b), "a must be 1-D of 12 f32 values");
  const infer::vk::VkMat over_a = blob(8192, Shape::of(12));
  fails(infer::vk::record_affine(rec, x, apart, &over_a, &b),
        "a (at byte 8192) overlaps the output (at byte 8192)");
  const infer::vk::VkMat unbound;
  fails(infer::vk::record_affine(rec, x, x, &a, &unbound), "b is an unbound blob");
  const infer::vk::VkMat row = blob(0, Shape::of(7, 6));
  fails(infer::vk::record_affine(rec, row, row, &a, &b), "a must be 1-D of 6 f32 values");
  const infer::vk::VkMat six = blob(0, Shape::of(7, 5, 6), 4);
  fails(infer::vk::record_affine(rec, six, six, nullptr, nullptr),
        "pack 4 does not divide the packed extent 6");
  const infer::vk::VkMat eight = blob(0, Shape::of(7, 5, 16), 8);
  fails(infer::vk::record_affine(rec, eight, eight, nullptr, nullptr),
        "pack 8 (the kernel reads packs 1 and 4)");
  const infer::vk::VkMat bf16 = blob(0, Shape::of(7, 5, 12), 1, ElemType::bf16);
  fails(infer::vk::record_affine(rec, bf16, bf16, nullptr, nullptr),
        "storage bf16 is not f32 or f16");
  fails(infer::vk::record_affine(rec, x, infer::vk::VkMat(), &a, &b), "an unbound blob");
}
