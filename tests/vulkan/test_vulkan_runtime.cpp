// The Vulkan runtime on whatever device the loader offers (Mesa's lavapipe in CI): device choice
// and its errors, buffers and the upload/download round trip of every layout, the activation
// kernel against a scalar reference at f32 and f16 storage and several packs, the dispatch
// checks, and a blob larger than one row of workgroups. Without a device the executable reports
// itself skipped (exit code 77, ctest's SKIP_RETURN_CODE), never passed. The kernels' own
// tests (test_vulkan_*.cpp) link into the same executable.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/transfer.hpp>
#include <memory>
#include <random>

#include "support/ref_tensor.hpp"
#include "vulkan/support.hpp"

namespace {

using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;
using infer::vk::test::round_trip;

float reference(infer::vk::Activation a, float x, float p0, float p1) {
  using A = infer::vk::Activation;
  switch (a) {
    case A::relu:
    case A::leaky_relu:
      return x > 0 ? x : x * p0;
    case A::clip:
      return std::min(std::max(x, p0), p1);
    case A::sigmoid:
      return 1.f / (1.f + std::exp(-x));
    case A::mish:
      return x * std::tanh(std::log1p(std::exp(x)));
    case A::hardswish:
      return x * std::min(std::max(x * p0 + p1, 0.f), 1.f);
    case A::swish:
      return x / (1.f + std::exp(-x));
    case A::tanh:
      return std::tanh(x);
    case A::hardsigmoid:
      return std::min(std::max(x * p0 + p1, 0.f), 1.f);
    case A::scale:
      return x * p0;
    case A::elu:
      return x < 0 ? p0 * std::expm1(x) : x;
    case A::gelu:
      if (p0 != 0.f)
        return 0.5f * x * (1.f + std::tanh(0.79788456f * (x + 0.044715f * x * x * x)));
      return 0.5f * x * (1.f + std::erf(x * 0.70710678f));
    case A::none:
      return x;
  }
  return x;
}

}  // namespace

TEST_CASE("Vulkan: the device and its features are reported", "[vulkan]") {
  const auto& info = g_ctx->info();
  CHECK(!info.name.empty());
  CHECK(info.subgroup_size > 0);
  INFO(info.describe());
  auto list = infer::vk::Context::list_devices();
  REQUIRE(list.ok());
  REQUIRE(!list->empty());
  CHECK((*list)[info.index].name == info.name);
}

TEST_CASE("Vulkan: a device index past the list is an error naming the devices", "[vulkan][errors]") {
  auto list = infer::vk::Context::list_devices();
  REQUIRE(list.ok());
  auto ctx = infer::vk::Context::create({std::uint32_t(list->size())});
  REQUIRE_FALSE(ctx.ok());
  CHECK_THAT(ctx.message(), Catch::Contains("asked for, the loader lists") &&
                                Catch::Contains(g_ctx->info().name));
}

TEST_CASE("Vulkan: upload and download keep every layout", "[vulkan]") {
  for (infer::ElemType type : {infer::ElemType::f32, infer::ElemType::f16})
    for (int pack : {1, 4, 8})
      for (infer::Shape s : {infer::Shape::of(7, 5, 8), infer::Shape::of(13, 1, 16),
                             infer::Shape::of(24), infer::Shape::of(3, 3, 3, 8)}) {
        if (type == infer::ElemType::f16 && !g_ctx->info().fp16_storage) continue;
        if ((s.dims >= 3 ? s.c : s.dims == 2 ? s.h : s.w) % pack) continue;
        const infer::Mat host = host_mat(random_tensor(s, 3), type, pack);
        const infer::Mat back = round_trip(host, [](infer::vk::Command&, const infer::vk::VkMat&) {});
        INFO(host.describe());
        REQUIRE(back.bytes() == host.bytes());
        const auto a = infer::test::from_mat(host), b = infer::test::from_mat(back);
        CHECK(a.v == b.v);
      }
}

TEST_CASE("Vulkan: the activation kernel matches the scalar reference", "[vulkan]") {
  using A = infer::vk::Activation;
  struct Case {
    A act;
    float p0, p1;
  };
  const Case cases[] = {{A::relu, 0.f, 0.f},    {A::leaky_relu, 0.1f, 0.f}, {A::clip, -1.f, 2.f},
                        {A::sigmoid, 0.f, 0.f}, {A::mish, 0.f, 0.f},
                        {A::hardswish, 1.f / 6, 0.5f},  {A::swish, 0.f, 0.f},
                        {A::tanh, 0.f, 0.f},    {A::hardsigmoid, 0.2f, 0.5f},
                        {A::scale, 0.75f, 0.f}, {A::elu, 0.3f, 0.f},
                        {A::gelu, 0.f, 0.f},    {A::gelu, 1.f, 0.f}};
  infer::vk::PipelineCache cache(*g_ctx);
  for (infer::ElemType type : {infer::ElemType::f32, infer::ElemType::f16}) {
    if (type == infer::ElemType::f16 && !g_ctx->info().fp16_storage) continue;
    for (int pack : {1, 4})
      for (const Case& c : cases) {
        const auto t = random_tensor(infer::Shape::of(11, 7, 12), unsigned(int(c.act) * 7 + pack));
        const infer::Mat host = host_mat(t, type, pack);
        const auto in = infer::test::from_mat(host);  // rounded to the storage type
        const infer::Mat out = round_trip(host, [&](infer::vk::Command& cmd, const infer::vk::VkMat& b) {
          infer::vk::CommandRecorder rec(cmd, cache);
          const infer::Status s = infer::vk::record_activation(rec, b, c.act, c.p0, c.p1);
          INFO((s.ok() ? std::string() : s.message()));
          REQUIRE(s.ok());
        });
        const auto got = infer::test::from_mat(out);
        const float tol_abs = type == infer::ElemType::f32 ? 1e-5f : 2e-3f;
        const float tol_rel = type == infer::ElemType::f32 ? 1e-5f : 2e-3f;
        for (std::size_t i = 0; i < in.v.size(); ++i) {
          const float want = reference(c.act, in.v[i], c.p0, c.p1);
          if (std::abs(got.v[i] - want) > tol_abs + tol_rel * std::abs(want))
            FAIL("activation " << int(c.act) << " " << infer::to_string(type) << " pack " << pack
                               << " value " << i << ": got " << got.v[i] << " want " << want
                               << " (input " << in.v[i] << ")");
        }
      }
  }
  // One pipeline per (storage type, activation, parameters): packs share them.
  CHECK(cache.size() == (g_ctx->info().fp16_storage ? 26u : 13u));
}

