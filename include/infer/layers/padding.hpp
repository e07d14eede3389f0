// ncnn Padding, one-blob form: constant, replicate or reflect borders on w (left/right), h
// (top/bottom) and, via front/behind, on c of a 3-D blob or d of a 4-D one. Every storage type and
// pack; padding the packing axis may give the output a narrower pack. An i8 blob's constant is
// from_f32's float2int8(value) (ncnn truncates it). Not here: ncnn's two-blob form, whose pads come
// from a second blob (pads of -233/-234); it gives an Error.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <infer/concepts.hpp>
#include <infer/layers/detail/remap.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <utility>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/padding.hpp>
#endif

namespace infer::layers {

struct Padding {
  static constexpr std::string_view ncnn_type = "Padding";  ///< its type in .param files
  int top = 0;                        ///< ncnn 0=top
  int bottom = 0;                     ///< ncnn 1=bottom
  int left = 0;                       ///< ncnn 2=left
  int right = 0;                      ///< ncnn 3=right
  int type = 0;                       ///< ncnn 4=type: 0 constant, 1 replicate, 2 reflect
  float value = 0.f;                  ///< ncnn 5=value: the constant
  int per_channel_pad_data_size = 0;  ///< ncnn 6=per_channel_pad_data_size; 0: `value` for all
  int front = 0;                      ///< ncnn 7=front: before c (3-D) or d (4-D)
  int behind = 0;                     ///< ncnn 8=behind: after c (3-D) or d (4-D)
  /// Weight: the constant of each (output) channel of a 3-D/4-D blob, per_channel_pad_data_size
  /// of them; it replaces `value` there (1-D/2-D blobs use `value`, as in ncnn).
  std::vector<float> per_channel_pad_data{};

  using storage = all_storage;
  using packs = all_packs;

  /// Pads before and after each ncnn axis (0 outermost) of a dims-D blob: front/behind pad c of
  /// a 3-D blob and d of a 4-D one, whose c is never padded.
  constexpr std::array<std::array<int, 2>, 4> pads_by_axis(int dims) const {
    switch (dims) {
      case 1:
        return {{{left, right}}};
      case 2:
        return {{{top, bottom}, {left, right}}};
      case 3:
        return {{{front, behind}, {top, bottom}, {left, right}}};
      default:
        return {{{0, 0}, {front, behind}, {top, bottom}, {left, right}}};
    }
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    if (type < 0 || type > 2)
      return shape_error("type must be 0 (constant), 1 (replicate) or 2 (reflect)");
    if (top == -233 || top == -234)
      return shape_error("pads of -233/-234 (ncnn's two-blob form) are not supported");
    const int dims = in[0].dims;
    const std::array<int, 4> e = in[0].outer_first();
    const std::array<std::array<int, 2>, 4> pads = pads_by_axis(dims);
    std::array<int, 4> ext = e;
    for (int a = 0; a < dims; ++a) {
      const int before = pads[a][0], after = pads[a][1];
      if (before < 0 || after < 0) return shape_error("pads must not be negative");
      if (type == 2 && (before >= e[a] || after >= e[a]))
        return shape_error("reflect pads must be below the extent they pad");
      const std::int64_t total = std::int64_t(e[a]) + before + after;
      if (total > INT_MAX) return shape_error("a padded extent is too large");
      ext[a] = int(total);
    }
    out[0] = Shape::from_outer_first(dims, ext);
    // The per-channel constants are read only when something is padded (as forward does).
    if (out[0] != in[0] && per_channel_pad_data_size != 0 && dims >= 3 && type == 0) {
      if (per_channel_pad_data_size < out[0].c)
        return shape_error("per_channel_pad_data_size is below the output's channel count");
      if (!per_channel_pad_data.empty() &&
          per_channel_pad_data.size() != std::size_t(per_channel_pad_data_size))
        return shape_error("per_channel_pad_data does not hold per_channel_pad_data_size values");
    }
    return {};
  }

