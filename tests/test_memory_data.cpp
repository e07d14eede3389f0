// MemoryData: 1-D to 4-D constant blobs with extents of 1 and packed axes that do and do not
// divide by the pack, in every float type and pack; loading raw f32 and tagged (f32, f16) data
// from .bin bytes; the 0 x 0 x 0 blob; and the errors for bad extents, load types, data sizes and
// inputs given to a layer that takes none.
#include <cstring>
#include <infer/layers/memory_data.hpp>

#include "support/layer_tester.hpp"

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::io::ModelBinFromArrays;
using infer::io::ModelBinFromMemory;
using infer::layers::MemoryData;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

MemoryData make(int w, int h, int d, int c) {
  MemoryData m;
  m.w = w;
  m.h = h;
  m.d = d;
  m.c = c;
  return m;
}

// The shape from the docs' rule (the first extents given decide the dims) and distinct values.
RefTensor expected(const MemoryData& m) {
  Shape s = m.d   ? Shape::of(m.w, m.h, m.d, m.c)
            : m.c ? Shape::of(m.w, m.h, m.c)
            : m.h ? Shape::of(m.w, m.h)
                  : Shape::of(m.w ? m.w : 1);
  RefTensor t(s);
  for (std::size_t i = 0; i < t.v.size(); ++i) t.v[i] = float(int(i % 97) - 48) * 0.25f;
  return t;
}

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
  std::vector<std::byte> b(n);
  std::memcpy(b.data(), p, n);
  return b;
}

}  // namespace

TEST_CASE("MemoryData", "[layer][memory_data]") {
  const MemoryData blobs[] = {
      make(1, 0, 0, 0),  make(7, 0, 0, 0),  make(48, 0, 0, 0),  make(5, 1, 0, 0),
      make(1, 12, 0, 0), make(9, 16, 0, 0), make(3, 20, 0, 0),  make(1, 1, 0, 1),
      make(5, 7, 0, 3),  make(1, 9, 0, 16), make(13, 1, 0, 20), make(17, 3, 0, 24),
      make(3, 4, 2, 12), make(5, 1, 3, 16), make(2, 3, 5, 7),
  };
  for (MemoryData m : blobs) {
    const RefTensor want = expected(m);
    ModelBinFromArrays mb({want.v});
    REQUIRE(m.load(mb).ok());
    LayerTester(m, fmt::format("MemoryData w={} h={} d={} c={}", m.w, m.h, m.d, m.c))
        .reference([want](const std::vector<RefTensor>& in) {
          REQUIRE(in.empty());
          return std::vector<RefTensor>{want};
        })
        .inputs({})
        .run();
  }
}

TEST_CASE("MemoryData loads raw f32 and tagged data", "[layer][memory_data]") {
  const float values[6] = {1.f, -2.f, 0.5f, 3.25f, -0.125f, 7.f};
  {  // load_type 1 (ncnn's default): raw f32, no tag
    auto bytes = bytes_of(values, sizeof values);
    ModelBinFromMemory mb(bytes);
    MemoryData m = make(3, 2, 0, 0);
    REQUIRE(m.load(mb).ok());
    REQUIRE(m.data == std::vector<float>(values, values + 6));
    REQUIRE(mb.offset() == sizeof values);
  }
  {  // load_type 0: a tag says f16 follows
    std::vector<std::byte> bytes(4 + 6 * 2 + 0);
    const std::uint32_t tag = infer::io::kTagF16;
    std::memcpy(bytes.data(), &tag, 4);
    for (int i = 0; i < 6; ++i) {
      const std::uint16_t h = infer::f32_to_f16(values[i]).bits;
      std::memcpy(bytes.data() + 4 + 2 * i, &h, 2);
    }
    ModelBinFromMemory mb(bytes);
    MemoryData m = make(1, 2, 0, 3);
    m.load_type = 0;
    REQUIRE(m.load(mb).ok());
    REQUIRE(m.data == std::vector<float>(values, values + 6));
    std::vector<Mat> tops(1);
    REQUIRE(infer::run_layer<float>(m, std::span<const Mat>(), tops, 4, Placement::out_of_place,
                                    Option{})
                .ok());
    REQUIRE(tops[0].shape() == Shape::of(1, 2, 3));
    REQUIRE(infer::test::from_mat(tops[0]).v == m.data);
  }
  {  // every extent 0: one value, nothing read
    std::vector<std::byte> none;
    ModelBinFromMemory mb(none);
    MemoryData m;
    REQUIRE(m.load(mb).ok());
    Shape out[1];
    REQUIRE(m.infer_shapes({}, out).ok());
    REQUIRE(out[0] == Shape::of(1));
    std::vector<Mat> tops(1);
    REQUIRE(infer::run_layer<float>(m, std::span<const Mat>(), tops, 4, Placement::out_of_place,
                                    Option{})
                .ok());
    REQUIRE(infer::test::from_mat(tops[0]).v == std::vector<float>{0.f});
  }
}

