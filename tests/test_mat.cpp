// Mat, allocators and the conversions between layouts and storage types.
#include <catch2/catch.hpp>
#include <cstdint>
#include <infer/convert.hpp>
#include <infer/mat.hpp>
#include <numeric>
#include <random>

#include "support/ref_tensor.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;

TEST_CASE("Mat packs the packing axis and aligns channels", "[mat]") {
  Mat m(Shape::of(5, 3, 24), ElemType::f32, 8);
  REQUIRE(m.dims() == 3);
  REQUIRE(m.c() == 3);
  REQUIRE(m.elempack() == 8);
  REQUIRE(m.elemsize() == 32);
  REQUIRE(m.shape() == Shape::of(5, 3, 24));
  for (int q = 0; q < m.c(); ++q)
    REQUIRE(reinterpret_cast<std::uintptr_t>(m.channel_data(q)) % infer::kAlignment == 0);
  Mat r(Shape::of(7, 16), ElemType::f16, 4);  // 2-D packs h
  REQUIRE(r.h() == 4);
  REQUIRE(r.w() == 7);
  Mat v(Shape::of(48), ElemType::bf16, 16);  // 1-D packs w
  REQUIRE(v.w() == 3);
  Mat f(Shape::of(2, 3, 4, 5), ElemType::i8, 1);
  REQUIRE(f.cstep() % infer::kAlignment == 0);
  REQUIRE(f.cstep() >= 2 * 3 * 4);
}

TEST_CASE("Mat::create rejects bad requests with a message", "[mat]") {
  Mat m;
  auto s = m.create(Shape::of(5, 3, 20), ElemType::f32, 8);
  REQUIRE_FALSE(s.ok());
  REQUIRE_THAT(s.message(), Catch::Contains("not a multiple of elempack 8"));
  REQUIRE_THAT(m.create(Shape::of(0, 3), ElemType::f32, 1).message(),
               Catch::Contains("extents must be positive"));
  REQUIRE_THAT(m.create(Shape::of(4), ElemType::f32, 3).message(),
               Catch::Contains("elempack must be 1, 4, 8 or 16"));
  REQUIRE_THAT(m.create(Shape::of(1 << 30, 1 << 30, 1 << 20), ElemType::f32, 1).message(),
               Catch::Contains("1 TiB"));
  REQUIRE_THROWS_AS(Mat(Shape::of(3, 3, 5), ElemType::f32, 4), std::invalid_argument);
}

TEST_CASE("Mat shares storage, views borrow it, clone copies it", "[mat]") {
  infer::CountingAllocator counter;
  {
    Mat a(Shape::of(4, 4, 6), ElemType::f32, 1, &counter);
    REQUIRE(counter.allocations() == 1);
    a.fill(2.f);
    Mat b = a;  // shared
    b.data_as<float>()[0] = 7.f;
    REQUIRE(a.data_as<float>()[0] == 7.f);
    Mat ch = a.channel(2);  // view
    REQUIRE(ch.dims() == 2);
    REQUIRE(ch.data() == a.channel_data(2));
    Mat range = a.channel_range(1, 3);
    REQUIRE(range.c() == 3);
    REQUIRE(range.data() == a.channel_data(1));
    auto c = a.clone(&counter);
    REQUIRE(c.ok());
    REQUIRE(counter.allocations() == 2);
    c->data_as<float>()[0] = 1.f;
    REQUIRE(a.data_as<float>()[0] == 7.f);
    // Re-creating with the same shape keeps the memory: the graph relies on it.
    void* before = a.data();
    REQUIRE(a.create(Shape::of(4, 4, 6), ElemType::f32, 1, &counter).ok());
    REQUIRE(a.data() == before);
    REQUIRE(counter.allocations() == 2);
  }
  REQUIRE(counter.deallocations() == 2);
  REQUIRE(counter.live_bytes() == 0);
}

TEST_CASE("Mat wraps external memory and reshapes", "[mat]") {
  std::vector<float> buf(2 * 3 * 4);
  std::iota(buf.begin(), buf.end(), 0.f);
  Mat w = Mat::wrap(buf.data(), Shape::of(4, 3, 2));
  REQUIRE(w.data() == buf.data());
  REQUIRE(w.dense());
  auto flat = w.reshape_view(Shape::of(24));
  REQUIRE(flat.ok());
  REQUIRE(flat->data_as<float>()[23] == 23.f);
  // A padded Mat cannot be a flat view; reshape copies it.
  Mat padded(Shape::of(3, 3, 4));
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 9; ++i) static_cast<float*>(padded.channel_data(q))[i] = float(q * 9 + i);
  REQUIRE_FALSE(padded.reshape_view(Shape::of(36)).ok());
  auto copy = padded.reshape(Shape::of(6, 6));
  REQUIRE(copy.ok());
  for (int i = 0; i < 36; ++i) REQUIRE(copy->data_as<float>()[i] == float(i));
  REQUIRE_THAT(padded.reshape(Shape::of(35)).message(), Catch::Contains("cannot become 35"));
}

