// The one copy loop behind the data-movement layers (Concat, Slice, Crop, Padding): every axis of
// a destination box takes its values from a source index per position, or a fill value. Packed
// layouts are handled here once, so each layer only says which index goes where.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/element.hpp>
#include <infer/kernels/pack.hpp>
#include <infer/mat.hpp>
#include <infer/status.hpp>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace infer::layers::detail {

/// The unsigned type of T's size: data movement copies bits, so f16 and bf16 share one
/// instantiation and no value is ever converted.
template <StorageElement T>
using bits_of =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>>;

/// The bits of `v` converted to T (i8: ncnn's float2int8), for fill values.
template <StorageElement T>
bits_of<T> fill_bits(float v) {
  return std::bit_cast<bits_of<T>>(from_f32<T>(v));
}

/// One axis of a copy: destination positions [offset, offset + src.size()) take the source index
/// src[i], or the fill value where src[i] < 0.
struct AxisMap {
  int offset = 0;
  std::vector<int> src;

  /// Positions [offset, offset + n) take source indices [first, first + n).
  static AxisMap range(int n, int first = 0, int offset = 0) {
    AxisMap m{offset, std::vector<int>(static_cast<std::size_t>(n))};
    for (int i = 0; i < n; ++i) m.src[static_cast<std::size_t>(i)] = first + i;
    return m;
  }
  int size() const { return static_cast<int>(src.size()); }
};

/// Extents in ncnn's axis order (axis 0 outermost: {w}, {h, w}, {c, h, w}, {c, d, h, w}).
inline std::array<int, 4> axis_extents(const Shape& s) { return s.outer_first(); }
/// The shape with extents `e` in ncnn's axis order.
inline Shape shape_of_axes(int dims, const std::array<int, 4>& e) {
  return Shape::from_outer_first(dims, e);
}

/// An Error unless `m` holds a tensor the layer was dispatched for (type T, pack Pack).
template <StorageElement T, int Pack>
Status check_input(std::string_view layer, const Mat& m, std::size_t index) {
  if (m.empty()) return make_error("{}: input {} is empty", layer, index);
  if (!m.is<T, Pack>())
    return make_error("{}: input {} is {}, expected {} pack {}", layer, index, m.describe(),
                      to_string(elem_type_v<T>), Pack);
  return {};
}

/// Whether `part` already lies in `whole` as its channel range from channel `first` (a graph
/// placed it there, see graph/ranges.hpp): then Concat and Slice have nothing to copy.
inline bool is_channel_range(const Mat& part, const Mat& whole, int first) {
  return whole.dims() >= 3 && part.dims() == whole.dims() && part.w() == whole.w() &&
         part.h() == whole.h() && part.d() == whole.d() && part.type() == whole.type() &&
         part.elempack() == whole.elempack() && part.cstep() == whole.cstep() &&
         first % whole.elempack() == 0 && first / whole.elempack() + part.c() <= whole.c() &&
         part.data() == whole.channel_data(first / whole.elempack());
}

