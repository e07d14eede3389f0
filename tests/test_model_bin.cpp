// ModelBinFromMemory on hand-built ncnn .bin bytes: the f32, f16 and table-quantized tags, raw f32
// buffers, 4-byte alignment after buffers of odd byte length, the int8 tag's error, truncation at
// every stage (errors name the source and offset), counts too large to allocate; and
// ModelBinFromArrays' count checks.
#include <bit>
#include <catch2/catch.hpp>
#include <cstdint>
#include <infer/io/model_bin.hpp>
#include <vector>

using infer::io::ModelBinFromArrays;
using infer::io::ModelBinFromMemory;
using infer::io::WeightType;

namespace {

struct Bin {
  std::vector<std::byte> bytes;

  Bin& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(std::byte((v >> (8 * i)) & 0xFF));
    return *this;
  }
  Bin& f32(std::initializer_list<float> v) {
    for (float x : v) u32(std::bit_cast<std::uint32_t>(x));
    return *this;
  }
  Bin& f16(std::initializer_list<float> v) {
    for (float x : v) {
      const std::uint16_t h = infer::f32_to_f16(x).bits;
      bytes.push_back(std::byte(h & 0xFF));
      bytes.push_back(std::byte(h >> 8));
    }
    return *this;
  }
  Bin& u8(std::initializer_list<int> v) {
    for (int x : v) bytes.push_back(std::byte(x));
    return *this;
  }
  Bin& zeros(std::size_t n) {
    // One at a time: GCC 12 at -O3 misreads resize() here as an out-of-bounds memset.
    for (std::size_t i = 0; i < n; ++i) bytes.push_back(std::byte{0});
    return *this;
  }
};

}  // namespace

TEST_CASE("ModelBinFromMemory reads tagged f32 and raw f32 buffers", "[io][model_bin]") {
  Bin b;
  b.u32(infer::io::kTagF32).f32({1.5f, -2.f, 3.25f});
  b.f32({7.f, 8.f});  // raw: no tag
  b.u32(infer::io::kTagF32Alt).f32({0.5f});
  ModelBinFromMemory mb(b.bytes);
  auto w = mb.load(3, WeightType::tagged);
  REQUIRE(w.ok());
  REQUIRE(w.value() == std::vector<float>{1.5f, -2.f, 3.25f});
  auto r = mb.load(2, WeightType::raw_f32);
  REQUIRE(r.ok());
  REQUIRE(r.value() == std::vector<float>{7.f, 8.f});
  auto alt = mb.load(1, WeightType::tagged);
  REQUIRE(alt.ok());
  REQUIRE(alt.value() == std::vector<float>{0.5f});
  REQUIRE(mb.offset() == b.bytes.size());
}

TEST_CASE("ModelBinFromMemory reads f16 buffers and realigns after odd lengths",
          "[io][model_bin]") {
  Bin b;
  b.u32(infer::io::kTagF16).f16({1.f, -0.5f, 65504.f}).zeros(2);  // 6 bytes, padded to 8
  b.f32({42.f});
  b.u32(infer::io::kTagF16).f16({0.1f, 2.f});  // 4 bytes: no padding
  b.f32({-1.f});
  ModelBinFromMemory mb(b.bytes);
  auto h = mb.load(3, WeightType::tagged);
  REQUIRE(h.ok());
  REQUIRE(h.value() == std::vector<float>{1.f, -0.5f, 65504.f});
  REQUIRE(mb.offset() == 12);  // tag 4 + 6 data + 2 padding
  auto r = mb.load(1, WeightType::raw_f32);
  REQUIRE(r.ok());
  REQUIRE(r.value() == std::vector<float>{42.f});
  auto h2 = mb.load(2, WeightType::tagged);
  REQUIRE(h2.ok());
  REQUIRE(h2.value() == std::vector<float>{infer::f16_to_f32(infer::f32_to_f16(0.1f)), 2.f});
  auto r2 = mb.load(1, WeightType::raw_f32);
  REQUIRE(r2.ok());
  REQUIRE(r2.value() == std::vector<float>{-1.f});
  REQUIRE(mb.offset() == b.bytes.size());
}

TEST_CASE("ModelBinFromMemory reads table-quantized buffers", "[io][model_bin]") {
  Bin b;
  b.u32(0x12345678);  // any other nonzero tag: a 256-entry table and byte indices follow
  for (int i = 0; i < 256; ++i) b.f32({float(i) * 0.25f - 10.f});
  b.u8({0, 255, 40, 41, 3}).zeros(3);  // 5 index bytes, padded to 8
  b.f32({9.f});
  ModelBinFromMemory mb(b.bytes);
  auto q = mb.load(5, WeightType::tagged);
  REQUIRE(q.ok());
  REQUIRE(q.value() == std::vector<float>{-10.f, 53.75f, 0.f, 0.25f, -9.25f});
  REQUIRE(mb.offset() == 4 + 1024 + 8);
  auto r = mb.load(1, WeightType::raw_f32);
  REQUIRE(r.ok());
  REQUIRE(r.value() == std::vector<float>{9.f});
}

