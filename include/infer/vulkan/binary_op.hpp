// The element-wise binary kernel on the GPU (shaders/binary_op.comp): ncnn's BinaryOp (its twelve
// operations, its broadcasting of a lower-rank or extent-1 operand, the with_scalar form) and
// Eltwise (product, weighted sum, max of N inputs as N-1 two-input dispatches, each consuming the
// previous result in place). Every blob has its own pack (1 or 4); f32 or f16 storage.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/binary_op_f16.hpp>
#include <infer_shaders/binary_op_f32.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infer::vk {

/// ncnn's BinaryOp op_type; the r- forms swap the operands (rsub: b - a; atan2(a, b) is the angle
/// of the point (b, a)).
enum class BinaryOpKind {
  add = 0,
  sub = 1,
  mul = 2,
  div = 3,
  max = 4,
  min = 5,
  pow = 6,
  rsub = 7,
  rdiv = 8,
  rpow = 9,
  atan2 = 10,
  ratan2 = 11
};

/// ncnn's Eltwise op_type.
enum class EltwiseKind { prod = 0, sum = 1, max = 2 };

namespace detail {

/// A blob's own axes, innermost first with its packing axis last (x | x y | x y c | x y z c), and
/// the output axis (0 x, 1 y, 2 z, 3 c) each runs along.
struct BinaryAxes {
  int count = 0;
  std::array<int, 4> extent{};
  std::array<int, 4> to{};
};

/// Where a blob of shape s runs among the output's axes at rank out_dims beside the operand
/// `other`; ncnn's rule, as the CPU layer states it (layers::detail::broadcast_extents): a 1-D
/// operand runs along the output's outer axis (h of 2-D, c of 3-D/4-D) when its length matches
/// other's extent there, else along w; a 2-D or 3-D operand of a higher-rank output keeps its
/// outer axis as c and shifts its other axes outward.
constexpr BinaryAxes binary_axes(const Shape& s, int out_dims, const Shape& other) {
  BinaryAxes o;
  if (s.dims == 1) o = {1, {s.w, 1, 1, 1}, {0, 0, 0, 0}};
  if (s.dims == 2) o = {2, {s.w, s.h, 1, 1}, {0, 1, 0, 0}};
  if (s.dims == 3) o = {3, {s.w, s.h, s.c, 1}, {0, 1, 3, 0}};
  if (s.dims == 4) o = {4, {s.w, s.h, s.d, s.c}, {0, 1, 2, 3}};
  if (s.dims == out_dims) return o;
  if (s.dims == 1 && s.w == (out_dims == 2 ? other.h : other.c)) o.to[0] = out_dims == 2 ? 1 : 3;
  if (s.dims == 2)
    o.to = out_dims == 3 ? std::array<int, 4>{1, 3, 0, 0} : std::array<int, 4>{2, 3, 0, 0};
  if (s.dims == 3) o.to = {1, 2, 3, 0};
  return o;
}

/// The blob's extents along the output's axes x, y, z, c.
constexpr std::array<int, 4> binary_extents(const BinaryAxes& o) {
  std::array<int, 4> e{1, 1, 1, 1};
  for (int k = 0; k < o.count; ++k) e[std::size_t(o.to[k])] = o.extent[k];
  return e;
}

/// A blob as the shader walks it (what its push constants say of it).
struct BinaryWalk {
  /// Packed elements between neighbours along the output's x, y, z, c (0 where broadcast).
  std::array<std::int32_t, 4> step{};
  std::int32_t axis = -1;  ///< the output axis along its packing axis; -1: broadcast along it
  std::int32_t group = 1;  ///< packed elements between its packing groups
};

inline BinaryWalk binary_walk(const VkMat& m, const BinaryAxes& o,
                              const std::array<int, 4>& out_ext) {
  BinaryWalk wk;
  std::int32_t stride = 1;
  for (int k = 0; k + 1 < o.count; ++k) {
    if (o.extent[k] == out_ext[std::size_t(o.to[k])]) wk.step[std::size_t(o.to[k])] = stride;
    stride *= o.extent[k];
  }
  const int last = o.count - 1;
  if (o.extent[last] == out_ext[std::size_t(o.to[last])]) wk.axis = o.to[last];
  const Shape& s = m.shape();
  wk.group = s.dims >= 3 ? std::int32_t(m.cstep()) : s.dims == 2 ? s.w : 1;
  return wk;
}

/// The push constants of shaders/binary_op.comp (std430 layout).
struct BinaryPush {
  std::array<std::int32_t, 4> ext;
  std::array<std::int32_t, 4> step_a, step_b, step_c;
  std::int32_t axis_a, axis_b, axis_c, n;
  std::int32_t group_a, group_b, group_c;
  float coeff_a, coeff_b;
};
static_assert(sizeof(BinaryPush) == 100, "BinaryPush must match the shader's push block");

inline std::string describe_shape(const Shape& s) {
  const std::string ext = s.dims == 1   ? fmt::format("{}", s.w)
                          : s.dims == 2 ? fmt::format("{}x{}", s.w, s.h)
                          : s.dims == 3 ? fmt::format("{}x{}x{}", s.w, s.h, s.c)
                                        : fmt::format("{}x{}x{}x{}", s.w, s.h, s.d, s.c);
  return fmt::format("{}-D {}", s.dims, ext);
}

inline std::string describe_blob(const VkMat& m) {
  return fmt::format("{} {} pack {}", describe_shape(m.shape()), to_string(m.type()), m.elempack());
}

/// What the shader needs of every blob: bound, 1-D to 4-D, pack 1 or 4 dividing its packing axis,
/// 32-bit indices.
inline Status check_binary_blob(std::string_view what, std::string_view name, const VkMat& m) {
  if (m.empty()) return make_error("{}: {} is an unbound blob", what, name);
  const Shape& s = m.shape();
  if (s.dims < 1 || s.dims > 4)
    return make_error("{}: {} has {} dims (1 to 4 are read)", what, name, s.dims);
  if (m.elempack() != 1 && m.elempack() != 4)
    return make_error("{}: {} ({}): pack {} (the kernel reads packs 1 and 4)", what, name,
                      describe_blob(m), m.elempack());
  if (s.packed_extent() % m.elempack() != 0)
    return make_error("{}: {} ({}): its packing axis ({}) is not a multiple of pack {}", what, name,
                      describe_blob(m), s.packed_extent(), m.elempack());
  if (m.total() * std::size_t(m.elempack()) > 0x7FFFFFFFu)
    return make_error("{}: {} ({}) of {} values is beyond 2^31", what, name, describe_blob(m),
                      m.total() * std::size_t(m.elempack()));
  return {};
}

/// Whether m is out's memory with out's layout (an invocation then reads only its own element).
inline bool same_blob(const VkMat& m, const VkMat& out) {
  return same_memory(m, out) && m.shape() == out.shape() &&
         m.type() == out.type() && m.elempack() == out.elempack();
}

/// An input may be the output's memory (in place) or apart from it, not partly over it.
inline Status check_binary_aliasing(std::string_view what, std::string_view name, const VkMat& m,
                                    const VkMat& out) {
  const bool overlap = m.buffer() == out.buffer() && m.offset() < out.offset() + out.bytes() &&
                       out.offset() < m.offset() + m.bytes();
  if (overlap && !same_blob(m, out))
    return make_error(
        "{}: {} ({} at byte {}) overlaps the output ({} at byte {}) without being "
        "it; in place needs the same offset, shape and pack",
        what, name, describe_blob(m), m.offset(), describe_blob(out), out.offset());
  return {};
}

/// Records out = op(coeff_a * a, coeff_b * b) (b null: the scalar instead), checked by the caller.
inline Status dispatch_binary(Recorder& rec, const VkMat& a, const VkMat* b, const VkMat& out,
                              BinaryOpKind op, float scalar, float coeff_a, float coeff_b,
                              const GpuActivation& act = {}) {
  const int dims = out.shape().dims;
  const std::array<int, 4> ext = binary_extents(binary_axes(out.shape(), dims, out.shape()));
  const Shape& other_a = b ? b->shape() : a.shape();
  const BinaryWalk wa = binary_walk(a, binary_axes(a.shape(), dims, other_a), ext);
  const BinaryWalk wb = b ? binary_walk(*b, binary_axes(b->shape(), dims, a.shape()), ext) : wa;
  const BinaryWalk wc = binary_walk(out, binary_axes(out.shape(), dims, out.shape()), ext);
  const std::size_t n = out.shape().total();
  if (n == 0) return {};
  const BinaryPush push{ext,      wa.step, wb.step,         wc.step,  wa.axis,
                        wb.axis,  wc.axis, std::int32_t(n), wa.group, wb.group,
                        wc.group, coeff_a, coeff_b};
  const bool f16 = out.type() == ElemType::f16;
  const ShaderCode code{f16 ? "binary_op.comp (f16)" : "binary_op.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::binary_op_f16)
                            : std::span<const std::uint32_t>(shaders::binary_op_f32),
                        3, sizeof(BinaryPush)};
  const SpecValue spec[] = {SpecValue::of(3, int(op)),
                            SpecValue::of(4, a.elempack()),
                            SpecValue::of(5, b ? b->elempack() : 1),
                            SpecValue::of(6, out.elempack()),
                            SpecValue::of(7, b ? 0 : 1),
                            SpecValue::of(8, b ? 0.f : scalar),
                            SpecValue::of(9, int(act.kind)),
                            SpecValue::of(10, act.p0),
                            SpecValue::of(11, act.p1)};
  constexpr std::uint32_t kLocal = 64;
  // Without b the shader reads the scalar; the binding must still name a buffer: a stands in.
  const VkMat* blobs[] = {&a, b ? b : &a, &out};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(&push, 1)),
                      groups_1d(std::size_t(n), kLocal));
}

}  // namespace detail

