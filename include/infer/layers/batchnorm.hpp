// ncnn BatchNorm: y = (x - mean) / sqrt(var + eps) * slope + bias per index of the packing axis,
// folded at load into y = x * a + b. f32/f16/bf16 storage, every pack, one blob, in place.
#pragma once

#include <cmath>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/layers/detail/affine.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/affine.hpp>
#endif

namespace infer::layers {

struct BatchNorm {
  static constexpr std::string_view ncnn_type = "BatchNorm";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  int channels = 0;        ///< ncnn 0=channels
  float eps = 0.f;         ///< ncnn 1=eps
  std::vector<float> a{};  ///< slope / sqrt(var + eps), from load()
  std::vector<float> b{};  ///< bias - mean * a, from load()

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (channels <= 0) return shape_error("channels must be positive");
    if (in[0].packed_extent() != channels)
      return shape_error("input's channel count (its packing axis) differs from channels");
    if (!a.empty() && a.size() != std::size_t(channels))
      return shape_error("loaded weights do not hold one value per channel");
    return {};
  }

  /// Reads slope, mean, var and bias (raw f32, `channels` each, ncnn's order) and folds them.
  Status load(io::ModelBin& mb) {
    if (channels <= 0) return make_error("BatchNorm: channels must be positive, got {}", channels);
    std::vector<float> w[4];
    const char* names[4] = {"slope", "mean", "var", "bias"};
    for (int i = 0; i < 4; ++i) {
      auto r = mb.load(std::size_t(channels), io::WeightType::raw_f32);
      if (!r.ok()) return make_error("BatchNorm: {}: {}", names[i], r.message());
      w[i] = std::move(r).value();
    }
    return load(w[0], w[1], w[2], w[3]);
  }

  /// Takes the weights in ncnn's .bin order (slope, mean, var, bias) and folds them into a, b.
  Status load(const std::vector<float>& slope, const std::vector<float>& mean,
              const std::vector<float>& var, const std::vector<float>& bias) {
    const std::size_t n = std::size_t(channels);
    if (channels <= 0) return make_error("BatchNorm: channels must be positive, got {}", channels);
    if (slope.size() != n || mean.size() != n || var.size() != n || bias.size() != n)
      return make_error(
          "BatchNorm: expected {} values in slope, mean, var and bias, got {}, {}, {}, {}", n,
          slope.size(), mean.size(), var.size(), bias.size());
    a.resize(n);
    b.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = slope[i] / std::sqrt(var[i] + eps);
      b[i] = bias[i] - mean[i] * a[i];
    }
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    INFER_TRY(check(blob));
    detail::per_axis_affine<T, Pack>(blob, blob, a.data(), b.data(), opt);
    return {};
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(check(bottom));
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    detail::per_axis_affine<T, Pack>(bottom, top, a.data(), b.data(), opt);
    return {};
  }


#ifdef INFER_HAS_VULKAN
  /// On the GPU (where it was not folded into a convolution): y = x * a + b per channel.
  Status upload_vulkan(vk::Uploader& up) const {
    auto ga = up.add(a);
    INFER_TRY(ga);
    auto gb = up.add(b);
    INFER_TRY(gb);
    return {};
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1 || step.weights.size() != 2)
      return make_error("BatchNorm GPU forward: one input, one output and a, b uploaded");
    return vk::record_affine(rec, in[0], out[0], &step.weights[0], &step.weights[1]);
  }
#endif

 private:
  Status check(const Mat& m) const {
    if (a.size() != std::size_t(channels) || b.size() != std::size_t(channels))
      return make_error("BatchNorm: weights not loaded (call load) for {} channels", channels);
    if (m.shape().packed_extent() != channels)
      return make_error("BatchNorm: input {} has {} channels on its packing axis, expected {}",
                        m.describe(), m.shape().packed_extent(), channels);
    return {};
  }
};

}  // namespace infer::layers