TEST_CASE("ModelBinFromMemory reads int8-tagged weights as their integer values",
          "[io][model_bin]") {
  Bin b;
  b.f32({1.f, 2.f});
  b.u32(infer::io::kTagI8).u8({1, 0xFE, 0x81, 127, 5});  // 5 bytes, then padding to 4
  b.u8({0, 0, 0});
  b.f32({7.f});
  ModelBinFromMemory mb(b.bytes, "net.bin");
  REQUIRE(mb.load(2, WeightType::raw_f32).ok());
  CHECK(mb.last_type() == infer::ElemType::f32);
  auto q = mb.load(5, WeightType::tagged);
  REQUIRE(q.ok());
  CHECK(q.value() == std::vector<float>{1.f, -2.f, -127.f, 127.f, 5.f});
  CHECK(mb.last_type() == infer::ElemType::i8);
  auto r = mb.load(1, WeightType::raw_f32);
  REQUIRE(r.ok());
  CHECK(r.value() == std::vector<float>{7.f});
  CHECK(mb.last_type() == infer::ElemType::f32);
  SECTION("truncated int8 bytes name the offset") {
    Bin t;
    t.u32(infer::io::kTagI8).u8({1, 2});
    ModelBinFromMemory short_mb(t.bytes, "short.bin");
    auto e = short_mb.load(4, WeightType::tagged);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.message(), Catch::Contains("short.bin: offset 4") && Catch::Contains("int8"));
  }
}

TEST_CASE("ModelBinFromMemory reports truncation with the offset", "[io][model_bin]") {
  SECTION("no bytes for the tag") {
    ModelBinFromMemory mb({}, "empty.bin");
    auto w = mb.load(3, WeightType::tagged);
    REQUIRE_FALSE(w.ok());
    REQUIRE_THAT(w.message(), Catch::Contains("empty.bin: offset 0: needs 4 bytes for the 4-byte "
                                              "type tag of 3 values, only 0 left"));
  }
  SECTION("f32 data cut short") {
    Bin b;
    b.u32(0).f32({1.f, 2.f});
    ModelBinFromMemory mb(b.bytes, "a.bin");
    auto w = mb.load(10, WeightType::tagged);
    REQUIRE_FALSE(w.ok());
    REQUIRE_THAT(w.message(),
                 Catch::Contains("a.bin: offset 4: needs 40 bytes for f32 10 values, only 8 left"));
  }
  SECTION("f16 data cut short") {
    Bin b;
    b.u32(infer::io::kTagF16).f16({1.f, 2.f});
    ModelBinFromMemory mb(b.bytes);
    auto w = mb.load(3, WeightType::tagged);
    REQUIRE_FALSE(w.ok());
    REQUIRE_THAT(w.message(), Catch::Contains("offset 4: needs 6 bytes for f16 3 values"));
  }
  SECTION("quantization table cut short") {
    Bin b;
    b.u32(7).zeros(1000);
    ModelBinFromMemory mb(b.bytes);
    auto w = mb.load(3, WeightType::tagged);
    REQUIRE_FALSE(w.ok());
    REQUIRE_THAT(
        w.message(),
        Catch::Contains("offset 4: needs 1024 bytes for the 256-entry quantization table"));
  }
  SECTION("raw f32 after a buffer") {
    Bin b;
    b.u32(0).f32({1.f}).f32({2.f});
    ModelBinFromMemory mb(b.bytes);
    REQUIRE(mb.load(1, WeightType::tagged).ok());
    auto r = mb.load(2, WeightType::raw_f32);
    REQUIRE_FALSE(r.ok());
    REQUIRE_THAT(r.message(), Catch::Contains("offset 8: needs 8 bytes for raw f32 2 values, "
                                              "only 4 left"));
  }
  SECTION("a count too large to allocate is an error, not an exception") {
    Bin b;
    b.u32(0).f32({1.f});
    ModelBinFromMemory mb(b.bytes);
    auto w = mb.load(std::size_t(1) << 62, WeightType::tagged);
    REQUIRE_FALSE(w.ok());
    REQUIRE_THAT(w.message(), Catch::Contains("offset 4: needs") && Catch::Contains("only 4 left"));
    ModelBinFromMemory mb2(b.bytes);
    auto r = mb2.load(SIZE_MAX, WeightType::raw_f32);
    REQUIRE_FALSE(r.ok());
    REQUIRE_THAT(r.message(), Catch::Contains("x 4 bytes for raw f32"));
  }
}

TEST_CASE("ModelBinFromArrays checks counts and exhaustion", "[io][model_bin]") {
  ModelBinFromArrays mb({{1.f, 2.f}, {3.f}});
  auto a = mb.load(2, WeightType::tagged);
  REQUIRE(a.ok());
  REQUIRE(a.value() == std::vector<float>{1.f, 2.f});
  auto wrong = mb.load(2, WeightType::raw_f32);
  REQUIRE_FALSE(wrong.ok());
  REQUIRE_THAT(wrong.message(), Catch::Contains("buffer 1 holds 1 values, the layer expects 2"));
  REQUIRE(mb.load(1, WeightType::raw_f32).ok());
  auto past = mb.load(1, WeightType::raw_f32);
  REQUIRE_FALSE(past.ok());
  REQUIRE_THAT(past.message(), Catch::Contains("buffer 2 requested"));
  REQUIRE(mb.consumed() == 2);
}
