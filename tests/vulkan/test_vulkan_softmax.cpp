// The GPU softmax kernel against a double-precision scalar definition: every axis of 1-D to 4-D
// blobs (the channels of a classifier's 1x1x1000 and a 1-D row among them), packs 1 and 4, f32 and
// f16 storage, in place and not, inputs far beyond exp's f32 range (the max must be subtracted);
// then its errors. An output that is not in place starts as NaN, so a value left unwritten fails.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/softmax.hpp>
#include <limits>
#include <string>
#include <vector>

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

/// Softmax of `in` along `axis` (outermost first), in double.
RefTensor reference(const RefTensor& in, int axis) {
  const std::array<int, 4> e = in.shape.outer_first();
  std::size_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= std::size_t(e[std::size_t(k)]);
  for (int k = axis + 1; k < 4; ++k) inner *= std::size_t(e[std::size_t(k)]);
  const std::size_t len = std::size_t(e[std::size_t(axis)]);
  RefTensor out(in.shape);
  for (std::size_t q = 0; q < outer; ++q)
    for (std::size_t r = 0; r < inner; ++r) {
      const auto at = [&](std::size_t j) { return (q * len + j) * inner + r; };
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (std::size_t j = 0; j < len; ++j) m = std::max(m, double(in.v[at(j)]));
      for (std::size_t j = 0; j < len; ++j) sum += std::exp(double(in.v[at(j)]) - m);
      for (std::size_t j = 0; j < len; ++j)
        out.v[at(j)] = float(std::exp(double(in.v[at(j)]) - m) / sum);
    }
  return out;
}


/// Checks record_softmax on one configuration (chained setters, then test()): random inputs in
/// [lo, hi] as stored at the type, against reference() of those stored values.
class SoftmaxTester {
 public:
  explicit SoftmaxTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}
  SoftmaxTester& shape(Shape s) {
    shape_ = s;
    return *this;
  }
  SoftmaxTester& axis(int a) {
    axis_ = a;
    return *this;
  }
  SoftmaxTester& type(ElemType t) {
    type_ = t;
    return *this;
  }
  SoftmaxTester& pack(int p) {
    pack_ = p;
    return *this;
  }
  SoftmaxTester& inplace(bool i) {
    inplace_ = i;
    return *this;
  }
  SoftmaxTester& range(float lo, float hi) {
    lo_ = lo;
    hi_ = hi;
    return *this;
  }
  SoftmaxTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test() const {
    RefTensor in(shape_);
    in.v = infer::test::from_mat(host_mat(random_tensor(shape_, seed_, lo_, hi_), type_, 1)).v;
    const int a = axis_ < 0 ? axis_ + shape_.dims : axis_;
    const RefTensor want = reference(in, a);
    const RefTensor got = run(in);
    REQUIRE(got.v.size() == want.v.size());
    const float tol = type_ == ElemType::f32 ? 1e-5f : 4e-3f;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want.v.size(); ++i)
      if (!(std::abs(got.v[i] - want.v[i]) <= tol * (1 + std::abs(want.v[i]))) && bad++ == 0)
        first = i;
    INFO(fmt::format(
        "softmax axis {} of {}-D {}x{}x{}x{} {} pack {}{}, inputs in [{}, {}]: {} "
        "wrong, first at {}: got {} want {}",
        axis_, shape_.dims, shape_.w, shape_.h, shape_.d, shape_.c, infer::to_string(type_), pack_,
        inplace_ ? " in place" : "", lo_, hi_, bad, first, got.v[first], want.v[first]));
    CHECK(bad == 0);
  }

 private:
  RefTensor run(const RefTensor& in) const {
    // The input, then (out of place) a NaN-filled output.
    std::vector<infer::Mat> hosts{host_mat(in, type_, pack_)};
    if (!inplace_) hosts.push_back(nan_mat(shape_, type_, pack_));
    const std::size_t out = inplace_ ? 0 : 1;
    return run_on_device(hosts, out, *cache_,
                         [&](infer::vk::Recorder& rec, const std::vector<infer::vk::VkMat>& m) {
                           return infer::vk::record_softmax(rec, m[0], m[out], axis_);
                         });
  }

  infer::vk::PipelineCache* cache_;
  Shape shape_ = Shape::of(1);
  int axis_ = 0, pack_ = 1;
  ElemType type_ = ElemType::f32;
  bool inplace_ = false;
  float lo_ = -3.f, hi_ = 3.f;
  unsigned seed_ = 1;
};

}  // namespace