namespace remap_impl {

/// A Mat seen as "channels" (the packing axis) by a plane of three inner axes (d, h, w). A 1-D
/// Mat's packed layout is its plain one, so it is seen unpacked: one channel of w values.
struct Planes {
  std::byte* data;
  int pack;
  int channels;
  std::array<int, 3> inner;  ///< d, h, w
  std::size_t gstep;         ///< packed elements between channel groups
};

inline Planes planes(const Mat& m) {
  const Shape s = m.shape();
  auto* p = static_cast<std::byte*>(m.data());
  switch (s.dims) {
    case 1:
      return {p, 1, 1, {1, 1, s.w}, std::size_t(s.w)};
    case 2:
      return {p, m.elempack(), s.h, {1, 1, s.w}, std::size_t(m.w())};
    default:
      return {p, m.elempack(), s.c, {s.d, s.h, s.w}, m.cstep()};
  }
}

/// Where ncnn axis `axis` of a `dims`-D tensor sits in Planes order (0 channels, 1 d, 2 h, 3 w).
constexpr int planar_index(int axis, int dims) {
  return dims == 1 ? 3 : axis == 0 ? 0 : axis + 4 - dims;
}

/// A stretch of the w axis: `len` destination positions from `dst` take consecutive source
/// positions from `src`, or the fill value when src < 0.
struct Run {
  int dst, src, len;
};

inline std::vector<Run> runs_of(const AxisMap& m) {
  std::vector<Run> runs;
  for (int i = 0; i < m.size(); ++i) {
    const int s = m.src[static_cast<std::size_t>(i)];
    if (!runs.empty()) {
      Run& last = runs.back();
      if ((s < 0 && last.src < 0) || (s >= 0 && last.src >= 0 && last.src + last.len == s)) {
        ++last.len;
        continue;
      }
    }
    runs.push_back({m.offset + i, s, 1});
  }
  return runs;
}

/// Whether P-lane groups of V values transpose in registers (kernels/pack.hpp).
template <int P, class V>
constexpr bool kTransposes = kernels::detail::kTileTranspose<P, sizeof(V)>;

/// Whole planes of source channels [first, first + nc), packed by P, into pack-1 destination
/// channels [c0, c0 + nc), each plane n values: each source group once through
/// kernels::unpack_group (register transposes).
template <int P, class V>
void unpack_range(const Planes& s, const Planes& d, int c0, int nc, int first, std::size_t n,
                  int num_threads) {
  const int g0 = first / P, g1 = (first + nc - 1) / P;
#pragma omp parallel for num_threads(num_threads) if (num_threads > 1)
  for (int g = g0; g <= g1; ++g) {
    V* dst[P];
    for (int l = 0; l < P; ++l) {
      const int c = g * P + l - first;  // the lane's place in the range
      dst[l] =
          c >= 0 && c < nc ? reinterpret_cast<V*>(d.data) + std::size_t(c0 + c) * d.gstep : nullptr;
    }
    kernels::unpack_group<P, V>(reinterpret_cast<const V*>(s.data) + std::size_t(g) * s.gstep * P,
                                n, dst);
  }
}

template <class V>
void remap(const Planes& s, const Planes& d, const std::array<const AxisMap*, 4>& m,
           std::span<const V> fill, int num_threads) {
  const int sp = s.pack, dp = d.pack;
  const int c0 = m[0]->offset, nc = m[0]->size();
  const int bd = m[1]->size(), bh = m[2]->size();
  const std::vector<Run> runs = runs_of(*m[3]);
  const int x0 = m[3]->offset, bw = m[3]->size();
  const std::size_t dplane_w = std::size_t(d.inner[2]), splane_w = std::size_t(s.inner[2]);
  auto fill_of = [&](int c) -> V {
    if (fill.empty()) return V{};
    return fill.size() == 1 ? fill[0] : fill[static_cast<std::size_t>(c - c0)];
  };
  auto chan_src = [&](int c) { return m[0]->src[static_cast<std::size_t>(c - c0)]; };
  // Destination row (z, y) of the box, counted in packed elements from a group's start.
  auto drow_of = [&](int z, int y) {
    return ((std::size_t(m[1]->offset + z) * d.inner[1]) + std::size_t(m[2]->offset + y)) *
           dplane_w;
  };
  auto srow_of = [&](int sz, int sy) {
    return (std::size_t(sz) * s.inner[1] + std::size_t(sy)) * splane_w;
  };

  // Whether the box is whole planes of both Mats taken as they are: a channel group then moves as
  // one block (Concat and Slice along channels).
  auto identity = [](const AxisMap& a, int src_extent, int dst_extent) {
    if (a.offset != 0 || a.size() != src_extent || a.size() != dst_extent) return false;
    for (int i = 0; i < a.size(); ++i)
      if (a.src[static_cast<std::size_t>(i)] != i) return false;
    return true;
  };
  const bool whole_planes = identity(*m[1], s.inner[0], d.inner[0]) &&
                            identity(*m[2], s.inner[1], d.inner[1]) &&
                            identity(*m[3], s.inner[2], d.inner[2]);
  const std::size_t plane_values = std::size_t(d.inner[0]) * d.inner[1] * d.inner[2];

  const int g_first = c0 / dp, g_last = (c0 + nc - 1) / dp;
  // Threads only pay for themselves on large copies; small ones are most of a network's.
  const std::size_t values = std::size_t(nc) * bd * bh * bw;
  const bool threaded = num_threads > 1 && values * sizeof(V) >= (std::size_t(1) << 16);
  // Whole planes of one run of source channels (a Crop or Slice along channels) from a pack
  // above 1 into pack 1: register transposes of each source group, not one strided value at a
  // time (a NanoDet forward, whose ShuffleNet-v2 blocks crop 116 channels at pack 4 into 58 and
  // 58, spent 8% of its time in those Crops). The layers never write a wider pack than they read;
  // between two packs above 1 the group loop below moves runs of lanes.
  const int first = chan_src(c0);
  bool one_run = whole_planes && fill.empty() && first >= 0 && sp > 1 && dp == 1;
  for (int i = 1; i < nc && one_run; ++i) one_run = chan_src(c0 + i) == first + i;
  if (one_run && dp == 1) {
    const int threads = threaded ? num_threads : 1;
    if constexpr (kTransposes<4, V>)
      if (sp == 4) return unpack_range<4, V>(s, d, c0, nc, first, plane_values, threads);
    if constexpr (kTransposes<8, V>)
      if (sp == 8) return unpack_range<8, V>(s, d, c0, nc, first, plane_values, threads);
    if constexpr (kTransposes<16, V>)
      if (sp == 16) return unpack_range<16, V>(s, d, c0, nc, first, plane_values, threads);
  }
#pragma omp parallel for num_threads(num_threads) if (threaded)
  for (int g = g_first; g <= g_last; ++g) {
    V* dgroup = reinterpret_cast<V*>(d.data) + std::size_t(g) * d.gstep * dp;
    // A group whose lanes are one whole source group (or all fill) moves Pack lanes at a time.
    int whole = -2;  // -2: lane by lane; -1: all fill; >= 0: that source group
    if (sp == dp && g * dp >= c0 && (g + 1) * dp <= c0 + nc) {
      const int first = chan_src(g * dp);
      bool same = first < 0 || first % sp == 0;
      for (int l = 1; l < dp && same; ++l) {
        const int c = chan_src(g * dp + l);
        same = first < 0 ? c < 0 : c == first + l;
      }
      if (same) whole = first < 0 ? -1 : first / sp;
    }

    // A group all in the box whose dp lanes are a run of one wider source group (a Crop of 232
    // channels at pack 8 into 116 at pack 4): dp values a step, not one value at a time.
    if (whole == -2 && whole_planes && sp > dp && dp > 1 && g * dp >= c0 &&
        (g + 1) * dp <= c0 + nc) {
      const int from = chan_src(g * dp);
      bool run = from >= 0 && from % sp + dp <= sp;
      for (int l = 1; l < dp && run; ++l) run = chan_src(g * dp + l) == from + l;
      if (run) {
        const V* src =
            reinterpret_cast<const V*>(s.data) + std::size_t(from / sp) * s.gstep * sp + from % sp;
        auto copy = [&](auto lanes) {
          constexpr std::size_t L = decltype(lanes)::value;
          for (std::size_t i = 0; i < plane_values; ++i)
            std::memcpy(dgroup + i * L, src + i * std::size_t(sp), L * sizeof(V));
        };
        if (dp == 4)
          copy(std::integral_constant<std::size_t, 4>{});
        else
          copy(std::integral_constant<std::size_t, 8>{});  // dp 8 below sp 16
        continue;
      }
    }

    if (whole != -2) {
      V fv[16];
      for (int l = 0; l < dp; ++l) fv[l] = fill_of(g * dp + l);
      const V* sgroup = whole >= 0
                            ? reinterpret_cast<const V*>(s.data) + std::size_t(whole) * s.gstep * sp
                            : nullptr;
      if (sgroup && whole_planes) {
        std::memcpy(dgroup, sgroup, plane_values * dp * sizeof(V));
        continue;
      }
      for (int z = 0; z < bd; ++z) {
        const int sz = m[1]->src[static_cast<std::size_t>(z)];
        for (int y = 0; y < bh; ++y) {
          const int sy = m[2]->src[static_cast<std::size_t>(y)];
          V* drow = dgroup + drow_of(z, y) * dp;
          if (!sgroup || sz < 0 || sy < 0) {
            for (int x = 0; x < bw; ++x)
              std::memcpy(drow + std::size_t(x0 + x) * dp, fv, dp * sizeof(V));
            continue;
          }
          const V* srow = sgroup + srow_of(sz, sy) * sp;
          for (const Run& r : runs) {
            V* o = drow + std::size_t(r.dst) * dp;
            if (r.src < 0) {
              for (int k = 0; k < r.len; ++k)
                std::memcpy(o + std::size_t(k) * dp, fv, dp * sizeof(V));
            } else {
              std::memcpy(o, srow + std::size_t(r.src) * sp, std::size_t(r.len) * dp * sizeof(V));
            }
          }
        }
      }
      continue;
    }

    for (int l = 0; l < dp; ++l) {
      const int c = g * dp + l;
      if (c < c0 || c >= c0 + nc) continue;
      const int sc = chan_src(c);
      const V fv = fill_of(c);
      V* dlane = dgroup + l;
      const V* slane = sc >= 0 ? reinterpret_cast<const V*>(s.data) +
                                     std::size_t(sc / sp) * s.gstep * sp + sc % sp
                               : nullptr;
      for (int z = 0; z < bd; ++z) {
        const int sz = m[1]->src[static_cast<std::size_t>(z)];
        for (int y = 0; y < bh; ++y) {
          const int sy = m[2]->src[static_cast<std::size_t>(y)];
          V* drow = dlane + drow_of(z, y) * dp;
          if (!slane || sz < 0 || sy < 0) {
            for (int x = 0; x < bw; ++x) drow[std::size_t(x0 + x) * dp] = fv;
            continue;
          }
          const V* srow = slane + srow_of(sz, sy) * sp;
          for (const Run& r : runs) {
            V* o = drow + std::size_t(r.dst) * dp;
            if (r.src < 0) {
              for (int k = 0; k < r.len; ++k) o[std::size_t(k) * dp] = fv;
            } else {
              const V* i = srow + std::size_t(r.src) * sp;
              for (int k = 0; k < r.len; ++k) o[std::size_t(k) * dp] = i[std::size_t(k) * sp];
            }
          }
        }
      }
    }
  }
}

}  // namespace remap_impl

