// ncnn Concat: N blobs joined along one axis (ncnn's numbering, axis 0 outermost; negative counts
// from the end). Every storage type and pack; the output takes the inputs' pack when its packing
// axis allows it, a narrower one otherwise.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <infer/concepts.hpp>
#include <infer/layers/detail/remap.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/relayout.hpp>
#endif

namespace infer::layers {

struct Concat {
  static constexpr std::string_view ncnn_type = "Concat";  ///< its type in .param files
  int axis = 0;  ///< ncnn 0=axis

  using storage = all_storage;
  using packs = all_packs;
  /// Only moves values: a graph runs it at the pack its inputs arrive in, not converting them.
  static constexpr bool moves_data = true;
  /// The inputs are consecutive ranges of the output along axis: a graph may place them there.
  static constexpr AxisRanges axis_ranges = AxisRanges::inputs_of_output;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.empty()) return shape_error("expects at least one input blob");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    const int dims = in[0].dims;
    if (dims < 1 || dims > 4) return shape_error("input must have 1 to 4 dims");
    if (axis < -dims || axis >= dims) return shape_error("axis is out of range for the inputs");
    const int a = axis < 0 ? axis + dims : axis;
    std::array<int, 4> e = in[0].outer_first();
    std::int64_t total = 0;
    for (const Shape& s : in) {
      if (s.dims != dims) return shape_error("inputs must have the same dims");
      const std::array<int, 4> es = s.outer_first();
      for (int k = 0; k < dims; ++k)
        if (k != a && es[k] != e[k])
          return shape_error("inputs may differ only in their extent along axis");
      total += es[a];
    }
    if (total > INT_MAX) return shape_error("the joined extent is too large");
    e[a] = static_cast<int>(total);
    out[0] = Shape::from_outer_first(dims, e);
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (bottoms.empty()) return make_error("Concat: expected at least 1 input, got 0");
    if (tops.size() != 1) return make_error("Concat: expected 1 output, got {}", tops.size());
    for (std::size_t i = 0; i < bottoms.size(); ++i)
      INFER_TRY(detail::check_input<T, Pack>("Concat", bottoms[i], i));
    const Shape first = bottoms[0].shape();
    const int dims = first.dims;
    if (axis < -dims || axis >= dims)
      return make_error("Concat: axis {} is out of range for {}-D inputs (expected {} to {})", axis,
                        dims, -dims, dims - 1);
    const int a = axis < 0 ? axis + dims : axis;
    std::array<int, 4> out = detail::axis_extents(first);
    std::int64_t total = 0;
    for (std::size_t i = 0; i < bottoms.size(); ++i) {
      const Shape s = bottoms[i].shape();
      if (s.dims != dims)
        return make_error("Concat: input {} is {}-D but input 0 is {}-D", i, s.dims, dims);
      const std::array<int, 4> e = detail::axis_extents(s);
      for (int k = 0; k < dims; ++k) {
        if (k != a && e[k] != out[k])
          return make_error(
              "Concat: input {} has extent {} on axis {} but input 0 has {}; only axis {} may "
              "differ",
              i, e[k], k, out[k], a);
      }
      total += e[a];
    }
    if (total > INT_MAX)
      return make_error("Concat: {} values along axis {} is more than an extent can hold", total,
                        a);
    if (bottoms.size() == 1) {
      tops[0] = bottoms[0];
      return {};
    }
    out[a] = static_cast<int>(total);
    const Shape out_shape = detail::shape_of_axes(dims, out);
    Mat& top = tops[0];
    INFER_TRY(top.create(out_shape, elem_type_v<T>, pack_for(out_shape.packed_extent(), Pack),
                         opt.blob_alloc()));
    int offset = 0;
    for (const Mat& bottom : bottoms) {
      const std::array<int, 4> e = detail::axis_extents(bottom.shape());
      if (a == 0 && detail::is_channel_range(bottom, top, offset)) {  // already in place
        offset += e[a];
        continue;
      }
      std::vector<detail::AxisMap> maps;
      for (int k = 0; k < dims; ++k)
        maps.push_back(detail::AxisMap::range(e[k], 0, k == a ? offset : 0));
      detail::remap<T>(bottom, top, maps, {}, opt.num_threads);
      offset += e[a];
    }
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: each input written into its range of the output along axis (relayout kernel),
  /// except those the plan already placed there.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.empty() || out.size() != 1)
      return make_error("Concat GPU forward: inputs and one output needed, got {} and {}",
                        in.size(), out.size());
    const int dims = out[0].shape().dims;
    const int a = axis < 0 ? axis + dims : axis;
    int first = 0;
    for (const vk::VkMat& part : in) {
      if (!detail::is_range_of(part, out[0], a, first))
        INFER_TRY(vk::record_concat_part(rec, part, out[0], axis, first));
      first += part.shape().outer_first()[std::size_t(a)];
    }
    return {};
  }
#endif
};

}  // namespace infer::layers
