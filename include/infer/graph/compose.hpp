// The composer: runs the passes in order over a graph description. Constexpr, so a static graph
// is planned while compiling; the same function plans a network read from a file at load time.
#pragma once

#include <infer/graph/fuse.hpp>
#include <infer/graph/inplace.hpp>
#include <infer/graph/memory_plan.hpp>
#include <infer/graph/placement.hpp>
#include <infer/graph/plan.hpp>
#include <infer/graph/ranges.hpp>
#include <infer/graph/requantize.hpp>
#include <infer/graph/shapes.hpp>
#include <infer/graph/validate.hpp>

namespace infer::graph {

/// Plans `desc` for `target`; `infer(node, in, out)` runs a node's shape inference. On failure
/// the plan's error says what and where, and the rest of the plan is incomplete.
template <class InferFn>
constexpr Plan compose(GraphDesc desc, Target target, InferFn&& infer) {
  Plan p;
  p.desc = std::move(desc);
  p.target = target;
  if (p.error = validate(p.desc, p.order); !p.error.ok()) return p;
  if (p.error = infer_blob_shapes(p.desc, p.order, p.blob_shapes, infer); !p.error.ok()) return p;
  if (target.fuse)
    fuse(p.desc, p.order, target.device == Device::vulkan, p.blob_shapes, target.fuse_gates);
  // int8 layers run on the CPU; so must everything between a requantized output and its reader.
  if (target.fuse && target.device == Device::cpu) requantize_for_readers(p.desc, p.order);
  if (p.error = place(p); !p.error.ok()) return p;
  compute_lifetimes(p);
  share_views(p);
  if (target.inplace) {
    share_ranges(p);
    choose_inplace(p);
  }
  plan_memory(p);
  return p;
}

/// A one-line description of a plan error, with the node and blob names.
inline std::string describe(const Plan& p) {
  const PlanError& e = p.error;
  auto node = [&]() -> std::string {
    if (e.node < 0) return "the graph";
    const NodeDesc& d = p.desc.nodes[std::size_t(e.node)];
    return fmt::format("node {} ({} '{}')", e.node, d.type, d.name);
  };
  auto blob = [&]() -> std::string {
    return e.blob < 0 ? std::string("?") : std::string(p.desc.blobs[std::size_t(e.blob)]);
  };
  switch (e.kind) {
    case PlanError::none:
      return "ok";
    case PlanError::unknown_blob:
      return fmt::format("{} reads blob '{}', which no node or input produces", node(), blob());
    case PlanError::duplicate_blob:
      return fmt::format("{} writes blob '{}', which is already produced", node(), blob());
    case PlanError::cycle:
      return fmt::format("{} is on a cycle", node());
    case PlanError::io_count:
      return fmt::format("{}: a one-blob layer needs exactly one input and one output", node());
    case PlanError::unknown_output:
      return fmt::format("graph output '{}' is not produced by any node or input", blob());
    case PlanError::no_nodes:
      return "the graph has no nodes";
    case PlanError::shape: {
      std::string in;
      if (e.node >= 0) {
        for (int b : p.desc.nodes[std::size_t(e.node)].in) {
          const Shape s = p.blob_shapes[std::size_t(b)];
          in += fmt::format(" {}=[{}x{}x{}x{} dims {}]", p.desc.blobs[std::size_t(b)], s.w, s.h,
                            s.d, s.c, s.dims);
        }
      }
      return fmt::format("{}: {} (inputs:{})", node(), e.detail, in.empty() ? " none" : in);
    }
    case PlanError::storage:
      return fmt::format("{} declares no storage type the graph can run it at", node());
    case PlanError::variable_rows:
      return fmt::format(
          "{} reads blob '{}', whose number of rows its producer knows only when it runs (one "
          "per detection); only the caller may read it",
          node(), blob());
  }
  return "unknown error";
}

}  // namespace infer::graph
