// The GPU pooling kernel against a scalar definition over the CPU kernel's window description
// (kernels::PoolAxis::span): max and average, padded windows (an average counting only the
// positions its bounds allow, a max seeing the pad value), strides, adaptive windows, global
// pooling to a 1-D blob, packs 1 and 4, f32 and f16 storage; then its errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/pooling.hpp>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::kernels::PoolAxis;
using infer::test::RefTensor;
using infer::vk::PoolType;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;

namespace {

int outputs(const PoolAxis& a, int pad_after) {
  if (a.adaptive_out > 0) return a.adaptive_out;
  return (a.in + a.pad + pad_after - a.kernel) / a.stride + 1;
}

RefTensor reference(const RefTensor& in, PoolType type, const PoolAxis& x, const PoolAxis& y,
                    int outw, int outh) {
  RefTensor out(Shape::of(outw, outh, in.shape.c));
  for (int c = 0; c < in.shape.c; ++c)
    for (int oy = 0; oy < outh; ++oy)
      for (int ox = 0; ox < outw; ++ox) {
        const auto sx = x.span(ox), sy = y.span(oy);
        double sum = 0, m = -std::numeric_limits<double>::infinity();
        for (int iy = sy.begin; iy < sy.end; ++iy)
          for (int ix = sx.begin; ix < sx.end; ++ix) {
            sum += in.at(ix, iy, 0, c);
            m = std::max(m, double(in.at(ix, iy, 0, c)));
          }
        if (sx.padded || sy.padded) m = std::max(m, double(std::numeric_limits<float>::lowest()));
        out.at(ox, oy, 0, c) =
            float(type == PoolType::average ? sum / double(sx.count * sy.count) : m);
      }
  return out;
}

RefTensor run_gpu(const RefTensor& in, PoolType type, const PoolAxis& x, const PoolAxis& y,
                  const Shape& out_shape, ElemType etype, int pack,
                  infer::vk::PipelineCache& cache) {
  infer::vk::Context& ctx = *g_ctx;
  const infer::Mat host = host_mat(in, etype, pack);
  const std::size_t out_bytes = infer::packed_layout(out_shape, etype, pack).bytes;
  const std::size_t in_at = 0, out_at = (host.bytes() + 255) / 256 * 256;
  auto dev = infer::vk::Buffer::create(ctx, out_at + out_bytes, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, out_at + out_bytes, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  const infer::vk::VkMat d_in(dev->get(), in_at, host.shape(), etype, pack);
  const infer::vk::VkMat d_out(dev->get(), out_at, out_shape, etype, pack);
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  REQUIRE(infer::vk::upload(**cmd, host, **staging, 0, d_in).ok());
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  const infer::Status rec = infer::vk::record_pooling(recorder, d_in, d_out, type, x, y);
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, d_out, **staging, 0).ok());
  REQUIRE((*cmd)->end().ok());
  REQUIRE((*cmd)->submit_and_wait().ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, 0, d_out, out).ok());
  return infer::test::from_mat(out);
}

PoolAxis sliding(int in, int kernel, int stride, int pad) {
  return {.in = in, .kernel = kernel, .stride = stride, .pad = pad};
}

}  // namespace