TEST_CASE("Vulkan softmax matches the scalar definition on every axis", "[vulkan][softmax]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const Shape shapes[] = {Shape::of(13),      Shape::of(12),         Shape::of(1000),
                          Shape::of(7, 8),    Shape::of(7, 5, 12),   Shape::of(13, 1, 8),
                          Shape::of(5, 3, 6), Shape::of(1, 1, 1000), Shape::of(3, 2, 5, 8),
                          Shape::of(300, 3),  Shape::of(3, 300),  // rows of 300: a workgroup each
                          // rows past the 2048 values a workgroup holds in registers
                          Shape::of(2500),    Shape::of(2, 1, 2052)};
  unsigned seed = 800;
  for (const Shape& s : shapes)
    for (int axis = -s.dims; axis < s.dims; ++axis)
      for (ElemType type : {ElemType::f32, ElemType::f16})
        for (int pack : {1, 4})
          for (bool inplace : {false, true}) {
            if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
            if (s.packed_extent() % pack) continue;
            // Negative axes once each, at f32 pack 1 out of place.
            if (axis < 0 && (type != ElemType::f32 || pack != 1 || inplace)) continue;
            SoftmaxTester(cache)
                .shape(s)
                .axis(axis)
                .type(type)
                .pack(pack)
                .inplace(inplace)
                .seed(++seed)
                .test();
          }
}

TEST_CASE("Vulkan softmax subtracts the max: inputs beyond exp's range", "[vulkan][softmax]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 900;
  for (ElemType type : {ElemType::f32, ElemType::f16})
    for (int pack : {1, 4}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      for (const Shape& s : {Shape::of(1000), Shape::of(7, 5, 12)})
        SoftmaxTester(cache).shape(s).type(type).pack(pack).range(80.f, 120.f).seed(++seed).test();
      SoftmaxTester(cache)
          .shape(Shape::of(7, 5, 12))
          .type(type)
          .pack(pack)
          .range(-120.f, -80.f)
          .seed(++seed)
          .test();
    }
}

TEST_CASE("Vulkan softmax rejects what does not fit, saying what", "[vulkan][softmax][errors]") {
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
  const infer::vk::VkMat a = blob(0, Shape::of(7, 5, 12));
  CHECK(infer::vk::record_softmax(rec, a, a, 0).ok());
  CHECK(infer::vk::record_softmax(rec, a, blob(8192, Shape::of(7, 5, 12)), -1).ok());
  fails(infer::vk::record_softmax(rec, a, a, 3),
        "axis 3 is out of range for a 3-D input (expected -3 to 2)");
  fails(infer::vk::record_softmax(rec, a, a, -4), "axis -4 is out of range");
  fails(infer::vk::record_softmax(rec, a, blob(8192, Shape::of(420)), 0), "differ");
  fails(infer::vk::record_softmax(rec, a, blob(8192, Shape::of(7, 5, 12), 4), 0), "differ");
  fails(infer::vk::record_softmax(rec, a, blob(8192, Shape::of(7, 5, 12), 1, ElemType::f16), 0),
        "differ");
  const infer::vk::VkMat six = blob(0, Shape::of(7, 5, 6), 4);
  fails(infer::vk::record_softmax(rec, six, six, 0), "pack 4 does not divide the packed extent 6");
  const infer::vk::VkMat eight = blob(0, Shape::of(7, 5, 16), 8);
  fails(infer::vk::record_softmax(rec, eight, eight, 0), "pack 8 (the kernel reads packs 1 and 4)");
  const infer::vk::VkMat bf16 = blob(0, Shape::of(7, 5, 12), 1, ElemType::bf16);
  fails(infer::vk::record_softmax(rec, bf16, bf16, 0), "storage bf16 is not f32 or f16");
  fails(infer::vk::record_softmax(rec, a, blob(1024, Shape::of(7, 5, 12)), 0),
        "input and output partly share memory");
  fails(infer::vk::record_softmax(rec, a, infer::vk::VkMat(), 0), "an unbound blob");
}
