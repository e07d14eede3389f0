// Pass 1: the shape of every blob, from the graph inputs through each node's infer_shapes.
#pragma once

#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

/// Fills `shapes` (by blob id) walking `order`; `infer(node, in, out)` runs the node's layer's
/// infer_shapes. Returns the first rejection, naming the node and its layer's reason.
template <class InferFn>
constexpr PlanError infer_blob_shapes(const GraphDesc& g, const std::vector<int>& order,
                                      std::vector<Shape>& shapes, InferFn&& infer) {
  shapes.assign(g.blobs.size(), Shape{});
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Shape s = g.input_shapes[i];
    if (s.dims < 1 || s.dims > 4 || s.w < 1 || s.h < 1 || s.d < 1 || s.c < 1)
      return {PlanError::shape, -1, g.inputs[i], "a graph input needs 1 to 4 positive extents"};
    shapes[std::size_t(g.inputs[i])] = s;
  }
  for (int n : order) {
    const NodeDesc& d = g.nodes[std::size_t(n)];
    std::vector<Shape> in, out(d.out.size());
    for (int b : d.in) in.push_back(shapes[std::size_t(b)]);
    const ShapeCheck c = infer(n, std::span<const Shape>(in), std::span<Shape>(out));
    if (!c.ok()) return {PlanError::shape, n, d.in.empty() ? -1 : d.in[0], c.error};
    for (std::size_t o = 0; o < out.size(); ++o) {
      const Shape s = out[o];
      if (s.dims < 1 || s.dims > 4 || s.w < 1 || s.h < 1 || s.d < 1 || s.c < 1)
        return {PlanError::shape, n, d.out[o], "the layer inferred an empty or invalid shape"};
      shapes[std::size_t(d.out[o])] = s;
    }
  }
  return {};
}

}  // namespace infer::graph
