// Pass 5: the memory plan. Buffers that are never live at the same time share arena bytes:
// each memory root (a buffer no in-place step aliases to another) gets an offset at the lowest
// address free of every root whose lifetime overlaps its own. Host and GPU buffers are planned
// the same way, each device in its own arena.
#pragma once

#include <infer/allocator.hpp>
#include <infer/graph/inplace.hpp>
#include <infer/graph/plan.hpp>
#include <tuple>
#include <utility>
#include <vector>

namespace infer::graph {

namespace detail {

/// Places `roots` (memory roots of one device, with lifetimes [first, last]) in one arena: sets
/// their offsets, and returns the arena's size and the most bytes live at one step.
constexpr std::pair<std::size_t, std::size_t> place_roots(Plan& p,
                                                          const std::vector<std::size_t>& roots,
                                                          const std::vector<int>& first,
                                                          const std::vector<int>& last) {
  auto overlaps = [&](std::size_t a, std::size_t b) {
    return !(last[a] < first[b] || last[b] < first[a]);
  };
  // First fit in a given order: each root at the lowest offset free of every placed root whose
  // lifetime overlaps its own. Optimal placement is NP-hard; three orders, the best one kept.
  auto place_in = [&](const std::vector<std::size_t>& order, std::vector<std::size_t>& offsets) {
    std::vector<std::size_t> placed;
    std::vector<std::pair<std::size_t, std::size_t>> busy;  // [offset, end) of overlapping roots
    std::size_t arena = 0;
    for (std::size_t r : order) {
      const std::size_t size = align_up(p.buffers[r].bytes);
      // The placed roots whose lifetimes overlap r's, by offset (insertion sort: few of them
      // live at once); then the first gap that fits. O(n * k^2) rather than a rescan per move.
      busy.clear();
      for (std::size_t q : placed) {
        if (!overlaps(r, q)) continue;
        const std::pair<std::size_t, std::size_t> iv{offsets[q],
                                                     offsets[q] + align_up(p.buffers[q].bytes)};
        std::size_t j = busy.size();
        busy.push_back(iv);
        for (; j > 0 && busy[j - 1].first > iv.first; --j) busy[j] = busy[j - 1];
        busy[j] = iv;
      }
      std::size_t offset = 0;
      for (const auto& [begin, end] : busy) {
        if (offset + size <= begin) break;
        if (end > offset) offset = end;
      }
      offsets[r] = offset;
      placed.push_back(r);
      if (offset + size > arena) arena = offset + size;
    }
    return arena;
  };
  // Stable insertion sort by a "goes first" predicate (constexpr, and the lists are short).
  auto sorted = [&](auto before) {
    std::vector<std::size_t> v = roots;
    for (std::size_t i = 1; i < v.size(); ++i)
      for (std::size_t j = i; j > 0 && before(v[j], v[j - 1]); --j) {
        const std::size_t t = v[j - 1];
        v[j - 1] = v[j];
        v[j] = t;
      }
    return v;
  };
  auto bytes = [&](std::size_t r) { return p.buffers[r].bytes; };
  auto span = [&](std::size_t r) { return last[r] - first[r]; };
  const std::vector<std::size_t> orders[] = {
      sorted([&](std::size_t a, std::size_t b) { return bytes(a) > bytes(b); }),
      sorted([&](std::size_t a, std::size_t b) { return first[a] < first[b]; }),
      sorted([&](std::size_t a, std::size_t b) {
        return span(a) > span(b) || (span(a) == span(b) && bytes(a) > bytes(b));
      }),
  };
  const std::size_t n = p.buffers.size();
  std::vector<std::size_t> best(n, 0), offsets(n, 0);
  std::size_t arena_bytes = 0;
  for (const std::vector<std::size_t>& order : orders) {
    const std::size_t arena = place_in(order, offsets);
    if (arena_bytes == 0 || arena < arena_bytes) {
      arena_bytes = arena;
      best = offsets;
    }
  }
  for (std::size_t r : roots) p.buffers[r].offset = best[r];
  // The lower bound: the most bytes of roots live at one step (+bytes where a root's life
  // starts, -bytes after it ends; one sweep over the steps).
  const std::size_t steps = p.steps.size() + 3;
  std::vector<std::size_t> starts(steps, 0), ends(steps, 0);
  for (std::size_t r : roots) {
    starts[std::size_t(first[r] + 1)] += align_up(p.buffers[r].bytes);
    ends[std::size_t(last[r] + 2)] += align_up(p.buffers[r].bytes);
  }
  std::size_t lower_bound = 0, live = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    live = live + starts[s] - ends[s];
    if (live > lower_bound) lower_bound = live;
  }
  return {arena_bytes, lower_bound};
}

}  // namespace detail

/// Assigns offsets; sets arena_bytes and lower_bound (the most bytes live at one step), and
/// gpu_arena_bytes and gpu_lower_bound for the GPU's buffers.
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
  std::vector<std::size_t> host, gpu;
  for (std::size_t b = 0; b < n; ++b)
    if (is_root[b]) (p.buffers[b].device == Device::cpu ? host : gpu).push_back(b);
  std::tie(p.arena_bytes, p.lower_bound) = detail::place_roots(p, host, first, last);
  std::tie(p.gpu_arena_bytes, p.gpu_lower_bound) = detail::place_roots(p, gpu, first, last);
  for (std::size_t b = 0; b < n; ++b)
    p.buffers[b].offset =
        p.buffers[std::size_t(root_of(p, int(b)))].offset + offset_in_root(p, int(b));
}

}  // namespace infer::graph
