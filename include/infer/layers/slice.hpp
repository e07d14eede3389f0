// ncnn Slice: one blob cut into consecutive parts along an axis (ncnn's numbering, axis 0
// outermost; negative counts from the end), given as sizes (-233: an even share of the rest) or as
// split indices. Every storage type and pack; a part whose packing axis is not a multiple of the
// input's pack gets a narrower one.
#pragma once

#include <array>
#include <infer/concepts.hpp>
#include <infer/layers/detail/remap.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <span>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/relayout.hpp>
#endif

namespace infer::layers {

struct Slice {
  static constexpr std::string_view ncnn_type = "Slice";  ///< its type in .param files
  /// ncnn 0=slices: the size of each output along `axis`; -233 takes an even share of what is
  /// left, (extent - used) / (outputs left). One entry per output; they must add up to the extent.
  SmallVector<int, 64> slices{};
  int axis = 0;  ///< ncnn 1=axis
  /// ncnn 2=indices: where outputs 1..N-1 start (negative counts from the end); one fewer than the
  /// outputs. Used instead of `slices` when given.
  SmallVector<int, 64> indices{};

  using storage = all_storage;
  using packs = all_packs;
  /// Only moves values: a graph runs it at the pack its inputs arrive in, not converting them.
  static constexpr bool moves_data = true;
  /// The outputs are consecutive ranges of the input along axis: a graph may place them there.
  static constexpr AxisRanges axis_ranges = AxisRanges::outputs_of_input;

  /// One output per part (the node's output count), each the input cut along axis.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.size() != 1) return shape_error("expects exactly one input blob");
    if (out.empty()) return shape_error("gives at least one output blob");
    const int dims = in[0].dims;
    if (dims < 1 || dims > 4) return shape_error("input must have 1 to 4 dims");
    if (axis < -dims || axis >= dims) return shape_error("axis is out of range for the input");
    const int a = axis < 0 ? axis + dims : axis;
    const std::array<int, 4> e = in[0].outer_first();
    const std::size_t outputs = out.size();
    if (slices.overflowed() || indices.overflowed())
      return shape_error("at most 64 slices or indices");
    if (indices.empty() && slices.empty())
      return shape_error("neither slices nor indices is given");
    if (!indices.empty() && indices.size() + 1 != outputs)
      return shape_error("indices must number one fewer than the outputs");
    if (indices.empty() && slices.size() != outputs)
      return shape_error("slices must number as many as the outputs");
    int used = 0;
    for (std::size_t i = 0; i < outputs; ++i) {
      int size = 0;
      if (!indices.empty()) {
        const int end = i + 1 == outputs ? e[a] : indices[i] < 0 ? e[a] + indices[i] : indices[i];
        if (end <= used || end > e[a])
          return shape_error("indices must rise strictly inside the axis");
        size = end - used;
      } else {
        size = slices[i] == -233 ? (e[a] - used) / static_cast<int>(outputs - i) : slices[i];
        if (size <= 0 || size > e[a] - used)
          return shape_error("each slice must be positive and fit in the axis");
      }
      used += size;
      std::array<int, 4> part = e;
      part[a] = size;
      out[i] = Shape::from_outer_first(dims, part);
    }
    if (used != e[a]) return shape_error("slices must add up to the axis extent");
    return {};
  }

  /// The size of each of `outputs` parts of an axis of `extent`, or an Error naming the problem.
  Result<std::vector<int>> sizes(int extent, std::size_t outputs) const {
    std::vector<int> out;
    int used = 0;
    if (!indices.empty()) {
      if (indices.size() + 1 != outputs)
        return make_error("Slice: {} indices give {} outputs, but {} outputs were asked for",
                          indices.size(), indices.size() + 1, outputs);
      for (std::size_t i = 0; i < outputs; ++i) {
        int end = extent;
        if (i + 1 < outputs) {
          const int index = indices[i];
          end = index < 0 ? extent + index : index;
        }
        if (end <= used || end > extent)
          return make_error(
              "Slice: output {} would span [{}, {}) of an axis of extent {}; indices must rise "
              "strictly inside the axis",
              i, used, end, extent);
        out.push_back(end - used);
        used = end;
      }
      return out;
    }
    if (slices.empty()) return make_error("Slice: neither slices nor indices is given");
    if (slices.size() != outputs)
      return make_error("Slice: {} slices given for {} outputs", slices.size(), outputs);
    for (std::size_t i = 0; i < outputs; ++i) {
      int size = slices[i];
      if (size == -233) size = (extent - used) / static_cast<int>(outputs - i);
      if (size <= 0 || size > extent - used)
        return make_error(
            "Slice: slice {} is {} (resolved {}) but {} of the axis extent {} is left; each slice "
            "must be positive and fit",
            i, slices[i], size, extent - used, extent);
      out.push_back(size);
      used += size;
    }
    if (used != extent)
      return make_error("Slice: slices add up to {} but the axis extent is {}", used, extent);
    return out;
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (bottoms.size() != 1) return make_error("Slice: expected 1 input, got {}", bottoms.size());
    if (tops.empty()) return make_error("Slice: expected at least 1 output, got 0");
    const Mat& bottom = bottoms[0];
    INFER_TRY(detail::check_input<T, Pack>("Slice", bottom, 0));
    const Shape in = bottom.shape();
    const int dims = in.dims;
    if (axis < -dims || axis >= dims)
      return make_error("Slice: axis {} is out of range for a {}-D input (expected {} to {})", axis,
                        dims, -dims, dims - 1);
    const int a = axis < 0 ? axis + dims : axis;
    const std::array<int, 4> e = detail::axis_extents(in);
    auto parts = sizes(e[a], tops.size());
    if (!parts.ok()) return parts.error();

    int first = 0;
    for (std::size_t i = 0; i < tops.size(); ++i) {
      const int n = parts.value()[i];
      if (n == e[a]) {  // the whole input: share it, as Split does
        tops[i] = bottom;
        continue;
      }
      std::array<int, 4> out = e;
      out[a] = n;
      const Shape out_shape = detail::shape_of_axes(dims, out);
      INFER_TRY(tops[i].create(out_shape, elem_type_v<T>, pack_for(out_shape.packed_extent(), Pack),
                               opt.blob_alloc()));
      if (a == 0 && detail::is_channel_range(tops[i], bottom, first)) {  // already in place
        first += n;
        continue;
      }
      std::vector<detail::AxisMap> maps;
      for (int k = 0; k < dims; ++k)
        maps.push_back(k == a ? detail::AxisMap::range(n, first) : detail::AxisMap::range(e[k]));
      detail::remap<T>(bottom, tops[i], maps, {}, opt.num_threads);
      first += n;
    }
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: each output read from its range of the input along axis (relayout kernel),
  /// except those the plan already placed there; the ranges follow from the outputs' shapes.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.empty())
      return make_error("Slice GPU forward: one input and outputs needed, got {} and {}",
                        in.size(), out.size());
    const int dims = in[0].shape().dims;
    const int a = axis < 0 ? axis + dims : axis;
    int first = 0;
    for (const vk::VkMat& part : out) {
      if (!detail::is_range_of(part, in[0], a, first))
        INFER_TRY(vk::record_slice_part(rec, in[0], part, axis, first));
      first += part.shape().outer_first()[std::size_t(a)];
    }
    return {};
  }
#endif
};

}  // namespace infer::layers
