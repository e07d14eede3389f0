// Data movement on the GPU (shaders/relayout.comp): one kernel moves values by logical index
// between two blobs that may differ in storage type (f32, f16), pack (1, 4) and shape. It serves
// Reshape and Flatten (record_relayout), Concat and Slice (one part along an axis each dispatch)
// and ShuffleChannel, and converts a blob's type or pack for the plan (Packing, Cast).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/relayout_f16.hpp>
#include <infer_shaders/relayout_f32.hpp>
#include <string_view>

namespace infer::vk {

namespace detail {

/// One dispatch of relayout.comp in logical indices: `inner` values per step along an axis, `ext`
/// steps moved per outer position, read at src_off of the source's src_ext steps (permuted: step
/// a reads (a % rows) * cols + a / rows) and written at dst_off of the destination's dst_ext.
struct RelayoutMove {
  int inner = 1, ext = 1;
  int src_ext = 1, src_off = 0;
  int dst_ext = 1, dst_off = 0;
  int rows = 1, cols = 1;
};

/// A blob's packed axis as relayout.comp and softmax.comp index it: logical values per step along
/// it, and packed elements between its groups.
inline std::array<std::int32_t, 2> packed_axis(const VkMat& m) {
  const Shape& s = m.shape();
  if (s.dims == 1) return {1, 1};
  if (s.dims == 2) return {s.w, s.w};
  return {s.w * s.h * s.d, std::int32_t(m.cstep())};
}

/// Whether `m` is a blob relayout.comp reads or writes; `role` names it in errors.
inline Status check_relayout_blob(const Recorder& rec, const VkMat& m, std::string_view what,
                                  std::string_view role) {
  if (m.empty()) return make_error("{}: the {} blob is unbound", what, role);
  const Shape& s = m.shape();
  if (s.dims < 1 || s.dims > 4)
    return make_error("{}: the {} blob is {}-D (1 to 4)", what, role, s.dims);
  INFER_TRY(check_storage(rec, m.type(), what));
  if (m.elempack() != 1 && m.elempack() != 4)
    return make_error("{}: {} pack {} (the kernel moves packs 1 and 4)", what, role, m.elempack());
  if (s.packed_extent() % m.elempack() != 0)
    return make_error("{}: {} pack {} does not divide its packed extent {}", what, role,
                      m.elempack(), s.packed_extent());
  if (m.total() * std::size_t(m.elempack()) > 0x7FFFFFFFu)
    return make_error("{}: the {} blob of {} values is beyond 2^31", what, role,
                      m.total() * std::size_t(m.elempack()));
  return {};
}

/// Whether two blobs share memory.
inline bool overlap(const VkMat& a, const VkMat& b) {
  return a.buffer() == b.buffer() && a.offset() < b.offset() + b.bytes() &&
         b.offset() < a.offset() + a.bytes();
}

/// Records `move` of n = ext * inner * (outer positions) values from src to dst.
inline Status record_move(Recorder& rec, const VkMat& src, const VkMat& dst,
                          const RelayoutMove& move, std::size_t n, std::string_view what) {
  INFER_TRY(check_relayout_blob(rec, src, what, "source"));
  INFER_TRY(check_relayout_blob(rec, dst, what, "destination"));
  if (overlap(src, dst))
    return make_error("{}: source and destination share memory (at {} and {} of one buffer)", what,
                      src.offset(), dst.offset());
  const bool src_f16 = src.type() == ElemType::f16, dst_f16 = dst.type() == ElemType::f16;
  const bool f16 = src_f16 || dst_f16;
  const ShaderCode code{f16 ? "relayout.comp (f16)" : "relayout.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::relayout_f16)
                            : std::span<const std::uint32_t>(shaders::relayout_f32),
                        2, 13 * 4};
  const SpecValue spec[] = {SpecValue::of(3, src.elempack()), SpecValue::of(4, dst.elempack()),
                            SpecValue::of(5, src_f16 ? 1 : 0), SpecValue::of(6, dst_f16 ? 1 : 0)};
  const std::array<std::int32_t, 2> s = packed_axis(src), d = packed_axis(dst);
  const std::int32_t push[13] = {
      std::int32_t(n), move.inner, move.ext, move.src_ext, move.src_off, move.dst_ext, move.dst_off,
      move.rows,       move.cols,  s[0],     s[1],         d[0],         d[1]};
  constexpr std::uint32_t kLocal = 64;
  const VkMat* blobs[] = {&src, &dst};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(std::size_t(n), kLocal));
}

/// `axis` (ncnn's numbering, negative from the end) of a `dims`-D blob, or -1 when out of range.
inline int resolve_axis(int axis, int dims) {
  const int a = axis < 0 ? axis + dims : axis;
  return a >= 0 && a < dims ? a : -1;
}

/// Records one part of Concat (`part` is src, `whole` is dst) or of Slice (the other way round).
inline Status record_part(Recorder& rec, const VkMat& src, const VkMat& dst, const VkMat& whole,
                          const VkMat& part, int axis, int offset, bool into_whole,
                          std::string_view what) {
  if (whole.empty() || part.empty()) return make_error("{}: an unbound blob", what);
  const Shape &ws = whole.shape(), &ps = part.shape();
  if (ws.total() > 0x7FFFFFFFu) return make_error("{}: {} values is beyond 2^31", what, ws.total());
  if (ws.dims != ps.dims)
    return make_error("{}: the whole is {}-D, the part {}-D", what, ws.dims, ps.dims);
  const int a = resolve_axis(axis, ws.dims);
  if (a < 0)
    return make_error("{}: axis {} is out of range for {}-D blobs (expected {} to {})", what, axis,
                      ws.dims, -ws.dims, ws.dims - 1);
  const std::array<int, 4> we = ws.outer_first(), pe = ps.outer_first();
  for (int k = 0; k < ws.dims; ++k)
    if (k != a && we[k] != pe[k])
      return make_error(
          "{}: the whole has extent {} on axis {}, the part {}; only axis {} may "
          "differ",
          what, we[k], k, pe[k], a);
  if (offset < 0 || offset > we[a] - pe[a])
    return make_error("{}: a part of {} at offset {} does not fit axis {} of extent {}", what,
                      pe[a], offset, a, we[a]);
  RelayoutMove m;
  for (int k = a + 1; k < ws.dims; ++k) m.inner *= we[k];
  m.ext = pe[a];
  m.src_ext = into_whole ? pe[a] : we[a];
  m.src_off = into_whole ? 0 : offset;
  m.dst_ext = into_whole ? we[a] : pe[a];
  m.dst_off = into_whole ? offset : 0;
  m.cols = m.ext;
  return record_move(rec, src, dst, m, ps.total(), what);
}

}  // namespace detail

