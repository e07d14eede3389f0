// ncnn's Padding on the GPU (shaders/padding.comp): constant, replicate or reflect borders on any
// axis of a 1-D to 4-D blob, per-channel constants, input and output each at pack 1 or 4 (padding
// the packed axis changes its extent, so the packs may differ), f32 or f16 storage. The layer
// resolves its parameters into pads per axis (layers::Padding::pads_by_axis) and records this.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <infer/element.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer/vulkan/relayout.hpp>
#include <infer_shaders/padding_f16.hpp>
#include <infer_shaders/padding_f32.hpp>
#include <span>
#include <string_view>

namespace infer::vk {

/// Records top = bottom padded by `pads`: pads[a] = {before, after} along ncnn axis a (0
/// outermost: c of 3-D/4-D, h of 2-D, w of 1-D), zero for axes at or past the blobs' dims; top's
/// extent along each axis is bottom's plus both pads. `type` 0 fills with `value` (rounded to the
/// storage type as the host rounds it), 1 replicates the edge, 2 reflects about it (pads below the
/// extent). When `per_channel` is bound and the blobs are 3-D or 4-D at type 0, output channel q
/// is filled with per_channel's value q instead (a 1-D pack-1 blob of the storage type with at
/// least as many values as top has channels, as an Uploader gives); otherwise it is not read.
/// bottom and top have the same type (f32, or f16 where the device stores 16 bits) and dims, each
/// a pack (1 or 4) that divides its packed extent, and do not share memory.
inline Status record_padding(Recorder& rec, const VkMat& bottom, const VkMat& top,
                             const std::array<std::array<int, 2>, 4>& pads, int type, float value,
                             const VkMat& per_channel = {}) {
  constexpr std::string_view what = "Vulkan padding";
  INFER_TRY(detail::check_relayout_blob(rec, bottom, what, "input"));
  INFER_TRY(detail::check_relayout_blob(rec, top, what, "output"));
  if (bottom.type() != top.type())
    return make_error("{}: input {} and output {} differ in storage", what,
                      to_string(bottom.type()), to_string(top.type()));
  if (detail::overlap(bottom, top))
    return make_error("{}: input and output share memory (at {} and {} of one buffer)", what,
                      bottom.offset(), top.offset());
  if (type < 0 || type > 2)
    return make_error("{}: type {} is not 0 (constant), 1 (replicate) or 2 (reflect)", what, type);
  const Shape &in = bottom.shape(), &out = top.shape();
  if (in.dims != out.dims)
    return make_error("{}: the input is {}-D, the output {}-D", what, in.dims, out.dims);
  const std::array<int, 4> ie = in.outer_first(), oe = out.outer_first();
  for (std::size_t a = 0; a < 4; ++a) {
    const int before = pads[a][0], after = pads[a][1];
    if (int(a) >= in.dims && (before != 0 || after != 0))
      return make_error("{}: pads {} and {} on axis {} of a {}-D blob", what, before, after, a,
                        in.dims);
    if (before < 0 || after < 0)
      return make_error("{}: pads {} and {} on axis {} must not be negative", what, before, after,
                        a);
    if (type == 2 && (before >= ie[a] || after >= ie[a]))
      return make_error("{}: reflect pads {} and {} on axis {} need an extent above them, got {}",
                        what, before, after, a, ie[a]);
    if (std::int64_t(ie[a]) + before + after != oe[a])
      return make_error("{}: axis {} of extent {} padded by {} and {} is {}, the output has {}",
                        what, a, ie[a], before, after, std::int64_t(ie[a]) + before + after, oe[a]);
  }
  const bool f16 = bottom.type() == ElemType::f16;
  const bool by_channel = !per_channel.empty() && in.dims >= 3 && type == 0;
  if (by_channel) {
    const Shape& p = per_channel.shape();
    if (p.dims != 1 || per_channel.elempack() != 1 || per_channel.type() != bottom.type())
      return make_error("{}: per-channel constants are {}-D {} pack {}, expected 1-D {} pack 1",
                        what, p.dims, to_string(per_channel.type()), per_channel.elempack(),
                        to_string(bottom.type()));
    if (p.w < oe[0])
      return make_error("{}: {} per-channel constants for an output of {} channels", what, p.w,
                        oe[0]);
    if (detail::overlap(per_channel, top))
      return make_error("{}: the per-channel constants share memory with the output", what);
  }
  const std::size_t n = out.total();
  if (n == 0) return {};
  if (pads == std::array<std::array<int, 2>, 4>{} && bottom.elempack() == top.elempack())
    return rec.copy(bottom, 0, top, 0, bottom.bytes());  // the same layout: the same bytes
  // The constant as the storage type holds it, so the shader's conversion is exact.
  const float fill = f16 ? to_f32(from_f32<infer::f16>(value)) : value;
  const ShaderCode code{f16 ? "padding.comp (f16)" : "padding.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::padding_f16)
                            : std::span<const std::uint32_t>(shaders::padding_f32),
                        3, 17 * 4};
  const SpecValue spec[] = {SpecValue::of(3, type), SpecValue::of(4, bottom.elempack()),
                            SpecValue::of(5, top.elempack()), SpecValue::of(6, by_channel ? 1 : 0)};
  const std::array<std::int32_t, 2> s = detail::packed_axis(bottom), d = detail::packed_axis(top);
  const std::int32_t fill_bits = std::bit_cast<std::int32_t>(fill);
  const std::int32_t push[17] = {
      std::int32_t(n), oe[1],      oe[2],      oe[3], ie[0], ie[1], ie[2], ie[3],    pads[0][0],
      pads[1][0],      pads[2][0], pads[3][0], s[0],  s[1],  d[0],  d[1],  fill_bits};
  constexpr std::uint32_t kLocal = 64;
  // Without per-channel constants binding 2 is never read; the input stands in for it.
  const VkMat* blobs[] = {&bottom, &top, by_channel ? &per_channel : &bottom};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(std::size_t(n), kLocal));
}

}  // namespace infer::vk
