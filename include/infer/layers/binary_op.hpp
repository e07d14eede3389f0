// ncnn BinaryOp: C = op(A, B) over two blobs with ncnn's broadcasting, or C = op(A, b) with the
// scalar b (with_scalar=1: one blob, in place). f32/f16/bf16 storage with f32 arithmetic; no i8:
// the ops do not commute with an int8 tensor's quantization scale, kept outside the blob in ncnn.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/binary.hpp>
#include <infer/layers/detail/parallel_values.hpp>
#include <infer/layers/detail/unary.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <utility>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/binary_op.hpp>
#endif

namespace infer::layers {

namespace detail {

/// Calls f with the functor of ncnn's BinaryOp op_type; false when op_type names none.
template <class F>
bool visit_binary_op(int op_type, F&& f) {
  using namespace binop;
  switch (op_type) {
    case 0:
      f(Add{});
      return true;
    case 1:
      f(Sub{});
      return true;
    case 2:
      f(Mul{});
      return true;
    case 3:
      f(Div{});
      return true;
    case 4:
      f(Max{});
      return true;
    case 5:
      f(Min{});
      return true;
    case 6:
      f(Pow{});
      return true;
    case 7:
      f(Flip<Sub>{});
      return true;
    case 8:
      f(Flip<Div>{});
      return true;
    case 9:
      f(Flip<Pow>{});
      return true;
    case 10:
      f(Atan2{});
      return true;
    case 11:
      f(Flip<Atan2>{});
      return true;
    default:
      return false;
  }
}

/// One BinaryOp operand seen at the output's rank: its logical extents and where its values are.
struct BroadcastLayout {
  std::array<int, 4> ext{1, 1, 1, 1};  ///< logical w, h, d, c after ncnn's rank expansion
  /// Storage elements between neighbours along the output's x, y, z and packing-axis groups (for
  /// a 2-D output the groups are row groups, for 1-D the packed elements are x); 0 along an axis
  /// the operand is broadcast on.
  std::array<std::ptrdiff_t, 4> stride{};
};

/// Operand s's logical extents (w, h, d, c) at the output's rank out_dims, with ncnn's rule for a
/// lower rank: a 1-D operand runs along the outer axis (h of a 2-D, c of a 3-D/4-D output) when
/// its length matches the other operand's extent there, else along w; a 2-D or 3-D operand keeps
/// its outer axis as the output's c and shifts its other axes outward, so it is broadcast along w.
constexpr std::array<int, 4> broadcast_extents(const Shape& s, int out_dims, const Shape& other) {
  if (s.dims == out_dims) return {s.w, s.h, s.d, s.c};
  if (s.dims == 1) {
    if (s.w != (out_dims == 2 ? other.h : other.c)) return {s.w, 1, 1, 1};
    return out_dims == 2 ? std::array<int, 4>{1, s.w, 1, 1} : std::array<int, 4>{1, 1, 1, s.w};
  }
  if (s.dims == 2)
    return out_dims == 3 ? std::array<int, 4>{1, s.w, 1, s.h} : std::array<int, 4>{1, 1, s.w, s.h};
  return {1, s.w, s.h, s.c};  // 3-D seen as 4-D
}

/// The output shape of two operands of ncnn's broadcasting, or why they do not broadcast.
constexpr ShapeCheck broadcast_shape(const Shape& a, const Shape& b, Shape& out) {
  const int dims = a.dims > b.dims ? a.dims : b.dims;
  const std::array<int, 4> ea = broadcast_extents(a, dims, b), eb = broadcast_extents(b, dims, a);
  std::array<int, 4> e{};
  for (int i = 0; i < 4; ++i) {
    e[i] = ea[i] > eb[i] ? ea[i] : eb[i];
    if ((ea[i] != 1 && ea[i] != e[i]) || (eb[i] != 1 && eb[i] != e[i]))
      return shape_error("inputs do not broadcast (each extent must be 1 or equal)");
  }
  out = dims == 1   ? Shape::of(e[0])
        : dims == 2 ? Shape::of(e[0], e[1])
        : dims == 3 ? Shape::of(e[0], e[1], e[3])
                    : Shape::of(e[0], e[1], e[2], e[3]);
  return {};
}

/// Where operand m's values lie for an output of rank out_dims (extents: broadcast_extents).
template <int Pack>
BroadcastLayout broadcast_layout(const Mat& m, int out_dims, const Shape& other) {
  const Shape s = m.shape();
  const std::ptrdiff_t p = Pack, w = m.w(), h = m.h(), cs = std::ptrdiff_t(m.cstep()) * Pack;
  BroadcastLayout l;
  l.ext = broadcast_extents(s, out_dims, other);
  const auto& e = l.ext;
  auto& st = l.stride;
  if (s.dims == out_dims) {
    if (out_dims == 1) st = {p, 0, 0, 0};
    if (out_dims == 2) st = {p, 0, 0, w * p};
    if (out_dims >= 3) st = {p, w * p, w * h * p, cs};
  } else if (s.dims == 1) {
    // Along the outer axis, the 1-D layout is the plain one: group g is values g*Pack onward.
    const bool outer = s.w == (out_dims == 2 ? other.h : other.c);
    st = outer ? std::array<std::ptrdiff_t, 4>{0, 0, 0, p}
               : std::array<std::ptrdiff_t, 4>{1, 0, 0, 0};
  } else if (s.dims == 2) {
    st = out_dims == 3 ? std::array<std::ptrdiff_t, 4>{0, p, 0, w * p}
                       : std::array<std::ptrdiff_t, 4>{0, 0, p, w * p};
  } else {  // 3-D seen as 4-D
    st = {0, p, w * p, cs};
  }
  const int axis_of_stride[4] = {0, 1, 2, out_dims == 2 ? 1 : 3};
  for (int j = 0; j < 4; ++j)
    if (e[axis_of_stride[j]] == 1) st[j] = 0;
  return l;
}

}  // namespace detail

struct BinaryOp {
  static constexpr std::string_view ncnn_type = "BinaryOp";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  int op_type = 0;      ///< ncnn 0=op_type: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow,
                        ///< 7 rsub, 8 rdiv, 9 rpow, 10 atan2, 11 ratan2 (r: operands swapped)
  int with_scalar = 0;  ///< ncnn 1=with_scalar: 1 takes one blob and uses b as the second operand
  float b = 0.f;        ///< ncnn 2=b, the scalar operand when with_scalar=1

