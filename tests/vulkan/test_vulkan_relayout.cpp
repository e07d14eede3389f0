// The GPU relayout kernel (record_relayout, record_concat_part, record_slice_part,
// record_shuffle_channel) against scalar definitions over plain tensors: every pack (1, 4) and
// storage (f32, f16) on each side, shapes that change (reshape, flatten), parts along every axis,
// ShuffleChannel with and without reverse, a move beyond one row of workgroups; then the errors.
// Outputs start as NaN, so a value the kernel forgot fails.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/relayout.hpp>
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

namespace {

/// A blob as a test asks for it.
struct BlobSpec {
  Shape shape;
  ElemType type = ElemType::f32;
  int pack = 1;
};

std::string describe(const BlobSpec& b) {
  return fmt::format("{}-D {}x{}x{}x{} {} pack {}", b.shape.dims, b.shape.w, b.shape.h, b.shape.d,
                     b.shape.c, infer::to_string(b.type), b.pack);
}

std::string describe(const std::vector<BlobSpec>& bs) {
  std::string s;
  for (const BlobSpec& b : bs) s += (s.empty() ? "" : ", ") + describe(b);
  return s;
}

/// A host Mat of `b` whose every stored value (channel padding too) is NaN.
infer::Mat nan_mat(const BlobSpec& b) {
  infer::Mat m(b.shape, b.type, b.pack);
  if (b.type == ElemType::f16) {
    auto* p = static_cast<std::uint16_t*>(m.data());
    std::fill(p, p + m.bytes() / 2, std::uint16_t(0x7E00));
  } else {
    auto* p = static_cast<float*>(m.data());
    std::fill(p, p + m.bytes() / 4, std::numeric_limits<float>::quiet_NaN());
  }
  return m;
}

using RecordFn = std::function<infer::Status(
    infer::vk::Recorder&, std::span<const infer::vk::VkMat>, std::span<const infer::vk::VkMat>)>;

/// Uploads `inputs` and NaN-filled `outputs` (one device buffer), records `record` over them and
/// downloads the outputs.
std::vector<RefTensor> run_gpu(const std::vector<infer::Mat>& inputs,
                               const std::vector<BlobSpec>& outputs, const RecordFn& record,
                               infer::vk::PipelineCache& cache) {
  std::vector<infer::Mat> hosts = inputs;
  for (const BlobSpec& b : outputs) hosts.push_back(nan_mat(b));
  std::vector<std::size_t> results;
  for (std::size_t i = inputs.size(); i < hosts.size(); ++i) results.push_back(i);
  return infer::vk::test::run_on_device(
      hosts, results, cache,
      [&](infer::vk::Recorder& rec, std::span<const infer::vk::VkMat> all) {
        return record(rec, all.first(inputs.size()), all.subspan(inputs.size()));
      });
}

/// Coordinates of logical value l of `s`, outermost first (the RefTensor index order).
std::array<int, 4> coords(const Shape& s, std::size_t l) {
  const std::array<int, 4> e = s.outer_first();
  std::array<int, 4> c{};
  for (int k = 3; k >= 0; --k) {
    c[std::size_t(k)] = int(l % std::size_t(e[std::size_t(k)]));
    l /= std::size_t(e[std::size_t(k)]);
  }
  return c;
}

std::size_t index(const Shape& s, const std::array<int, 4>& c) {
  const std::array<int, 4> e = s.outer_first();
  std::size_t l = 0;
  for (std::size_t k = 0; k < 4; ++k) l = l * std::size_t(e[k]) + std::size_t(c[k]);
  return l;
}

/// The values `t` holds once stored as `type` (f16 rounds; the host conversion is the reference).
RefTensor stored(const RefTensor& t, ElemType type) {
  RefTensor s(t.shape);
  s.v = infer::test::from_mat(host_mat(t, type, 1)).v;
  return s;
}

/// Builds and checks one kind of move (chained setters, then test_*()): inputs are random values
/// as stored at their type, expected outputs the scalar definition of the move, rounded to the
/// output's type. Same-type and widening moves must match exactly, narrowing ones within an f16
/// rounding step.
class RelayoutTester {
 public:
  explicit RelayoutTester(infer::vk::PipelineCache& cache) : cache_(&cache) {}

