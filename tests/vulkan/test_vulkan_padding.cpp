// The GPU Padding kernel (record_padding) against a scalar definition over plain tensors:
// constant, replicate and reflect on every axis of 1-D to 4-D blobs, channel padding that changes
// the pack, every pack (1, 4) on each side, f32 and f16 storage, per-channel constants (and when
// they are not read), the CPU layer's own resolution of its parameters, an output beyond one row
// of workgroups; then the errors. Outputs start as NaN, so a value the kernel forgot fails; a
// move is exact, so every value must match bit for bit.
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <infer/layers/padding.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/padding.hpp>
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

using Pads = std::array<std::array<int, 2>, 4>;  // {before, after} per ncnn axis, 0 outermost

std::string describe(const Shape& s) {
  return fmt::format("{}-D {}x{}x{}x{}", s.dims, s.w, s.h, s.d, s.c);
}

std::string describe(const Pads& p) {
  return fmt::format("{}+{}, {}+{}, {}+{}, {}+{}", p[0][0], p[0][1], p[1][0], p[1][1], p[2][0],
                     p[2][1], p[3][0], p[3][1]);
}


/// The values `t` holds once stored as `type` (f16 rounds as the host rounds).
RefTensor stored(const RefTensor& t, ElemType type) {
  RefTensor s(t.shape);
  s.v = infer::test::from_mat(host_mat(t, type, 1)).v;
  return s;
}

using RecordFn = std::function<infer::Status(
    infer::vk::Recorder&, std::span<const infer::vk::VkMat>, const infer::vk::VkMat&)>;

/// Uploads `inputs` and a NaN-filled output of (shape, type, pack) into one device buffer, records
/// `record` over them and downloads the output.
RefTensor run_gpu(const std::vector<infer::Mat>& inputs, const Shape& shape, ElemType type,
                  int pack, const RecordFn& record, infer::vk::PipelineCache& cache) {
  std::vector<infer::Mat> hosts = inputs;
  hosts.push_back(nan_mat(shape, type, pack));
  return infer::vk::test::run_on_device(
      hosts, inputs.size(), cache,
      [&](infer::vk::Recorder& rec, std::span<const infer::vk::VkMat> all) {
        return record(rec, all.first(inputs.size()), all.back());
      });
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

/// The source index of output position i along an axis of extent n padded by `before`, or -1 for
/// the constant (the CPU layer's definition).
int source(int type, int i, int before, int n) {
  const int j = i - before;
  if (j >= 0 && j < n) return j;
  if (type == 1) return j < 0 ? 0 : n - 1;
  if (type == 2) return j < 0 ? -j : 2 * (n - 1) - j;
  return -1;
}

/// Index mismatches of got against want, bit for bit, with the first one described.
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

/// Builds and checks one padding (chained setters, then test()): a random input as stored at
/// its type, the expected output the scalar definition over it.
class PaddingTester {
 public:
  explicit PaddingTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}

  PaddingTester& shape(Shape s) {
    shape_ = s;
    return *this;
  }
  PaddingTester& pads(Pads p) {
    pads_ = p;
    return *this;
  }
  PaddingTester& type(int t) {
    type_ = t;
    return *this;
  }
  PaddingTester& value(float v) {
    value_ = v;
    return *this;
  }
  /// Per-channel constants, bound as a blob (read only for 3-D/4-D at type 0).
  PaddingTester& per_channel(std::vector<float> v) {
    per_channel_ = std::move(v);
    return *this;
  }
  PaddingTester& storage(ElemType t) {
    storage_ = t;
    return *this;
  }
  PaddingTester& packs(int in, int out) {
    in_pack_ = in;
    out_pack_ = out;
    return *this;
  }
  PaddingTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  Shape output_shape() const {
    std::array<int, 4> e = shape_.outer_first();
    for (std::size_t a = 0; a < 4; ++a) e[a] += pads_[a][0] + pads_[a][1];
    return Shape::from_outer_first(shape_.dims, e);
  }

  void test() const {
    const RefTensor in = stored(random_tensor(shape_, seed_), storage_);
    RefTensor fill_values(Shape::of(int(per_channel_.size())));
    fill_values.v = per_channel_;
    if (!per_channel_.empty()) fill_values = stored(fill_values, storage_);
    RefTensor one(Shape::of(1), value_);
    const float fill = stored(one, storage_).v[0];
    const bool by_channel = !per_channel_.empty() && shape_.dims >= 3 && type_ == 0;

    const Shape out = output_shape();
    RefTensor want(out);
    const std::array<int, 4> ie = shape_.outer_first();
    for (std::size_t l = 0; l < want.v.size(); ++l) {
      const std::array<int, 4> c = coords(out, l);
      std::array<int, 4> j{};
      bool inside = true;
      for (std::size_t a = 0; a < 4; ++a) {
        j[a] = source(type_, c[a], pads_[a][0], ie[a]);
        inside = inside && j[a] >= 0;
      }
      want.v[l] = inside ? in.v[((std::size_t(j[0]) * ie[1] + j[1]) * ie[2] + j[2]) * ie[3] + j[3]]
                  : by_channel ? fill_values.v[std::size_t(c[0])]
                               : fill;
    }

    std::vector<infer::Mat> inputs = {host_mat(in, storage_, in_pack_)};
    if (!per_channel_.empty()) inputs.push_back(host_mat(fill_values, storage_, 1));
    const RefTensor got = run_gpu(
        inputs, out, storage_, out_pack_,
        [&](infer::vk::Recorder& rec, std::span<const infer::vk::VkMat> src,
            const infer::vk::VkMat& dst) {
          return infer::vk::record_padding(rec, src[0], dst, pads_, type_, value_,
                                           src.size() > 1 ? src[1] : infer::vk::VkMat());
        },
        *cache_);
    expect_same(
        got, want,
        fmt::format("type {} value {}{} of {} by {} into {}, {} pack {} -> {}", type_, value_,
                    per_channel_.empty() ? "" : " per channel", describe(shape_), describe(pads_),
                    describe(out), infer::to_string(storage_), in_pack_, out_pack_));
  }

 private:
  infer::vk::PipelineCache* cache_;
  Shape shape_ = Shape::of(1);
  Pads pads_{};
  int type_ = 0;
  float value_ = 0.f;
  std::vector<float> per_channel_;
  ElemType storage_ = ElemType::f32;
  int in_pack_ = 1, out_pack_ = 1;
  unsigned seed_ = 1;
};