  using storage = float_storage;
  using packs = all_packs;
  /// Its GPU forward applies a following activation before the store (the composer fuses one
  /// into a node placed on the GPU).
  static constexpr bool vulkan_fuses_activation = true;

  /// The sum of two blobs (the composer fuses it into a GPU convolution when their shapes match).
  constexpr bool is_plain_sum() const { return op_type == 0 && with_scalar == 0; }
  /// The product of two blobs (a squeeze-excitation gate, where one is a vector of a value per
  /// channel of the other, fuses into a GPU convolution reading the product).
  constexpr bool is_channel_mul() const { return op_type == 2 && with_scalar == 0; }

  /// ncnn's one_blob_only and support_inplace, which BinaryOp derives from with_scalar: when true
  /// the one-blob members run, otherwise the two-input forward. The other form returns an Error.
  bool takes_one_blob() const { return with_scalar != 0; }

  /// with_scalar=1: one blob of the same shape; otherwise two inputs, broadcast as ncnn does.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (op_type < 0 || op_type > 11) return shape_error("op_type must be 0 to 11");
    if (with_scalar != 0) return infer::same_shape(in, out);
    if (in.size() != 2) return shape_error("with_scalar=0 takes 2 inputs");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    for (const Shape& s : in)
      if (s.dims < 1 || s.dims > 4) return shape_error("input must have 1 to 4 dims");
    return detail::broadcast_shape(in[0], in[1], out[0]);
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    INFER_TRY(check_form(true));
    Status st;
    visit_scalar_op([&](const auto& op) { st = detail::unary_inplace<T, Pack>(blob, op, opt); });
    return st;
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(check_form(true));
    Status st;
    visit_scalar_op(
        [&](const auto& op) { st = detail::unary_forward<T, Pack>(bottom, top, op, opt); });
    return st;
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    INFER_TRY(check_form(false));
    if (bottoms.size() != 2)
      return make_error("BinaryOp: with_scalar=0 takes 2 inputs, got {}", bottoms.size());
    if (tops.empty()) return make_error("BinaryOp: no output Mat given (expected 1)");
    for (std::size_t i = 0; i < 2; ++i) {
      if (bottoms[i].empty()) return make_error("BinaryOp: input {} is empty", i);
      if (!bottoms[i].is<T, Pack>())
        return make_error("BinaryOp: input {} is {}, expected {} pack {}", i, bottoms[i].describe(),
                          to_string(elem_type_v<T>), Pack);
    }
    const Mat& a = bottoms[0];
    const Mat& bm = bottoms[1];
    Mat& top = tops[0];
    Status st;
    detail::visit_binary_op(op_type, [&](const auto& op) {
      st = a.shape() == bm.shape() ? same_shape<T, Pack>(a, bm, top, op, opt)
                                   : broadcast<T, Pack>(a, bm, top, op, opt);
    });
    return st;
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the element-wise kernel with ncnn's broadcasting; one blob with the scalar b
  /// (with_scalar), else two; the step's fused activation applied before the store.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (out.size() != 1 || in.size() != (with_scalar ? 1u : 2u))
      return make_error("BinaryOp GPU forward: {} inputs and one output, got {} and {}",
                        with_scalar ? 1 : 2, in.size(), out.size());
    return vk::record_binary_op(rec, in[0], with_scalar ? nullptr : &in[1], out[0],
                                static_cast<vk::BinaryOpKind>(op_type), b, 1.f, 1.f,
                                vk::gpu_activation(step.act));
  }
#endif