/// Records out = op(coeff_a * a, coeff_b * b) with ncnn's BinaryOp broadcasting (out's shape must
/// be the broadcast shape), or, with b null (with_scalar=1), out = op(coeff_a * a, coeff_b *
/// scalar) with out of a's shape. Blobs are 1-D to 4-D at pack 1 or 4 each, of one storage type
/// (f32, or f16 on a device with 16-bit storage). out may be a's memory, or b's when b has out's
/// shape (in place); any other overlap is an error, as are mismatched shapes, packs and types.
/// `act` is applied to the result before the store (an activation the composer fused).
inline Status record_binary_op(Recorder& rec, const VkMat& a, const VkMat* b, const VkMat& out,
                               BinaryOpKind op, float scalar = 0.f, float coeff_a = 1.f,
                               float coeff_b = 1.f, const GpuActivation& act = {}) {
  constexpr std::string_view what = "Vulkan BinaryOp";
  if (int(op) < 0 || int(op) > 11)
    return make_error("{}: op_type must be 0 to 11, got {}", what, int(op));
  INFER_TRY(detail::check_binary_blob(what, "a", a));
  if (b) INFER_TRY(detail::check_binary_blob(what, "b", *b));
  INFER_TRY(detail::check_binary_blob(what, "the output", out));
  for (const VkMat* m : {b, &out})
    if (m && m->type() != a.type())
      return make_error("{}: storage types differ: a {}, {} {}", what, to_string(a.type()),
                        m == b ? "b" : "the output", to_string(m->type()));
  INFER_TRY(check_storage(rec, a.type(), what));

  Shape want = a.shape();
  if (b) {
    const int dims = std::max(a.shape().dims, b->shape().dims);
    const auto ea = detail::binary_extents(detail::binary_axes(a.shape(), dims, b->shape()));
    const auto eb = detail::binary_extents(detail::binary_axes(b->shape(), dims, a.shape()));
    std::array<int, 4> e{};
    for (std::size_t i = 0; i < 4; ++i) {
      e[i] = std::max(ea[i], eb[i]);
      if ((ea[i] != 1 && ea[i] != e[i]) || (eb[i] != 1 && eb[i] != e[i]))
        return make_error(
            "{}: a ({}) and b ({}) do not broadcast: seen as {}-D, their extents "
            "along {} are {} and {} (each must be 1 or equal)",
            what, detail::describe_blob(a), detail::describe_blob(*b), dims, "whdc"[i], ea[i],
            eb[i]);
    }
    want = dims == 1   ? Shape::of(e[0])
           : dims == 2 ? Shape::of(e[0], e[1])
           : dims == 3 ? Shape::of(e[0], e[1], e[3])
                       : Shape::of(e[0], e[1], e[2], e[3]);
  }
  if (out.shape() != want)
    return make_error("{}: the output is {}, the inputs give {}", what, detail::describe_blob(out),
                      detail::describe_shape(want));
  INFER_TRY(detail::check_binary_aliasing(what, "a", a, out));
  if (b) INFER_TRY(detail::check_binary_aliasing(what, "b", *b, out));
  return detail::dispatch_binary(rec, a, b, out, op, scalar, coeff_a, coeff_b, act);
}