  RelayoutTester& input(Shape s, ElemType type, int pack) {
    inputs_.push_back({s, type, pack});
    return *this;
  }
  RelayoutTester& output(Shape s, ElemType type, int pack) {
    outputs_.push_back({s, type, pack});
    return *this;
  }
  RelayoutTester& axis(int a) {
    axis_ = a;
    return *this;
  }
  RelayoutTester& group(int g) {
    group_ = g;
    return *this;
  }
  RelayoutTester& reverse(bool r) {
    reverse_ = r;
    return *this;
  }
  RelayoutTester& seed(unsigned s) {
    seed_ = s;
    return *this;
  }

  /// record_relayout of the one input into the one output: the same values in logical order.
  void test_relayout() const {
    REQUIRE((inputs_.size() == 1 && outputs_.size() == 1));
    const std::vector<RefTensor> in = make_inputs();
    RefTensor want(outputs_[0].shape);
    REQUIRE(want.v.size() == in[0].v.size());
    want.v = in[0].v;
    check("relayout", in, {want}, [](auto& rec, auto src, auto dst) {
      return infer::vk::record_relayout(rec, src[0], dst[0]);
    });
  }

  /// record_concat_part of each input into the one output at consecutive offsets along axis.
  void test_concat() const {
    REQUIRE(outputs_.size() == 1);
    const std::vector<RefTensor> in = make_inputs();
    const Shape out = outputs_[0].shape;
    const int a = axis_ < 0 ? axis_ + out.dims : axis_;
    RefTensor want(out, std::numeric_limits<float>::quiet_NaN());
    std::vector<int> offsets;
    int offset = 0;
    for (const RefTensor& t : in) {
      offsets.push_back(offset);
      for (std::size_t l = 0; l < t.v.size(); ++l) {
        std::array<int, 4> c = coords(t.shape, l);
        c[std::size_t(a)] += offset;
        want.v[index(out, c)] = t.v[l];
      }
      offset += t.shape.outer_first()[std::size_t(a)];
    }
    check(fmt::format("concat along axis {}", axis_), in, {want},
          [&](auto& rec, auto src, auto dst) -> infer::Status {
            for (std::size_t i = 0; i < src.size(); ++i)
              INFER_TRY(infer::vk::record_concat_part(rec, src[i], dst[0], axis_, offsets[i]));
            return infer::Status{};
          });
  }

  /// record_slice_part of the one input into each output at consecutive offsets along axis.
  void test_slice() const {
    REQUIRE(inputs_.size() == 1);
    const std::vector<RefTensor> in = make_inputs();
    const int a = axis_ < 0 ? axis_ + in[0].shape.dims : axis_;
    std::vector<RefTensor> want;
    std::vector<int> offsets;
    int offset = 0;
    for (const BlobSpec& b : outputs_) {
      RefTensor t(b.shape);
      for (std::size_t l = 0; l < t.v.size(); ++l) {
        std::array<int, 4> c = coords(t.shape, l);
        c[std::size_t(a)] += offset;
        t.v[l] = in[0].v[index(in[0].shape, c)];
      }
      want.push_back(t);
      offsets.push_back(offset);
      offset += b.shape.outer_first()[std::size_t(a)];
    }
    check(fmt::format("slice along axis {}", axis_), in, want,
          [&](auto& rec, auto src, auto dst) -> infer::Status {
            for (std::size_t i = 0; i < dst.size(); ++i)
              INFER_TRY(infer::vk::record_slice_part(rec, src[0], dst[i], axis_, offsets[i]));
            return infer::Status{};
          });
  }