TEST_CASE("Vulkan: blobs beyond one row of workgroups are covered", "[vulkan]") {
  // 65535 groups of 64 values is 4194240; this blob holds 4.5 million.
  const auto t = random_tensor(infer::Shape::of(70000, 64), 9);
  const infer::Mat host = host_mat(t, infer::ElemType::f32, 1);
  infer::vk::PipelineCache cache(*g_ctx);
  const infer::Mat out = round_trip(host, [&](infer::vk::Command& cmd, const infer::vk::VkMat& b) {
    infer::vk::CommandRecorder rec(cmd, cache);
    REQUIRE(infer::vk::record_activation(rec, b, infer::vk::Activation::relu).ok());
  });
  const auto got = infer::test::from_mat(out);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < t.v.size(); ++i) wrong += got.v[i] != std::max(t.v[i], 0.f);
  CHECK(wrong == 0);
}

TEST_CASE("Vulkan: dispatch checks its bindings and push constants", "[vulkan][errors]") {
  infer::vk::PipelineCache cache(*g_ctx);
  auto cmd = infer::vk::Command::create(*g_ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  auto buf = infer::vk::Buffer::create(*g_ctx, 4096, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  const infer::vk::VkMat m(buf->get(), 0, infer::Shape::of(16), infer::ElemType::f32, 1);
  const infer::vk::ShaderCode code{"activation.comp (f32)", infer::shaders::activation_f32, 1, 4};
  auto p = cache.get(code, {64, 1, 1}, {});
  REQUIRE(p.ok());
  const infer::vk::VkMat* two[] = {&m, &m};
  const std::uint32_t n = 16;
  const infer::Status bindings = (*cmd)->dispatch(**p, two, std::as_bytes(std::span(&n, 1)), {1, 1, 1});
  REQUIRE_FALSE(bindings.ok());
  CHECK_THAT(bindings.message(), Catch::Contains("binds 1 buffers, 2 given"));
  const infer::vk::VkMat* one[] = {&m};
  const infer::Status push = (*cmd)->dispatch(**p, one, {}, {1, 1, 1});
  REQUIRE_FALSE(push.ok());
  CHECK_THAT(push.message(), Catch::Contains("4 bytes of push constants, 0 given"));
  auto too_big = infer::vk::Buffer::create(*g_ctx, std::size_t(1) << 50, infer::vk::MemoryKind::device);
  REQUIRE_FALSE(too_big.ok());
  CHECK_THAT(too_big.message(), Catch::Contains("allocating a 1125899906842624-byte device buffer"));
  // A module that is not SPIR-V fails to build a pipeline, naming the shader.
  static const std::uint32_t junk[] = {0x12345678u, 1u, 2u, 3u, 4u, 5u};
  const infer::vk::ShaderCode bad{"junk.comp", junk, 1, 0};
  auto broken = cache.get(bad, {64, 1, 1}, {});
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.message(), Catch::Contains("junk.comp"));
}

TEST_CASE("Vulkan: a device without a feature a kernel needs is an error naming both",
          "[vulkan][errors]") {
  infer::vk::test::FakeRecorder rec({"a device without 16-bit storage", false});
  auto buf = infer::vk::Buffer::create(*g_ctx, 4096, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  const infer::vk::VkMat f16(buf->get(), 0, infer::Shape::of(16), infer::ElemType::f16, 1);
  const infer::Status s = infer::vk::record_activation(rec, f16, infer::vk::Activation::relu);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("a device without 16-bit storage") &&
                              Catch::Contains("storageBuffer16BitAccess"));
  CHECK(rec.dispatches == 0);
  // f32 needs nothing optional.
  const infer::vk::VkMat f32(buf->get(), 0, infer::Shape::of(16), infer::ElemType::f32, 1);
  CHECK(infer::vk::record_activation(rec, f32, infer::vk::Activation::relu).ok());
  CHECK(rec.dispatches == 1);
}

int main(int argc, char** argv) {
  auto ctx = infer::vk::Context::create();
  if (!ctx.ok()) {
    std::printf("SKIPPED: no Vulkan device: %s\n", ctx.message().c_str());
    return 77;
  }
  g_ctx = ctx->get();
  std::printf("Vulkan device: %s\n", g_ctx->info().describe().c_str());
  return Catch::Session().run(argc, argv);
}
