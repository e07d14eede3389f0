// The composer's int8 requantization into the readers. A quantized layer whose output is float
// (ncnn's int8_scale_term below 100), while all that reads it are quantized layers of one input
// scale, directly or through layers that pass int8 values without changing what they stand for
// (Split, Concat, Slice, Crop, ShuffleChannel, max Pooling), writes that output requantized by
// the readers' scale instead. ncnn's int8 SqueezeNet and VGG-16 are made of such layers: each fire
// module's two expand convolutions reach the next squeeze convolution through a Concat (and a
// max Pooling), each VGG stage's last convolution the next stage's first through a max Pooling; as
// written, their outputs are f32 blobs that the reader quantizes again. Quantizing is monotonic and
// maps moved values to moved values, so the readers get the same int8 values either way; the f32
// blob, the passes over it and the quantize pass go.
#pragma once

#include <infer/graph/desc.hpp>
#include <vector>

namespace infer::graph {

namespace detail {

/// Whether node `d` takes int8 values and gives the int8 values of its float result: not
/// quantized itself, and NodeDesc::keeps_int8 without element-wise layers (a leaky ReLU's int8
/// result is not the quantized float one).
constexpr bool passes_int8_values(const NodeDesc& d) { return !d.int8 && d.keeps_int8(false); }

/// Whether quantized node `d` reads blob `b` only as its quantized input (a fused residual sum's
/// input is added in f32).
constexpr bool reads_quantized(const NodeDesc& d, int b) {
  bool first_only = !d.in.empty() && d.in[0] == b;
  for (std::size_t i = 1; i < d.in.size(); ++i) first_only = first_only && d.in[i] != b;
  return first_only;
}

}  // namespace detail

/// Marks each quantized node of `g` (live nodes in `order`, topologically sorted) whose float
/// output reaches only quantized nodes of one input scale, as their quantized input, through
/// nodes that pass int8 values: it writes i8 at that scale (NodeDesc::int8_requantized), and those
/// readers are marked too. Not a node that takes in a residual sum or a gate (its output stays
/// f32), nor one whose output (or a blob it reaches) is a graph output or is read by anything else.
constexpr void requantize_for_readers(GraphDesc& g, const std::vector<int>& order) {
  const std::size_t blobs = g.blobs.size();
  std::vector<std::vector<int>> readers(blobs);
  for (int n : order)
    for (int b : g.nodes[std::size_t(n)].in) readers[std::size_t(b)].push_back(n);
  std::vector<bool> is_output(blobs, false);
  for (int b : g.outputs) is_output[std::size_t(b)] = true;
  // scale[b]: the one input scale of the quantized nodes blob b reaches as described, or 0.
  // Readers come later in `order`, so walking it backwards finds their outputs done.
  std::vector<float> scale(blobs, 0.f);
  for (std::size_t k = order.size(); k-- > 0;) {
    for (int b : g.nodes[std::size_t(order[k])].out) {
      float found = 0.f;
      bool ok = !is_output[std::size_t(b)] && !readers[std::size_t(b)].empty();
      for (std::size_t i = 0; ok && i < readers[std::size_t(b)].size(); ++i) {
        const NodeDesc& d = g.nodes[std::size_t(readers[std::size_t(b)][i])];
        float s = 0.f;
        if (d.int8) {
          s = detail::reads_quantized(d, b) && d.int8_in_scale > 0.f ? d.int8_in_scale : 0.f;
        } else if (detail::passes_int8_values(d)) {
          for (std::size_t o = 0; o < d.out.size(); ++o) {
            const float so = scale[std::size_t(d.out[o])];
            s = o == 0 || so == s ? so : 0.f;
            if (s == 0.f) break;
          }
        }
        ok = s > 0.f && (found == 0.f || s == found);
        found = s;
      }
      scale[std::size_t(b)] = ok ? found : 0.f;
    }
  }
  for (int n : order) {
    NodeDesc& d = g.nodes[std::size_t(n)];
    if (!d.int8 || !d.int8_requantizable || d.int8_out_type != ElemType::f32 || d.residual >= 0 ||
        d.gate >= 0 || d.out.size() != 1 || scale[std::size_t(d.out[0])] == 0.f)
      continue;
    d.int8_requantized = true;
    d.int8_out_type = ElemType::i8;
    d.int8_out_scale = scale[std::size_t(d.out[0])];
    // Its readers, through the nodes that pass the values on.
    std::vector<int> todo{d.out[0]};
    while (!todo.empty()) {
      const int b = todo.back();
      todo.pop_back();
      for (int r : readers[std::size_t(b)]) {
        NodeDesc& rd = g.nodes[std::size_t(r)];
        if (rd.int8) {
          rd.int8_reads_requantized = true;
        } else {
          for (int o : rd.out) todo.push_back(o);
        }
      }
    }
  }
}

}  // namespace infer::graph
