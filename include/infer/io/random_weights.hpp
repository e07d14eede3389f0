// Deterministic random weights for a network read from a .param, as ncnn's benchmark runs models
// without their weights, and the .bin bytes of those weights. Values stay in sane ranges so deep
// networks neither blow up nor vanish: convolution and inner-product weights uniform with the
// variance He's initialization gives for their fan-in, small biases, BatchNorm variances
// positive, scales near one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <random>
#include <string>
#include <vector>

namespace infer::io {

namespace detail {
/// Appends `v` to `bin` as ncnn .bin bytes (a tagged buffer as f32 after its tag).
inline void append_weights(std::vector<std::byte>& bin, const std::vector<float>& v,
                           WeightType type) {
  if (type == WeightType::tagged) {
    const std::uint32_t tag = kTagF32;
    const std::size_t at = bin.size();
    bin.resize(at + sizeof tag);
    std::memcpy(bin.data() + at, &tag, sizeof tag);
  }
  const std::size_t at = bin.size();
  bin.resize(at + v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bin.data() + at, v.data(), v.size() * sizeof(float));
}
}  // namespace detail

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
    auto flag = [&](int key) {
      return spec.params.has(key) && !spec.params.is_array(key) &&
                     spec.params.entry(key).scalar.kind != ParamValue::float_value
                 ? spec.params.entry(key).scalar.i
                 : 0;
    };
    const bool ip = type_ == "InnerProduct";
    int8_term_ = flag(8);
    bias_term_ = flag(ip ? 1 : 5);
    buffer_ = 0;
    weights_.clear();
    ++layer_;
  }

  Result<std::vector<float>> load(std::size_t count, WeightType type) override {
    if (count > kMaxCount)
      return make_error("layer {} '{}' asks for {} weights in buffer {}, more than {}", type_,
                        name_, count, buffer_, kMaxCount);
    if (int8_term_ != 0 && weighted() && buffer_ >= (bias_term_ ? 2 : 1))
      return int8_scales(count, type);
    const auto [lo, hi] = range(count);
    // One stream per (seed, layer, buffer): a layer's weights do not depend on earlier layers'.
    std::uint64_t state = seed_ * 0x9E3779B97F4A7C15ull + layer_ * 0xBF58476D1CE4E5B9ull +
                          std::uint64_t(buffer_) * 0x94D049BB133111EBull + 1;
    std::vector<float> out(count);
    for (float& v : out) {
      const double u = double(next(state) >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      v = float(lo + (hi - lo) * u);
    }
    if (int8_term_ != 0 && buffer_ == 0) weights_ = out;
    write(out, type);
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

  bool weighted() const {
    return type_ == "Convolution" || type_ == "ConvolutionDepthWise" ||
           type_ == "Deconvolution" || type_ == "DeconvolutionDepthWise" ||
           type_ == "InnerProduct";
  }

  /// A quantized layer's scales (ncnn's int8_scale_term), as ncnn's quantization tools write
  /// them: 127 / max|w| for each of `count` equal parts of the layer's weights, then blob scales
  /// for activations within +-4.
  Result<std::vector<float>> int8_scales(std::size_t count, WeightType type) {
    std::vector<float> out(count, 127.f / 4.f);
    if (buffer_ == (bias_term_ ? 2 : 1) && count > 0 && weights_.size() % count == 0) {
      const std::size_t per = weights_.size() / count;
      for (std::size_t g = 0; g < count; ++g) {
        float m = 0;
        for (std::size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(weights_[g * per + i]));
        out[g] = m > 0 ? 127.f / m : 1.f;
      }
    }
    write(out, type);
    ++buffer_;
    return out;
  }

  void write(const std::vector<float>& v, WeightType type) {
    if (bin_) detail::append_weights(*bin_, v, type);
  }

  /// The value range of the current buffer.
  std::pair<double, double> range(std::size_t count) const {
    if (weighted() && buffer_ == 0) {
      // Uniform(-a, a) has variance a^2 / 3; He's 2 / fan_in gives a = sqrt(6 / fan_in).
      const double fan_in =
          num_output_ > 0 ? std::max(1.0, double(count) / num_output_) : double(count ? count : 1);
      const double a = std::sqrt(6.0 / fan_in);
      return {-a, a};
    }
    if (weighted()) return {-0.1, 0.1};  // bias
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
  int int8_term_ = 0, bias_term_ = 0;
  int buffer_ = 0;
  std::uint64_t layer_ = 0;
  std::vector<float> weights_;  ///< a quantized layer's weights, for its weight scales
};

/// The random weights ncnn's peer tool ncnn_weights writes (../shared/peers/ncnn_weights.cpp
/// states the scheme), bit for bit, so that a test regenerates on any machine the weights ncnn's
/// reference outputs were made with: one std::mt19937 over the whole file in .param order,
/// std::uniform_real_distribution<float> per buffer; convolution and inner-product weights in
/// +-sqrt(3 / (weight_data_size / num_output)), biases in +-0.1, BatchNorm slope and variance in
/// [0.5, 1.5), mean and bias in +-0.1, Scale in [0.5, 1.5) and +-0.1, PReLU slopes in [0.05, 0.3),
/// MemoryData in +-1, LayerNorm in [0.5, 1.5) and +-0.1, MultiHeadAttention's projections in
/// +-sqrt(3 / input width) with biases in +-0.1, Gemm's constant B in +-sqrt(3 / K) and constant C
/// in +-0.1; int8 layers' weight scales 127 / max|w|
/// per output channel or group of the weights just drawn and blob scales 127 / 3. Any other layer
/// that asks for weights is an error (the tool refuses it too).
class NcnnRandomWeights final : public ModelBin {
 public:
  /// `bin`, when given, receives the buffers as ncnn .bin bytes (tagged buffers as f32).
  explicit NcnnRandomWeights(std::uint32_t seed = 1234, std::vector<std::byte>* bin = nullptr)
      : rng_(seed), bin_(bin) {}

  /// The layer whose buffers come next.
  void begin_layer(const LayerSpec& spec) {
    type_ = spec.type;
    name_ = spec.name;
    params_ = &spec.params;
    buffer_ = 0;
    weights_.clear();
  }

  Result<std::vector<float>> load(std::size_t count, WeightType type) override {
    auto v = buffer(count);
    if (v.ok() && bin_) detail::append_weights(*bin_, *v, type);
    return v;
  }

 private:
  Result<std::vector<float>> buffer(std::size_t count) {
    last_type_ = ElemType::f32;
    if (count > RandomWeights::kMaxCount)
      return make_error("layer {} '{}' asks for {} weights in buffer {}, more than {}", type_,
                        name_, count, buffer_, RandomWeights::kMaxCount);
    const int b = buffer_++;
    const bool conv = type_ == "Convolution" || type_ == "ConvolutionDepthWise" ||
                      type_ == "Deconvolution" || type_ == "DeconvolutionDepthWise" ||
                      type_ == "Convolution1D";
    if (conv || type_ == "InnerProduct") {
      const int nout = param(0, 0);
      const int wsize = param(conv ? 6 : 2, 0);
      const bool bias = param(conv ? 5 : 1, 0) != 0;
      if (b == 0) {
        const float a = std::sqrt(3.f / float(std::max(1, wsize / std::max(1, nout))));
        weights_ = draw(count, -a, a);
        return weights_;
      }
      if (bias && b == 1) return draw(count, -0.1f, 0.1f);
      const int scale_buffer = b - (bias ? 2 : 1);
      if (scale_buffer == 0) return absmax_scales(count);
      return std::vector<float>(count, 127.f / 3.f);  // bottom (and top) blob scales
    }
    if (type_ == "BatchNorm")
      return b == 0 || b == 2 ? draw(count, 0.5f, 1.5f) : draw(count, -0.1f, 0.1f);
    if (type_ == "Scale" || type_ == "LayerNorm")
      return b == 0 ? draw(count, 0.5f, 1.5f) : draw(count, -0.1f, 0.1f);
    if (type_ == "PReLU") return draw(count, 0.05f, 0.3f);
    if (type_ == "MemoryData") return draw(count, -1.f, 1.f);
    if (type_ == "MultiHeadAttention") {
      // q, k, v, out weights (each +-sqrt(3 / its input width)) with their biases after each.
      if (b % 2 == 1) return draw(count, -0.1f, 0.1f);
      const int e = param(0, 0), qdim = param(2, 0) / std::max(1, e);
      const int in = b == 0 ? qdim : b == 2 ? param(3, e) : b == 4 ? param(4, e) : e;
      const float a = std::sqrt(3.f / float(std::max(1, in)));
      return draw(count, -a, a);
    }
    if (type_ == "Gemm") {
      // B (+-sqrt(3 / K)) when constant, then C (+-0.1) when constant; a constant A is not in
      // the tool's scheme.
      if (param(4, 0) != 0)
        return make_error("layer {} '{}': a constant-A Gemm is not in ncnn_weights' scheme", type_,
                          name_);
      if (param(5, 0) != 0 && b == 0) {
        const float a = std::sqrt(3.f / float(std::max(1, param(9, 0))));
        return draw(count, -a, a);
      }
      return draw(count, -0.1f, 0.1f);
    }
    return make_error("layer {} '{}': ncnn_weights' scheme does not cover this layer type", type_,
                      name_);
  }

  int param(int key, int def) const {
    if (!params_ || !params_->has(key) || params_->is_array(key)) return def;
    const ParamDict::Entry& e = params_->entry(key);
    return e.scalar.kind == ParamValue::float_value ? int(e.scalar.f) : e.scalar.i;
  }

  /// std::uniform_real_distribution<float>(lo, hi) of libstdc++ on the std::mt19937, as the
  /// tool's baseline x86-64 build computes it: u = float(rng()) / 2^32 (below 1), then
  /// u * (hi - lo) + lo rounded after the product. Written out so that a build with FMA does not
  /// fuse the product and the sum, which moves values by an ulp.
  std::vector<float> draw(std::size_t count, float lo, float hi) {
    const float span = hi - lo;
    std::vector<float> v(count);
    for (float& x : v) {
      float u = float(rng_()) / 4294967296.0f;
      if (u >= 1.f) u = std::nextafter(1.f, 0.f);
      volatile float product = u * span;
      x = product + lo;
    }
    return v;
  }

  /// 127 / max|w| over each of `groups` equal parts of the weights drawn for this layer.
  std::vector<float> absmax_scales(std::size_t groups) const {
    std::vector<float> s(groups, 1.f);
    if (groups == 0 || weights_.size() % groups != 0) return s;
    const std::size_t per = weights_.size() / groups;
    for (std::size_t g = 0; g < groups; ++g) {
      float m = 0;
      for (std::size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(weights_[g * per + i]));
      s[g] = m > 0 ? 127.f / m : 1.f;
    }
    return s;
  }

  std::mt19937 rng_;
  std::string type_, name_;
  const ParamDict* params_ = nullptr;
  int buffer_ = 0;
  std::vector<float> weights_;
  std::vector<std::byte>* bin_ = nullptr;
};

}  // namespace infer::io
