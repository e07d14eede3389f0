// The GPU LRN kernel against a double-precision scalar definition of ncnn's LRN (both region
// types, odd and even local sizes, windows wider than the blob, several alpha/beta/bias), packs 1
// and 4, f32 and f16 storage, across channels in place and not; then its errors. An output that is
// not in place starts as NaN, so a value left unwritten fails.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/lrn.hpp>
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

/// ncnn's LRN of a 3-D tensor, in double: sums of squares over channels ch - size/2 ..
/// ch + size/2 (region 0, alpha / size) or a size x size window starting size/2 before the pixel
/// (region 1, alpha / size^2), zeros outside.
RefTensor reference(const RefTensor& in, int region, int size, double alpha, double beta,
                    double bias) {
  const Shape& s = in.shape;
  RefTensor out(s);
  const int r = size / 2;
  for (int c = 0; c < s.c; ++c)
    for (int y = 0; y < s.h; ++y)
      for (int x = 0; x < s.w; ++x) {
        double sum = 0;
        if (region == 0) {
          for (int j = c - r; j <= c + r; ++j)
            if (j >= 0 && j < s.c) sum += double(in.at(x, y, 0, j)) * double(in.at(x, y, 0, j));
        } else {
          for (int sy = y - r; sy < y - r + size; ++sy)
            for (int sx = x - r; sx < x - r + size; ++sx)
              if (sx >= 0 && sx < s.w && sy >= 0 && sy < s.h)
                sum += double(in.at(sx, sy, 0, c)) * double(in.at(sx, sy, 0, c));
        }
        const double n = region == 0 ? double(size) : double(size) * double(size);
        out.at(x, y, 0, c) =
            float(double(in.at(x, y, 0, c)) * std::pow(bias + alpha / n * sum, -beta));
      }
  return out;
}


/// Checks record_lrn on one configuration (chained setters, then test()): random inputs as stored
/// at the type, against reference() of those stored values.
class LrnTester {
 public:
  explicit LrnTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}
  LrnTester& shape(Shape s) {
    shape_ = s;
    return *this;
  }
  LrnTester& region(int r) {
    region_ = r;
    return *this;
  }
  LrnTester& local_size(int n) {
    local_size_ = n;
    return *this;
  }
  LrnTester& params(float alpha, float beta, float bias) {
    alpha_ = alpha;
    beta_ = beta;
    bias_ = bias;
    return *this;
  }
  LrnTester& type(ElemType t) {
    type_ = t;
    return *this;
  }
  LrnTester& pack(int p) {
    pack_ = p;
    return *this;
  }
  LrnTester& inplace(bool i) {
    inplace_ = i;
    return *this;
  }
  LrnTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test() const {
    RefTensor in(shape_);
    in.v = infer::test::from_mat(host_mat(random_tensor(shape_, seed_), type_, 1)).v;
    const RefTensor want = reference(in, region_, local_size_, alpha_, beta_, bias_);
    const RefTensor got = run(in);
    REQUIRE(got.v.size() == want.v.size());
    const float tol = type_ == ElemType::f32 ? 1e-5f : 4e-3f;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < want.v.size(); ++i)
      if (!(std::abs(got.v[i] - want.v[i]) <= tol * (1 + std::abs(want.v[i]))) && bad++ == 0)
        first = i;
    INFO(fmt::format(
        "LRN region {} local_size {} alpha {} beta {} bias {} of {}x{}x{} {} pack {}{}: {} wrong, "
        "first at {} (x {}, y {}, c {}): got {} want {}",
        region_, local_size_, alpha_, beta_, bias_, shape_.w, shape_.h, shape_.c,
        infer::to_string(type_), pack_, inplace_ ? " in place" : "", bad, first,
        first % std::size_t(shape_.w), first / std::size_t(shape_.w) % std::size_t(shape_.h),
        first / (std::size_t(shape_.w) * std::size_t(shape_.h)), got.v[first], want.v[first]));
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
                           return infer::vk::record_lrn(rec, m[0], m[out], region_, local_size_,
                                                        alpha_, beta_, bias_);
                         });
  }

  infer::vk::PipelineCache* cache_;
  Shape shape_ = Shape::of(1, 1, 1);
  int region_ = 0, local_size_ = 5, pack_ = 1;
  float alpha_ = 1.f, beta_ = 0.75f, bias_ = 1.f;
  ElemType type_ = ElemType::f32;
  bool inplace_ = false;
  unsigned seed_ = 1;
};

}  // namespace

