// Checks of a composed plan that every test of the passes applies: no two buffers hold different
// values in the same bytes at once.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <infer/graph/plan.hpp>
#include <infer/graph/print.hpp>
#include <vector>

namespace infer::test {

/// The buffers `b` reaches through alias links, itself first.
inline std::vector<int> chain_of(const graph::Plan& p, int b) {
  std::vector<int> c;
  for (; b >= 0; b = p.buffers[std::size_t(b)].alias) c.push_back(b);
  return c;
}

/// Whether `b`'s alias link is an in-place step's (its output replaces the input's values) rather
/// than a view or a range (which hold the same values as the memory they share).
inline bool replaces_values(const graph::Plan& p, int b) {
  for (const auto& s : p.steps)
    if (s.inplace && s.out.size() == 1 && s.out[0] == b &&
        !p.desc.nodes[std::size_t(s.node)].shares_input)
      return true;
  return false;
}

/// No two buffers hold different values in the same bytes at once, and every buffer fits its
/// device's arena. Buffers sharing memory through views and ranges hold the same values and may be live
/// together; across an in-place step the input's life ends where the output's begins.
inline void check_no_overlap(const graph::Plan& p) {
  INFO(graph::format_plan(p));
  for (std::size_t a = 0; a < p.buffers.size(); ++a) {
    const auto& x = p.buffers[a];
    REQUIRE(x.offset + x.bytes <=
            (x.device == graph::Device::cpu ? p.arena_bytes : p.gpu_arena_bytes));
    for (std::size_t b = a + 1; b < p.buffers.size(); ++b) {
      const auto& y = p.buffers[b];
      if (x.device != y.device) continue;  // separate arenas
      const bool share_bytes = x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
      if (!share_bytes) continue;
      INFO("buffers " << a << " and " << b);
      const std::vector<int> cx = chain_of(p, int(a)), cy = chain_of(p, int(b));
      if (cx.back() != cy.back()) {  // separate memory: never live together
        REQUIRE((x.last < y.first || y.last < x.first));
        continue;
      }
      // The same memory: walk both chains up to their first common buffer.
      bool replaced = false;
      for (int u : cx) {
        if (std::find(cy.begin(), cy.end(), u) != cy.end()) {
          for (int v : cy) {
            if (v == u) break;
            replaced = replaced || replaces_values(p, v);
          }
          break;
        }
        replaced = replaced || replaces_values(p, u);
      }
      if (replaced) REQUIRE((x.last <= y.first || y.last <= x.first));
    }
  }
}

}  // namespace infer::test
