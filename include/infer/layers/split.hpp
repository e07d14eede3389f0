// ncnn Split: one blob in, N out, all sharing the input's storage (a Mat copy is a
// reference-counted share, as in ncnn), so no value moves. Every storage type and pack.
#pragma once

#include <infer/concepts.hpp>
#include <infer/layers/detail/remap.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#endif

namespace infer::layers {

struct Split {
  static constexpr std::string_view ncnn_type = "Split";  ///< its type in .param files
  using storage = all_storage;
  using packs = all_packs;
  /// Every output is the input itself: a graph gives them the input's memory and runs nothing.
  static constexpr bool outputs_share_input = true;

  /// Every output (as many as the node has, at least one) has the input's shape.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.size() != 1) return shape_error("expects exactly one input blob");
    if (out.empty()) return shape_error("gives at least one output blob");
    if (in[0].dims < 1 || in[0].dims > 4) return shape_error("input must have 1 to 4 dims");
    for (Shape& s : out) s = in[0];
    return {};
  }

  /// Each of `tops` (as many as the caller wants outputs, at least one) becomes `bottoms[0]`.
  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option&) const {
    if (bottoms.size() != 1) return make_error("Split: expected 1 input, got {}", bottoms.size());
    if (tops.empty()) return make_error("Split: expected at least 1 output, got 0");
    INFER_TRY(detail::check_input<T, Pack>("Split", bottoms[0], 0));
    for (Mat& top : tops) top = bottoms[0];
    return {};
  }
#ifdef INFER_HAS_VULKAN
  /// On the GPU the outputs are views of the input (nothing runs); where the plan gave an output
  /// its own memory, a copy.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1) return make_error("Split: expected 1 input, got {}", in.size());
    for (const vk::VkMat& o : out) {
      if (detail::same_memory(in[0], o)) continue;
      INFER_TRY(rec.copy(in[0], 0, o, 0, in[0].bytes()));
    }
    return {};
  }
#endif
};

}  // namespace infer::layers
