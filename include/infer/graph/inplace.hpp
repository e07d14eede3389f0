// Pass 4: in-place execution. A one-blob layer with forward_inplace runs on its input's memory
// when that input buffer dies at this step (no later reader, not a graph output) and the output
// has the same shape, type and pack.
#pragma once

#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

/// The first step writing each buffer and the last step reading it (graph outputs: past the end).
constexpr void compute_lifetimes(Plan& p) {
  for (BufferDesc& b : p.buffers) b.first = b.last = -1;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    for (int b : p.steps[s].out)
      if (p.buffers[std::size_t(b)].first < 0) p.buffers[std::size_t(b)].first = int(s);
    for (int b : p.steps[s].in) p.buffers[std::size_t(b)].last = int(s);
  }
  for (BufferDesc& b : p.buffers) {
    // A view no step writes (a 1-D blob at another pack) is written with its memory's source.
    if (b.first < 0 && b.alias >= 0) b.first = p.buffers[std::size_t(b.alias)].first;
    if (b.output) b.last = int(p.steps.size());
    if (b.last < b.first) b.last = b.first;  // written, never read: lives for its own step
  }
}

/// The buffer whose memory `b` uses.
constexpr int root_of(const Plan& p, int b) {
  while (p.buffers[std::size_t(b)].alias >= 0) b = p.buffers[std::size_t(b)].alias;
  return b;
}

/// The byte offset of buffer `b` in its root's memory.
constexpr std::size_t offset_in_root(const Plan& p, int b) {
  std::size_t at = 0;
  for (; p.buffers[std::size_t(b)].alias >= 0; b = p.buffers[std::size_t(b)].alias)
    at += p.buffers[std::size_t(b)].view_offset;
  return at;
}

/// The last step that reads any buffer sharing `root`'s memory (past the end for outputs).
constexpr int root_last(const Plan& p, int root) {
  int last = -1;
  for (std::size_t b = 0; b < p.buffers.size(); ++b)
    if (root_of(p, int(b)) == root && p.buffers[b].last > last) last = p.buffers[b].last;
  return last;
}

/// Steps whose layer's outputs are its input (Split) become views: their output buffers share
/// the input buffer's memory and the step runs nothing. Always applied: it is what the layer means.
constexpr void share_views(Plan& p) {
  for (StepDesc& st : p.steps) {
    if (st.kind != StepDesc::layer || st.in.size() != 1) continue;
    if (!p.desc.nodes[std::size_t(st.node)].shares_input) continue;
    const BufferDesc& in = p.buffers[std::size_t(st.in[0])];
    bool same = true;
    for (int o : st.out) {
      const BufferDesc& out = p.buffers[std::size_t(o)];
      same = same && in.shape == out.shape && in.type == out.type && in.pack == out.pack;
    }
    if (!same) continue;  // then it runs as a copy
    st.inplace = true;
    for (int o : st.out) p.buffers[std::size_t(o)].alias = st.in[0];
  }
}

/// Marks in-place steps and aliases their output buffers to their inputs.
constexpr void choose_inplace(Plan& p) {
  compute_lifetimes(p);
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    StepDesc& st = p.steps[s];
    if (st.kind != StepDesc::layer || st.in.size() != 1 || st.out.size() != 1) continue;
    const NodeDesc& d = p.desc.nodes[std::size_t(st.node)];
    if (!d.inplace) continue;
    if (st.device == Device::vulkan && !d.vulkan_inplace) continue;
    // A fused activation runs inside forward_fused, which is out of place.
    if (st.act.type != 0 && d.fuses_activation) continue;
    BufferDesc& in = p.buffers[std::size_t(st.in[0])];
    const BufferDesc& out = p.buffers[std::size_t(st.out[0])];
    // The memory must die here: no later reader of any buffer that shares it (Split's views).
    if (root_last(p, root_of(p, st.in[0])) != int(s)) continue;
    // The caller's inputs are copied into the arena, so an input buffer may be overwritten.
    if (!(in.shape == out.shape) || in.type != out.type || in.pack != out.pack) continue;
    // An output already placed in other memory (a range of a Concat's output) stays there.
    if (out.alias >= 0) continue;
    st.inplace = true;
    p.buffers[std::size_t(st.out[0])].alias = st.in[0];
  }
}

}  // namespace infer::graph
