// Pass 0: the graph is well formed (every blob read is produced exactly once, one-blob layers
// have one input and one output, outputs exist) and its nodes sort into an execution order.
#pragma once

#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

/// Checks the structure of `g` and returns its nodes in an execution order (a topological order
/// that keeps the written order where the data allows), or the first error.
constexpr PlanError validate(const GraphDesc& g, std::vector<int>& order) {
  const int blobs = int(g.blobs.size());
  std::vector<int> producer(std::size_t(blobs), -2);  // -2: none, -1: graph input, else node
  if (g.nodes.empty()) return {PlanError::no_nodes};
  for (int b : g.inputs) {
    if (producer[std::size_t(b)] != -2) return {PlanError::duplicate_blob, -1, b};
    producer[std::size_t(b)] = -1;
  }
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const NodeDesc& d = g.nodes[n];
    if (d.one_blob && (d.in.size() != 1 || d.out.size() != 1)) return {PlanError::io_count, int(n)};
    if (d.out.empty()) return {PlanError::io_count, int(n)};
    for (int b : d.out) {
      if (producer[std::size_t(b)] != -2) return {PlanError::duplicate_blob, int(n), b};
      producer[std::size_t(b)] = int(n);
    }
  }
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int b : g.nodes[n].in)
      if (producer[std::size_t(b)] == -2) return {PlanError::unknown_blob, int(n), b};
  for (int b : g.outputs)
    if (producer[std::size_t(b)] == -2) return {PlanError::unknown_output, -1, b};
  // A blob of data-dependent row count (one row per detection) sits in a buffer planned for the
  // most rows: a reader would be planned for a shape it does not get.
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int b : g.nodes[n].in)
      if (const int p = producer[std::size_t(b)]; p >= 0 && g.nodes[std::size_t(p)].variable_rows)
        return {PlanError::variable_rows, int(n), b};

  // Kahn's algorithm, always taking the earliest written ready node. Readers by blob are listed
  // once, so the pass stays near linear (it runs inside the compiler for static graphs).
  std::vector<std::vector<int>> readers(static_cast<std::size_t>(blobs));
  std::vector<int> waiting(g.nodes.size(), 0);
  std::vector<bool> done(g.nodes.size(), false);
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int b : g.nodes[n].in) {
      readers[std::size_t(b)].push_back(int(n));
      if (producer[std::size_t(b)] >= 0) ++waiting[n];
    }
  order.clear();
  std::size_t first_open = 0;  // every node before it is done
  while (order.size() < g.nodes.size()) {
    while (first_open < g.nodes.size() && done[first_open]) ++first_open;
    int next = -1;
    for (std::size_t n = first_open; n < g.nodes.size() && next < 0; ++n)
      if (!done[n] && waiting[n] == 0) next = int(n);
    if (next < 0) {
      for (std::size_t n = 0; n < g.nodes.size(); ++n)
        if (!done[n]) return {PlanError::cycle, int(n)};
    }
    done[std::size_t(next)] = true;
    order.push_back(next);
    for (int b : g.nodes[std::size_t(next)].out)
      for (int n : readers[std::size_t(b)]) --waiting[std::size_t(n)];
  }
  return {};
}

}  // namespace infer::graph
