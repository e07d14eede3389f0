// Pass 2: fusion. A Convolution / ConvolutionDepthWise / Deconvolution / InnerProduct (any layer
// with forward_fused) takes in the activation that alone reads its output, so its kernel applies
// the activation before the store; for a GPU target, so does a layer whose GPU forward applies one
// (vulkan_fuses_activation: Eltwise, BinaryOp) when both run on the GPU. On the GPU either kind
// also takes in the activations that only the shaders apply (Swish, TanH, HardSigmoid, ELU, GELU).
// A layer with fold_affine takes in a following BatchNorm or Scale, whose map folds into its
// weights when they load. Folding comes before an activation, as y = act(a * conv(x) + b)
// requires. For a GPU target a convolution whose GPU forward adds a residual
// (vulkan_fuses_residual) also takes in the two-input sum that alone reads its output (Eltwise
// sum, BinaryOp add, the shapes equal: ResNet's shortcut), the sum's other input becoming its
// second input, and then the sum's activation: y = act(conv(x) + bias + r). The merged node runs
// where the sum ran, when r is ready. On the CPU a float layer with forward_residual
// (fuses_residual: Convolution, whose kernels add r in their epilogue) does the same where it and
// the sum both run there; so does a quantized one whose output is float (int8_scale_term below
// 100), r then read as f32 at the output's pack.
// For a GPU target a convolution that takes gates in (vulkan_gate_min_channels) also takes in the
// squeeze-excitation multiply it alone reads: a channel multiply (BinaryOp mul) of a 3-D map by a
// 1-D vector of a value per channel, with the activation the multiply took in. The map becomes
// the convolution's input 0 and the vector its input 1 (a residual, if any, comes last); its
// GEMM kernels gather act(map * vector) channel by channel: y = conv(act(x * g)).
#pragma once

#include <algorithm>
#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

namespace detail {
constexpr bool is_output(const GraphDesc& g, int b) {
  for (int o : g.outputs)
    if (o == b) return true;
  return false;
}
}  // namespace detail