TEST_CASE("Vulkan LRN matches ncnn's definition", "[vulkan][lrn]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const Shape shapes[] = {Shape::of(7, 5, 12), Shape::of(13, 1, 8), Shape::of(5, 3, 4),
                          Shape::of(9, 7, 3)};
  unsigned seed = 1200;
  for (const Shape& s : shapes)
    for (int region : {0, 1})
      for (int size : {3, 5})
        for (ElemType type : {ElemType::f32, ElemType::f16})
          for (int pack : {1, 4})
            for (bool inplace : {false, true}) {
              if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
              if (s.c % pack) continue;
              if (inplace && region == 1) continue;  // an error, checked below
              LrnTester(cache)
                  .shape(s)
                  .region(region)
                  .local_size(size)
                  .params(1.5f, 0.75f, 1.f)
                  .type(type)
                  .pack(pack)
                  .inplace(inplace)
                  .seed(++seed)
                  .test();
            }
}

TEST_CASE("Vulkan LRN: even and wide windows, other alpha, beta and bias", "[vulkan][lrn]") {
  infer::vk::PipelineCache cache(*g_ctx);
  struct Params {
    float alpha, beta, bias;
  };
  const Params params[] = {{1e-4f, 0.75f, 1.f}, {2.f, 0.5f, 2.f}, {0.7f, 1.3f, 0.5f}};
  unsigned seed = 1300;
  for (const Shape& s : {Shape::of(7, 5, 12), Shape::of(4, 6, 8)})
    for (int region : {0, 1})
      for (int size : {1, 2, 4, 7, 31})
        for (const Params& p : params)
          for (int pack : {1, 4}) {
            LrnTester(cache)
                .shape(s)
                .region(region)
                .local_size(size)
                .params(p.alpha, p.beta, p.bias)
                .pack(pack)
                .inplace(region == 0 && pack == 4)
                .seed(++seed)
                .test();
          }
  // f16 at a few of them.
  if (!g_ctx->info().fp16_storage) return;
  for (int region : {0, 1})
    for (int size : {4, 31})
      LrnTester(cache)
          .shape(Shape::of(7, 5, 12))
          .region(region)
          .local_size(size)
          .params(2.f, 0.5f, 2.f)
          .type(ElemType::f16)
          .pack(4)
          .seed(++seed)
          .test();
}

TEST_CASE("Vulkan LRN rejects what does not fit, saying what", "[vulkan][lrn][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 20, infer::vk::MemoryKind::device);
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
  const auto lrn = [&](const infer::vk::VkMat& in, const infer::vk::VkMat& out, int region = 0,
                       int size = 5) {
    return infer::vk::record_lrn(rec, in, out, region, size, 1.f, 0.75f, 1.f);
  };
  const infer::vk::VkMat a = blob(0, Shape::of(7, 5, 12));
  const infer::vk::VkMat apart = blob(8192, Shape::of(7, 5, 12));
  CHECK(lrn(a, a).ok());
  CHECK(lrn(a, apart).ok());
  CHECK(lrn(a, apart, 1).ok());
  fails(lrn(a, a, 1),
        "within-channel LRN (region_type 1) reads neighbouring pixels and cannot "
        "run in place");
  fails(lrn(a, blob(1024, Shape::of(7, 5, 12))), "input and output partly share memory");
  fails(lrn(a, apart, 2), "region_type must be 0 (across channels) or 1 (within channel), got 2");
  fails(lrn(a, apart, 0, 0), "local_size must be positive, got 0");
  fails(lrn(a, blob(8192, Shape::of(7, 5, 8))), "differ");
  fails(lrn(a, blob(8192, Shape::of(7, 5, 12), 4)), "differ");
  fails(lrn(a, blob(8192, Shape::of(7, 5, 12), 1, ElemType::f16)), "differ");
  const infer::vk::VkMat flat = blob(0, Shape::of(7, 12));
  fails(lrn(flat, blob(8192, Shape::of(7, 12))), "input must be 3-D (w, h, c), got 2-D");
  const infer::vk::VkMat eight = blob(0, Shape::of(7, 5, 16), 8);
  fails(lrn(eight, eight), "pack 8 (the kernel reads packs 1 and 4)");
  const infer::vk::VkMat bf16 = blob(0, Shape::of(7, 5, 12), 1, ElemType::bf16);
  fails(lrn(bf16, bf16), "storage bf16 is not f32 or f16");
  const infer::vk::VkMat deep = blob(0, Shape::of(2, 2, 1000));
  fails(lrn(deep, blob(1 << 19, Shape::of(2, 2, 1000)), 0, 301),
        "an across-channel window of 301 channels (local_size 301, 1000 channels); the kernel "
        "keeps at most 255");
  CHECK(lrn(deep, blob(1 << 19, Shape::of(2, 2, 1000)), 1, 301).ok());
  fails(lrn(a, infer::vk::VkMat()), "an unbound blob");
}
