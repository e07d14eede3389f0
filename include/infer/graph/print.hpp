// Seeing what the composer did: one line per step (layer, element type and pack, input and output
// shapes, fused epilogue and folded layers, in place or not, arena offset and size), and the
// same plan as a Graphviz DOT graph.
#pragma once

#include <fmt/format.h>

#include <infer/graph/inplace.hpp>
#include <infer/graph/plan.hpp>
#include <string>

namespace infer::graph {

inline std::string shape_text(const Shape& s) {
  switch (s.dims) {
    case 1:
      return fmt::format("{}", s.w);
    case 2:
      return fmt::format("{}x{}", s.w, s.h);
    case 3:
      return fmt::format("{}x{}x{}", s.w, s.h, s.c);
    default:
      return fmt::format("{}x{}x{}x{}", s.w, s.h, s.d, s.c);
  }
}

inline std::string_view activation_name(int type) {
  switch (type) {
    case 1:
      return "ReLU";
    case 2:
      return "LeakyReLU";
    case 3:
      return "Clip";
    case 4:
      return "Sigmoid";
    case 5:
      return "Mish";
    case 6:
      return "HardSwish";
    case 7:
      return "Swish";
    case 8:
      return "TanH";
    case 9:
      return "HardSigmoid";
    case 11:
      return "ELU";
    case 12:
      return "GELU";
    default:
      return "none";
  }
}

namespace detail {
inline std::string buffer_text(const Plan& p, int b) {
  const BufferDesc& d = p.buffers[std::size_t(b)];
  return fmt::format("{}[{} {} p{}{}]", p.desc.blobs[std::size_t(d.blob)], shape_text(d.shape),
                     to_string(d.type), d.pack, d.device == Device::vulkan ? " gpu" : "");
}
inline std::string step_title(const Plan& p, const StepDesc& s) {
  switch (s.kind) {
    case StepDesc::cast:
      if (s.type == ElemType::i8) return fmt::format("quantize -> i8 (scale {:g})", s.scale);
      if (s.scale != 0.f)
        return fmt::format("dequantize -> {} (scale {:g})", to_string(s.type), s.scale);
      return fmt::format("cast -> {}", to_string(s.type));
    case StepDesc::repack:
      return fmt::format("repack -> p{}", s.pack);
    case StepDesc::upload:
      return "upload -> gpu";
    case StepDesc::download:
      return "download -> cpu";
    default: {
      const NodeDesc& d = p.desc.nodes[std::size_t(s.node)];
      return fmt::format("{} '{}'", d.type, d.name);
    }
  }
}
inline std::string step_extras(const Plan& p, const StepDesc& s) {
  std::string x;
  const bool transfer = s.kind == StepDesc::upload || s.kind == StepDesc::download;
  if (s.device == Device::vulkan && !transfer) x += " [gpu]";
  if (s.gate_node >= 0) {
    x += fmt::format(" *gate {} '{}'", p.desc.nodes[std::size_t(s.gate_node)].type,
                     p.desc.nodes[std::size_t(s.gate_node)].name);
    if (s.gate_act.type != 0) x += fmt::format(" ({})", activation_name(s.gate_act.type));
  }
  if (s.residual_node >= 0)
    x += fmt::format(" +sum {} '{}'", p.desc.nodes[std::size_t(s.residual_node)].type,
                     p.desc.nodes[std::size_t(s.residual_node)].name);
  if (s.act.type != 0) x += fmt::format(" +{}", activation_name(s.act.type));
  if (s.kind == StepDesc::layer && p.desc.nodes[std::size_t(s.node)].int8_requantized)
    x += fmt::format(" +requantized (scale {:g}) for its int8 readers",
                     p.desc.nodes[std::size_t(s.node)].int8_out_scale);
  // Concat inputs placed in the output, Slice outputs read from the input (graph/ranges.hpp).
  const AxisRanges r =
      s.kind == StepDesc::layer ? p.desc.nodes[std::size_t(s.node)].ranges : AxisRanges::none;
  const bool joins = r == AxisRanges::inputs_of_output;
  const std::vector<int>& parts = joins ? s.in : s.out;
  const std::vector<int>& wholes = joins ? s.out : s.in;
  if (r != AxisRanges::none && wholes.size() == 1) {
    std::size_t shared = 0;
    for (int b : parts) shared += root_of(p, b) == root_of(p, wholes[0]);
    if (shared) x += fmt::format(" ({} of {} parts shared)", shared, parts.size());
  }
  for (int f : s.folded)
    x += fmt::format(" +fold {} '{}'", p.desc.nodes[std::size_t(f)].type,
                     p.desc.nodes[std::size_t(f)].name);
  return x;
}
}  // namespace detail

/// The plan, one line per step, then the arena figures.
inline std::string format_plan(const Plan& p) {
  std::string out;
  if (!p.error.ok()) return "plan failed\n";
  std::size_t width = 8;
  for (const StepDesc& s : p.steps) width = std::max(width, detail::step_title(p, s).size());
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const StepDesc& s = p.steps[i];
    std::string ins, outs;
    for (int b : s.in) ins += (ins.empty() ? "" : ", ") + detail::buffer_text(p, b);
    for (int b : s.out) {
      const BufferDesc& d = p.buffers[std::size_t(b)];
      outs += fmt::format("{}{} @{}+{}", outs.empty() ? "" : ", ", detail::buffer_text(p, b),
                          d.offset, d.bytes);
    }
    out += fmt::format("{:>3} {:<{}} {:>4} p{:<2} {} -> {}{}{}\n", i, detail::step_title(p, s),
                       width, to_string(s.type), s.pack, ins, outs, detail::step_extras(p, s),
                       !s.inplace                                       ? ""
                       : p.desc.nodes[std::size_t(s.node)].shares_input ? " (view)"
                                                                        : " (in place)");
  }
  out +=
      fmt::format("arena {} bytes, lower bound {} bytes ({:.1f}%)\n", p.arena_bytes, p.lower_bound,
                  p.arena_bytes ? 100.0 * double(p.lower_bound) / double(p.arena_bytes) : 100.0);
  if (p.gpu_arena_bytes > 0)
    out += fmt::format("gpu arena {} bytes, lower bound {} bytes ({:.1f}%)\n", p.gpu_arena_bytes,
                       p.gpu_lower_bound,
                       100.0 * double(p.gpu_lower_bound) / double(p.gpu_arena_bytes));
  return out;
}

