// libFuzzer target of the image reader and the image-to-input conversion: the input is a PNG or
// JPEG file, decoded by libpng / libjpeg-turbo (Debian's builds, fuzzed upstream) through infer's
// checks. Errors are expected; a crash, a sanitizer report, a huge allocation, or a decoded image
// whose buffer disagrees with its size is a finding; so is a conversion that fails or writes a
// non-finite value on a decoded image.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <infer/image.hpp>
#include <infer/io/image_file.hpp>
#include <span>

namespace {

[[noreturn]] void finding() { __builtin_trap(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto img = infer::io::decode_image(bytes, "fuzz.img");
  if (!img.ok()) return 0;
  const std::size_t want = std::size_t(img->w) * std::size_t(img->h) *
                           std::size_t(infer::channels_of(img->format));
  if (img->w <= 0 || img->h <= 0 || img->pixels.size() != want) finding();
  // Small targets keep each run short: a shrink of a big image, an enlargement of a small one.
  infer::ImageToMat how;
  how.to = infer::PixelFormat::bgr;
  how.width = 1 + int(size % 23);
  how.height = 1 + int(size % 17);
  how.mean = {1.f, 2.f, 3.f, 0.f};
  how.norm = {0.5f, 0.25f, 0.125f, 1.f};
  auto m = infer::image_to_mat(img->view(), how);
  if (!m.ok()) finding();
  for (int c = 0; c < m->c(); ++c) {
    const float* p = static_cast<const float*>(m->channel_data(c));
    for (int i = 0; i < m->w() * m->h(); ++i)
      if (!std::isfinite(p[i])) finding();
  }
  return 0;
}
