// ncnn Scale: y = x * scale[i] (+ bias[i]) per index of the packing axis. The scale comes from the
// weights, or, with scale_data_size = -233, from a second input blob (the multi-blob form).
// f32/f16/bf16 storage, every pack, in place.
#pragma once

#include <infer/concepts.hpp>
#include <infer/convert.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/layers/detail/affine.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/affine.hpp>
#include <infer/vulkan/binary_op.hpp>
#endif

namespace infer::layers {

struct Scale {
  static constexpr std::string_view ncnn_type = "Scale";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  int scale_data_size = 0;          ///< ncnn 0=scale_data_size; -233: the scale is the second input
  bool bias_term = false;           ///< ncnn 1=bias_term
  std::vector<float> scale_data{};  ///< weights, scale_data_size values
  std::vector<float> bias_data{};   ///< weights, scale_data_size values when bias_term

  using storage = float_storage;
  using packs = all_packs;

  /// One input with the scale in the weights, or (scale_data_size = -233) two: the blob and a
  /// blob of one scale per index of its packing axis. The output has the first input's shape.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (in.size() != (scale_data_size == -233 ? 2u : 1u))
      return shape_error("takes 1 input, or 2 with scale_data_size = -233");
    for (const Shape& s : in)
      if (s.dims < 1 || s.dims > 4) return shape_error("input must have 1 to 4 dims");
    const int n = in[0].packed_extent();
    if (scale_data_size == -233) {
      if (in[1].total() != std::size_t(n))
        return shape_error("the scale blob must hold one value per channel of the first input");
    } else {
      if (scale_data_size != n)
        return shape_error("scale_data_size differs from the input's channel count");
      if (!scale_data.empty() && scale_data.size() != std::size_t(n))
        return shape_error("scale_data does not hold scale_data_size values");
    }
    if (bias_term && !bias_data.empty() && bias_data.size() != std::size_t(n))
      return shape_error("bias_data does not hold one value per channel");
    out[0] = in[0];
    return {};
  }

  /// Reads scale_data then, with bias_term, bias_data (raw f32, ncnn's order); nothing for the
  /// two-blob form (scale_data_size = -233).
  Status load(io::ModelBin& mb) {
    if (scale_data_size == -233) return {};
    if (scale_data_size <= 0)
      return make_error("Scale: scale_data_size must be positive or -233, got {}", scale_data_size);
    auto s = mb.load(std::size_t(scale_data_size), io::WeightType::raw_f32);
    if (!s.ok()) return make_error("Scale: scale_data: {}", s.message());
    scale_data = std::move(s).value();
    if (bias_term) {
      auto b = mb.load(std::size_t(scale_data_size), io::WeightType::raw_f32);
      if (!b.ok()) return make_error("Scale: bias_data: {}", b.message());
      bias_data = std::move(b).value();
    }
    return {};
  }

  /// One-blob form: scale from the weights.
  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    INFER_TRY(check_weights(blob.shape().packed_extent()));
    detail::per_axis_affine<T, Pack>(blob, blob, scale_data.data(),
                                     bias_term ? bias_data.data() : nullptr, opt);
    return {};
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(check_weights(bottom.shape().packed_extent()));
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    detail::per_axis_affine<T, Pack>(bottom, top, scale_data.data(),
                                     bias_term ? bias_data.data() : nullptr, opt);
    return {};
  }

  /// Two-blob form (scale_data_size = -233): blobs[0] *= blobs[1], a 1-D blob of one scale per
  /// index of blobs[0]'s packing axis.
  template <StorageElement T, int Pack>
  Status forward_inplace(std::span<Mat> blobs, const Option& opt) const {
    if (scale_data_size != -233)
      return make_error("Scale: two inputs need scale_data_size = -233, got {}", scale_data_size);
    if (blobs.size() != 2) return make_error("Scale: expected 2 inputs, got {}", blobs.size());
    const int n = blobs[0].shape().packed_extent();
    if (blobs[1].shape().total() != std::size_t(n))
      return make_error("Scale: the scale blob {} should hold {} values", blobs[1].describe(), n);
    if (bias_term && bias_data.size() != std::size_t(n))
      return make_error("Scale: expected {} bias values, got {}", n, bias_data.size());
    // A 1-D blob's packed layout is the plain one; read it as f32 values.
    Mat scale;
    INFER_TRY(cast(blobs[1], scale, ElemType::f32, opt));
    if (!scale.dense()) return make_error("Scale: the scale blob must be dense");
    detail::per_axis_affine<T, Pack>(blobs[0], blobs[0], scale.data_as<const float>(),
                                     bias_term ? bias_data.data() : nullptr, opt);
    return {};
  }


#ifdef INFER_HAS_VULKAN
  /// On the GPU: y = x * scale (+ bias) per channel; the scale from the weights, or (two-blob
  /// form) the second input, broadcast over the first.
  Status upload_vulkan(vk::Uploader& up) const {
    if (scale_data_size != -233) {
      auto s = up.add(scale_data);
      INFER_TRY(s);
    }
    if (bias_term) {
      auto b = up.add(bias_data);
      INFER_TRY(b);
    }
    return {};
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    const bool two_blob = scale_data_size == -233;
    const std::size_t weights = (two_blob ? 0u : 1u) + (bias_term ? 1u : 0u);
    if (in.size() != (two_blob ? 2u : 1u) || out.size() != 1 || step.weights.size() != weights)
      return make_error("Scale GPU forward: {} input(s), one output and {} weight tensor(s) "
                        "needed, got {}, {} and {}",
                        two_blob ? 2 : 1, weights, in.size(), out.size(), step.weights.size());
    const vk::VkMat* bias = bias_term ? &step.weights.back() : nullptr;
    if (!two_blob) return vk::record_affine(rec, in[0], out[0], &step.weights[0], bias);
    // The scale blob holds one value per channel: as a 1-D [c] it broadcasts over the channels.
    INFER_TRY(vk::record_binary_op(rec, in[0], &in[1], out[0], vk::BinaryOpKind::mul));
    if (!bias) return {};
    INFER_TRY(rec.barrier());
    return vk::record_affine(rec, out[0], out[0], nullptr, bias);
  }
#endif

 private:
  Status check_weights(int n) const {
    if (scale_data_size == -233)
      return make_error("Scale: scale_data_size = -233 takes the scale from a second input");
    if (scale_data_size != n)
      return make_error("Scale: input has {} values on its packing axis, scale_data_size is {}", n,
                        scale_data_size);
    if (scale_data.size() != std::size_t(n) || (bias_term && bias_data.size() != std::size_t(n)))
      return make_error("Scale: expected {} scale{} values, got {} and {}", n,
                        bias_term ? " and bias" : "", scale_data.size(), bias_data.size());
    return {};
  }
};

}  // namespace infer::layers
