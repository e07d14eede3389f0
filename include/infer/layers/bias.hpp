// ncnn Bias: y = x + bias[q] for channel q of a 3-D/4-D blob. As in ncnn, a 1-D or 2-D blob is one
// channel (it takes bias[0]). f32/f16/bf16 storage, every pack, one blob, in place.
#pragma once

#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/layers/detail/affine.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/affine.hpp>
#include <infer/vulkan/binary_op.hpp>
#endif

namespace infer::layers {

struct Bias {
  static constexpr std::string_view ncnn_type = "Bias";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  int bias_data_size = 0;          ///< ncnn 0=bias_data_size
  std::vector<float> bias_data{};  ///< weights, bias_data_size values

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (bias_data_size != (in[0].dims >= 3 ? in[0].c : 1))
      return shape_error("bias_data_size differs from the input's channel count");
    if (!bias_data.empty() && bias_data.size() != std::size_t(bias_data_size))
      return shape_error("bias_data does not hold bias_data_size values");
    return {};
  }

  /// Reads bias_data (bias_data_size raw f32 values), as ncnn's Bias does.
  Status load(io::ModelBin& mb) {
    if (bias_data_size <= 0)
      return make_error("Bias: bias_data_size must be positive, got {}", bias_data_size);
    auto b = mb.load(std::size_t(bias_data_size), io::WeightType::raw_f32);
    if (!b.ok()) return make_error("Bias: bias_data: {}", b.message());
    bias_data = std::move(b).value();
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return apply<T, Pack>(blob, blob, opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    return apply<T, Pack>(bottom, top, opt);
  }


#ifdef INFER_HAS_VULKAN
  /// On the GPU: y = x + bias per channel (3-D and 4-D), or + its one value.
  Status upload_vulkan(vk::Uploader& up) const {
    auto g = up.add(bias_data);
    INFER_TRY(g);
    return {};
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1 || step.weights.size() != 1 || bias_data.empty())
      return make_error("Bias GPU forward: one input, one output and the bias uploaded");
    if (in[0].shape().dims < 3)
      return vk::record_binary_op(rec, in[0], nullptr, out[0], vk::BinaryOpKind::add,
                                  bias_data[0]);
    return vk::record_affine(rec, in[0], out[0], nullptr, &step.weights[0]);
  }
#endif

 private:
  template <StorageElement T, int Pack>
  Status apply(const Mat& bottom, const Mat& top, const Option& opt) const {
    const int channels = bottom.dims() >= 3 ? bottom.shape().c : 1;
    if (bias_data_size != channels || bias_data.size() != std::size_t(channels))
      return make_error("Bias: input {} has {} channels; bias_data_size {}, {} bias values",
                        bottom.describe(), channels, bias_data_size, bias_data.size());
    if (bottom.dims() >= 3) {
      detail::per_axis_affine<T, Pack>(bottom, top, nullptr, bias_data.data(), opt);
    } else {
      const MatView<T, Pack> in = bottom.view<T, Pack>(), out = top.view<T, Pack>();
      kernels::channel_affine<T, 1>(in.data, out.data, in.channel_values(), nullptr,
                                    bias_data.data(), act::Identity{});
    }
    return {};
  }
};

}  // namespace infer::layers
