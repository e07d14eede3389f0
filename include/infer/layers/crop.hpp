// ncnn Crop, one-blob form: a box of the input, given per axis as offset + size (or offset from
// each end), or numpy-style as starts/ends/axes. Every storage type and pack; the output takes a
// narrower pack when its packing axis needs one. Not here: ncnn's two-blob form, which takes the
// output shape (or the offsets) from a second, reference blob; its parameters give an Error.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <infer/concepts.hpp>
#include <infer/layers/detail/remap.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/crop.hpp>
#endif

namespace infer::layers {

struct Crop {
  static constexpr std::string_view ncnn_type = "Crop";  ///< its type in .param files
  int woffset = 0;   ///< ncnn 0=woffset
  int hoffset = 0;   ///< ncnn 1=hoffset
  int doffset = 0;   ///< ncnn 13=doffset
  int coffset = 0;   ///< ncnn 2=coffset
  int outw = 0;      ///< ncnn 3=outw; -233: up to woffset2 from the end, else min(outw, that)
  int outh = 0;      ///< ncnn 4=outh; as outw
  int outd = 0;      ///< ncnn 14=outd; as outw
  int outc = 0;      ///< ncnn 5=outc; as outw
  int woffset2 = 0;  ///< ncnn 6=woffset2: values left out at the end of w
  int hoffset2 = 0;  ///< ncnn 7=hoffset2
  int doffset2 = 0;  ///< ncnn 15=doffset2
  int coffset2 = 0;  ///< ncnn 8=coffset2
  /// ncnn 9=starts: numpy-style start per listed axis (negative counts from the end, -233 is 0).
  /// With `ends` it replaces every parameter above.
  SmallVector<int, 4> starts{};
  /// ncnn 10=ends: numpy-style end per listed axis; -233 and, as in ncnn, any end <= 0 count from
  /// the end (so 0 means the whole rest).
  SmallVector<int, 4> ends{};
  /// ncnn 11=axes: the axes `starts`/`ends` apply to (ncnn's numbering, negative from the end);
  /// empty means 0, 1, ..., dims - 1.
  SmallVector<int, 4> axes{};

  using storage = all_storage;
  using packs = all_packs;
  /// Only moves values: a graph runs it at the pack its inputs arrive in, not converting them.
  static constexpr bool moves_data = true;

  /// A crop: offset and size along each ncnn axis (0 outermost).
  struct Box {
    std::array<int, 4> offset{}, size{};
  };

  /// The [start, end) that a numpy-style start/end pair selects on an axis of extent n: start
  /// -233 is 0 and a negative one counts from the end; end -233 is n, and an end <= 0 counts
  /// from the end (ncnn's rule). Unchecked: the range may be empty or reach outside the axis.
  static constexpr std::array<std::int64_t, 2> numpy_range(int start, int end, std::int64_t n) {
    const std::int64_t s = start == -233 ? 0 : start < 0 ? n + start : start;
    const std::int64_t e = end == -233 ? n : end > 0 ? end : n + end;
    return {s, e < n ? e : n};
  }
  /// The slot (0 c, 1 d, 2 h, 3 w) of the per-axis parameters that ncnn axis a of a dims-D blob
  /// takes: fewer dims drop outer slots (3-D has no d; 2-D no c, no d).
  static constexpr int param_slot(int a, int dims) {
    return dims >= 3 && a == 0 ? 0 : a + 4 - dims;
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    const int dims = in[0].dims;
    const std::array<int, 4> e = in[0].outer_first();
    std::array<int, 4> size = e;
    if (starts.overflowed() || ends.overflowed() || axes.overflowed())
      return shape_error("at most 4 starts, ends and axes");
    if (!starts.empty() || !ends.empty()) {
      if (starts.size() != ends.size()) return shape_error("starts and ends must pair up");
      if (axes.empty() && int(starts.size()) != dims)
        return shape_error("starts/ends without axes need one pair per input axis");
      if (!axes.empty() && axes.size() != starts.size())
        return shape_error("axes must pair up with starts/ends");
      std::array<bool, 4> seen{};
      for (std::size_t i = 0; i < starts.size(); ++i) {
        int a = axes.empty() ? int(i) : axes[i];
        if (a < -dims || a >= dims) return shape_error("axis is out of range for the input");
        if (a < 0) a += dims;
        if (seen[a]) return shape_error("an axis is listed twice");
        seen[a] = true;
        const auto [start, end] = numpy_range(starts[i], ends[i], e[a]);
        if (start < 0 || start >= e[a] || end <= start)
          return shape_error("start/end select an empty range or one outside the axis");
        size[a] = int(end - start);
      }
    } else {
      const std::array<int, 4> off1 = {coffset, doffset, hoffset, woffset};
      const std::array<int, 4> off2 = {coffset2, doffset2, hoffset2, woffset2};
      const std::array<int, 4> outs = {outc, outd, outh, outw};
      bool reference_form = true;
      for (int a = 0; a < dims; ++a) {
        const int p = param_slot(a, dims);
        reference_form = reference_form && outs[p] == 0 && off2[p] == 0;
      }
      if (reference_form)
        return shape_error("every out* and *offset2 is 0: ncnn's two-blob form is not supported");
      for (int a = 0; a < dims; ++a) {
        const int p = param_slot(a, dims);
        const std::int64_t o1 = off1[p], o2 = off2[p];
        std::int64_t n = e[a] - o1 - o2;
        if (outs[p] != -233 && outs[p] < n) n = outs[p];
        if (o1 < 0 || o2 < 0 || n <= 0 || o1 + n > e[a])
          return shape_error("offsets must be >= 0 and leave a non-empty crop");
        size[a] = int(n);
      }
    }
    out[0] = Shape::from_outer_first(dims, size);
    return {};
  }

