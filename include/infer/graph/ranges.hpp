// Pass 4a: shared channel ranges. A Concat's inputs are written straight into their channel range
// of its output buffer, and a Slice's outputs are channel ranges of its input buffer, so neither
// layer copies them (ShuffleNet's Concat and Slice around every ShuffleChannel, SqueezeNet's fire
// modules). Runs before in-place selection, which then sees every reader of the shared memory.
#pragma once

#include <infer/graph/inplace.hpp>
#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

namespace detail {

/// The byte offset at which `part` lies in `whole` as the channel range starting at channel
/// `first`, or -1 when it cannot: both 3-D or 4-D with the same plane, type and pack, and the range
/// starting on a whole channel group (then the channel step, a function of the plane, agrees too).
constexpr long channel_range_offset(const BufferDesc& whole, const BufferDesc& part, int first) {
  const Shape a = whole.shape, b = part.shape;
  if (a.dims < 3 || b.dims != a.dims || b.w != a.w || b.h != a.h || b.d != a.d) return -1;
  if (part.type != whole.type || part.pack != whole.pack || first % whole.pack != 0) return -1;
  const PackedLayout l = packed_layout(a, whole.type, whole.pack);
  return long(std::size_t(first / whole.pack) * l.cstep * elem_size(whole.type) *
              std::size_t(whole.pack));
}

/// Whether ncnn's `axis` of a `dims`-D blob is its channel axis (the outermost of 3-D and 4-D).
constexpr bool is_channel_axis(int axis, int dims) {
  return dims >= 3 && (axis < 0 ? axis + dims : axis) == 0;
}

}  // namespace detail

/// Aliases Slice outputs into their input and Concat inputs into their output where the ranges are
/// whole channel groups of the same type and pack. A Concat input is placed only when its memory
/// holds nothing else (its root buffer has its own shape) and is not a graph input.
constexpr void share_ranges(Plan& p) {
  std::vector<bool> graph_input(p.buffers.size(), false);
  for (int b : p.input_buffers) graph_input[std::size_t(b)] = true;
  for (const StepDesc& st : p.steps) {
    if (st.kind != StepDesc::layer) continue;
    const NodeDesc& d = p.desc.nodes[std::size_t(st.node)];
    if (d.ranges == AxisRanges::outputs_of_input && st.in.size() == 1) {
      const BufferDesc& whole = p.buffers[std::size_t(st.in[0])];
      if (!detail::is_channel_axis(d.range_axis, whole.shape.dims)) continue;
      int first = 0;
      for (int o : st.out) {
        BufferDesc& part = p.buffers[std::size_t(o)];
        if (const long at = detail::channel_range_offset(whole, part, first);
            at >= 0 && part.alias < 0) {
          part.alias = st.in[0];
          part.view_offset = std::size_t(at);
        }
        first += part.shape.c;
      }
    } else if (d.ranges == AxisRanges::inputs_of_output && st.out.size() == 1) {
      const int whole_id = st.out[0];
      const BufferDesc& whole = p.buffers[std::size_t(whole_id)];
      if (!detail::is_channel_axis(d.range_axis, whole.shape.dims)) continue;
      int first = 0;
      for (int i : st.in) {
        const BufferDesc& part = p.buffers[std::size_t(i)];
        const int r = root_of(p, i);
        BufferDesc& root = p.buffers[std::size_t(r)];
        // The root holds exactly this blob (in-place steps and Split views keep the shape), so
        // moving the root moves every buffer that shares it.
        const bool whole_root = root.shape == part.shape && root.type == part.type &&
                                root.pack == part.pack && !graph_input[std::size_t(r)];
        if (const long at = detail::channel_range_offset(whole, part, first);
            at >= 0 && whole_root && r != root_of(p, whole_id)) {
          root.alias = whole_id;
          root.view_offset = std::size_t(at);
        }
        first += part.shape.c;
      }
    }
  }
}

}  // namespace infer::graph
