// Addressing for the data-movement layers (Flatten, Reshape, Permute, ShuffleChannel): where a
// logical value of a Mat lives whatever its pack, and copies of values in logical order. Values
// are moved as bits (1, 2 or 4 bytes), so f16 and bf16 share one instantiation.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/mat.hpp>
#include <type_traits>

namespace infer::layers::detail {

/// The unsigned integer of T's size: what a layer that only moves values copies.
template <class T>
using bits_t = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                  std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>>;

/// Offsets, in values from the Mat's start, of its logical values. Axes are counted outermost
/// first (ncnn's numbering); every axis adds its own offset, even the packing axis 0, whose
/// index i lands in group i / pack, lane i % pack.
struct Layout {
  int dims = 0;
  int pack = 1;                         ///< lanes along axis 0 (1 for 1-D: its layout is plain)
  int shift = 0;                        ///< log2(pack)
  std::array<int, 4> extent{};          ///< logical extents, outermost first
  std::array<std::size_t, 4> stride{};  ///< values between neighbours (axis 0: between groups)

  static Layout of(const Mat& m) {
    Layout l;
    const Shape s = m.shape();
    l.dims = s.dims;
    l.extent = s.outer_first();
    l.pack = s.dims == 1 ? 1 : m.elempack();
    l.shift = std::countr_zero(static_cast<unsigned>(l.pack));
    const std::size_t p = static_cast<std::size_t>(l.pack);
    const std::size_t w = static_cast<std::size_t>(m.w()), h = static_cast<std::size_t>(m.h());
    const std::size_t group = m.cstep() * p;
    switch (s.dims) {
      case 1:
        l.stride = {1, 0, 0, 0};
        break;
      case 2:
        l.stride = {w * p, p, 0, 0};
        break;
      case 3:
        l.stride = {group, w * p, p, 0};
        break;
      default:
        l.stride = {group, h * w * p, w * p, p};
        break;
    }
    return l;
  }

  /// Offset added by index i on `axis`.
  std::size_t offset(int axis, int i) const {
    if (axis == 0 && pack > 1) return (std::size_t(i) >> shift) * stride[0] + (i & (pack - 1));
    return std::size_t(i) * stride[axis];
  }
  /// Indices of axis 0 ("channels"; a 1-D Mat is one channel).
  int channels() const { return dims == 1 ? 1 : extent[0]; }
  /// Values per channel: the product of the inner extents; they lie `pack` values apart.
  std::size_t plane() const {
    std::size_t n = 1;
    for (int a = dims == 1 ? 0 : 1; a < dims; ++a) n *= static_cast<std::size_t>(extent[a]);
    return n;
  }
};

/// d[i * ds] = s[i * ss] for n values.
template <class V>
void copy_run(const V* s, std::size_t ss, V* d, std::size_t ds, std::size_t n) {
  if (ss == 1 && ds == 1) {
    std::memcpy(d, s, n * sizeof(V));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
}

/// Copies every value of `src` to `dst` in logical (c, d, h, w) order: dst's k-th value is src's
/// k-th whatever the shapes and packs of the two. Both hold the same number of values.
template <class V>
void copy_flat(const Mat& src, Mat& dst, int num_threads) {
  const Layout a = Layout::of(src), b = Layout::of(dst);
  const V* s = static_cast<const V*>(src.data());
  V* d = static_cast<V*>(dst.data());
  const std::size_t ap = a.plane(), bp = b.plane();
  if (a.pack == b.pack && ap == bp) {  // same channels: whole groups are contiguous on both sides
    const int groups = a.channels() / a.pack;
#pragma omp parallel for num_threads(num_threads)
    for (int g = 0; g < groups; ++g)
      std::memcpy(d + g * b.stride[0], s + g * a.stride[0], ap * a.pack * sizeof(V));
    return;
  }
  // Chunks of the logical order; inside one, runs that stay within a channel on both sides.
  const std::size_t total = ap * a.channels();
  const std::size_t threads = static_cast<std::size_t>(std::max(num_threads, 1));
  const std::size_t chunk = std::max<std::size_t>(4096, (total + 4 * threads - 1) / (4 * threads));
  const std::ptrdiff_t chunks = static_cast<std::ptrdiff_t>((total + chunk - 1) / chunk);
#pragma omp parallel for num_threads(num_threads)
  for (std::ptrdiff_t j = 0; j < chunks; ++j) {
    const std::size_t end = std::min(total, std::size_t(j + 1) * chunk);
    for (std::size_t k = std::size_t(j) * chunk; k < end;) {
      const std::size_t ac = k / ap, ai = k % ap, bc = k / bp, bi = k % bp;
      const std::size_t run = std::min({end - k, ap - ai, bp - bi});
      copy_run(s + a.offset(0, int(ac)) + ai * a.pack, std::size_t(a.pack),
               d + b.offset(0, int(bc)) + bi * b.pack, std::size_t(b.pack), run);
      k += run;
    }
  }
}

}  // namespace infer::layers::detail