  /// The box these parameters cut from an input of shape `in`, or an Error naming what is wrong.
  Result<Box> box(const Shape& in) const {
    const int dims = in.dims;
    const std::array<int, 4> e = detail::axis_extents(in);
    Box b;
    b.size = e;
    if (!starts.empty() || !ends.empty()) {
      if (starts.size() != ends.size())
        return make_error("Crop: {} starts but {} ends; they go in pairs", starts.size(),
                          ends.size());
      if (axes.empty() && int(starts.size()) != dims)
        return make_error("Crop: {} starts/ends without axes for a {}-D input; give one per axis",
                          starts.size(), dims);
      if (!axes.empty() && axes.size() != starts.size())
        return make_error("Crop: {} axes for {} starts/ends", axes.size(), starts.size());
      std::array<bool, 4> seen{};
      for (std::size_t i = 0; i < starts.size(); ++i) {
        int a = axes.empty() ? int(i) : axes[i];
        if (a < -dims || a >= dims)
          return make_error("Crop: axis {} is out of range for a {}-D input (expected {} to {})", a,
                            dims, -dims, dims - 1);
        if (a < 0) a += dims;
        if (seen[a]) return make_error("Crop: axis {} is listed twice", a);
        seen[a] = true;
        const std::int64_t n = e[a];
        const auto [start, end] = numpy_range(starts[i], ends[i], n);
        if (start < 0 || start >= n || end <= start)
          return make_error(
              "Crop: start {} end {} on axis {} select [{}, {}) of an extent of {}, which is "
              "empty or outside it",
              starts[i], ends[i], a, start, end, n);
        b.offset[a] = int(start);
        b.size[a] = int(end - start);
      }
      return b;
    }

    // Per-axis form: the parameters by slot (c, d, h, w).
    const std::array<int, 4> off1 = {coffset, doffset, hoffset, woffset};
    const std::array<int, 4> off2 = {coffset2, doffset2, hoffset2, woffset2};
    const std::array<int, 4> outs = {outc, outd, outh, outw};
    const std::array<const char*, 4> names = {"c", "d", "h", "w"};
    auto param = [&](int a) { return param_slot(a, dims); };
    bool reference_form = true;
    for (int a = 0; a < dims; ++a)
      reference_form = reference_form && outs[param(a)] == 0 && off2[param(a)] == 0;
    if (reference_form)
      return make_error(
          "Crop: every out* and *offset2 is 0, which is ncnn's two-blob form (output shape from "
          "a reference blob); it is not supported, give outw/outh/outd/outc or starts/ends");
    for (int a = 0; a < dims; ++a) {
      const int p = param(a);
      const std::int64_t n = e[a];
      const std::int64_t o1 = off1[p], o2 = off2[p];
      std::int64_t size = n - o1 - o2;
      if (outs[p] != -233) size = std::min<std::int64_t>(outs[p], size);
      if (o1 < 0 || o2 < 0 || size <= 0 || o1 + size > n)
        return make_error(
            "Crop: {}offset {}, {}offset2 {} and out{} {} leave {} of an extent of {} on axis {}; "
            "offsets must be >= 0 and the crop non-empty",
            names[p], o1, names[p], o2, names[p], outs[p], size, n, a);
      b.offset[a] = int(o1);
      b.size[a] = int(size);
    }
    return b;
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(detail::check_input<T, Pack>("Crop", bottom, 0));
    const Shape in = bottom.shape();
    auto r = box(in);
    if (!r.ok()) return r.error();
    const Box& b = r.value();
    const Shape out = detail::shape_of_axes(in.dims, b.size);
    if (out == in) {
      top = bottom;
      return {};
    }
    INFER_TRY(
        top.create(out, elem_type_v<T>, pack_for(out.packed_extent(), Pack), opt.blob_alloc()));
    std::vector<detail::AxisMap> maps;
    for (int a = 0; a < in.dims; ++a)
      maps.push_back(detail::AxisMap::range(b.size[a], b.offset[a]));
    detail::remap<T>(bottom, top, maps, {}, opt.num_threads);
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the crop kernel over the box this layer's parameters give for the input.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Crop GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    auto b = box(in[0].shape());
    if (!b.ok()) return make_error("Crop GPU forward: {}", b.message());
    return vk::record_crop(rec, in[0], out[0], b->offset);
  }
#endif
};

}  // namespace infer::layers
