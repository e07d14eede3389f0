// Weight sources in ncnn's load order: layers call load(count, type) once per weight buffer, in
// the order ncnn's .bin stores them. From .bin bytes (tagged f32 / f16 / table-quantized buffers,
// each 4-byte aligned) or from arrays the caller already holds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/element.hpp>
#include <infer/status.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace infer::io {

/// How a weight buffer is stored (ncnn's ModelBin::load type argument).
enum class WeightType : int {
  tagged = 0,  ///< a 4-byte tag says f32, f16 or a quantization table follows
  raw_f32 = 1  ///< plain f32 values, no tag (biases, BatchNorm statistics)
};

/// ncnn's 4-byte tags in front of a tagged buffer.
inline constexpr std::uint32_t kTagF32 = 0;
inline constexpr std::uint32_t kTagF16 = 0x01306B47;
inline constexpr std::uint32_t kTagI8 = 0x000D4B38;
inline constexpr std::uint32_t kTagF32Alt = 0x0002C056;  ///< f32 data whose int8 scales follow

/// A sequence of weight buffers, read front to back.
class ModelBin {
 public:
  virtual ~ModelBin() = default;
  /// The next buffer of `count` values, converted to f32.
  virtual Result<std::vector<float>> load(std::size_t count, WeightType type) = 0;
  /// How the last buffer load() returned was stored: i8 for ncnn's int8-tagged weights (their
  /// integer values, which a quantized layer takes as they are), f32 otherwise.
  ElemType last_type() const { return last_type_; }

 protected:
  ElemType last_type_ = ElemType::f32;
};

/// Reads ncnn .bin bytes (the span must outlive the reader). Errors name `source` and the offset.
class ModelBinFromMemory final : public ModelBin {
 public:
  explicit ModelBinFromMemory(std::span<const std::byte> bytes, std::string source = "<memory>")
      : bytes_(bytes), source_(std::move(source)) {}

  Result<std::vector<float>> load(std::size_t count, WeightType type) override {
    // Each size is checked against the bytes left before anything is allocated, so a wrong count
    // (from a bad .param) gives an Error rather than a huge allocation.
    last_type_ = ElemType::f32;
    if (type == WeightType::raw_f32) {
      INFER_TRY(room(count, sizeof(float), count, "raw f32"));
      std::vector<float> out(count);
      read(out.data(), count * sizeof(float));
      return out;
    }
    std::uint32_t tag = 0;
    INFER_TRY(room(1, sizeof tag, count, "the 4-byte type tag of"));
    read(&tag, sizeof tag);
    if (tag == kTagF32 || tag == kTagF32Alt) {
      INFER_TRY(room(count, sizeof(float), count, "f32"));
      std::vector<float> out(count);
      read(out.data(), count * sizeof(float));
      return out;
    }
    if (tag == kTagF16) {
      INFER_TRY(room(count, sizeof(std::uint16_t), count, "f16"));
      std::vector<std::uint16_t> bits(count);
      read(bits.data(), count * sizeof(std::uint16_t));
      std::vector<float> out(count);
      for (std::size_t i = 0; i < count; ++i) out[i] = to_f32(f16::from_bits(bits[i]));
      return out;
    }
    if (tag == kTagI8) {
      INFER_TRY(room(count, 1, count, "int8"));
      std::vector<std::int8_t> bytes(count);
      read(bytes.data(), count);
      last_type_ = ElemType::i8;
      return std::vector<float>(bytes.begin(), bytes.end());
    }
    // Any other tag: a 256-entry f32 table follows, then one byte index per value.
    float table[256];
    INFER_TRY(room(1, sizeof table, count, "the 256-entry quantization table of"));
    read(table, sizeof table);
    INFER_TRY(room(count, 1, count, "table-quantized"));
    std::vector<std::uint8_t> index(count);
    read(index.data(), count);
    std::vector<float> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = table[index[i]];
    return out;
  }

  /// Bytes consumed so far (a model loader checks that every byte was used).
  std::size_t offset() const { return offset_; }

 private:
  /// An Error unless `n` items of `size` bytes each are left (the error names `count` values of
  /// the buffer being read and what the bytes were for).
  Status room(std::size_t n, std::size_t size, std::size_t count, const char* what) const {
    const std::size_t left = bytes_.size() - offset_;
    if (n <= left / size) return {};
    if (n > SIZE_MAX / size)
      return make_error("{}: offset {}: needs {} x {} bytes for {} {} values, only {} left",
                        source_, offset_, n, size, what, count, left);
    return make_error("{}: offset {}: needs {} bytes for {} {} values, only {} left", source_,
                      offset_, n * size, what, count, left);
  }

  /// Copies `bytes` bytes (room() checked them) and then skips to the next 4-byte boundary.
  void read(void* dst, std::size_t bytes) {
    if (bytes) std::memcpy(dst, bytes_.data() + offset_, bytes);
    offset_ += bytes;
    offset_ = std::min(bytes_.size(), (offset_ + 3) & ~std::size_t{3});
  }

  std::span<const std::byte> bytes_;
  std::string source_;
  std::size_t offset_ = 0;
};

/// Weights the caller holds, one array per buffer in load order.
class ModelBinFromArrays final : public ModelBin {
 public:
  explicit ModelBinFromArrays(std::vector<std::vector<float>> buffers)
      : buffers_(std::move(buffers)) {}

  Result<std::vector<float>> load(std::size_t count, WeightType) override {
    if (next_ >= buffers_.size())
      return make_error("weights: buffer {} requested ({} values) but only {} were given", next_,
                        count, buffers_.size());
    if (buffers_[next_].size() != count)
      return make_error("weights: buffer {} holds {} values, the layer expects {}", next_,
                        buffers_[next_].size(), count);
    return buffers_[next_++];
  }
  std::size_t consumed() const { return next_; }

 private:
  std::vector<std::vector<float>> buffers_;
  std::size_t next_ = 0;
};

/// A layer whose weights load from a ModelBin in ncnn's order.
template <class L>
concept LoadsWeights = requires(L& l, ModelBin& mb) {
  { l.load(mb) } -> std::same_as<Status>;
};

}  // namespace infer::io
