// ncnn Mish: y = x * tanh(softplus(x)). One blob, in place; every pack.
// f32/f16/bf16 storage with f32 arithmetic; no i8: the op does not commute with an int8
// tensor's quantization scale, which ncnn keeps outside the blob.
#pragma once

#include <infer/concepts.hpp>
#include <infer/kernels/activation.hpp>
#include <infer/layers/detail/unary.hpp>
#include <infer/shape.hpp>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#endif

namespace infer::layers {

struct Mish {
  static constexpr std::string_view ncnn_type = "Mish";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return same_shape(in, out);
  }

  auto op() const { return act::Mish{}; }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return detail::unary_inplace<T, Pack>(blob, op(), opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    return detail::unary_forward<T, Pack>(bottom, top, op(), opt);
  }
#ifdef INFER_HAS_VULKAN
  /// On the GPU: the activation kernel (shaders/activation.glsl), in place.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    return detail::unary_vulkan(in, out, rec, vk::gpu_activation(op()));
  }
#endif
};

}  // namespace infer::layers