  /// record_shuffle_channel as ncnn's loops define it: output channel group * j + i is input
  /// channel (channels / group) * i + j, group taken as channels / group when reversed.
  void test_shuffle() const {
    REQUIRE((inputs_.size() == 1 && outputs_.size() == 1));
    const std::vector<RefTensor> in = make_inputs();
    const Shape s = in[0].shape;
    const int channels = s.dims >= 3 ? s.c : 1;
    const std::size_t plane = s.total() / std::size_t(channels);
    const int g = reverse_ ? channels / group_ : group_, per = channels / g;
    RefTensor want(s, std::numeric_limits<float>::quiet_NaN());
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < per; ++j)
        for (std::size_t k = 0; k < plane; ++k)
          want.v[std::size_t(g * j + i) * plane + k] =
              in[0].v[std::size_t(per * i + j) * plane + k];
    check(fmt::format("shuffle group {}{}", group_, reverse_ ? " reversed" : ""), in, {want},
          [&](auto& rec, auto src, auto dst) {
            return infer::vk::record_shuffle_channel(rec, src[0], dst[0], group_, reverse_);
          });
  }

 private:
  std::vector<RefTensor> make_inputs() const {
    std::vector<RefTensor> in;
    unsigned seed = seed_;
    for (const BlobSpec& b : inputs_) in.push_back(stored(random_tensor(b.shape, ++seed), b.type));
    return in;
  }

  template <class Record>
  void check(const std::string& op, const std::vector<RefTensor>& in,
             const std::vector<RefTensor>& want, Record&& record) const {
    std::vector<infer::Mat> hosts;
    for (std::size_t i = 0; i < in.size(); ++i)
      hosts.push_back(host_mat(in[i], inputs_[i].type, inputs_[i].pack));
    const std::vector<RefTensor> got = run_gpu(
        hosts, outputs_,
        [&](infer::vk::Recorder& rec, std::span<const infer::vk::VkMat> src,
            std::span<const infer::vk::VkMat> dst) { return record(rec, src, dst); },
        *cache_);
    REQUIRE(got.size() == want.size());
    bool narrows = false;
    for (const BlobSpec& i : inputs_)
      for (const BlobSpec& o : outputs_)
        narrows = narrows || (i.type == ElemType::f32 && o.type == ElemType::f16);
    for (std::size_t k = 0; k < want.size(); ++k) {
      const RefTensor w =
          outputs_[k].type == ElemType::f16 ? stored(want[k], ElemType::f16) : want[k];
      REQUIRE(got[k].v.size() == w.v.size());
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < w.v.size(); ++i) {
        const float g = got[k].v[i], e = w.v[i];
        const float tol = narrows ? std::abs(e) * 0x1p-10f + 0x1p-24f : 0.f;
        if ((std::isnan(g) || std::isnan(e) || std::abs(g - e) > tol) && bad++ == 0) first = i;
      }
      const std::array<int, 4> c = coords(w.shape, first);
      INFO(
          fmt::format("{} of [{}] into [{}], output {}: {} wrong, first at (outer first) "
                      "{},{},{},{}: got {} want {}",
                      op, describe(inputs_), describe(outputs_), k, bad, c[0], c[1], c[2], c[3],
                      got[k].v[first], w.v[first]));
      CHECK(bad == 0);
    }
  }

  infer::vk::PipelineCache* cache_;
  std::vector<BlobSpec> inputs_, outputs_;
  int axis_ = 0, group_ = 1;
  bool reverse_ = false;
  unsigned seed_ = 1;
};

constexpr ElemType kTypes[] = {ElemType::f32, ElemType::f16};
constexpr int kPacks[] = {1, 4};

bool usable(ElemType t) { return t != ElemType::f16 || g_ctx->info().fp16_storage; }
bool fits(const Shape& s, int pack) { return s.packed_extent() % pack == 0; }

}  // namespace

TEST_CASE("Vulkan relayout converts pack and storage value for value", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const Shape shapes[] = {Shape::of(13),        Shape::of(12),       Shape::of(7, 8),
                          Shape::of(7, 5, 12),  Shape::of(13, 1, 8), Shape::of(5, 3, 6),
                          Shape::of(3, 2, 5, 8)};
  unsigned seed = 100;
  for (const Shape& s : shapes)
    for (ElemType from : kTypes)
      for (ElemType to : kTypes)
        for (int p : kPacks)
          for (int q : kPacks) {
            if (!usable(from) || !usable(to) || !fits(s, p) || !fits(s, q)) continue;
            RelayoutTester(cache).input(s, from, p).output(s, to, q).seed(++seed).test_relayout();
          }
}

