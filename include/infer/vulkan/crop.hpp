// ncnn's Crop on the GPU (shaders/crop.comp): a box of a 1-D to 4-D blob, input and output each
// at pack 1 or 4 (cropping the packed axis changes its extent, so the packs may differ), f32 or f16
// storage. The layer resolves its parameters (offsets and sizes, offsets from each end, or
// numpy-style starts/ends/axes) into a box (layers::Crop::box) and records this with its offsets.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer/vulkan/relayout.hpp>
#include <infer_shaders/crop_f16.hpp>
#include <infer_shaders/crop_f32.hpp>
#include <span>
#include <string_view>

namespace infer::vk {

/// Records top = the box of bottom that starts at `offsets` (offsets[a] along ncnn axis a, 0
/// outermost: c of 3-D/4-D, h of 2-D, w of 1-D; zero for axes at or past the blobs' dims) and has
/// top's extents. bottom and top have the same type (f32, or f16 where the device stores 16 bits)
/// and dims, each a pack (1 or 4) that divides its packed extent, and do not share memory.
inline Status record_crop(Recorder& rec, const VkMat& bottom, const VkMat& top,
                          const std::array<int, 4>& offsets) {
  constexpr std::string_view what = "Vulkan crop";
  INFER_TRY(detail::check_relayout_blob(rec, bottom, what, "input"));
  INFER_TRY(detail::check_relayout_blob(rec, top, what, "output"));
  if (bottom.type() != top.type())
    return make_error("{}: input {} and output {} differ in storage", what,
                      to_string(bottom.type()), to_string(top.type()));
  if (detail::overlap(bottom, top))
    return make_error("{}: input and output share memory (at {} and {} of one buffer)", what,
                      bottom.offset(), top.offset());
  const Shape &in = bottom.shape(), &out = top.shape();
  if (in.dims != out.dims)
    return make_error("{}: the input is {}-D, the output {}-D", what, in.dims, out.dims);
  const std::array<int, 4> ie = in.outer_first(), oe = out.outer_first();
  for (std::size_t a = 0; a < 4; ++a) {
    if (int(a) >= in.dims && offsets[a] != 0)
      return make_error("{}: offset {} on axis {} of a {}-D blob", what, offsets[a], a, in.dims);
    if (offsets[a] < 0 || std::int64_t(offsets[a]) + oe[a] > ie[a])
      return make_error("{}: {} from offset {} on axis {} does not fit its extent {}", what, oe[a],
                        offsets[a], a, ie[a]);
  }
  const std::size_t n = out.total();
  if (n == 0) return {};
  if (in == out && bottom.elempack() == top.elempack())
    return rec.copy(bottom, 0, top, 0, bottom.bytes());  // the same layout: the same bytes
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "crop.comp (f16)" : "crop.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::crop_f16)
                            : std::span<const std::uint32_t>(shaders::crop_f32),
                        2, 15 * 4};
  const SpecValue spec[] = {SpecValue::of(3, bottom.elempack()), SpecValue::of(4, top.elempack())};
  const std::array<std::int32_t, 2> s = detail::packed_axis(bottom), d = detail::packed_axis(top);
  const std::int32_t push[15] = {std::int32_t(n), oe[1], oe[2],      oe[3],      ie[1],
                                 ie[2],           ie[3], offsets[0], offsets[1], offsets[2],
                                 offsets[3],      s[0],  s[1],       d[0],       d[1]};
  constexpr std::uint32_t kLocal = 64;
  const VkMat* blobs[] = {&bottom, &top};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(std::size_t(n), kLocal));
}

}  // namespace infer::vk