/// Records dst = src value for value in logical order (c, d, h, w, outermost first): the two have
/// the same number of values and may differ in shape (Reshape, Flatten), pack (1 or 4, each a
/// divisor of its blob's packed extent) and storage (f32 or f16, converted with rounding to
/// nearest). dst must not share memory with src. Blobs of the same layout are copied (no
/// dispatch).
inline Status record_relayout(Recorder& rec, const VkMat& src, const VkMat& dst) {
  constexpr std::string_view what = "Vulkan relayout";
  if (src.empty() || dst.empty()) return make_error("{}: an unbound blob", what);
  const std::size_t n = src.shape().total();
  if (dst.shape().total() != n)
    return make_error("{}: the source holds {} values, the destination {}", what, n,
                      dst.shape().total());
  if (n > 0x7FFFFFFFu) return make_error("{}: {} values is beyond 2^31", what, n);
  if (src.shape() == dst.shape() && src.type() == dst.type() && src.elempack() == dst.elempack() &&
      src.cstep() == dst.cstep()) {  // the same bytes
    INFER_TRY(detail::check_relayout_blob(rec, src, what, "source"));
    if (detail::overlap(src, dst))
      return make_error("{}: source and destination share memory (at {} and {} of one buffer)",
                        what, src.offset(), dst.offset());
    return rec.copy(src, 0, dst, 0, src.bytes());
  }
  detail::RelayoutMove m;
  m.ext = m.src_ext = m.dst_ext = m.cols = int(n);
  return detail::record_move(rec, src, dst, m, n, what);
}

/// Records Concat's write of one input: `part` goes into `whole` starting at `offset` along
/// `axis` (ncnn's numbering: 0 outermost, c of 3-D, w of 1-D; negative from the end); the two
/// have the same dims and extents except along axis. Types and packs may differ as in
/// record_relayout. Parts written into disjoint ranges need no barrier between them.
inline Status record_concat_part(Recorder& rec, const VkMat& part, const VkMat& whole, int axis,
                                 int offset) {
  return detail::record_part(rec, part, whole, whole, part, axis, offset, true, "Vulkan concat");
}

/// Records Slice's read of one output: `part` is `whole` from `offset` along `axis`, as
/// record_concat_part describes.
inline Status record_slice_part(Recorder& rec, const VkMat& whole, const VkMat& part, int axis,
                                int offset) {
  return detail::record_part(rec, whole, part, whole, part, axis, offset, false, "Vulkan slice");
}

/// Records ncnn's ShuffleChannel: the channels of src, seen as a group x (channels / group)
/// matrix, transposed into dst (output channel g * j + i is input channel (channels / group) * i
/// + j); `reverse` undoes the shuffle of the same group. A 3-D or 4-D channel moves with all its
/// values; a 1-D or 2-D blob is one channel (group 1 only). src and dst have the same shape and may
/// differ in type and pack as in record_relayout.
inline Status record_shuffle_channel(Recorder& rec, const VkMat& src, const VkMat& dst, int group,
                                     bool reverse) {
  constexpr std::string_view what = "Vulkan shuffle channel";
  if (src.empty() || dst.empty()) return make_error("{}: an unbound blob", what);
  const Shape& s = src.shape();
  if (!(dst.shape() == s))
    return make_error("{}: source {}x{}x{}x{} ({}-D) and destination {}x{}x{}x{} ({}-D) differ",
                      what, s.w, s.h, s.d, s.c, s.dims, dst.shape().w, dst.shape().h, dst.shape().d,
                      dst.shape().c, dst.shape().dims);
  if (s.total() > 0x7FFFFFFFu) return make_error("{}: {} values is beyond 2^31", what, s.total());
  const int channels = s.dims >= 3 ? s.c : 1;
  if (group < 1 || channels % group != 0)
    return make_error("{}: group {} does not divide the {} channels of the {}-D input", what, group,
                      channels, s.dims);
  detail::RelayoutMove m;
  m.inner = s.w * s.h * s.d;
  if (s.dims < 3) m.inner = int(s.total());
  m.ext = m.src_ext = m.dst_ext = channels;
  m.rows = reverse ? channels / group : group;  // the transpose of (channels / rows) x rows
  m.cols = channels / m.rows;
  return detail::record_move(rec, src, dst, m, s.total(), what);
}

}  // namespace infer::vk