TEST_CASE("Vulkan pooling matches the scalar definition", "[vulkan][pooling]") {
  struct Case {
    int w, h, c;
    PoolAxis x, y;
    int pad_after;  // sliding windows: the padding after the input (ncnn's full mode adds a tail)
    const char* what;
  };
  PoolAxis counted_x = sliding(13, 3, 2, 1), counted_y = sliding(11, 3, 2, 1);
  counted_x.count_begin = counted_y.count_begin = 0;  // averages count only the input
  counted_x.count_end = 13;
  counted_y.count_end = 11;
  const Case cases[] = {
      {12, 10, 8, sliding(12, 2, 2, 0), sliding(10, 2, 2, 0), 0, "2x2 stride 2"},
      {13, 11, 4, sliding(13, 3, 2, 1), sliding(11, 3, 2, 1), 1, "3x3 stride 2 pad 1"},
      {13, 11, 4, counted_x, counted_y, 1, "3x3 stride 2 pad 1, count without pad"},
      {9, 7, 5, sliding(9, 3, 1, 1), sliding(7, 3, 1, 1), 1, "3x3 stride 1 pad 1, 5 channels"},
      {14, 14, 8, sliding(14, 3, 2, 0), sliding(14, 3, 2, 0), 1, "3x3 stride 2, ceil tail"},
      {10, 9, 4, {.in = 10, .adaptive_out = 3}, {.in = 9, .adaptive_out = 4}, 0, "adaptive 3x4"},
  };
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 40;
  for (const Case& k : cases)
    for (PoolType type : {PoolType::max, PoolType::average})
      for (ElemType etype : {ElemType::f32, ElemType::f16}) {
        if (etype == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
        const RefTensor raw = random_tensor(Shape::of(k.w, k.h, k.c), ++seed);
        RefTensor in(raw.shape);
        in.v = infer::test::from_mat(host_mat(raw, etype, 1)).v;  // as stored
        const int outw = outputs(k.x, k.pad_after), outh = outputs(k.y, k.pad_after);
        const RefTensor want = reference(in, type, k.x, k.y, outw, outh);
        for (int pack : {1, 4}) {
          if (k.c % pack) continue;
          const RefTensor got =
              run_gpu(in, type, k.x, k.y, Shape::of(outw, outh, k.c), etype, pack, cache);
          const float tol = etype == ElemType::f32 ? 1e-5f : 4e-3f;
          std::size_t bad = 0, first = 0;
          for (std::size_t i = 0; i < want.v.size(); ++i)
            if (std::abs(got.v[i] - want.v[i]) > tol * (1 + std::abs(want.v[i])) && bad++ == 0)
              first = i;
          INFO(fmt::format("{} {} {} pack {}: {} wrong, first at {}: got {} want {}", k.what,
                           type == PoolType::max ? "max" : "avg", infer::to_string(etype), pack,
                           bad, first, got.v[first], want.v[first]));
          CHECK(bad == 0);
        }
      }
}

TEST_CASE("Vulkan global pooling writes a 1-D blob of channels", "[vulkan][pooling]") {
  // The whole input (a workgroup per channel: 7x7, and 37x29 with more pixels than invocations),
  // adaptive to 1x1 (the same), and a padded window (the general kernel).
  infer::vk::PipelineCache cache(*g_ctx);
  struct Global {
    int w, h, c;
    PoolAxis x, y;
  };
  const Global cases[] = {
      {7, 7, 16, sliding(7, 7, 1, 0), sliding(7, 7, 1, 0)},
      {37, 29, 20, sliding(37, 37, 1, 0), sliding(29, 29, 1, 0)},
      {37, 29, 20, {.in = 37, .adaptive_out = 1}, {.in = 29, .adaptive_out = 1}},
      {5, 5, 8, sliding(5, 7, 1, 1), sliding(5, 7, 1, 1)},
  };
  unsigned seed = 77;
  for (const Global& g : cases) {
    const RefTensor in = random_tensor(Shape::of(g.w, g.h, g.c), ++seed);
    for (PoolType type : {PoolType::max, PoolType::average})
      for (int pack : {1, 4}) {
        const RefTensor got =
            run_gpu(in, type, g.x, g.y, Shape::of(g.c), ElemType::f32, pack, cache);
        const RefTensor want = reference(in, type, g.x, g.y, 1, 1);
        REQUIRE(got.v.size() == std::size_t(g.c));
        for (int c = 0; c < g.c; ++c) {
          CAPTURE(g.w, g.h, c, pack, int(type));
          CHECK(std::abs(got.v[std::size_t(c)] - want.v[std::size_t(c)]) < 1e-5f);
        }
      }
  }
}

TEST_CASE("Vulkan pooling rejects what does not fit, saying what", "[vulkan][pooling][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  const infer::vk::VkMat in(buf->get(), 0, Shape::of(8, 8, 4), ElemType::f32, 1);
  const infer::vk::VkMat out(buf->get(), 8192, Shape::of(4, 4, 4), ElemType::f32, 1);
  const infer::vk::VkMat out_c(buf->get(), 8192, Shape::of(4, 4, 8), ElemType::f32, 1);
  const PoolAxis a = sliding(8, 2, 2, 0);
  infer::vk::CommandRecorder rec(**cmd, cache);
  CHECK(infer::vk::record_pooling(rec, in, out, PoolType::max, a, a).ok());
  const infer::Status channels = infer::vk::record_pooling(rec, in, out_c, PoolType::max, a, a);
  REQUIRE_FALSE(channels.ok());
  CHECK_THAT(channels.message(), Catch::Contains("4 input channels, 8 output channels"));
  const infer::Status size =
      infer::vk::record_pooling(rec, in, out, PoolType::max, sliding(9, 2, 2, 0), a);
  REQUIRE_FALSE(size.ok());
  CHECK_THAT(size.message(), Catch::Contains("windows over 9x8, input is 8x8"));
}