TEST_CASE("PoolAllocator reuses freed blocks", "[allocator]") {
  infer::CountingAllocator upstream;
  infer::PoolAllocator pool(&upstream);
  void* a = pool.allocate(1000);
  pool.deallocate(a, 1000);
  void* b = pool.allocate(900);  // fits the freed block
  REQUIRE(b == a);
  void* c = pool.allocate(100);  // too small a request for the only block in use: a new one
  REQUIRE(c != a);
  REQUIRE(upstream.allocations() == 2);
  pool.deallocate(b, 900);
  pool.deallocate(c, 100);
  REQUIRE(pool.free_blocks() == 2);
  pool.clear();
  REQUIRE(upstream.live_bytes() == 0);
}

namespace {
/// Logical value at (x, y, z, ch) computed from the position, so layouts can be checked exactly.
float tag(int x, int y, int z, int c) { return float(((c * 7 + z) * 11 + y) * 13 + x); }
}  // namespace

TEST_CASE("convert_packing round-trips every width on every dims", "[convert]") {
  const Shape shapes[] = {Shape::of(48),       Shape::of(5, 32),    Shape::of(3, 24),
                          Shape::of(7, 5, 48), Shape::of(1, 1, 16), Shape::of(3, 2, 4, 32),
                          Shape::of(5, 3, 12), Shape::of(9, 20)};
  for (const Shape& s : shapes) {
    infer::test::RefTensor t(s);
    for (int c = 0; c < s.c; ++c)
      for (int z = 0; z < s.d; ++z)
        for (int y = 0; y < s.h; ++y)
          for (int x = 0; x < s.w; ++x) t.at(x, y, z, c) = tag(x, y, z, c);
    for (ElemType type : {ElemType::f32, ElemType::f16, ElemType::bf16}) {
      Mat plain;
      REQUIRE(infer::cast(infer::test::to_mat(t), plain, type, {}).ok());
      for (int from : {1, 4, 8, 16}) {
        for (int to : {1, 4, 8, 16}) {
          for (int threads : {1, 2}) {
            Option opt;
            opt.num_threads = threads;
            Mat a, b;
            REQUIRE(infer::convert_packing(plain, a, from, opt).ok());
            REQUIRE(a.elempack() == infer::pack_for(s.packed_extent(), from));
            REQUIRE(infer::convert_packing(a, b, to, opt).ok());
            REQUIRE(b.elempack() == infer::pack_for(s.packed_extent(), to));
            // Check the packed layout itself, not only the round trip.
            if (s.dims == 3 && type == ElemType::f32) {
              const int p = b.elempack();
              const float* base = b.data_as<float>();
              const int ch = s.c - 1, y = s.h - 1, x = s.w - 1;
              const float got = base[(ch / p) * b.cstep() * p + (y * s.w + x) * p + ch % p];
              REQUIRE(got == tag(x, y, 0, ch));
            }
            const auto back = infer::test::from_mat(b);
            INFO("dims " << s.dims << " from " << from << " to " << to);
            REQUIRE(back.shape == s);
            std::vector<float> want = t.v;  // large tags round in f16 and bf16
            for (float& x : want) {
              if (type == ElemType::f16) x = infer::f16_to_f32(infer::f32_to_f16(x));
              if (type == ElemType::bf16) x = infer::bf16_to_f32(infer::f32_to_bf16(x));
            }
            REQUIRE(back.v == want);
          }
        }
      }
    }
  }
}