/// Records out = inputs[0] op inputs[1] op ... (ncnn's Eltwise: product, sum weighted by `coeffs`
/// (empty: all 1; product and max ignore them), max) as N-1 dispatches with barriers between
/// them: out = c0 * x0 op c1 * x1, then out = out op ck * xk. All inputs have out's shape and
/// storage type, each its own pack (1 or 4). Intermediate results are rounded to the storage type.
/// out may be the memory of up to two inputs (in place): those are taken first. `act` is applied
/// to the final result (an activation the composer fused).
inline Status record_eltwise(Recorder& rec, std::span<const VkMat* const> inputs, const VkMat& out,
                             EltwiseKind kind, std::span<const float> coeffs,
                             const GpuActivation& act = {}) {
  constexpr std::string_view what = "Vulkan Eltwise";
  if (int(kind) < 0 || int(kind) > 2)
    return make_error("{}: op_type must be 0 (prod), 1 (sum) or 2 (max), got {}", what, int(kind));
  if (inputs.size() < 2)
    return make_error("{}: takes at least 2 inputs, got {}", what, inputs.size());
  const bool weighted = kind == EltwiseKind::sum && !coeffs.empty();
  if (weighted && coeffs.size() != inputs.size())
    return make_error("{}: {} coeffs given for {} inputs (expected one per input, or none)", what,
                      coeffs.size(), inputs.size());
  INFER_TRY(detail::check_binary_blob(what, "the output", out));
  INFER_TRY(check_storage(rec, out.type(), what));
  // The inputs that are out's memory go first: later dispatches overwrite it before reading on.
  std::array<std::size_t, 2> first{};
  std::size_t in_place = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = fmt::format("input {}", i);
    if (!inputs[i]) return make_error("{}: {} is null", what, name);
    const VkMat& m = *inputs[i];
    INFER_TRY(detail::check_binary_blob(what, name, m));
    if (m.shape() != out.shape() || m.type() != out.type())
      return make_error("{}: {} is {} but the output is {}; all shapes and types must be equal",
                        what, name, detail::describe_blob(m), detail::describe_blob(out));
    INFER_TRY(detail::check_binary_aliasing(what, name, m, out));
    if (detail::same_blob(m, out)) {
      if (in_place == 2)
        return make_error(
            "{}: inputs {}, {} and {} are all the output's memory; at most two can "
            "be (the first dispatch reads them)",
            what, first[0], first[1], i);
      first[in_place++] = i;
    }
  }
  std::vector<std::size_t> order(first.begin(), first.begin() + std::ptrdiff_t(in_place));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!detail::same_blob(*inputs[i], out)) order.push_back(i);

  const BinaryOpKind op = kind == EltwiseKind::prod  ? BinaryOpKind::mul
                          : kind == EltwiseKind::sum ? BinaryOpKind::add
                                                     : BinaryOpKind::max;
  const auto coeff = [&](std::size_t i) { return weighted ? coeffs[i] : 1.f; };
  // The activation goes with the last dispatch.
  const auto act_at = [&](std::size_t k) { return k + 1 == order.size() ? act : GpuActivation{}; };
  INFER_TRY(detail::dispatch_binary(rec, *inputs[order[0]], inputs[order[1]], out, op, 0.f,
                                    coeff(order[0]), coeff(order[1]), act_at(1)));
  for (std::size_t k = 2; k < order.size(); ++k) {
    INFER_TRY(rec.barrier());
    INFER_TRY(detail::dispatch_binary(rec, out, inputs[order[k]], out, op, 0.f, 1.f,
                                      coeff(order[k]), act_at(k)));
  }
  return {};
}

}  // namespace infer::vk