TEST_CASE("MemoryData rejects bad extents, load types, data and inputs", "[layer][memory_data]") {
  const struct {
    MemoryData layer;
    const char* message;
  } bad_shape[] = {
      {make(-1, 0, 0, 0), "must not be negative"},
      {make(4, 0, 2, 0), "a 4-D blob (d given) needs w, h and c too"},
      {make(4, 0, 0, 3), "a 3-D blob (c given) needs w and h too"},
      {make(0, 5, 0, 0), "a 2-D blob (h given) needs w too"},
  };
  for (const auto& b : bad_shape) {
    Shape out[1];
    REQUIRE_FALSE(b.layer.infer_shapes({}, out).ok());
    ModelBinFromArrays mb({std::vector<float>(8, 1.f)});
    MemoryData m = b.layer;
    auto st = m.load(mb);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("MemoryData"));
  }

  MemoryData bad_type = make(2, 2, 0, 0);
  bad_type.load_type = 2;
  ModelBinFromArrays mb4({std::vector<float>(4, 1.f)});
  auto st = bad_type.load(mb4);
  REQUIRE_FALSE(st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("load_type must be 0 (tagged) or 1 (raw f32), got 2"));

  {  // too few bytes in the .bin
    const float two[2] = {1.f, 2.f};
    auto bytes = bytes_of(two, sizeof two);
    ModelBinFromMemory mb(bytes);
    MemoryData m = make(3, 1, 0, 0);
    auto s = m.load(mb);
    REQUIRE_FALSE(s.ok());
    REQUIRE_THAT(s.message(), Catch::Contains("MemoryData: data:"));
  }

  {  // data set by hand with the wrong count
    MemoryData m = make(3, 2, 0, 0);
    m.data = {1.f, 2.f};
    Shape out[1];
    REQUIRE_FALSE(m.infer_shapes({}, out).ok());
    std::vector<Mat> tops(1);
    auto s = infer::run_layer<float>(m, std::span<const Mat>(), tops, 4, Placement::out_of_place,
                                     Option{});
    REQUIRE_FALSE(s.ok());
    REQUIRE_THAT(s.message(),
                 Catch::Contains("MemoryData: data holds 2 values") && Catch::Contains("needs 6"));
  }

  {  // an input blob
    MemoryData m = make(2, 0, 0, 0);
    m.data = {1.f, 2.f};
    const Shape in = Shape::of(2);
    Shape out[1];
    REQUIRE_FALSE(m.infer_shapes(std::span<const Shape>(&in, 1), out).ok());
    Mat x(in);
    x.fill(0.f);
    std::vector<Mat> tops(1);
    auto s = infer::run_layer<float>(m, std::span<const Mat>(&x, 1), tops, 4,
                                     Placement::out_of_place, Option{});
    REQUIRE_FALSE(s.ok());
    REQUIRE_THAT(s.message(), Catch::Contains("MemoryData: takes no input blob, got 1"));
  }
}
