// The GPU Crop kernel (record_crop) against a scalar definition over plain tensors: boxes of 1-D
// to 4-D blobs along every axis, channel crops that change the pack, every pack (1, 4) on each
// side, f32 and f16 storage; the CPU layer's own resolution of every parameter form (offset and
// size, offsets from each end, numpy-style starts/ends/axes); an output beyond one row of
// workgroups; then the errors. Outputs start as NaN, so a value the kernel forgot fails; a move is
// exact, so every value must match bit for bit.
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <infer/layers/crop.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/crop.hpp>
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

namespace {

using Offsets = std::array<int, 4>;  // per ncnn axis, 0 outermost

std::string describe(const Shape& s) {
  return fmt::format("{}-D {}x{}x{}x{}", s.dims, s.w, s.h, s.d, s.c);
}


/// The values `t` holds once stored as `type` (f16 rounds as the host rounds).
RefTensor stored(const RefTensor& t, ElemType type) {
  RefTensor s(t.shape);
  s.v = infer::test::from_mat(host_mat(t, type, 1)).v;
  return s;
}

/// Uploads `in` and a NaN-filled output of (shape, type, pack) into one device buffer, records
/// record_crop over them at `offsets` and downloads the output.
RefTensor run_gpu(const infer::Mat& in, const Shape& shape, ElemType type, int pack,
                  const Offsets& offsets, infer::vk::PipelineCache& cache) {
  infer::vk::Context& ctx = *g_ctx;
  const infer::Mat out_host = nan_mat(shape, type, pack);
  const std::size_t out_at = (in.bytes() + 255) / 256 * 256;
  const std::size_t bytes = out_at + out_host.bytes();
  auto dev = infer::vk::Buffer::create(ctx, bytes, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, bytes, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  const infer::vk::VkMat src(dev->get(), 0, in.shape(), in.type(), in.elempack());
  const infer::vk::VkMat dst(dev->get(), out_at, shape, type, pack);
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  REQUIRE(infer::vk::upload(**cmd, in, **staging, 0, src).ok());
  REQUIRE(infer::vk::upload(**cmd, out_host, **staging, out_at, dst).ok());
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  const infer::Status rec = infer::vk::record_crop(recorder, src, dst, offsets);
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, dst, **staging, out_at).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, out_at, dst, out).ok());
  return infer::test::from_mat(out);
}

/// Coordinates of logical value l of `s`, outermost first (RefTensor's index order).
std::array<int, 4> coords(const Shape& s, std::size_t l) {
  const std::array<int, 4> e = s.outer_first();
  std::array<int, 4> c{};
  for (int k = 3; k >= 0; --k) {
    c[std::size_t(k)] = int(l % std::size_t(e[std::size_t(k)]));
    l /= std::size_t(e[std::size_t(k)]);
  }
  return c;
}

/// Mismatches of got against want, bit for bit, with the first one described.
void expect_same(const RefTensor& got, const RefTensor& want, const std::string& what) {
  REQUIRE(got.v.size() == want.v.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < want.v.size(); ++i)
    if (std::bit_cast<std::uint32_t>(got.v[i]) != std::bit_cast<std::uint32_t>(want.v[i]) &&
        bad++ == 0)
      first = i;
  const std::array<int, 4> c = coords(want.shape, first);
  INFO(fmt::format("{}: {} of {} wrong, first at (outer first) {},{},{},{}: got {} want {}", what,
                   bad, want.v.size(), c[0], c[1], c[2], c[3], got.v[first], want.v[first]));
  CHECK(bad == 0);
}

/// Builds and checks one crop (chained setters, then test()): a random input as stored at its
/// type, the expected output the box's values read by coordinates.
class CropTester {
 public:
  explicit CropTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}

  CropTester& input(Shape s) {
    in_ = s;
    return *this;
  }
  /// The box: its offsets and its shape (the output's).
  CropTester& box(Offsets o, Shape s) {
    offsets_ = o;
    out_ = s;
    return *this;
  }
  CropTester& storage(ElemType t) {
    storage_ = t;
    return *this;
  }
  CropTester& packs(int in, int out) {
    in_pack_ = in;
    out_pack_ = out;
    return *this;
  }
  CropTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  void test() const {
    const RefTensor in = stored(random_tensor(in_, seed_), storage_);
    RefTensor want(out_);
    const std::array<int, 4> ie = in_.outer_first();
    for (std::size_t l = 0; l < want.v.size(); ++l) {
      std::array<int, 4> c = coords(out_, l);
      for (std::size_t a = 0; a < 4; ++a) c[a] += offsets_[a];
      want.v[l] = in.v[((std::size_t(c[0]) * ie[1] + c[1]) * ie[2] + c[2]) * ie[3] + c[3]];
    }
    const RefTensor got =
        run_gpu(host_mat(in, storage_, in_pack_), out_, storage_, out_pack_, offsets_, *cache_);
    expect_same(got, want,
                fmt::format("{} at {},{},{},{} of {}, {} pack {} -> {}", describe(out_),
                            offsets_[0], offsets_[1], offsets_[2], offsets_[3], describe(in_),
                            infer::to_string(storage_), in_pack_, out_pack_));
  }

 private:
  infer::vk::PipelineCache* cache_;
  Shape in_ = Shape::of(1), out_ = Shape::of(1);
  Offsets offsets_{};
  ElemType storage_ = ElemType::f32;
  int in_pack_ = 1, out_pack_ = 1;
  unsigned seed_ = 1;
};

