// ncnn Flatten: any blob becomes a 1-D blob of all its values in logical (c, d, h, w) order. Pure
// data movement: every storage type and pack; one blob, out of place.
#pragma once

#include <cstdint>
#include <infer/concepts.hpp>
#include <infer/layers/detail/relayout.hpp>
#include <infer/shape.hpp>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/relayout.hpp>
#endif

namespace infer::layers {

struct Flatten {
  static constexpr std::string_view ncnn_type = "Flatten";  ///< its type in .param files
  using storage = all_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    if (in[0].total() > std::size_t(INT32_MAX))
      return shape_error("too many values for a 1-D blob");
    out[0] = Shape::of(static_cast<int>(in[0].total()));
    return {};
  }

  /// The output is always a copy, never a view of the input, so its memory is the output's own
  /// (a planned arena slot stays valid after the input's slot is reused).
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    const std::size_t n = bottom.shape().total();
    if (n > std::size_t(INT32_MAX))
      return make_error("Flatten: {} values do not fit a 1-D blob (at most {})", n, INT32_MAX);
    const int total = static_cast<int>(n);
    INFER_TRY(
        top.create(Shape::of(total), elem_type_v<T>, pack_for(total, Pack), opt.blob_alloc()));
    detail::copy_flat<detail::bits_t<T>>(bottom, top, opt.num_threads);
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the values in their logical order into the output's shape (relayout kernel).
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Flatten GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_relayout(rec, in[0], out[0]);
  }
#endif
};

}  // namespace infer::layers