/// Copies from `src` into a box of `dst` (both `dims`-D, element type T, any packs): along ncnn
/// axis k, destination positions maps[k].offset + i take source index maps[k].src[i], or the fill
/// value where that is negative. `fill` holds one value, or one per destination channel of the
/// box (3-D/4-D), or is empty when no index is negative. The maps must lie inside both Mats.
template <StorageElement T>
void remap(const Mat& src, Mat& dst, std::span<const AxisMap> maps,
           std::span<const bits_of<T>> fill, int num_threads) {
  const int dims = dst.dims();
  assert(src.dims() == dims && int(maps.size()) == dims);
  const remap_impl::Planes s = remap_impl::planes(src), d = remap_impl::planes(dst);
  static const AxisMap unit = AxisMap::range(1);
  std::array<const AxisMap*, 4> planar{&unit, &unit, &unit, &unit};
  for (int k = 0; k < dims; ++k) planar[remap_impl::planar_index(k, dims)] = &maps[std::size_t(k)];
#ifndef NDEBUG
  const std::array<int, 4> sext{s.channels, s.inner[0], s.inner[1], s.inner[2]};
  const std::array<int, 4> dext{d.channels, d.inner[0], d.inner[1], d.inner[2]};
  for (int a = 0; a < 4; ++a) {
    assert(planar[a]->offset >= 0 && planar[a]->offset + planar[a]->size() <= dext[a]);
    for (int i : planar[a]->src) assert(i < sext[a]);
  }
  assert(fill.size() <= 1 || int(fill.size()) == planar[0]->size());
#endif
  if (planar[0]->size() == 0) return;
  remap_impl::remap<bits_of<T>>(s, d, planar, fill, num_threads);
}

}  // namespace infer::layers::detail
