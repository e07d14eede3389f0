// io::decode_image / read_image (libpng and libjpeg-turbo behind infer::image_io): PNG and JPEG
// round trips, and bad files (empty, not an image, truncated, zero-sized, a 100000x100000 header)
// rejected with an error naming the source, without decoding.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <infer/io/image_file.hpp>
#include <random>
#include <vector>


namespace {

/// A PNG (libpng's simplified writer) or a JPEG at quality 95 (TurboJPEG) of the pixels.
std::vector<std::byte> encode(int w, int h, int comp, const std::vector<std::uint8_t>& px,
                              bool jpeg) {
  std::vector<std::byte> out;
  if (jpeg) {
    tjhandle tj = tjInitCompress();
    REQUIRE(tj);
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    const int r = tjCompress2(tj, px.data(), w, 0, h, comp == 1 ? TJPF_GRAY : TJPF_RGB, &buf,
                              &size, comp == 1 ? TJSAMP_GRAY : TJSAMP_444, 95, 0);
    REQUIRE(r == 0);
    out.resize(size);
    std::memcpy(out.data(), buf, size);
    tjFree(buf);
    tjDestroy(tj);
    return out;
  }
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = png_uint_32(w);
  img.height = png_uint_32(h);
  img.format = comp == 1 ? PNG_FORMAT_GRAY : comp == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  REQUIRE(png_image_write_to_memory(&img, nullptr, &size, 0, px.data(), 0, nullptr));
  out.resize(size);
  REQUIRE(png_image_write_to_memory(&img, out.data(), &size, 0, px.data(), 0, nullptr));
  out.resize(size);
  return out;
}

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/// A PNG whose header declares w x h RGB pixels, with no pixel data at all.
std::vector<std::byte> png_header_only(std::uint32_t w, std::uint32_t h) {
  std::vector<std::uint8_t> b = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  auto be32 = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(std::uint8_t(v >> s));
  };
  be32(13);
  const std::size_t chunk = b.size();
  for (char ch : {'I', 'H', 'D', 'R'}) b.push_back(std::uint8_t(ch));
  be32(w);
  be32(h);
  for (std::uint8_t v : {8, 2, 0, 0, 0}) b.push_back(v);
  be32(crc32(b.data() + chunk, b.size() - chunk));
  be32(0);
  const std::size_t end = b.size();
  for (char ch : {'I', 'E', 'N', 'D'}) b.push_back(std::uint8_t(ch));
  be32(crc32(b.data() + end, 4));
  std::vector<std::byte> out(b.size());
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

}  // namespace

TEST_CASE("decode_image: PNG round trips exactly in gray, RGB and RGBA", "[image]") {
  std::mt19937 rng(3);
  for (int comp : {1, 3, 4}) {
    const int w = 37, h = 21;
    std::vector<std::uint8_t> px(std::size_t(w * h * comp));
    for (auto& v : px) v = std::uint8_t(rng());
    const auto bytes = encode(w, h, comp, px, false);
    auto img = infer::io::decode_image(bytes, "mem.png");
    INFO((img.ok() ? std::string() : img.message()));
    REQUIRE(img.ok());
    CHECK(img->w == w);
    CHECK(img->h == h);
    CHECK(infer::channels_of(img->format) == comp);
    CHECK(img->pixels == px);
  }
}

TEST_CASE("decode_image: JPEG decodes close to what was written", "[image]") {
  const int w = 32, h = 24;
  std::vector<std::uint8_t> px(std::size_t(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) px[std::size_t((y * w + x) * 3 + c)] = std::uint8_t(x * 6 + c * 20 + y);
  const auto bytes = encode(w, h, 3, px, true);
  auto img = infer::io::decode_image(bytes, "mem.jpg");
  REQUIRE(img.ok());
  REQUIRE(img->format == infer::PixelFormat::rgb);
  double err = 0;
  for (std::size_t i = 0; i < px.size(); ++i) err += std::abs(int(img->pixels[i]) - int(px[i]));
  CHECK(err / double(px.size()) < 4.0);  // a smooth gradient at quality 95
}

TEST_CASE("decode_image: bad files are errors naming the source", "[image][errors]") {
  auto message = [](const std::vector<std::byte>& bytes) {
    auto r = infer::io::decode_image(bytes, "bad.img");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.message(), Catch::Contains("bad.img"));
    return r.message();
  };
  CHECK_THAT(message({}), Catch::Contains("empty"));
  std::vector<std::byte> text(64);
  std::memcpy(text.data(), "7767517\n3 3\nInput data 0 1 data 0=224 1=224 2=3\n", 48);
  CHECK_THAT(message(text), Catch::Contains("not an image (neither PNG nor JPEG"));
  // A real PNG cut in half.
  std::vector<std::uint8_t> px(64 * 48 * 3, 128);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = std::uint8_t(i * 7);
  auto png = encode(64, 48, 3, px, false);
  png.resize(png.size() / 2);
  CHECK_THAT(message(png), Catch::Contains("64x48"));
  // A JPEG cut short: TurboJPEG's warning is an error here, not a partly grey image.
  auto jpg = encode(64, 48, 3, px, true);
  jpg.resize(jpg.size() * 2 / 3);
  CHECK_THAT(message(jpg), Catch::Contains("cannot decode the 64x48 JPEG image"));
  // Headers that would make a huge or an empty allocation.
  CHECK_THAT(message(png_header_only(100000, 100000)), Catch::Contains("100000x100000"));
  message(png_header_only(0, 10));
  CHECK_THAT(message(png_header_only(20000, 20000)), Catch::Contains("at most"));
  CHECK_THAT(message(png_header_only(20, 20)), Catch::Contains("not a PNG image libpng can read"));
}

TEST_CASE("read_image: a missing file names its path", "[image][errors]") {
  auto r = infer::io::read_image("/nonexistent/cat.png");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.message(), Catch::Contains("/nonexistent/cat.png"));
}
