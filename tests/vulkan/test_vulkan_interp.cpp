// The GPU Interp kernel against a scalar definition (taps and weights in double over the values as
// stored): nearest, bilinear and bicubic, half-pixel and align-corner mapping, up and down, to a
// fixed size and by scales, extents of 1, on 3-D, 2-D (w only) and 1-D (value -> constant channel)
// inputs with odd extents, packs 1 and 4, f32 and f16 storage, the output filled with NaN first;
// then its errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/interp.hpp>
#include <limits>

#include "vulkan/support.hpp"

using infer::ElemType;
using infer::Shape;
using infer::test::RefTensor;
using infer::vk::test::g_ctx;
using infer::vk::test::host_mat;
using infer::vk::test::random_tensor;

namespace {

/// One resize, with the layer's parameters: a size when output_width and output_height are both
/// given, else the scales.
struct Case {
  Shape in;
  int resize_type = 2;
  bool align_corner = false;
  int output_width = 0, output_height = 0;
  float width_scale = 1.f, height_scale = 1.f;
};

/// The output shape as Interp's infer_shapes gives it.
Shape output_shape(const Case& k) {
  const Shape& s = k.in;
  const int w = s.dims == 1 ? 1 : s.w, h = s.dims == 1 ? 1 : s.h;
  int ow = k.output_width, oh = k.output_height;
  if (ow == 0 || oh == 0) {
    ow = int(float(w) * k.width_scale);
    oh = int(float(h) * k.height_scale);
  }
  return s.dims == 1 ? Shape::of(ow, oh, s.w) : s.dims == 2 ? Shape::of(ow, s.h)
                                                            : Shape::of(ow, oh, s.c);
}

// Keys' cubic convolution kernel with a = -0.75.
double keys(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

/// The input positions and weights of output o along an axis of `in` -> `out` positions
/// (`size_given`: the extent came from output_width/height; else `scale` made it).
std::vector<std::pair<int, double>> taps(const Case& k, int in, int out, int o, bool size_given,
                                         float scale) {
  auto clamp = [in](int i) { return std::min(std::max(i, 0), in - 1); };
  if (k.resize_type == 1) {  // ncnn's float arithmetic, which the index depends on exactly
    const float ratio = size_given ? float(in) / float(out) : 1.f / scale;
    return {{std::min(int(float(o) * ratio), in - 1), 1.0}};
  }
  const double src = k.align_corner ? (out > 1 ? o * double(in - 1) / double(out - 1) : 0.0)
                                    : (o + 0.5) * double(in) / double(out) - 0.5;
  if (k.resize_type == 2) {
    const double s = std::min(std::max(src, 0.0), double(in - 1));
    const int i0 = int(std::floor(s));
    return {{i0, 1 - (s - i0)}, {clamp(i0 + 1), s - i0}};
  }
  std::vector<std::pair<int, double>> t;
  const int i0 = int(std::floor(src));
  for (int d = -1; d <= 2; ++d) t.push_back({clamp(i0 + d), keys(src - (i0 + d))});
  return t;
}

RefTensor reference(const Case& k, const RefTensor& in) {
  const Shape s = in.shape, o = output_shape(k);
  RefTensor out(o);
  if (s.dims == 1) {
    for (int c = 0; c < o.c; ++c)
      for (int y = 0; y < o.h; ++y)
        for (int x = 0; x < o.w; ++x) out.at(x, y, 0, c) = in.at(c);
    return out;
  }
  const bool flat = s.dims == 2;  // each row resized along w alone
  const int channels = flat ? 1 : s.c, rows = flat ? s.h : o.h;
  for (int c = 0; c < channels; ++c)
    for (int y = 0; y < rows; ++y) {
      const auto ty = flat ? std::vector<std::pair<int, double>>{{y, 1.0}}
                           : taps(k, s.h, o.h, y, k.output_height != 0, k.height_scale);
      for (int x = 0; x < o.w; ++x) {
        const auto tx = taps(k, s.w, o.w, x, k.output_width != 0, k.width_scale);
        double sum = 0;
        for (auto [iy, wy] : ty)
          for (auto [ix, wx] : tx) sum += wy * wx * in.at(ix, iy, 0, flat ? 0 : c);
        out.at(x, y, 0, c) = float(sum);
      }
    }
  return out;
}

/// Values rounded as `type` stores them.
std::vector<float> stored(const std::vector<float>& v, ElemType type) {
  if (type == ElemType::f32) return v;
  std::vector<float> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = infer::f16_to_f32(infer::f32_to_f16(v[i]));
  return r;
}

/// Runs one case on the device at (type, pack), the output NaN before; returns it as f32.
RefTensor run_gpu(const Case& k, const RefTensor& in, ElemType type, int pack,
                  infer::vk::PipelineCache& cache) {
  infer::vk::Context& ctx = *g_ctx;
  const Shape out_shape = output_shape(k);
  const infer::Mat host_in = host_mat(in, type, pack);
  const infer::Mat host_nan =
      host_mat(RefTensor(out_shape, std::numeric_limits<float>::quiet_NaN()), type, pack);
  const std::size_t total = host_in.bytes() + host_nan.bytes() + 1024;
  auto dev = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::device);
  auto staging = infer::vk::Buffer::create(ctx, total, infer::vk::MemoryKind::staging);
  REQUIRE(dev.ok());
  REQUIRE(staging.ok());
  const std::size_t out_at = (host_in.bytes() + 255) / 256 * 256;
  const infer::vk::VkMat d_in(dev->get(), 0, host_in.shape(), type, pack);
  const infer::vk::VkMat d_out(dev->get(), out_at, out_shape, type, pack);
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  REQUIRE(infer::vk::upload(**cmd, host_in, **staging, 0, d_in).ok());
  REQUIRE(infer::vk::upload(**cmd, host_nan, **staging, out_at, d_out).ok());
  REQUIRE((*cmd)->barrier().ok());
  infer::vk::CommandRecorder recorder(**cmd, cache);
  const infer::Status rec = infer::vk::record_interp(
      recorder, d_in, d_out, k.resize_type, k.align_corner,
      k.output_width != 0 ? 0.f : k.width_scale, k.output_height != 0 ? 0.f : k.height_scale);
  INFO((rec.ok() ? std::string() : rec.message()));
  REQUIRE(rec.ok());
  REQUIRE((*cmd)->barrier().ok());
  REQUIRE(infer::vk::download(**cmd, d_out, **staging, 0).ok());
  REQUIRE((*cmd)->end().ok());
  const infer::Status ran = (*cmd)->submit_and_wait();
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  infer::Mat out;
  REQUIRE(infer::vk::read_back(**staging, 0, d_out, out).ok());
  return infer::test::from_mat(out);
}

/// The extent the pack splits: c of a 3-D blob, h of a 2-D one, w of a 1-D one.
int packed_extent(const Shape& s) { return s.dims == 3 ? s.c : s.dims == 2 ? s.h : s.w; }

}  // namespace

