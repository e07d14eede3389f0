// Pass 5: the memory plan. Buffers that are never live at the same time share arena bytes:
// each memory root (a buffer no in-place step aliases to another) gets an offset, largest first,
// at the lowest address free of every root whose lifetime overlaps its own.
#pragma once

#include <infer/allocator.hpp>
#include <infer/graph/inplace.hpp>
#include <infer/graph/plan.hpp>
#include <vector>

namespace infer::graph {

/// Assigns offsets; sets arena_bytes and lower_bound (the most bytes live at one step).
constexpr void plan_memory(Plan& p) {
  compute_lifetimes(p);
  const std::size_t n = p.buffers.size();
  // Lifetime of each root: the union over the buffers that share it.
  std::vector<int> first(n, 0), last(n, -1);
  std::vector<bool> is_root(n, false);
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t r = std::size_t(root_of(p, int(b)));
    const BufferDesc& buf = p.buffers[b];
    if (!is_root[r]) {
      is_root[r] = true;
      first[r] = buf.first;
      last[r] = buf.last;
    } else {
      first[r] = first[r] < buf.first ? first[r] : buf.first;
      last[r] = last[r] > buf.last ? last[r] : buf.last;
    }
  }
  auto overlaps = [&](std::size_t a, std::size_t b) {
    return !(last[a] < first[b] || last[b] < first[a]);
  };
  std::vector<std::size_t> roots;
  for (std::size_t b = 0; b < n; ++b)
    if (is_root[b]) roots.push_back(b);
  // Largest first (insertion sort: constexpr and small), ties by first use.
  for (std::size_t i = 1; i < roots.size(); ++i) {
    for (std::size_t j = i; j > 0; --j) {
      const BufferDesc& a = p.buffers[roots[j - 1]];
      const BufferDesc& b = p.buffers[roots[j]];
      if (a.bytes > b.bytes || (a.bytes == b.bytes && first[roots[j - 1]] <= first[roots[j]]))
        break;
      const std::size_t t = roots[j - 1];
      roots[j - 1] = roots[j];
      roots[j] = t;
    }
  }
  std::vector<std::size_t> placed;
  p.arena_bytes = 0;
  for (std::size_t r : roots) {
    const std::size_t size = align_up(p.buffers[r].bytes);
    std::size_t offset = 0;
    // Lowest offset not colliding with an overlapping placed root; retried after each bump.
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t q : placed) {
        if (!overlaps(r, q)) continue;
        const std::size_t qo = p.buffers[q].offset, qs = align_up(p.buffers[q].bytes);
        if (offset < qo + qs && qo < offset + size) {
          offset = qo + qs;
          moved = true;
        }
      }
    }
    p.buffers[r].offset = offset;
    placed.push_back(r);
    if (offset + size > p.arena_bytes) p.arena_bytes = offset + size;
  }
  for (std::size_t b = 0; b < n; ++b)
    p.buffers[b].offset = p.buffers[std::size_t(root_of(p, int(b)))].offset;
  // The lower bound: at each step, the bytes of the roots live there.
  p.lower_bound = 0;
  for (int s = -1; s <= int(p.steps.size()); ++s) {
    std::size_t live = 0;
    for (std::size_t r : roots)
      if (first[r] <= s && s <= last[r]) live += align_up(p.buffers[r].bytes);
    if (live > p.lower_bound) p.lower_bound = live;
  }
}

}  // namespace infer::graph