constexpr ElemType kTypes[] = {ElemType::f32, ElemType::f16};
constexpr int kPacks[] = {1, 4};

bool usable(ElemType t) { return t != ElemType::f16 || g_ctx->info().fp16_storage; }
bool fits(const Shape& s, int pack) { return s.packed_extent() % pack == 0; }

}  // namespace

TEST_CASE("Vulkan crop matches the scalar definition", "[vulkan][crop]") {
  infer::vk::PipelineCache cache(*g_ctx);
  struct Case {
    Shape in;
    Offsets offsets;
    Shape out;
  };
  const Case cases[] = {
      {Shape::of(13), {1}, Shape::of(12)},                           // 1-D, 13 -> 12
      {Shape::of(16), {3}, Shape::of(8)},                            // 16 -> 8
      {Shape::of(16), {2}, Shape::of(13)},                           // 16 -> 13
      {Shape::of(7, 12), {1, 2}, Shape::of(5, 8)},                   // 2-D, h 12 -> 8
      {Shape::of(7, 12), {7, 0}, Shape::of(7, 5)},                   // h 12 -> 5
      {Shape::of(9, 5), {1, 2}, Shape::of(6, 4)},                    // h 5 -> 4
      {Shape::of(7, 5, 12), {4, 1, 2}, Shape::of(4, 3, 8)},          // 3-D, c 12 -> 8
      {Shape::of(7, 5, 12), {3, 0, 1}, Shape::of(3, 5, 6)},          // c 12 -> 6
      {Shape::of(7, 5, 12), {0, 2, 0}, Shape::of(7, 2, 12)},         // c kept
      {Shape::of(5, 3, 6), {1, 1, 1}, Shape::of(3, 2, 4)},           // c 6 -> 4
      {Shape::of(13, 1, 8), {4, 0, 5}, Shape::of(7, 1, 4)},          // one row
      {Shape::of(3, 2, 5, 8), {4, 1, 0, 1}, Shape::of(2, 2, 3, 4)},  // 4-D
      {Shape::of(3, 2, 5, 8), {1, 0, 1, 0}, Shape::of(3, 1, 5, 6)},  // 4-D c 8 -> 6
      {Shape::of(7, 5, 12), {0, 0, 0}, Shape::of(7, 5, 12)},         // the whole blob
  };
  unsigned seed = 100;
  for (const Case& k : cases)
    for (ElemType t : kTypes)
      for (int p : kPacks)
        for (int q : kPacks) {
          if (!usable(t) || !fits(k.in, p) || !fits(k.out, q)) continue;
          CropTester(cache)
              .input(k.in)
              .box(k.offsets, k.out)
              .storage(t)
              .packs(p, q)
              .seed(++seed)
              .test();
        }
}

namespace {

/// The CPU layer at (T, Pack) against record_crop given the layer's own box, at the CPU output's
/// pack: the two must agree bit for bit.
template <class T, int Pack>
void check_against_layer(const infer::layers::Crop& layer, const Shape& shape, unsigned seed,
                         infer::vk::PipelineCache& cache) {
  constexpr ElemType type = infer::elem_type_v<T>;
  if (!usable(type) || !fits(shape, Pack)) return;
  const infer::Mat in = host_mat(random_tensor(shape, seed), type, Pack);
  infer::Mat cpu;
  const infer::Status ran = layer.forward<T, Pack>(in, cpu, infer::Option{});
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  const auto box = layer.box(shape);
  REQUIRE(box.ok());
  const RefTensor got = run_gpu(in, cpu.shape(), type, cpu.elempack(), box.value().offset, cache);
  expect_same(got, infer::test::from_mat(cpu),
              fmt::format("layer crop of {} into {}, {} pack {} -> {}", describe(shape),
                          describe(cpu.shape()), infer::to_string(type), Pack, cpu.elempack()));
}

}  // namespace