TEST_CASE("Vulkan interp matches the scalar definition", "[vulkan][interp]") {
  auto sized = [](Shape in, int type, bool align, int ow, int oh) {
    return Case{in, type, align, ow, oh, 1.f, 1.f};
  };
  auto scaled = [](Shape in, int type, bool align, float ws, float hs) {
    return Case{in, type, align, 0, 0, ws, hs};
  };
  std::vector<Case> cases;
  for (int type : {1, 2, 3})
    for (bool align : {false, true}) {
      cases.push_back(sized(Shape::of(7, 5, 8), type, align, 13, 11));   // up
      cases.push_back(sized(Shape::of(17, 13, 4), type, align, 6, 5));   // down
      cases.push_back(sized(Shape::of(9, 6, 3), type, align, 4, 14));    // down w, up h
      cases.push_back(sized(Shape::of(1, 6, 4), type, align, 5, 1));     // extents of 1
      cases.push_back(scaled(Shape::of(5, 7, 12), type, align, 2.f, 1.5f));
      cases.push_back(scaled(Shape::of(11, 9, 4), type, align, 0.5f, 0.34f));
      cases.push_back(sized(Shape::of(9, 8), type, align, 5, 3));        // 2-D: w only
      cases.push_back(scaled(Shape::of(6, 12), type, align, 2.5f, 7.f));
    }
  cases.push_back(scaled(Shape::of(8), 2, false, 3.f, 2.f));  // 1-D: constant channels
  cases.push_back(sized(Shape::of(5), 1, false, 4, 3));
  cases.push_back(scaled(Shape::of(13, 10, 4), 1, false, 3.f, 0.3f));  // nearest ratio 1/scale
  infer::vk::PipelineCache cache(*g_ctx);
  unsigned seed = 1;
  for (const Case& k : cases) {
    const Shape out_shape = output_shape(k);
    for (ElemType type : {ElemType::f32, ElemType::f16}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      const RefTensor raw = random_tensor(k.in, ++seed);
      RefTensor in(raw.shape);
      in.v = stored(raw.v, type);
      const RefTensor want = reference(k, in);
      for (int pack : {1, 4}) {
        if (packed_extent(k.in) % pack) continue;
        const RefTensor got = run_gpu(k, in, type, pack, cache);
        REQUIRE(got.v.size() == want.v.size());
        // f32: taps in another order and precision; f16: the output rounded to 11 bits.
        const auto [bad, first] =
            infer::vk::test::mismatches(got.v, want.v, type == ElemType::f32 ? 1e-4f : 4e-3f);
        INFO(fmt::format("resize_type {} align_corner {} {}-D {}x{}x{} -> {}x{}x{} (size {}x{}, "
                         "scales {}x{}), {} pack {}: {} wrong, first at {}: got {} want {}",
                         k.resize_type, k.align_corner, k.in.dims, k.in.w, k.in.h, k.in.c,
                         out_shape.w, out_shape.h, out_shape.c, k.output_width, k.output_height,
                         k.width_scale, k.height_scale, infer::to_string(type), pack, bad, first,
                         got.v[first], want.v[first]));
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("Vulkan interp rejects what does not fit, saying what", "[vulkan][interp][errors]") {
  infer::vk::Context& ctx = *g_ctx;
  infer::vk::PipelineCache cache(ctx);
  auto buf = infer::vk::Buffer::create(ctx, 1 << 16, infer::vk::MemoryKind::device);
  REQUIRE(buf.ok());
  auto cmd = infer::vk::Command::create(ctx);
  REQUIRE(cmd.ok());
  REQUIRE((*cmd)->begin().ok());
  infer::vk::CommandRecorder rec(**cmd, cache);
  auto blob = [&](Shape s, std::size_t at, int pack = 1, ElemType type = ElemType::f32) {
    return infer::vk::VkMat(buf->get(), at, s, type, pack);
  };
  const infer::vk::VkMat in = blob(Shape::of(5, 5, 4), 0), out = blob(Shape::of(9, 7, 4), 8192);
  CHECK(infer::vk::record_interp(rec, in, out, 2, false).ok());
  auto message = [&](const infer::vk::VkMat& b, const infer::vk::VkMat& t, int type,
                     float ws = 0.f) {
    const infer::Status s = infer::vk::record_interp(rec, b, t, type, false, ws);
    REQUIRE_FALSE(s.ok());
    return s.message();
  };
  CHECK_THAT(message(in, out, 0), Catch::Contains("resize_type 0"));
  CHECK_THAT(message(in, out, 4), Catch::Contains("resize_type 4"));
  CHECK_THAT(message(in, blob(Shape::of(9, 7, 8), 8192), 1),
             Catch::Contains("3-D input of 4 channels"));
  CHECK_THAT(message(in, blob(Shape::of(9, 7), 8192), 1), Catch::Contains("got 2-D"));
  CHECK_THAT(message(blob(Shape::of(5, 5, 1, 4), 0), out, 1), Catch::Contains("1 to 3 dims"));
  CHECK_THAT(message(in, blob(Shape::of(9, 7, 4), 8192, 4), 1), Catch::Contains("pack 4"));
  CHECK_THAT(message(in, blob(Shape::of(9, 7, 4), 8192, 1, ElemType::f16), 1),
             Catch::Contains("differ"));
  CHECK_THAT(message(blob(Shape::of(5, 5, 8), 0, 8), blob(Shape::of(9, 7, 8), 8192, 8), 1),
             Catch::Contains("pack 8"));
  CHECK_THAT(message(in, out, 1, -2.f), Catch::Contains("must be positive"));
}
