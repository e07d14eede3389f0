// ncnn Reshape: the same values in logical (c, d, h, w) order under a new shape of 1 to 4 dims.
// Pure data movement: every storage type and pack; one blob, out of place.
#pragma once

#include <array>
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

struct Reshape {
  static constexpr std::string_view ncnn_type = "Reshape";  ///< its type in .param files
  /// An extent's special values (ncnn's "reshape flag").
  static constexpr int kKeep = 0;     ///< the input's extent on the same axis
  static constexpr int kInfer = -1;   ///< whatever makes the total come out right (one axis only)
  static constexpr int kDrop = -233;  ///< no such axis: w, h, c, d are dropped from the end

  int w = kDrop;  ///< ncnn 0=w
  int h = kDrop;  ///< ncnn 1=h
  int d = kDrop;  ///< ncnn 11=d
  int c = kDrop;  ///< ncnn 2=c
  // ncnn 3=permute (reshape as if the blob were stored h-w-c) is not supported: current ncnn no
  // longer reads it, and its converters stopped writing it.

  using storage = all_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    const std::array<int, 4> key = {w, h, c, d};  // ncnn drops axes from the end of w, h, c, d
    int dims = 0;
    while (dims < 4 && key[dims] != kDrop) ++dims;
    if (dims == 0) return shape_error("no output shape (w is -233)");
    for (int i = dims; i < 4; ++i)
      if (key[i] != kDrop) return shape_error("an extent is set after a dropped (-233) one");
    const std::array<int, 4> in_extent = {in[0].w, in[0].h, in[0].c, in[0].d};
    std::array<std::int64_t, 4> e = {1, 1, 1, 1};
    int infer_at = -1;
    std::int64_t known = 1;
    for (int i = 0; i < dims; ++i) {
      if (key[i] == kInfer) {
        if (infer_at >= 0) return shape_error("at most one extent can be -1 (inferred)");
        infer_at = i;
        continue;
      }
      if (key[i] < kInfer) return shape_error("an extent must be > 0, 0, -1 or -233");
      e[i] = key[i] == kKeep ? in_extent[i] : key[i];
      known *= e[i];
    }
    const auto total = static_cast<std::int64_t>(in[0].total());
    if (infer_at >= 0) {
      if (total % known != 0) return shape_error("the -1 extent cannot make the total come out");
      e[infer_at] = total / known;
      known = total;
    }
    if (known != total) return shape_error("the output shape holds a different number of values");
    for (std::int64_t x : e)
      if (x > INT32_MAX) return shape_error("an output extent is too large");
    const int ow = int(e[0]), oh = int(e[1]), oc = int(e[2]), od = int(e[3]);
    out[0] = dims == 1   ? Shape::of(ow)
             : dims == 2 ? Shape::of(ow, oh)
             : dims == 3 ? Shape::of(ow, oh, oc)
                         : Shape::of(ow, oh, od, oc);
    return {};
  }

  /// The output's logical shape for an input of logical shape `in`, or why there is none.
  Result<Shape> output_shape(const Shape& in) const {
    // ncnn drops axes from the end of the order w, h, c, d: the first dropped one ends the shape.
    const std::array<int, 4> key = {w, h, c, d};
    static constexpr const char* kName[4] = {"w", "h", "c", "d"};
    int dims = 0;
    while (dims < 4 && key[dims] != kDrop) ++dims;
    if (dims == 0) return make_error("Reshape: no output shape (w is -233, the 'drop' value)");
    for (int i = dims; i < 4; ++i) {
      if (key[i] != kDrop)
        return make_error("Reshape: {}={} is set but {} is dropped (-233)", kName[i], key[i],
                          kName[dims]);
    }
    const std::array<int, 4> in_extent = {in.w, in.h, in.c, in.d};
    std::array<long long, 4> out = {1, 1, 1, 1};
    int infer_at = -1;
    long long known = 1;
    for (int i = 0; i < dims; ++i) {
      if (key[i] == kInfer) {
        if (infer_at >= 0)
          return make_error("Reshape: both {} and {} are -1; at most one extent can be inferred",
                            kName[infer_at], kName[i]);
        infer_at = i;
        continue;
      }
      if (key[i] < kInfer)
        return make_error("Reshape: {}={} is not an extent (expected > 0, 0, -1 or -233)", kName[i],
                          key[i]);
      out[i] = key[i] == kKeep ? in_extent[i] : key[i];
      known *= out[i];
    }
    const long long total = static_cast<long long>(in.total());
    if (infer_at >= 0) {
      if (total % known != 0)
        return make_error("Reshape: cannot infer {} (-1): {} values are not a multiple of {}",
                          kName[infer_at], total, known);
      out[infer_at] = total / known;
      known = total;
    }
    if (known != total)
      return make_error(
          "Reshape: {} input values cannot take the shape w={} h={} c={} d={} ({} "
          "values)",
          total, out[0], out[1], out[2], out[3], known);
    for (long long e : out) {
      if (e > INT32_MAX) return make_error("Reshape: an output extent of {} is too large", e);
    }
    const int ow = int(out[0]), oh = int(out[1]), oc = int(out[2]), od = int(out[3]);
    switch (dims) {
      case 1:
        return Shape::of(ow);
      case 2:
        return Shape::of(ow, oh);
      case 3:
        return Shape::of(ow, oh, oc);
      default:
        return Shape::of(ow, oh, od, oc);
    }
  }

  /// Always copies (ncnn returns a view where it can): the output's memory is its own, so a
  /// planned arena slot stays valid after the input's slot is reused.
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    Result<Shape> shape = output_shape(bottom.shape());
    if (!shape.ok()) return shape.error();
    const Shape s = *shape;
    INFER_TRY(top.create(s, elem_type_v<T>, pack_for(s.packed_extent(), Pack), opt.blob_alloc()));
    detail::copy_flat<detail::bits_t<T>>(bottom, top, opt.num_threads);
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the values in their logical order into the output's shape (relayout kernel).
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Reshape GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_relayout(rec, in[0], out[0]);
  }
#endif
};

}  // namespace infer::layers