TEST_CASE("Vulkan relayout reshapes and flattens in logical order", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const std::pair<Shape, Shape> pairs[] = {
      {Shape::of(7, 5, 12), Shape::of(420)},        {Shape::of(7, 5, 12), Shape::of(35, 12)},
      {Shape::of(7, 5, 12), Shape::of(7, 5, 3, 4)}, {Shape::of(7, 5, 12), Shape::of(12, 5, 7)},
      {Shape::of(13, 1, 8), Shape::of(104)},        {Shape::of(13, 1, 8), Shape::of(26, 1, 4)},
      {Shape::of(13, 1, 8), Shape::of(13, 8)},      {Shape::of(3, 2, 5, 8), Shape::of(6, 5, 8)},
      {Shape::of(3, 2, 5, 8), Shape::of(240)},      {Shape::of(13), Shape::of(1, 1, 13)},
      {Shape::of(12, 7), Shape::of(7, 3, 4)},
  };
  unsigned seed = 200;
  for (const auto& [a, b] : pairs)
    for (const auto& [from, to] : {std::pair(a, b), std::pair(b, a)})
      for (ElemType ta : kTypes)
        for (ElemType tb : kTypes)
          for (int p : kPacks)
            for (int q : kPacks) {
              if (!usable(ta) || !usable(tb) || !fits(from, p) || !fits(to, q)) continue;
              RelayoutTester(cache)
                  .input(from, ta, p)
                  .output(to, tb, q)
                  .seed(++seed)
                  .test_relayout();
            }
}

TEST_CASE("Vulkan concat writes parts at offsets along an axis", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  struct Case {
    std::vector<Shape> parts;
    Shape whole;
    int axis;
  };
  const Case cases[] = {
      {{Shape::of(7, 5, 3), Shape::of(7, 5, 5), Shape::of(7, 5, 4)}, Shape::of(7, 5, 12), 0},
      {{Shape::of(7, 5, 4), Shape::of(7, 5, 8)}, Shape::of(7, 5, 12), 0},
      {{Shape::of(13, 1, 8), Shape::of(13, 1, 4)}, Shape::of(13, 1, 12), -3},
      {{Shape::of(5), Shape::of(8)}, Shape::of(13), 0},
      {{Shape::of(4), Shape::of(8)}, Shape::of(12), -1},
      {{Shape::of(7, 2, 8), Shape::of(7, 3, 8)}, Shape::of(7, 5, 8), 1},
      {{Shape::of(3, 5, 8), Shape::of(4, 5, 8)}, Shape::of(7, 5, 8), 2},
      {{Shape::of(7, 4), Shape::of(7, 8)}, Shape::of(7, 12), 0},
      {{Shape::of(3, 8), Shape::of(4, 8)}, Shape::of(7, 8), 1},
      {{Shape::of(3, 2, 5, 4), Shape::of(3, 2, 5, 5)}, Shape::of(3, 2, 5, 9), 0},
      {{Shape::of(3, 2, 2, 8), Shape::of(3, 2, 3, 8)}, Shape::of(3, 2, 5, 8), 1},
  };
  unsigned seed = 300;
  for (const Case& k : cases)
    for (ElemType from : kTypes)
      for (ElemType to : kTypes)
        for (int q : kPacks) {
          if (!usable(from) || !usable(to) || !fits(k.whole, q)) continue;
          for (int p : kPacks) {  // each part at pack p where it fits, 1 otherwise
            RelayoutTester t(cache);
            for (const Shape& s : k.parts) t.input(s, from, fits(s, p) ? p : 1);
            t.output(k.whole, to, q).axis(k.axis).seed(++seed).test_concat();
          }
        }
}