  /// Source index of each of `before + n + after` output positions along an axis of extent n
  /// (-1: the constant).
  Result<detail::AxisMap> axis_map(int n, int before, int after, const char* what) const {
    if (before < 0 || after < 0)
      return make_error("Padding: {} pads {} and {} must not be negative", what, before, after);
    if (type == 2 && (before >= n || after >= n))
      return make_error("Padding: reflect pads {} and {} on {} need an extent above them, got {}",
                        before, after, what, n);
    const std::int64_t total = std::int64_t(n) + before + after;
    if (total > INT_MAX) return make_error("Padding: {} would be {} long", what, total);
    detail::AxisMap m{0, std::vector<int>(static_cast<std::size_t>(total))};
    for (int i = 0; i < int(total); ++i) {
      int j = i - before;
      if (type == 0) {
        if (j < 0 || j >= n) j = -1;
      } else if (type == 1) {
        j = j < 0 ? 0 : j >= n ? n - 1 : j;
      } else {
        j = j < 0 ? -j : j >= n ? 2 * (n - 1) - j : j;
      }
      m.src[static_cast<std::size_t>(i)] = j;
    }
    return m;
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom_blob, Mat& top_blob, const Option& opt) const {
    INFER_TRY(detail::check_input<T, Pack>("Padding", bottom_blob, 0));
    if (type < 0 || type > 2)
      return make_error("Padding: type {} is not 0 (constant), 1 (replicate) or 2 (reflect)", type);
    if (top == -233 || top == -234)
      return make_error("Padding: pads of {} select ncnn's two-blob form, which is not supported",
                        top);
    const Shape in = bottom_blob.shape();
    const int dims = in.dims;
    const std::array<int, 4> e = detail::axis_extents(in);
    // Pads before/after each ncnn axis (0 outermost) for this many dims.
    std::array<int, 4> before{}, after{};
    std::array<const char*, 4> names{};
    auto set = [&](int a, int b, int f, const char* name) {
      before[a] = b;
      after[a] = f;
      names[a] = name;
    };
    switch (dims) {
      case 1:
        set(0, left, right, "w (left/right)");
        break;
      case 2:
        set(0, top, bottom, "h (top/bottom)");
        set(1, left, right, "w (left/right)");
        break;
      case 3:
        set(0, front, behind, "c (front/behind)");
        set(1, top, bottom, "h (top/bottom)");
        set(2, left, right, "w (left/right)");
        break;
      default:
        set(0, 0, 0, "c");
        set(1, front, behind, "d (front/behind)");
        set(2, top, bottom, "h (top/bottom)");
        set(3, left, right, "w (left/right)");
        break;
    }
    std::vector<detail::AxisMap> maps;
    std::array<int, 4> out{1, 1, 1, 1};
    for (int a = 0; a < dims; ++a) {
      auto m = axis_map(e[a], before[a], after[a], names[a]);
      if (!m.ok()) return m.error();
      out[a] = m.value().size();
      maps.push_back(std::move(m).value());
    }
    const Shape out_shape = detail::shape_of_axes(dims, out);
    if (out_shape == in) {
      top_blob = bottom_blob;
      return {};
    }

    using V = detail::bits_of<T>;
    std::vector<V> fill;
    const int channels = dims >= 3 ? out_shape.c : 1;
    if (per_channel_pad_data_size != 0 && dims >= 3 && type == 0) {
      if (per_channel_pad_data_size < channels ||
          per_channel_pad_data.size() != std::size_t(per_channel_pad_data_size))
        return make_error(
            "Padding: per_channel_pad_data_size is {} with {} values, but the output has {} "
            "channels",
            per_channel_pad_data_size, per_channel_pad_data.size(), channels);
      for (int q = 0; q < channels; ++q)
        fill.push_back(detail::fill_bits<T>(per_channel_pad_data[q]));
    } else {
      fill.push_back(detail::fill_bits<T>(value));
    }
    INFER_TRY(top_blob.create(out_shape, elem_type_v<T>, pack_for(out_shape.packed_extent(), Pack),
                              opt.blob_alloc()));
    detail::remap<T>(bottom_blob, top_blob, maps, fill, opt.num_threads);
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the padding kernel with the pads pads_by_axis gives; per-channel constants
  /// uploaded as weights.
  Status upload_vulkan(vk::Uploader& up) const {
    if (per_channel_pad_data.empty()) return {};
    auto g = up.add(per_channel_pad_data);
    INFER_TRY(g);
    return {};
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Padding GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_padding(rec, in[0], out[0], pads_by_axis(in[0].shape().dims), type, value,
                              step.weights.empty() ? vk::VkMat{} : step.weights[0]);
  }
#endif
};

}  // namespace infer::layers
