// What the Vulkan tests share: the device, host Mats of a reference tensor at any type and pack,
// and a round trip (upload, record, download) through device memory.
#pragma once

#include <catch2/catch.hpp>
#include <infer/convert.hpp>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/transfer.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/ref_tensor.hpp"

namespace infer::vk::test {

/// The device the tests run on (set by main before any test).
inline infer::vk::Context* g_ctx = nullptr;

/// The values of a GPU output off the reference by more than `tol` times the reference's largest
/// magnitude (at least 1; NaN counts as off): how many, and the first one's index (0: none).
struct Mismatches {
  std::size_t bad = 0, first = 0;
};
inline Mismatches mismatches(const std::vector<float>& got, const std::vector<float>& want,
                             double tol) {
  double scale = 1.0;
  for (float v : want) scale = std::max(scale, double(std::abs(v)));
  Mismatches m;
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i)
    if (!(std::abs(double(got[i]) - double(want[i])) <= tol * scale) && m.bad++ == 0) m.first = i;
  return m;
}

/// A host Mat of `shape` at (type, pack) holding `values` (logical order, c-h-w).
inline infer::Mat host_mat(const infer::test::RefTensor& t, infer::ElemType type, int pack) {
  infer::Mat f32 = infer::test::to_mat(t), out;
  REQUIRE(infer::convert(f32, out, type, pack, infer::Option{}).ok());
  REQUIRE(out.elempack() == pack);
  return out;
}

inline infer::test::RefTensor random_tensor(infer::Shape s, unsigned seed, float lo = -3.f, float hi = 3.f) {
  infer::test::RefTensor t(s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& v : t.v) v = d(rng);
  return t;
}

/// A host Mat of this shape, type and pack whose every stored value (padding included) is NaN:
/// an output a kernel must overwrite.
inline infer::Mat nan_mat(const infer::Shape& s, infer::ElemType type, int pack) {
  infer::Mat m(s, type, pack);
  if (type == infer::ElemType::f16) {
    auto* p = static_cast<std::uint16_t*>(m.data());
    std::fill(p, p + m.bytes() / 2, std::uint16_t(0x7E00));
  } else {
    auto* p = static_cast<float*>(m.data());
    std::fill(p, p + m.bytes() / 4, std::numeric_limits<float>::quiet_NaN());
  }
  return m;
}

/// Uploads `host`, runs `record` on the device copy, downloads it.
template <class F>
inline infer::Mat round_trip(const infer::Mat& host, F&& record) {
  infer::vk::Context& ctx = *g_ctx;
  const std::size_t bytes = host.bytes();
  auto dev = infer::vk::Buffer::create(ctx, bytes + 256, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, 2 * bytes + 256, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  const infer::vk::VkMat blob(dev->get(), 64, host.shape(), host.type(), host.elempack());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  REQUIRE(infer::vk::upload(**cmd, host, **staging, 0, blob).ok());
  REQUIRE((*cmd)->barrier().ok());
  record(**cmd, blob);
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, blob, **staging, bytes).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, bytes, blob, out).ok());
  return out;
}

/// Uploads `hosts` (one device buffer, each blob 256-byte aligned), records `record` over their
/// device copies and returns the blobs `results` as they are afterwards.
template <class F>
inline std::vector<infer::test::RefTensor> run_on_device(const std::vector<infer::Mat>& hosts,
                                                         const std::vector<std::size_t>& results,
                                                         infer::vk::PipelineCache& cache,
                                                         F&& record) {
  infer::vk::Context& ctx = *g_ctx;
  std::vector<std::size_t> at;
  std::size_t bytes = 0;
  for (const infer::Mat& m : hosts) {
    at.push_back(bytes);
    bytes += (m.bytes() + 255) / 256 * 256;
  }
  auto dev = infer::vk::Buffer::create(ctx, bytes, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, bytes, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  std::vector<infer::vk::VkMat> blobs;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    blobs.emplace_back(dev->get(), at[i], hosts[i].shape(), hosts[i].type(), hosts[i].elempack());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  for (std::size_t i = 0; i < hosts.size(); ++i)
    REQUIRE(infer::vk::upload(**cmd, hosts[i], **staging, at[i], blobs[i]).ok());
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  const infer::Status rec = record(recorder, std::as_const(blobs));
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  for (std::size_t r : results)
    REQUIRE(infer::vk::download(**cmd, blobs[r], **staging, at[r]).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  std::vector<infer::test::RefTensor> got;
  for (std::size_t r : results) {
    infer::Mat out;
    REQUIRE(infer::vk::read_back(**staging, at[r], blobs[r], out).ok());
    got.push_back(infer::test::from_mat(out));
  }
  return got;
}

/// run_on_device with one result: blob `result`.
template <class F>
inline infer::test::RefTensor run_on_device(const std::vector<infer::Mat>& hosts, std::size_t result,
                                            infer::vk::PipelineCache& cache, F&& record) {
  return run_on_device(hosts, std::vector<std::size_t>{result}, cache, std::forward<F>(record))[0];
}

/// A device as a kernel sees it, with the features a test names, that records nothing: counts
/// dispatches and barriers, and keeps each dispatch's shader name, workgroup size and count.
struct FakeDevice {
  std::string_view name = "fake device";
  bool fp16_storage = true;
  bool cooperative_matrix = false;
  std::uint32_t max_shared_memory = 16384;
};
class FakeRecorder final : public infer::vk::Recorder {
 public:
  explicit FakeRecorder(FakeDevice d) : d_(d) {}
  std::string_view device_name() const override { return d_.name; }
  bool fp16_storage() const override { return d_.fp16_storage; }
  bool cooperative_matrix() const override { return d_.cooperative_matrix; }
  std::uint32_t max_shared_memory() const override { return d_.max_shared_memory; }
  infer::Status dispatch(const infer::vk::ShaderCode& code, std::array<std::uint32_t, 3> local,
                         std::span<const infer::vk::SpecValue>,
                         std::span<const infer::vk::VkMat* const>, std::span<const std::byte>,
                         std::array<std::uint32_t, 3> groups) override {
    ++dispatches;
    recorded.push_back({std::string(code.name), local, groups});
    return {};
  }
  struct Dispatch {
    std::string shader;
    std::array<std::uint32_t, 3> local, groups;
  };
  std::vector<Dispatch> recorded;
  /// What scratch() hands out (empty: none, an error as the base recorder's).
  infer::vk::VkMat scratch_blob;
  infer::Result<infer::vk::VkMat> scratch(std::size_t bytes) override {
    if (scratch_blob.empty()) return infer::vk::Recorder::scratch(bytes);
    return scratch_blob;
  }
  infer::Status copy(const infer::vk::VkMat&, std::size_t, const infer::vk::VkMat&, std::size_t,
                     std::size_t) override {
    return {};
  }
  infer::Status barrier() override {
    ++barriers;
    return {};
  }
  int dispatches = 0, barriers = 0;

 private:
  FakeDevice d_;
};

}  // namespace infer::vk::test