constexpr ElemType kTypes[] = {ElemType::f32, ElemType::f16};
constexpr int kPacks[] = {1, 4};

bool usable(ElemType t) { return t != ElemType::f16 || g_ctx->info().fp16_storage; }
bool fits(const Shape& s, int pack) { return s.packed_extent() % pack == 0; }
/// Whether reflect can pad `s` by `p` (each pad below the extent it pads).
bool reflects(const Shape& s, const Pads& p) {
  const std::array<int, 4> e = s.outer_first();
  for (std::size_t a = 0; a < 4; ++a)
    if (p[a][0] >= e[a] || p[a][1] >= e[a]) return false;
  return true;
}

struct Case {
  Shape shape;
  Pads pads;
};

const Case kCases[] = {
    {Shape::of(13), {{{1, 2}}}},                                  // 1-D, 13 -> 16
    {Shape::of(12), {{{3, 0}}}},                                  // 12 -> 15
    {Shape::of(12), {{{2, 2}}}},                                  // 12 -> 16
    {Shape::of(7, 8), {{{1, 3}, {2, 1}}}},                        // 2-D, h 8 -> 12
    {Shape::of(7, 5), {{{0, 3}, {2, 0}}}},                        // h 5 -> 8
    {Shape::of(5, 12), {{{2, 1}, {0, 0}}}},                       // h 12 -> 15
    {Shape::of(7, 5, 12), {{{0, 0}, {1, 2}, {3, 1}}}},            // 3-D, c kept
    {Shape::of(7, 5, 12), {{{1, 3}, {0, 1}, {2, 0}}}},            // c 12 -> 16
    {Shape::of(7, 5, 12), {{{2, 1}, {0, 0}, {1, 1}}}},            // c 12 -> 15
    {Shape::of(5, 3, 6), {{{1, 1}, {2, 2}, {1, 0}}}},             // c 6 -> 8
    {Shape::of(13, 1, 8), {{{0, 4}, {0, 0}, {4, 1}}}},            // one row
    {Shape::of(3, 2, 5, 8), {{{0, 0}, {1, 2}, {1, 1}, {2, 1}}}},  // 4-D: d, h, w
    {Shape::of(3, 2, 5, 8), {{{2, 2}, {0, 0}, {0, 1}, {0, 0}}}},  // 4-D c 8 -> 12 (GPU only)
    {Shape::of(7, 5, 12), {}},                                    // nothing padded
};

}  // namespace

TEST_CASE("Vulkan padding matches the scalar definition", "[vulkan][padding]") {
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 100;
  for (const Case& k : kCases)
    for (int type : {0, 1, 2}) {
      if (type == 2 && !reflects(k.shape, k.pads)) continue;
      for (ElemType t : kTypes)
        for (int p : kPacks)
          for (int q : kPacks) {
            PaddingTester tester(cache);
            tester.shape(k.shape).pads(k.pads).type(type).value(0.1f).storage(t).packs(p, q);
            if (!usable(t) || !fits(k.shape, p) || !fits(tester.output_shape(), q)) continue;
            tester.seed(++seed).test();
          }
    }
}