TEST_CASE("Vulkan crop matches the CPU layer given its resolved box", "[vulkan][crop]") {
  infer::vk::PipelineCache cache(*g_ctx);
  using infer::layers::Crop;
  struct Case {
    const char* what;
    Shape shape;
    Crop crop;
  };
  std::vector<Case> cases;
  {  // offset and size on each axis, -233 up to the end
    Crop c;
    c.woffset = 1;
    c.hoffset = 2;
    c.doffset = 1;
    c.coffset = 4;
    c.outw = 3;
    c.outh = -233;
    c.outd = 2;
    c.outc = 8;
    for (Shape s : {Shape::of(13), Shape::of(7, 12), Shape::of(7, 5, 12), Shape::of(5, 4, 3, 12)})
      cases.push_back({"offset + size", s, c});
  }
  {  // offsets from each end
    Crop c;
    c.woffset = 2;
    c.woffset2 = 1;
    c.hoffset = 1;
    c.hoffset2 = 3;
    c.doffset2 = 1;
    c.coffset = 1;
    c.coffset2 = 3;
    c.outw = c.outh = c.outd = c.outc = -233;
    for (Shape s : {Shape::of(13), Shape::of(7, 12), Shape::of(7, 5, 12), Shape::of(5, 6, 3, 12)})
      cases.push_back({"offset + offset2", s, c});
  }
  {  // numpy-style on every axis: negative starts, ends from the end
    Crop c;
    c.starts = {1, -4};
    c.ends = {-1, -233};
    cases.push_back({"starts/ends", Shape::of(7, 12), c});
    c.starts = {4, 1, -5};
    c.ends = {12, -1, 0};
    cases.push_back({"starts/ends", Shape::of(7, 5, 12), c});
    c.starts = {-233, 1, 0, 2};
    c.ends = {6, 3, 2, -233};
    cases.push_back({"starts/ends", Shape::of(5, 3, 4, 8), c});
  }
  {  // numpy-style on listed axes, negative axes
    Crop c;
    c.starts = {2, 4};
    c.ends = {-1, 12};
    c.axes = {-1, 0};
    cases.push_back({"starts/ends/axes", Shape::of(7, 5, 12), c});
    c.starts = {3};
    c.ends = {-233};
    c.axes = {0};
    cases.push_back({"starts/ends/axes", Shape::of(16), c});
    c.starts = {1, 2};
    c.ends = {3, 6};
    c.axes = {1, 0};
    cases.push_back({"starts/ends/axes", Shape::of(3, 2, 5, 8), c});
  }
  unsigned seed = 200;
  for (const Case& k : cases) {
    CAPTURE(k.what, describe(k.shape));
    check_against_layer<float, 1>(k.crop, k.shape, ++seed, cache);
    check_against_layer<float, 4>(k.crop, k.shape, ++seed, cache);
    check_against_layer<infer::f16, 1>(k.crop, k.shape, ++seed, cache);
    check_against_layer<infer::f16, 4>(k.crop, k.shape, ++seed, cache);
  }
}

TEST_CASE("Vulkan crop writes an output beyond one row of workgroups", "[vulkan][crop]") {
  infer::vk::PipelineCache cache(*g_ctx);
  // 65535 workgroups of 64 are 4194240 values; 65 x 63 x 1028 are 4209660.
  CropTester(cache)
      .input(Shape::of(67, 64, 1032))
      .box({2, 1, 1}, Shape::of(65, 63, 1028))
      .packs(4, 4)
      .seed(300)
      .test();
}

TEST_CASE("Vulkan crop rejects what does not fit, saying what", "[vulkan][crop][errors]") {
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
  using infer::vk::record_crop;
  const infer::vk::VkMat a = blob(0, Shape::of(7, 5, 12), 4);
  const infer::vk::VkMat b = blob(16384, Shape::of(4, 3, 8), 4);
  CHECK(record_crop(rec, a, b, {4, 1, 2, 0}).ok());
  CHECK(record_crop(rec, a, blob(16384, Shape::of(4, 3, 6)), {6, 2, 3, 0}).ok());
  fails(record_crop(rec, a, b, {5, 1, 2, 0}),
        "8 from offset 5 on axis 0 does not fit its extent 12");
  fails(record_crop(rec, a, b, {4, 3, 2, 0}),
        "3 from offset 3 on axis 1 does not fit its extent 5");
  fails(record_crop(rec, a, b, {4, 1, -1, 0}),
        "4 from offset -1 on axis 2 does not fit its extent 7");
  fails(record_crop(rec, a, b, {4, 1, 2, 1}), "offset 1 on axis 3 of a 3-D blob");
  fails(record_crop(rec, a, blob(16384, Shape::of(4, 24)), {0, 0, 0, 0}),
        "the input is 3-D, the output 2-D");
  fails(record_crop(rec, a, blob(16384, Shape::of(4, 3, 8), 4, ElemType::f16), {4, 1, 2, 0}),
        "input f32 and output f16 differ in storage");
  fails(record_crop(rec, a, blob(16384, Shape::of(4, 3, 8), 4, ElemType::bf16), {4, 1, 2, 0}),
        "storage bf16 is not f32 or f16");
  fails(record_crop(rec, a, blob(16384, Shape::of(4, 3, 8), 8), {4, 1, 2, 0}),
        "output pack 8 (the kernel moves packs 1 and 4)");
  fails(record_crop(rec, a, blob(16384, Shape::of(4, 3, 6), 4), {4, 1, 2, 0}),
        "output pack 4 does not divide its packed extent 6");
  fails(record_crop(rec, a, blob(1024, Shape::of(4, 3, 8), 4), {4, 1, 2, 0}),
        "input and output share memory");
  fails(record_crop(rec, infer::vk::VkMat(), b, {4, 1, 2, 0}), "the input blob is unbound");
}