TEST_CASE("cast converts storage types with per-tensor and per-channel int8 scales", "[convert]") {
  const Shape s = Shape::of(9, 5, 16);
  infer::test::RefTensor t(s);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  for (float& v : t.v) v = d(rng);
  Mat src = infer::test::to_mat(t);
  for (int pack : {1, 4, 8, 16}) {
    Mat packed;
    REQUIRE(infer::convert_packing(src, packed, pack, {}).ok());
    // f16 and bf16 match the scalar conversion of each value.
    for (ElemType type : {ElemType::f16, ElemType::bf16}) {
      Mat half, back;
      REQUIRE(infer::cast(packed, half, type, {}).ok());
      REQUIRE(infer::cast(half, back, ElemType::f32, {}).ok());
      const auto r = infer::test::from_mat(back);
      for (std::size_t i = 0; i < t.v.size(); ++i) {
        const float want = type == ElemType::f16 ? infer::f16_to_f32(infer::f32_to_f16(t.v[i]))
                                                 : infer::bf16_to_f32(infer::f32_to_bf16(t.v[i]));
        REQUIRE(r.v[i] == want);
      }
    }
    // Per-tensor and per-channel scales: q = clamp(round(v * scale)), v' = q / scale.
    std::vector<float> per_channel(16);
    for (int c = 0; c < 16; ++c) per_channel[std::size_t(c)] = 10.f + 3.f * c;
    for (bool channelwise : {false, true}) {
      std::vector<float> scales = channelwise ? per_channel : std::vector<float>{40.f};
      Mat q, back;
      REQUIRE(infer::cast(packed, q, ElemType::i8, {}, scales).ok());
      REQUIRE(infer::cast(q, back, ElemType::f32, {}, scales).ok());
      const auto r = infer::test::from_mat(back);
      for (int c = 0; c < s.c; ++c) {
        const float sc = channelwise ? per_channel[std::size_t(c)] : 40.f;
        for (int i = 0; i < s.w * s.h; ++i) {
          const std::size_t k = std::size_t(c) * s.w * s.h + i;
          const float want = float(infer::float2int8(t.v[k] * sc)) / sc;
          INFO("pack " << pack << " channel " << c << " value " << t.v[k]);
          REQUIRE(r.v[k] == Approx(want).margin(1e-6));
        }
      }
    }
  }
  Mat q;
  REQUIRE_THAT(infer::cast(src, q, ElemType::i8, {}, std::vector<float>{1, 2}).message(),
               Catch::Contains("2 scales given for a Mat of 16 channels"));
  Mat h;
  REQUIRE(infer::cast(src, h, ElemType::f16, {}).ok());
  REQUIRE_THAT(infer::cast(h, q, ElemType::i8, {}).message(),
               Catch::Contains("i8 converts only to and from f32"));
}

TEST_CASE("cast_into converts into memory of its own channel step", "[convert]") {
  // A transfer's staging memory: the device blob's layout, channel groups further apart than the
  // host Mat's; the padding between them stays as it was.
  const Shape s = Shape::of(7, 3, 8);
  infer::test::RefTensor t(s);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  for (float& v : t.v) v = d(rng);
  const Mat src = infer::test::to_mat(t);
  for (int pack : {1, 4}) {
    Mat packed;
    REQUIRE(infer::convert_packing(src, packed, pack, {}).ok());
    const std::size_t plane = 7 * 3, cstep = plane + 5, groups = std::size_t(8 / pack);
    for (ElemType type : {ElemType::f16, ElemType::bf16, ElemType::f32}) {
      std::vector<std::uint32_t> memory(cstep * groups * std::size_t(pack), 0xdeadbeefu);
      Mat staged = Mat::wrap(memory.data(), s, type, pack, cstep);
      REQUIRE(infer::cast_into(packed, staged).ok());
      // Back through a host Mat of the plain layout: each value as the scalar conversion gives.
      Mat back;
      REQUIRE(back.create(s, ElemType::f32, pack).ok());
      REQUIRE(infer::cast_into(staged, back).ok());
      Mat plain;
      REQUIRE(infer::convert_packing(back, plain, 1, {}).ok());
      const auto r = infer::test::from_mat(plain);
      for (std::size_t i = 0; i < t.v.size(); ++i) {
        const float want = type == ElemType::f16    ? infer::f16_to_f32(infer::f32_to_f16(t.v[i]))
                           : type == ElemType::bf16 ? infer::bf16_to_f32(infer::f32_to_bf16(t.v[i]))
                                                    : t.v[i];
        INFO("pack " << pack << " type " << infer::to_string(type) << " value " << i);
        REQUIRE(r.v[i] == want);
      }
      // The padding after each group's values is untouched.
      const std::size_t es = infer::elem_size(type);
      const std::vector<std::uint32_t> pristine(memory.size(), 0xdeadbeefu);
      const auto* bytes = reinterpret_cast<const unsigned char*>(memory.data());
      const auto* fill = reinterpret_cast<const unsigned char*>(pristine.data());
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t pad = (g * cstep + plane) * std::size_t(pack) * es;
        REQUIRE(bytes[pad] == fill[pad]);
      }
    }
  }
  Mat q;
  REQUIRE(q.create(s, ElemType::i8, 1).ok());
  REQUIRE_THAT(infer::cast_into(src, q).message(), Catch::Contains("f32 to i8 is not a float"));
  Mat other;
  REQUIRE(other.create(Shape::of(7, 3, 4), ElemType::f16, 1).ok());
  REQUIRE_THAT(infer::cast_into(src, other).message(), Catch::Contains("differ in shape or pack"));
}