TEST_CASE("Vulkan padding fills each channel with its own constant", "[vulkan][padding]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const std::vector<float> constants = {0.5f, -1.f, 2.25f, 0.1f, -7.f, 3.f,  1e-3f, 8.f,  -0.25f,
                                        4.f,  5.f,  -6.f,  9.f,  10.f, 11.f, -12.f, 13.f, 14.f};
  const Case cases[] = {
      {Shape::of(7, 5, 12), {{{1, 3}, {1, 0}, {0, 2}}}},            // c 12 -> 16
      {Shape::of(5, 3, 6), {{{0, 0}, {1, 1}, {1, 0}}}},             // c kept
      {Shape::of(3, 2, 5, 8), {{{0, 0}, {1, 2}, {1, 1}, {2, 1}}}},  // 4-D
      {Shape::of(7, 8), {{{1, 3}, {2, 1}}}},                        // 2-D: `value`, as the CPU
      {Shape::of(13), {{{1, 2}}}},                                  // 1-D: `value`
  };
  unsigned seed = 200;
  for (const Case& k : cases)
    for (int type : {0, 1, 2}) {  // replicate and reflect bind but never read the constants
      if (type == 2 && !reflects(k.shape, k.pads)) continue;
      for (ElemType t : kTypes)
        for (int p : kPacks)
          for (int q : kPacks) {
            PaddingTester tester(cache);
            tester.shape(k.shape).pads(k.pads).type(type).value(-3.5f).per_channel(constants);
            tester.storage(t).packs(p, q);
            if (!usable(t) || !fits(k.shape, p) || !fits(tester.output_shape(), q)) continue;
            tester.seed(++seed).test();
          }
    }
}

namespace {

/// The CPU layer at (T, Pack) against record_padding given the layer's own pads_by_axis, at the
/// CPU output's pack: the two must agree bit for bit.
template <class T, int Pack>
void check_against_layer(const infer::layers::Padding& layer, const Shape& shape, unsigned seed,
                         infer::vk::PipelineCache& cache) {
  constexpr ElemType type = infer::elem_type_v<T>;
  if (!usable(type) || !fits(shape, Pack)) return;
  const infer::Mat in = host_mat(random_tensor(shape, seed), type, Pack);
  infer::Mat cpu;
  REQUIRE(layer.forward<T, Pack>(in, cpu, infer::Option{}).ok());
  std::vector<infer::Mat> inputs = {in};
  if (!layer.per_channel_pad_data.empty()) {
    RefTensor c(Shape::of(int(layer.per_channel_pad_data.size())));
    c.v = layer.per_channel_pad_data;
    inputs.push_back(host_mat(c, type, 1));
  }
  const RefTensor got = run_gpu(
      inputs, cpu.shape(), type, cpu.elempack(),
      [&](infer::vk::Recorder& rec, std::span<const infer::vk::VkMat> src,
          const infer::vk::VkMat& dst) {
        return infer::vk::record_padding(rec, src[0], dst, layer.pads_by_axis(shape.dims),
                                         layer.type, layer.value,
                                         src.size() > 1 ? src[1] : infer::vk::VkMat());
      },
      cache);
  expect_same(
      got, infer::test::from_mat(cpu),
      fmt::format("layer type {} of {} into {}, {} pack {} -> {}", layer.type, describe(shape),
                  describe(cpu.shape()), infer::to_string(type), Pack, cpu.elempack()));
}

}  // namespace

TEST_CASE("Vulkan padding matches the CPU layer given its resolved pads", "[vulkan][padding]") {
  infer::vk::PipelineCache cache(*g_ctx);
  infer::layers::Padding p;
  p.top = 1;
  p.bottom = 2;
  p.left = 2;
  p.right = 1;
  p.front = 1;
  p.behind = 3;
  p.value = -0.3f;
  const Shape shapes[] = {Shape::of(13), Shape::of(7, 6), Shape::of(7, 5, 12),
                          Shape::of(5, 3, 4, 8)};
  unsigned seed = 300;
  for (int type : {0, 1, 2})
    for (bool by_channel : {false, true}) {
      p.type = type;
      p.per_channel_pad_data.clear();
      p.per_channel_pad_data_size = 0;
      if (by_channel) {
        for (int q = 0; q < 16; ++q) p.per_channel_pad_data.push_back(0.25f * float(q) - 1.f);
        p.per_channel_pad_data_size = 16;
      }
      for (const Shape& s : shapes) {
        CAPTURE(type, by_channel, describe(s));
        check_against_layer<float, 1>(p, s, ++seed, cache);
        check_against_layer<float, 4>(p, s, ++seed, cache);
        check_against_layer<infer::f16, 1>(p, s, ++seed, cache);
        check_against_layer<infer::f16, 4>(p, s, ++seed, cache);
      }
    }
}