TEST_CASE("Vulkan slice reads parts at offsets along an axis", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  struct Case {
    Shape whole;
    std::vector<Shape> parts;
    int axis;
  };
  const Case cases[] = {
      {Shape::of(7, 5, 12), {Shape::of(7, 5, 3), Shape::of(7, 5, 5), Shape::of(7, 5, 4)}, 0},
      {Shape::of(7, 5, 12), {Shape::of(7, 5, 4), Shape::of(7, 5, 8)}, -3},
      {Shape::of(13, 1, 8), {Shape::of(13, 1, 4), Shape::of(13, 1, 4)}, 0},
      {Shape::of(13), {Shape::of(6), Shape::of(7)}, 0},
      {Shape::of(12), {Shape::of(8), Shape::of(4)}, 0},
      {Shape::of(7, 5, 8), {Shape::of(7, 1, 8), Shape::of(7, 4, 8)}, 1},
      {Shape::of(7, 5, 8), {Shape::of(2, 5, 8), Shape::of(5, 5, 8)}, -1},
      {Shape::of(7, 12), {Shape::of(7, 4), Shape::of(7, 8)}, 0},
      {Shape::of(3, 2, 5, 8), {Shape::of(3, 2, 5, 3), Shape::of(3, 2, 5, 5)}, 0},
      {Shape::of(3, 2, 5, 8), {Shape::of(3, 2, 3, 8), Shape::of(3, 2, 2, 8)}, 1},
  };
  unsigned seed = 400;
  for (const Case& k : cases)
    for (ElemType from : kTypes)
      for (ElemType to : kTypes)
        for (int p : kPacks) {
          if (!usable(from) || !usable(to) || !fits(k.whole, p)) continue;
          for (int q : kPacks) {  // each part at pack q where it fits, 1 otherwise
            RelayoutTester t(cache);
            t.input(k.whole, from, p);
            for (const Shape& s : k.parts) t.output(s, to, fits(s, q) ? q : 1);
            t.axis(k.axis).seed(++seed).test_slice();
          }
        }
}

TEST_CASE("Vulkan shuffle channel permutes channels as ncnn", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  struct Case {
    Shape shape;
    int group;
  };
  const Case cases[] = {
      {Shape::of(7, 5, 12), 2},  {Shape::of(7, 5, 12), 3},   {Shape::of(7, 5, 12), 4},
      {Shape::of(7, 5, 12), 12}, {Shape::of(13, 1, 8), 2},   {Shape::of(5, 3, 6), 3},
      {Shape::of(5, 3, 6), 2},   {Shape::of(3, 2, 2, 6), 3}, {Shape::of(3, 2, 2, 8), 2},
      {Shape::of(7, 5, 12), 1},  {Shape::of(13), 1},         {Shape::of(7, 8), 1}};
  unsigned seed = 500;
  for (const Case& k : cases)
    for (bool reverse : {false, true})
      for (ElemType from : kTypes)
        for (ElemType to : kTypes)
          for (int p : kPacks)
            for (int q : kPacks) {
              if (!usable(from) || !usable(to) || !fits(k.shape, p) || !fits(k.shape, q)) continue;
              RelayoutTester(cache)
                  .input(k.shape, from, p)
                  .output(k.shape, to, q)
                  .group(k.group)
                  .reverse(reverse)
                  .seed(++seed)
                  .test_shuffle();
            }
}

TEST_CASE("Vulkan shuffle channel reversed undoes the shuffle", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  const Shape s = Shape::of(7, 5, 12);
  const RefTensor in = random_tensor(s, 600);
  for (int group : {2, 3, 4}) {
    const std::vector<RefTensor> got = run_gpu(
        {host_mat(in, ElemType::f32, 4)}, {{s, ElemType::f32, 1}, {s, ElemType::f32, 4}},
        [&](infer::vk::Recorder& rec, auto src, auto dst) -> infer::Status {
          INFER_TRY(infer::vk::record_shuffle_channel(rec, src[0], dst[0], group, false));
          INFER_TRY(rec.barrier());
          return infer::vk::record_shuffle_channel(rec, dst[0], dst[1], group, true);
        },
        cache);
    CAPTURE(group);
    CHECK(got[1].v == in.v);
  }
}