 private:
  Status check_form(bool one_blob) const {
    if (op_type < 0 || op_type > 11)
      return make_error("BinaryOp: op_type must be 0 to 11, got {}", op_type);
    if (one_blob && with_scalar == 0)
      return make_error(
          "BinaryOp: with_scalar=0 takes 2 inputs; the one-blob forward needs with_scalar=1");
    if (!one_blob && with_scalar != 0)
      return make_error(
          "BinaryOp: with_scalar={} takes 1 input and the scalar b; the two-input forward needs "
          "with_scalar=0",
          with_scalar);
    return {};
  }

  /// Calls f with the op bound to the scalar b as its second operand.
  template <class F>
  void visit_scalar_op(F&& f) const {
    detail::visit_binary_op(op_type, [&](const auto& op) {
      const float s = b;
      f([op, s](auto x) { return op(x, decltype(x)(s)); });
    });
  }

  template <StorageElement T, int Pack, class Op>
  static Status same_shape(const Mat& a, const Mat& b, Mat& top, const Op& op, const Option& opt) {
    INFER_TRY(top.create(a.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    const MatView<T, Pack> va = a.view<T, Pack>(), vb = b.view<T, Pack>(), vo = top.view<T, Pack>();
    detail::parallel_values(
        vo.c, vo.channel_values(), opt.num_threads, [&](int q, std::size_t begin, std::size_t n) {
          kernels::binary<T, 1>({va.channel(q) + begin, 1, true}, {vb.channel(q) + begin, 1, true},
                                vo.channel(q) + begin, n, op);
        });
    return {};
  }

  template <StorageElement T, int Pack, class Op>
  static Status broadcast(const Mat& a, const Mat& b, Mat& top, const Op& op, const Option& opt) {
    const int dims = std::max(a.dims(), b.dims());
    const detail::BroadcastLayout la = detail::broadcast_layout<Pack>(a, dims, b.shape());
    const detail::BroadcastLayout lb = detail::broadcast_layout<Pack>(b, dims, a.shape());
    std::array<int, 4> e{};
    for (int i = 0; i < 4; ++i) {
      e[i] = std::max(la.ext[i], lb.ext[i]);
      if ((la.ext[i] != 1 && la.ext[i] != e[i]) || (lb.ext[i] != 1 && lb.ext[i] != e[i]))
        return make_error(
            "BinaryOp: inputs {} and {} do not broadcast: seen as {}-D, their extents along {} "
            "are {} and {} (each must be 1 or equal)",
            a.describe(), b.describe(), dims, "whdc"[i], la.ext[i], lb.ext[i]);
    }
    const Shape out = dims == 1   ? Shape::of(e[0])
                      : dims == 2 ? Shape::of(e[0], e[1])
                      : dims == 3 ? Shape::of(e[0], e[1], e[3])
                                  : Shape::of(e[0], e[1], e[2], e[3]);
    if (out.packed_extent() % Pack != 0)
      return make_error("BinaryOp: the output's packing axis ({}) is not a multiple of pack {}",
                        out.packed_extent(), Pack);
    INFER_TRY(top.create(out, elem_type_v<T>, Pack, opt.blob_alloc()));
    const MatView<T, Pack> va = a.view<T, Pack>(), vb = b.view<T, Pack>(), vo = top.view<T, Pack>();

    // The output as groups (packing axis) x z x y rows of x packed elements; rows merge into one
    // run wherever both operands continue evenly from one row to the next.
    std::ptrdiff_t groups = 1, nz = 1, ny = 1, nx = vo.w;
    std::ptrdiff_t og = 0, oz = 0, oy = 0;
    if (dims == 2) {
      groups = vo.h;
      og = std::ptrdiff_t(vo.w) * Pack;
    } else if (dims >= 3) {
      groups = vo.c;
      nz = vo.d;
      ny = vo.h;
      og = std::ptrdiff_t(vo.cstep) * Pack;
      oy = std::ptrdiff_t(vo.w) * Pack;
      oz = oy * vo.h;
    }
    std::array<std::ptrdiff_t, 4> sa = la.stride, sb = lb.stride;
    const auto continues = [](std::ptrdiff_t outer, std::ptrdiff_t inner, std::ptrdiff_t n) {
      return outer == inner * n;
    };
    if (continues(sa[1], sa[0], nx) && continues(sb[1], sb[0], nx)) {
      nx *= ny;
      ny = 1;
      if (continues(sa[2], sa[0], nx) && continues(sb[2], sb[0], nx)) {
        nx *= nz;
        nz = 1;
      }
    } else if (continues(sa[2], sa[1], ny) && continues(sb[2], sb[1], ny)) {
      ny *= nz;
      nz = 1;
    }
    // An operand spans the packing axis (one value per lane) unless it is broadcast along it.
    const int pack_axis = dims == 1 ? 0 : dims == 2 ? 1 : 3;
    const bool lanes_a = la.ext[pack_axis] == e[pack_axis];
    const bool lanes_b = lb.ext[pack_axis] == e[pack_axis];
    const std::ptrdiff_t rows = groups * nz * ny;
#pragma omp parallel for num_threads(opt.num_threads)
    for (std::ptrdiff_t r = 0; r < rows; ++r) {
      const std::ptrdiff_t g = r / (nz * ny), z = r / ny % nz, y = r % ny;
      const T* ra = va.data + g * sa[3] + z * sa[2] + y * sa[1];
      const T* rb = vb.data + g * sb[3] + z * sb[2] + y * sb[1];
      T* ro = vo.data + g * og + z * oz + y * oy;
      kernels::binary<T, Pack>({ra, sa[0], lanes_a}, {rb, sb[0], lanes_b}, ro, std::size_t(nx), op);
    }
    return {};
  }

};

}  // namespace infer::layers
