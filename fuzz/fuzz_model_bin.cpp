// libFuzzer target of ModelBinFromMemory: the input's first bytes choose a sequence of
// load(count, type) calls, the rest is the .bin. Errors are expected; a crash, sanitizer report,
// huge allocation, a buffer of the wrong size or an offset outside the bytes is a finding.
//
// Input layout: byte 0 gives the number of calls (1..8); each call takes 5 bytes: a selector
// (bit 0: raw f32 instead of tagged; bits 1-2: how the count is made from the next 4 bytes:
// 16-bit, 32-bit, SIZE_MAX minus it, or it times 2^32 plus it) and a little-endian uint32.
#include <cstddef>
#include <cstdint>
#include <infer/io/model_bin.hpp>
#include <span>

namespace {

[[noreturn]] void finding() { __builtin_trap(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t calls = std::size_t(data[0] % 8) + 1;
  const std::size_t header = 1 + 5 * calls;
  if (size < header) return 0;
  const std::span<const std::byte> bin(reinterpret_cast<const std::byte*>(data) + header,
                                       size - header);
  infer::io::ModelBinFromMemory mb(bin, "fuzz.bin");
  for (std::size_t c = 0; c < calls; ++c) {
    const std::uint8_t* op = data + 1 + 5 * c;
    const std::uint32_t v = std::uint32_t(op[1]) | std::uint32_t(op[2]) << 8 |
                            std::uint32_t(op[3]) << 16 | std::uint32_t(op[4]) << 24;
    const auto type = (op[0] & 1) ? infer::io::WeightType::raw_f32 : infer::io::WeightType::tagged;
    std::size_t count = 0;
    switch ((op[0] >> 1) & 3) {
      case 0:
        count = v & 0xFFFF;
        break;
      case 1:
        count = v;
        break;
      case 2:
        count = SIZE_MAX - v;
        break;
      default:
        count = (std::size_t(v) << 32) | v;
        break;
    }
    const std::size_t before = mb.offset();
    auto r = mb.load(count, type);
    if (r && r.value().size() != count) finding();
    if (!r && r.message().empty()) finding();
    if (mb.offset() < before || mb.offset() > bin.size()) finding();
  }
  return 0;
}