/// Merges fusable pairs in `g` (marking the merged node's merged_into) and drops merged nodes
/// from `order`. `gpu`: the target places layers with a GPU forward on the GPU.
/// `shapes` (by blob id, from shape inference; may be empty) lets a sum be fused only where its
/// inputs' shapes match, and a gate where the multiply is of a map by a vector of its channels.
/// `gates`: on the GPU, take squeeze-excitation multiplies into convolutions.
constexpr void fuse(GraphDesc& g, std::vector<int>& order, bool gpu = false,
                    const std::vector<Shape>& shapes = {}, bool gates = true) {
  // Readers of each blob, listed once per sweep (merged nodes left out when used).
  std::vector<std::vector<int>> readers(g.blobs.size());
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int i : g.nodes[n].in) readers[std::size_t(i)].push_back(int(n));
  for (bool changed = true; changed;) {
    changed = false;
    for (int p : order) {
      NodeDesc& prod = g.nodes[std::size_t(p)];
      if (prod.merged_into >= 0 || prod.out.size() != 1) continue;
      const bool gpu_act = gpu && prod.vulkan && prod.vulkan_fuses_activation;
      const bool gpu_res = gpu && prod.vulkan && prod.vulkan_fuses_residual;
      // A layer placed on the CPU (no GPU target, or no GPU forward) writing float: a float
      // layer, or a quantized one that does not requantize (its int8 kernels add the residual
      // to the dequantized value, as the sum would have).
      const bool cpu_res = (!gpu || !prod.vulkan) && prod.fuses_residual &&
                           (!prod.int8 || prod.int8_out_type == ElemType::f32);
      // A squeeze-excitation multiply on the GPU, which its reader may take in.
      const bool gpu_gate = gates && gpu && prod.vulkan && prod.channel_mul && prod.in.size() == 2 &&
                            !shapes.empty();
      if (!prod.fuses_activation && !prod.folds_affine && !gpu_act && !gpu_res && !cpu_res &&
          !gpu_gate)
        continue;
      const int blob = prod.out[0];
      if (detail::is_output(g, blob)) continue;
      int live = 0, reader = -1;
      for (int n : readers[std::size_t(blob)])
        if (g.nodes[std::size_t(n)].merged_into < 0) {
          ++live;
          reader = n;
        }
      if (live != 1) continue;
      const std::vector<int> r = {reader};
      NodeDesc& next = g.nodes[std::size_t(r[0])];
      if (gpu_gate && next.vulkan && next.vulkan_gate_min_channels > 0 && next.gate < 0 &&
          !next.int8 && !next.in.empty() && next.in[0] == blob &&
          std::count(next.in.begin(), next.in.end(), blob) == 1) {
        // Which input is the map (3-D, c channels) and which the gate (1-D, c values).
        const Shape& a = shapes[std::size_t(prod.in[0])];
        const Shape& b = shapes[std::size_t(prod.in[1])];
        const bool map_first = a.dims == 3 && b.dims == 1 && b.w == a.c;
        const bool map_second = b.dims == 3 && a.dims == 1 && a.w == b.c;
        const int map = map_first ? prod.in[0] : prod.in[1];
        const Shape& m = shapes[std::size_t(map)];
        const Shape& o = shapes[std::size_t(blob)];
        if ((map_first || map_second) && m.c >= next.vulkan_gate_min_channels && o.dims == 3 &&
            o.w == m.w && o.h == m.h && o.c == m.c) {
          const int vec = map_first ? prod.in[1] : prod.in[0];
          next.in[0] = map;
          next.in.insert(next.in.begin() + 1, vec);
          readers[std::size_t(map)].push_back(r[0]);
          readers[std::size_t(vec)].push_back(r[0]);
          next.gate = p;
          next.gate_act = prod.fused;
          prod.merged_into = r[0];
          changed = true;
          continue;
        }
      }
      // The sum on the producer's device: the GPU for gpu_res, the CPU for cpu_res.
      const bool sum_here = gpu_res ? next.vulkan : (!gpu || !next.vulkan);
      if ((gpu_res || cpu_res) && sum_here && prod.residual < 0 && prod.fused.type == 0 &&
          prod.in.size() == (prod.gate >= 0 ? 2u : 1u) && next.plain_sum && !next.int8 && next.in.size() == 2 &&
          next.out.size() == 1 && next.in[0] != next.in[1]) {
        const int other = next.in[0] == blob ? next.in[1] : next.in[0];
        auto same = [&](int a, int b) {
          if (shapes.empty()) return false;
          const Shape& x = shapes[std::size_t(a)];
          const Shape& y = shapes[std::size_t(b)];
          return x.dims == y.dims && x.w == y.w && x.h == y.h && x.d == y.d && x.c == y.c;
        };
        if (same(blob, other) && same(blob, next.out[0])) {
          prod.in.push_back(other);
          readers[std::size_t(other)].push_back(p);
          prod.out[0] = next.out[0];
          prod.fused = next.fused;
          prod.residual = r[0];
          next.merged_into = p;
          // An activation the sum had taken in now belongs to the convolution.
          for (NodeDesc& m : g.nodes)
            if (m.merged_into == r[0]) m.merged_into = p;
          changed = true;
          continue;
        }
      }
      if (next.in.size() != 1 || next.out.size() != 1) continue;
      // A residual already taken in is not scaled by the weights: no folding after it.
      const bool fold =
          next.is_affine && prod.folds_affine && prod.fused.type == 0 && prod.residual < 0;
      const bool act = next.as_activation.type != 0 && prod.fused.type == 0 &&
                       (prod.fuses_activation || (gpu_act && next.vulkan));
      // Swish, HardSigmoid, ...: only the GPU kernels' epilogue applies them, so only a producer
      // and an activation that both run there (the f32 accumulator is then activated before the
      // f16 store, not rounded twice).
      const bool gpu_only_act = next.as_gpu_activation.type != 0 && prod.fused.type == 0 && gpu &&
                                prod.vulkan && next.vulkan &&
                                (prod.fuses_activation || prod.vulkan_fuses_activation);
      if (!fold && !act && !gpu_only_act) continue;
      if (fold) prod.folded.push_back(r[0]);
      if (act) prod.fused = next.as_activation;
      if (gpu_only_act) prod.fused = next.as_gpu_activation;
      prod.out[0] = next.out[0];
      next.merged_into = p;
      changed = true;
    }
  }
  // A node that took in a sum runs in the sum's place.
  std::vector<int> kept;
  for (int n : order) {
    const NodeDesc& d = g.nodes[std::size_t(n)];
    if (d.merged_into < 0 && d.residual < 0) kept.push_back(n);
    if (d.merged_into >= 0 && g.nodes[std::size_t(d.merged_into)].residual == n)
      kept.push_back(d.merged_into);
  }
  order = kept;
}

}  // namespace infer::graph
