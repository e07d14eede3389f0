// Reading PNG (libpng's simplified API) and JPEG (libjpeg-turbo's TurboJPEG API) files into 8-bit
// pixels for image_to_mat. Optional: this header needs Debian's libpng-dev and libturbojpeg0-dev
// and links them (the CMake target infer::image_io); the core headers never include it. Both
// libraries are fuzzed upstream (OSS-Fuzz); stb_image was tried first and dropped after infer's own
// fuzzer found an out-of-bounds write in its JPEG Huffman tables within a few hundred inputs.
//
// The header is checked before anything is decoded: an empty or unknown file, a side of 0 or above
// kMaxImageSide, or more than kMaxImagePixels pixels is an error naming the source and the size,
// so a hostile header cannot make a huge allocation. Truncated or corrupt data is an error too
// (TurboJPEG's warnings included), never a partly decoded image.
#pragma once

#include <png.h>
#include <turbojpeg.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <infer/image.hpp>
#include <infer/io/param.hpp>
#include <infer/status.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infer::io {

/// The most pixels read_image accepts (64 Mpixel: 192 MB as RGB).
inline constexpr std::int64_t kMaxImagePixels = std::int64_t(1) << 26;

/// Decoded interleaved 8-bit pixels: GRAY, RGB or RGBA as the file holds them (gray with alpha
/// comes back as GRAY, 16-bit PNGs as 8-bit).
struct Image {
  int w = 0, h = 0;
  PixelFormat format = PixelFormat::rgb;
  std::vector<std::uint8_t> pixels;

  ImageView view() const { return {pixels.data(), w, h, format, 0}; }
};

namespace detail {

inline bool size_accepted(std::int64_t w, std::int64_t h) {
  return w > 0 && h > 0 && w <= kMaxImageSide && h <= kMaxImageSide && w * h <= kMaxImagePixels;
}

inline Error size_error(std::string_view source, std::string_view kind, std::int64_t w,
                        std::int64_t h) {
  return make_error(
      "{}: {} image size {}x{} is outside what is accepted (sides 1..{}, at most {} pixels)",
      source, kind, w, h, kMaxImageSide, kMaxImagePixels);
}

/// The size a PNG's IHDR declares (the first chunk, right after the signature), read here so that
/// an absurd one is refused before libpng reads further.
inline bool png_declared_size(std::span<const std::byte> bytes, std::int64_t& w, std::int64_t& h) {
  if (bytes.size() < 24) return false;
  const char* ihdr = "IHDR";
  for (std::size_t i = 0; i < 4; ++i)
    if (std::to_integer<char>(bytes[12 + i]) != ihdr[i]) return false;
  auto be32 = [&](std::size_t at) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v * 256 + std::to_integer<unsigned char>(bytes[at + i]);
    return v;
  };
  w = be32(16);
  h = be32(20);
  return true;
}

inline Result<Image> decode_png(std::span<const std::byte> bytes, std::string_view source) {
  if (std::int64_t w = 0, h = 0; png_declared_size(bytes, w, h) && !size_accepted(w, h))
    return size_error(source, "PNG", w, h);
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()))
    return make_error("{}: not a PNG image libpng can read ({})", source, png.message);
  // Frees libpng's state on every path out.
  std::unique_ptr<png_image, void (*)(png_image*)> guard(&png, &png_image_free);
  if (!size_accepted(png.width, png.height)) return size_error(source, "PNG", png.width, png.height);
  const bool color = png.format & PNG_FORMAT_FLAG_COLOR;
  const bool alpha = png.format & PNG_FORMAT_FLAG_ALPHA;
  png.format = !color ? PNG_FORMAT_GRAY : alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  Image img;
  img.w = int(png.width);
  img.h = int(png.height);
  img.format = !color ? PixelFormat::gray : alpha ? PixelFormat::rgba : PixelFormat::rgb;
  img.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, img.pixels.data(), 0, nullptr))
    return make_error("{}: cannot decode the {}x{} PNG image: {}", source, img.w, img.h,
                      png.message);
  return img;
}

inline Result<Image> decode_jpeg(std::span<const std::byte> bytes, std::string_view source) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), &tjDestroy);
  if (!tj) return make_error("{}: cannot start the JPEG decoder: {}", source, tjGetErrorStr2(nullptr));
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned long size = static_cast<unsigned long>(bytes.size());
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.get(), data, size, &w, &h, &subsampling, &colorspace) != 0)
    return make_error("{}: not a JPEG image libjpeg-turbo can read ({})", source,
                      tjGetErrorStr2(tj.get()));
  if (!size_accepted(w, h)) return size_error(source, "JPEG", w, h);
  const bool gray = colorspace == TJCS_GRAY;
  Image img;
  img.w = w;
  img.h = h;
  img.format = gray ? PixelFormat::gray : PixelFormat::rgb;
  img.pixels.resize(std::size_t(w) * std::size_t(h) * (gray ? 1u : 3u));
  // Warnings (a truncated file, corrupt data) stop the decoder; progressive files may not have
  // more than libjpeg-turbo's limit of scans.
  if (tjDecompress2(tj.get(), data, size, img.pixels.data(), w, 0, h, gray ? TJPF_GRAY : TJPF_RGB,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0)
    return make_error("{}: cannot decode the {}x{} JPEG image: {}", source, w, h,
                      tjGetErrorStr2(tj.get()));
  return img;
}

}  // namespace detail

/// Decodes a PNG or JPEG image held in memory; errors name `source`.
inline Result<Image> decode_image(std::span<const std::byte> bytes, std::string_view source) {
  if (bytes.empty()) return make_error("{}: not an image (the file is empty)", source);
  auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(bytes[i]); };
  static constexpr unsigned kPng[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  bool png = bytes.size() >= 8;
  for (std::size_t i = 0; png && i < 8; ++i) png = byte(i) == kPng[i];
  if (png) return detail::decode_png(bytes, source);
  if (bytes.size() >= 3 && byte(0) == 0xFF && byte(1) == 0xD8 && byte(2) == 0xFF)
    return detail::decode_jpeg(bytes, source);
  return make_error("{}: not an image (neither PNG nor JPEG: the file starts {:02x} {:02x} {:02x})",
                    source, byte(0), bytes.size() > 1 ? byte(1) : 0u,
                    bytes.size() > 2 ? byte(2) : 0u);
}

/// Reads and decodes a PNG or JPEG file.
inline Result<Image> read_image(const std::filesystem::path& path) {
  auto bytes = read_file_bytes(path);
  INFER_TRY(bytes);
  return decode_image(std::span<const std::byte>(*bytes), path.string());
}

}  // namespace infer::io
