// ncnn Permute: reorders the axes of a 2-D, 3-D or 4-D blob (a 1-D blob passes through). Pure
// data movement: every storage type and pack; one blob, out of place.
#pragma once

#include <array>
#include <infer/concepts.hpp>
#include <infer/layers/detail/relayout.hpp>
#include <infer/shape.hpp>
#include <string_view>

namespace infer::layers {

namespace detail {

/// dst(i_0, ..., i_{n-1}) = src with index i_j on its axis from[j]; axes counted outermost first.
/// Threads split dst's channel groups.
template <class V>
void permute_copy(const Mat& src, Mat& dst, const std::array<int, 4>& from, int num_threads) {
  const Layout a = Layout::of(src), b = Layout::of(dst);
  const int n = b.dims;
  const V* s = static_cast<const V*>(src.data());
  V* d = static_cast<V*>(dst.data());
  // Axes 1 .. n-2 (at most two) are walked as one index; the innermost axis is the run.
  const int e1 = n == 4 ? b.extent[1] : 1;
  const int e2 = n >= 3 ? b.extent[n - 2] : 1;
  const int inner = b.extent[n - 1], in_axis = from[n - 1];
  const bool gather_lanes = in_axis == 0 && a.pack > 1;  // the run walks src's packing axis
  const std::size_t ss = a.stride[in_axis], ds = b.stride[n - 1];
  const int groups = b.extent[0] / b.pack;
#pragma omp parallel for num_threads(num_threads)
  for (int g = 0; g < groups; ++g) {
    for (int l = 0; l < b.pack; ++l) {
      const int q = g * b.pack + l;
      const std::size_t s0 = a.offset(from[0], q), d0 = b.offset(0, q);
      for (int i1 = 0; i1 < e1; ++i1) {
        const std::size_t s1 = n == 4 ? s0 + a.offset(from[1], i1) : s0;
        const std::size_t d1 = n == 4 ? d0 + b.offset(1, i1) : d0;
        for (int i2 = 0; i2 < e2; ++i2) {
          const V* sp = s + (n >= 3 ? s1 + a.offset(from[n - 2], i2) : s1);
          V* dp = d + (n >= 3 ? d1 + b.offset(n - 2, i2) : d1);
          if (gather_lanes) {
            for (int x = 0; x < inner; ++x) dp[x * ds] = sp[a.offset(0, x)];
          } else {
            copy_run(sp, ss, dp, ds, std::size_t(inner));
          }
        }
      }
    }
  }
}

}  // namespace detail

struct Permute {
  static constexpr std::string_view ncnn_type = "Permute";  ///< its type in .param files
  int order_type = 0;  ///< ncnn 0=order_type: an index into orders(dims)

  using storage = all_storage;
  using packs = all_packs;

  /// ncnn's order types (operators.md): the output's axes innermost first (w, h, [d,] c), each
  /// named by the input axis it takes. 2-D has 2 orders, 3-D 6, 4-D 24; order 0 is the identity.
  static constexpr std::array<std::string_view, 2> kOrders2 = {"wh", "hw"};
  static constexpr std::array<std::string_view, 6> kOrders3 = {"whc", "hwc", "wch",
                                                               "cwh", "hcw", "chw"};
  static constexpr std::array<std::string_view, 24> kOrders4 = {
      "whdc", "hwdc", "wdhc", "dwhc", "hdwc", "dhwc", "whcd", "hwcd",
      "wchd", "cwhd", "hcwd", "chwd", "wdch", "dwch", "wcdh", "cwdh",
      "dcwh", "cdwh", "hdcw", "dhcw", "hcdw", "chdw", "dchw", "cdhw"};

  /// For each output axis (outermost first), the input axis it takes; an Error for an order_type
  /// that `dims` does not have.
  Result<std::array<int, 4>> axis_map(int dims) const {
    const int count = order_count(dims);
    if (order_type < 0 || order_type >= count) {
      if (dims == 1)
        return make_error("Permute: order_type {} is not defined (expected 0 to 23)", order_type);
      return make_error("Permute: order_type {} is not defined for a {}-D input (expected 0 to {})",
                        order_type, dims, count - 1);
    }
    return axes_from(dims, order_type);
  }

  /// How many order types a dims-D input has (1-D takes any of the 24, as the identity).
  static constexpr int order_count(int dims) { return dims == 2 ? 2 : dims == 3 ? 6 : 24; }
  /// axis_map for a valid order type (0 <= order_type < order_count(dims)).
  static constexpr std::array<int, 4> axes_from(int dims, int order_type) {
    std::array<int, 4> from = {0, 1, 2, 3};
    if (dims == 1) return from;  // one axis: every order is the identity, as in ncnn
    if (order_type < 0 || order_type >= order_count(dims)) return from;
    // Bounds written out per table: GCC 12 at -O3 otherwise warns about the other tables.
    const std::size_t t = std::size_t(order_type);
    std::string_view order = kOrders4[t % kOrders4.size()];
    if (dims == 2) order = kOrders2[t % kOrders2.size()];
    if (dims == 3) order = kOrders3[t % kOrders3.size()];
    const std::string_view axes = dims == 2 ? "hw" : dims == 3 ? "chw" : "cdhw";  // outer first
    for (int k = 0; k < dims; ++k) from[dims - 1 - k] = int(axes.find(order[k]));
    return from;
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    const int dims = in[0].dims;
    if (order_type < 0 || order_type >= order_count(dims))
      return shape_error("order_type is not defined for the input's dims");
    const std::array<int, 4> from = axes_from(dims, order_type);
    const std::array<int, 4> e = in[0].outer_first();
    std::array<int, 4> o = e;
    for (int j = 0; j < dims; ++j) o[j] = e[from[j]];
    out[0] = Shape::from_outer_first(dims, o);
    return {};
  }

  /// The output's logical shape for an input of logical shape `in`.
  Result<Shape> output_shape(const Shape& in) const {
    Result<std::array<int, 4>> from = axis_map(in.dims);
    if (!from.ok()) return from.error();
    const std::array<int, 4> e = in.outer_first();
    std::array<int, 4> out = e;
    for (int j = 0; j < in.dims; ++j) out[j] = e[(*from)[j]];
    return Shape::from_outer_first(in.dims, out);
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    const Shape in = bottom.shape();
    Result<std::array<int, 4>> from = axis_map(in.dims);
    if (!from.ok()) return from.error();
    Result<Shape> shape = output_shape(in);
    if (!shape.ok()) return shape.error();
    const Shape s = *shape;
    INFER_TRY(top.create(s, elem_type_v<T>, pack_for(s.packed_extent(), Pack), opt.blob_alloc()));
    using V = detail::bits_t<T>;
    if (in.dims == 1 || order_type == 0) {  // the identity: channel groups copy whole
      detail::copy_flat<V>(bottom, top, opt.num_threads);
    } else {
      detail::permute_copy<V>(bottom, top, *from, opt.num_threads);
    }
    return {};
  }
};

}  // namespace infer::layers