/// The plan as a Graphviz DOT digraph: a box per step, an edge per buffer read.
inline std::string to_dot(const Plan& p) {
  std::string out = "digraph infer {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    bool is_input = false;
    for (int b : p.input_buffers) is_input = is_input || b == int(i);
    if (is_input)
      out +=
          fmt::format("  b{} [shape=ellipse, label=\"{}\"];\n", i, detail::buffer_text(p, int(i)));
    if (p.buffers[i].output)
      out +=
          fmt::format("  o{} [shape=ellipse, label=\"{}\"];\n", i, detail::buffer_text(p, int(i)));
  }
  std::vector<int> writer(p.buffers.size(), -1);
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const StepDesc& s = p.steps[i];
    const bool conv = s.kind != StepDesc::layer;
    // GPU steps in green: where each step runs shows at a glance.
    out += fmt::format("  s{} [label=\"{}\\n{} p{}{}{}\"{}{}];\n", i, detail::step_title(p, s),
                       to_string(s.type), s.pack, detail::step_extras(p, s),
                       s.inplace ? "\\nin place" : "", conv ? ", style=dashed" : "",
                       s.device == Device::vulkan ? ", color=darkgreen, fontcolor=darkgreen" : "");
    for (int b : s.out) writer[std::size_t(b)] = int(i);
  }
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    for (int b : p.steps[i].in) {
      const BufferDesc& d = p.buffers[std::size_t(b)];
      const std::string from = writer[std::size_t(b)] >= 0
                                   ? fmt::format("s{}", writer[std::size_t(b)])
                                   : fmt::format("b{}", b);
      out += fmt::format("  {} -> s{} [label=\"{} {}\"];\n", from, i,
                         p.desc.blobs[std::size_t(d.blob)], shape_text(d.shape));
    }
  }
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    if (!p.buffers[i].output) continue;
    const std::string from = writer[i] >= 0 ? fmt::format("s{}", writer[i]) : fmt::format("b{}", i);
    out += fmt::format("  {} -> o{};\n", from, i);
  }
  out += "}\n";
  return out;
}

}  // namespace infer::graph

/// fmt::print("{}", plan) prints format_plan(plan).
template <>
struct fmt::formatter<infer::graph::Plan> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const infer::graph::Plan& p, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(infer::graph::format_plan(p), ctx);
  }
};
