// Reading JPEG, PNG (and the other formats stb_image knows: BMP, GIF, TGA, PSD, PNM) into 8-bit
// pixels for image_to_mat. Optional: this header needs Debian's libstb-dev and links its library
// (the CMake target infer::image_io); the core headers never include it.
//
// The header is checked before anything is decoded: an empty or unknown file, a side of 0 or above
// kMaxImageSide, or more than kMaxImagePixels pixels is an error naming the source and the size,
// so a hostile header cannot make a huge allocation.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <infer/image.hpp>
#include <infer/io/param.hpp>
#include <infer/status.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <stb/stb_image.h>

namespace infer::io {

/// The most pixels read_image accepts (256 Mpixel, 1 GiB as RGBA).
inline constexpr std::int64_t kMaxImagePixels = std::int64_t(1) << 28;

/// Decoded interleaved 8-bit pixels: GRAY, RGB or RGBA as the file holds them (gray with alpha
/// comes back as GRAY).
struct Image {
  int w = 0, h = 0;
  PixelFormat format = PixelFormat::rgb;
  std::vector<std::uint8_t> pixels;

  ImageView view() const { return {pixels.data(), w, h, format, 0}; }
};

namespace detail {
/// The size a PNG's IHDR declares, read here so that the error for an absurd one can say it
/// (stb_image only reports such a file as unreadable); false when `bytes` is not a PNG.
inline bool png_declared_size(std::span<const std::byte> bytes, std::int64_t& w, std::int64_t& h) {
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (bytes.size() < 24) return false;
  for (std::size_t i = 0; i < 8; ++i)
    if (std::to_integer<unsigned char>(bytes[i]) != kSignature[i]) return false;
  if (std::to_integer<char>(bytes[12]) != 'I' || std::to_integer<char>(bytes[13]) != 'H' ||
      std::to_integer<char>(bytes[14]) != 'D' || std::to_integer<char>(bytes[15]) != 'R')
    return false;
  auto be32 = [&](std::size_t at) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v * 256 + std::to_integer<unsigned char>(bytes[at + i]);
    return v;
  };
  w = be32(16);
  h = be32(20);
  return true;
}

inline bool size_accepted(std::int64_t w, std::int64_t h) {
  return w > 0 && h > 0 && w <= kMaxImageSide && h <= kMaxImageSide && w * h <= kMaxImagePixels;
}
}  // namespace detail

/// Decodes an image held in memory; errors name `source`.
inline Result<Image> decode_image(std::span<const std::byte> bytes, std::string_view source) {
  if (bytes.empty()) return make_error("{}: not an image (the file is empty)", source);
  if (std::int64_t pw = 0, ph = 0;
      detail::png_declared_size(bytes, pw, ph) && !detail::size_accepted(pw, ph))
    return make_error("{}: PNG image size {}x{} is outside what is accepted (sides 1..{}, at most "
                      "{} pixels)",
                      source, pw, ph, kMaxImageSide, kMaxImagePixels);
  if (bytes.size() > std::size_t(INT_MAX))
    return make_error("{}: {} bytes is more than an image file may hold here ({})", source,
                      bytes.size(), INT_MAX);
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = int(bytes.size());
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(data, len, &w, &h, &comp))
    return make_error("{}: not an image stb_image can read ({})", source, stbi_failure_reason());
  if (!detail::size_accepted(w, h))
    return make_error("{}: image size {}x{} is outside what is accepted (sides 1..{}, at most {} "
                      "pixels)",
                      source, w, h, kMaxImageSide, kMaxImagePixels);
  const int want = comp <= 2 ? 1 : comp;  // gray+alpha: gray
  int dw = 0, dh = 0, dc = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_memory(data, len, &dw, &dh, &dc, want), &stbi_image_free);
  if (!pixels)
    return make_error("{}: cannot decode the {}x{} image: {}", source, w, h,
                      stbi_failure_reason());
  if (dw != w || dh != h)
    return make_error("{}: the image decoded as {}x{}, its header says {}x{}", source, dw, dh, w,
                      h);
  Image img;
  img.w = w;
  img.h = h;
  img.format = want == 1 ? PixelFormat::gray : want == 3 ? PixelFormat::rgb : PixelFormat::rgba;
  const std::size_t n = std::size_t(w) * std::size_t(h) * std::size_t(want);
  img.pixels.assign(pixels.get(), pixels.get() + n);
  return img;
}

/// Reads and decodes an image file.
inline Result<Image> read_image(const std::filesystem::path& path) {
  auto bytes = read_file_bytes(path);
  INFER_TRY(bytes);
  return decode_image(std::span<const std::byte>(*bytes), path.string());
}

}  // namespace infer::io
