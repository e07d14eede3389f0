// Deterministic random weights for a network read from a .param, as ncnn's benchmark runs models
// without their weights, and the .bin bytes of those weights. Values stay in sane ranges so deep
// networks neither blow up nor vanish: convolution and inner-product weights uniform with the
// variance He's initialization gives for their fan-in, small biases, BatchNorm variances
// positive, scales near one.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <string>
#include <vector>

namespace infer::io {

/// A ModelBin that makes up each buffer a layer asks for; call begin_layer() before each layer.
class RandomWeights final : public ModelBin {
 public:
  /// The most values one buffer may ask for (a wrong .param gives an error, not a huge
  /// allocation): 2^28 floats, 1 GiB.
  static constexpr std::size_t kMaxCount = std::size_t(1) << 28;

  /// `bin`, when given, receives the buffers as ncnn .bin bytes (tagged buffers as f32).
  explicit RandomWeights(std::uint64_t seed, std::vector<std::byte>* bin = nullptr)
      : seed_(seed), bin_(bin) {}

  /// The layer whose buffers come next (its type and num_output shape the ranges).
  void begin_layer(const LayerSpec& spec) {
    type_ = spec.type;
    name_ = spec.name;
    num_output_ = 0;
    if (spec.params.has(0) && !spec.params.is_array(0) &&
        spec.params.entry(0).scalar.kind != ParamValue::float_value)
      num_output_ = spec.params.entry(0).scalar.i;
    buffer_ = 0;
    ++layer_;
  }

  Result<std::vector<float>> load(std::size_t count, WeightType type) override {
    if (count > kMaxCount)
      return make_error("layer {} '{}' asks for {} weights in buffer {}, more than {}", type_,
                        name_, count, buffer_, kMaxCount);
    const auto [lo, hi] = range(count);
    // One stream per (seed, layer, buffer): a layer's weights do not depend on earlier layers'.
    std::uint64_t state = seed_ * 0x9E3779B97F4A7C15ull + layer_ * 0xBF58476D1CE4E5B9ull +
                          std::uint64_t(buffer_) * 0x94D049BB133111EBull + 1;
    std::vector<float> out(count);
    for (float& v : out) {
      const double u = double(next(state) >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      v = float(lo + (hi - lo) * u);
    }
    if (bin_) {
      if (type == WeightType::tagged) append(std::uint32_t{kTagF32});
      const std::size_t at = bin_->size();
      bin_->resize(at + count * sizeof(float));
      if (count) std::memcpy(bin_->data() + at, out.data(), count * sizeof(float));
    }
    ++buffer_;
    return out;
  }

 private:
  static std::uint64_t next(std::uint64_t& s) {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  void append(std::uint32_t v) {
    const std::size_t at = bin_->size();
    bin_->resize(at + sizeof v);
    std::memcpy(bin_->data() + at, &v, sizeof v);
  }

  /// The value range of the current buffer.
  std::pair<double, double> range(std::size_t count) const {
    const bool weighted = type_ == "Convolution" || type_ == "ConvolutionDepthWise" ||
                          type_ == "Deconvolution" || type_ == "DeconvolutionDepthWise" ||
                          type_ == "InnerProduct";
    if (weighted && buffer_ == 0) {
      // Uniform(-a, a) has variance a^2 / 3; He's 2 / fan_in gives a = sqrt(6 / fan_in).
      const double fan_in =
          num_output_ > 0 ? std::max(1.0, double(count) / num_output_) : double(count ? count : 1);
      const double a = std::sqrt(6.0 / fan_in);
      return {-a, a};
    }
    if (weighted) return {-0.1, 0.1};  // bias
    if (type_ == "BatchNorm") {
      switch (buffer_) {
        case 0:
          return {0.8, 1.2};  // slope
        case 1:
          return {-0.1, 0.1};  // mean
        case 2:
          return {0.5, 1.5};  // variance, positive
        default:
          return {-0.1, 0.1};
      }
    }
    if (type_ == "Scale") return buffer_ == 0 ? std::pair{0.8, 1.2} : std::pair{-0.1, 0.1};
    if (type_ == "PReLU") return {0.0, 0.3};
    return {-0.5, 0.5};
  }

  std::uint64_t seed_;
  std::vector<std::byte>* bin_;
  std::string type_, name_;
  int num_output_ = 0;
  int buffer_ = 0;
  std::uint64_t layer_ = 0;
};

}  // namespace infer::io