TEST_CASE("Vulkan padding writes an output beyond one row of workgroups", "[vulkan][padding]") {
  infer::vk::PipelineCache cache(*g_ctx);
  // 65535 workgroups of 64 are 4194240 values; 66 x 66 x 1024 are 4460544.
  PaddingTester(cache)
      .shape(Shape::of(64, 64, 1024))
      .pads({{{0, 0}, {1, 1}, {1, 1}}})
      .type(1)
      .packs(4, 4)
      .seed(400)
      .test();
}

TEST_CASE("Vulkan padding rejects what does not fit, saying what", "[vulkan][padding][errors]") {
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
  using infer::vk::record_padding;
  const infer::vk::VkMat a = blob(0, Shape::of(7, 5, 12), 4);
  const Pads pads = {{{1, 3}, {1, 0}, {0, 2}}};
  const infer::vk::VkMat b = blob(16384, Shape::of(9, 6, 16), 4);
  CHECK(record_padding(rec, a, b, pads, 0, 0.f).ok());
  CHECK(record_padding(rec, a, blob(16384, Shape::of(9, 6, 16)), pads, 2, 0.f).ok());
  fails(record_padding(rec, a, b, pads, 3, 0.f),
        "type 3 is not 0 (constant), 1 (replicate) or 2 (reflect)");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 6, 15)), pads, 0, 0.f),
        "axis 0 of extent 12 padded by 1 and 3 is 16, the output has 15");
  fails(
      record_padding(rec, a, blob(16384, Shape::of(9, 6, 16)), {{{1, 3}, {1, 0}, {0, 1}}}, 0, 0.f),
      "axis 2 of extent 7 padded by 0 and 1 is 8, the output has 9");
  fails(record_padding(rec, a, b, {{{-1, 5}, {1, 0}, {0, 2}}}, 0, 0.f),
        "pads -1 and 5 on axis 0 must not be negative");
  fails(record_padding(rec, a, b, {{{1, 3}, {1, 0}, {0, 2}, {1, 0}}}, 0, 0.f),
        "pads 1 and 0 on axis 3 of a 3-D blob");
  fails(record_padding(rec, blob(0, Shape::of(7, 2, 12), 4), blob(16384, Shape::of(7, 6, 12), 4),
                       {{{0, 0}, {2, 2}, {0, 0}}}, 2, 0.f),
        "reflect pads 2 and 2 on axis 1 need an extent above them, got 2");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 96)), pads, 0, 0.f),
        "the input is 3-D, the output 2-D");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 6, 16), 4, ElemType::f16), pads, 0, 0.f),
        "input f32 and output f16 differ in storage");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 6, 16), 4, ElemType::bf16), pads, 0, 0.f),
        "storage bf16 is not f32 or f16");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 6, 16), 8), pads, 0, 0.f),
        "output pack 8 (the kernel moves packs 1 and 4)");
  fails(record_padding(rec, a, blob(16384, Shape::of(9, 6, 14), 4), {{{1, 1}, {1, 0}, {0, 2}}}, 0,
                       0.f),
        "output pack 4 does not divide its packed extent 14");
  fails(record_padding(rec, a, blob(1024, Shape::of(9, 6, 16), 4), pads, 0, 0.f),
        "input and output share memory");
  fails(record_padding(rec, a, infer::vk::VkMat(), pads, 0, 0.f), "the output blob is unbound");
  // Per-channel constants: checked when read (3-D/4-D at type 0), ignored otherwise.
  const infer::vk::VkMat constants = blob(40000, Shape::of(16));
  CHECK(record_padding(rec, a, b, pads, 0, 0.f, constants).ok());
  CHECK(record_padding(rec, a, b, pads, 1, 0.f, blob(40000, Shape::of(3))).ok());
  fails(record_padding(rec, a, b, pads, 0, 0.f, blob(40000, Shape::of(15))),
        "15 per-channel constants for an output of 16 channels");
  fails(record_padding(rec, a, b, pads, 0, 0.f, blob(40000, Shape::of(16), 4)),
        "per-channel constants are 1-D f32 pack 4, expected 1-D f32 pack 1");
  fails(record_padding(rec, a, b, pads, 0, 0.f, blob(40000, Shape::of(4, 4))),
        "per-channel constants are 2-D f32 pack 1");
  fails(record_padding(rec, a, b, pads, 0, 0.f, blob(40000, Shape::of(16), 1, ElemType::f16)),
        "per-channel constants are 1-D f16 pack 1, expected 1-D f32 pack 1");
  fails(record_padding(rec, a, b, pads, 0, 0.f, blob(16384, Shape::of(16))),
        "the per-channel constants share memory with the output");
}
