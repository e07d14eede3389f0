// libFuzzer target of the .param readers: each input is read as text and as binary. Errors are
// expected; a crash, sanitizer report, hang or huge allocation is a finding. A text input that
// parses is also written in the binary form and read back, which must give the same network, so
// the binary reader is driven deep by every valid text the fuzzer finds.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <infer/io/param.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace {

using infer::io::ParamDict;
using infer::io::ParamFile;
using infer::io::ParamValue;

/// Stops the run as a finding (libFuzzer reports the input that got here).
[[noreturn]] void finding() { __builtin_trap(); }

/// What any successful parse must satisfy: blob ids in range, each blob produced once and read
/// only after it was produced.
void check(const ParamFile& file) {
  std::vector<int> producer(file.blobs.size(), -1);
  for (std::size_t i = 0; i < file.layers.size(); ++i) {
    for (int b : file.layers[i].bottoms)
      if (b < 0 || std::size_t(b) >= file.blobs.size() || producer[std::size_t(b)] < 0) finding();
    for (int t : file.layers[i].tops) {
      if (t < 0 || std::size_t(t) >= file.blobs.size() || producer[std::size_t(t)] >= 0) finding();
      producer[std::size_t(t)] = int(i);
    }
  }
  for (int p : producer)
    if (p < 0) finding();
}

/// Messages stay short whatever the input (tokens in them are clipped).
void check(const infer::Error& e) {
  if (e.message.empty() || e.message.size() > 1024) finding();
}

std::uint32_t bits(const ParamValue& v) {
  return v.kind == ParamValue::float_value ? std::bit_cast<std::uint32_t>(v.f) : std::uint32_t(v.i);
}

/// A text parse and the binary parse of its binary form agree on everything but names.
void check_same(const ParamFile& text, const ParamFile& bin) {
  if (text.layers.size() != bin.layers.size() || text.blobs.size() != bin.blobs.size()) finding();
  for (std::size_t i = 0; i < text.layers.size(); ++i) {
    const auto& a = text.layers[i];
    const auto& b = bin.layers[i];
    if (a.type != b.type || a.bottoms != b.bottoms || a.tops != b.tops) finding();
    for (int k = 0; k < ParamDict::kMaxKeys; ++k) {
      if (a.params.has(k) != b.params.has(k) || a.params.is_array(k) != b.params.is_array(k))
        finding();
      if (!a.params.has(k)) continue;
      const auto& ea = a.params.entry(k);
      const auto& eb = b.params.entry(k);
      if (!ea.is_array && bits(ea.scalar) != bits(eb.scalar)) finding();
      if (ea.array.size() != eb.array.size()) finding();
      for (std::size_t j = 0; j < ea.array.size(); ++j)
        if (bits(ea.array[j]) != bits(eb.array[j])) finding();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);

  auto t = infer::io::parse_param_text(text, "fuzz.param");
  if (t) {
    check(t.value());
    auto bin = infer::io::to_param_binary(t.value());
    if (bin) {  // an Error when a type has no built-in index
      auto back = infer::io::parse_param_binary(bin.value(), "fuzz.param.bin");
      if (!back) finding();
      check_same(t.value(), back.value());
    }
  } else {
    check(t.error());
  }

  auto b = infer::io::parse_param_binary(bytes, "fuzz.param.bin");
  if (b) {
    check(b.value());
  } else {
    check(b.error());
  }
  return 0;
}