TEST_CASE("Vulkan relayout moves a blob beyond one row of workgroups", "[vulkan][relayout]") {
  infer::vk::PipelineCache cache(*g_ctx);
  // 65535 workgroups of 64 are 4194240 values: this takes a second row.
  RelayoutTester(cache)
      .input(Shape::of(64, 64, 1028), ElemType::f32, 1)
      .output(Shape::of(64, 64, 1028), ElemType::f32, 4)
      .seed(700)
      .test_relayout();
}

TEST_CASE("Vulkan relayout rejects what does not fit, saying what", "[vulkan][relayout][errors]") {
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
  const infer::vk::VkMat a = blob(0, Shape::of(7, 5, 12)), b = blob(8192, Shape::of(7, 5, 12), 4);
  CHECK(infer::vk::record_relayout(rec, a, b).ok());
  CHECK(infer::vk::record_relayout(rec, a, blob(8192, Shape::of(420))).ok());
  fails(infer::vk::record_relayout(rec, a, blob(8192, Shape::of(421))),
        "the source holds 420 values, the destination 421");
  fails(infer::vk::record_relayout(rec, a, blob(8192, Shape::of(7, 5, 12), 8)),
        "destination pack 8 (the kernel moves packs 1 and 4)");
  fails(infer::vk::record_relayout(rec, blob(0, Shape::of(7, 5, 6)),
                                   blob(8192, Shape::of(7, 5, 6), 4)),
        "destination pack 4 does not divide its packed extent 6");
  fails(infer::vk::record_relayout(rec, blob(0, Shape::of(13), 4), blob(8192, Shape::of(13))),
        "source pack 4 does not divide its packed extent 13");
  fails(infer::vk::record_relayout(rec, a, blob(8192, Shape::of(7, 5, 12), 1, ElemType::bf16)),
        "storage bf16 is not f32 or f16");
  fails(infer::vk::record_relayout(rec, a, blob(1024, Shape::of(420), 4)),
        "source and destination share memory");
  fails(infer::vk::record_relayout(rec, a, infer::vk::VkMat()), "an unbound blob");

  const infer::vk::VkMat part = blob(8192, Shape::of(7, 5, 4), 4);
  CHECK(infer::vk::record_concat_part(rec, part, a, 0, 8).ok());
  fails(infer::vk::record_concat_part(rec, part, a, 0, 9),
        "a part of 4 at offset 9 does not fit axis 0 of extent 12");
  fails(infer::vk::record_concat_part(rec, part, a, 0, -1),
        "a part of 4 at offset -1 does not fit axis 0 of extent 12");
  fails(infer::vk::record_concat_part(rec, part, a, 3, 0),
        "axis 3 is out of range for 3-D blobs (expected -3 to 2)");
  fails(infer::vk::record_concat_part(rec, blob(8192, Shape::of(7, 4, 4)), a, 0, 0),
        "the whole has extent 5 on axis 1, the part 4; only axis 0 may differ");
  fails(infer::vk::record_concat_part(rec, blob(8192, Shape::of(140)), a, 0, 0),
        "the whole is 3-D, the part 1-D");
  CHECK(infer::vk::record_slice_part(rec, a, part, 0, 4).ok());
  fails(infer::vk::record_slice_part(rec, a, part, -3, 10),
        "a part of 4 at offset 10 does not fit axis 0 of extent 12");

  CHECK(infer::vk::record_shuffle_channel(rec, a, b, 3, false).ok());
  fails(infer::vk::record_shuffle_channel(rec, a, b, 5, false),
        "group 5 does not divide the 12 channels of the 3-D input");
  fails(infer::vk::record_shuffle_channel(rec, a, b, 0, true),
        "group 0 does not divide the 12 channels");
  fails(infer::vk::record_shuffle_channel(rec, blob(0, Shape::of(13)), blob(8192, Shape::of(13)), 2,
                                          false),
        "group 2 does not divide the 1 channels of the 1-D input");
  fails(infer::vk::record_shuffle_channel(rec, a, blob(8192, Shape::of(7, 5, 3, 4)), 2, false),
        "differ");
}
