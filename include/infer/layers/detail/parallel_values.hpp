// Splits the values of a blob into independent contiguous pieces for OpenMP: channel groups of a
// 3-D/4-D blob, or equal chunks of a 1-D/2-D blob, which is one dense array and would otherwise
// run on one thread.
#pragma once

#include <algorithm>
#include <cstddef>

namespace infer::layers::detail {

/// Calls f(q, begin, count) in parallel over `groups` channel groups of `per_group` values each:
/// one call per group when there are several, else chunks of the single group whose lengths are
/// multiples of 64 values (so of every pack width).
template <class F>
void parallel_values(int groups, std::size_t per_group, int num_threads, const F& f) {
  constexpr std::size_t kMinChunk = 4096;
  if (groups != 1 || num_threads <= 1 || per_group < 2 * kMinChunk) {
#pragma omp parallel for num_threads(num_threads)
    for (int q = 0; q < groups; ++q) f(q, std::size_t(0), per_group);
    return;
  }
  std::size_t chunk = (per_group + std::size_t(num_threads) - 1) / std::size_t(num_threads);
  chunk = std::max(kMinChunk, (chunk + 63) / 64 * 64);
  const int pieces = int((per_group + chunk - 1) / chunk);
#pragma omp parallel for num_threads(num_threads)
  for (int p = 0; p < pieces; ++p) {
    const std::size_t begin = std::size_t(p) * chunk;
    f(0, begin, std::min(chunk, per_group - begin));
  }
}

}  // namespace infer::layers::detail
