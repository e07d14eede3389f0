// Softmax on the GPU (shaders/softmax.comp): along any axis of a 1-D to 4-D blob (the channels of
// a 3-D blob and the w of a 1-D one are what classifiers end with), max-subtracted, f32
// arithmetic over f32 or f16 storage, packs 1 and 4, in place or not. One invocation per short
// softmax row, one workgroup per long one.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/softmax_f16.hpp>
#include <infer_shaders/softmax_f32.hpp>

namespace infer::vk {

/// Records top = softmax(bottom) along `axis` (ncnn's numbering: 0 outermost, the c of a 3-D
/// blob; negative from the end). bottom and top have the same shape, type and pack; top is bottom
/// (in place) or shares no memory with it.
inline Status record_softmax(Recorder& rec, const VkMat& bottom, const VkMat& top, int axis) {
  if (bottom.empty() || top.empty()) return make_error("Vulkan softmax: an unbound blob");
  const Shape& s = bottom.shape();
  if (!(top.shape() == s) || top.type() != bottom.type() || top.elempack() != bottom.elempack())
    return make_error(
        "Vulkan softmax: input {}x{}x{}x{} ({}-D) {} pack {} and output "
        "{}x{}x{}x{} ({}-D) {} pack {} differ",
        s.w, s.h, s.d, s.c, s.dims, to_string(bottom.type()), bottom.elempack(), top.shape().w,
        top.shape().h, top.shape().d, top.shape().c, top.shape().dims, to_string(top.type()),
        top.elempack());
  if (s.dims < 1 || s.dims > 4) return make_error("Vulkan softmax: a {}-D blob (1 to 4)", s.dims);
  const int a = axis < 0 ? axis + s.dims : axis;
  if (a < 0 || a >= s.dims)
    return make_error(
        "Vulkan softmax: axis {} is out of range for a {}-D input (expected {} to {})", axis,
        s.dims, -s.dims, s.dims - 1);
  INFER_TRY(check_blob(rec, bottom, "Vulkan softmax"));
  const int pack = bottom.elempack();
  if (s.packed_extent() % pack != 0)
    return make_error("Vulkan softmax: pack {} does not divide the packed extent {}", pack,
                      s.packed_extent());
  const bool same = same_memory(bottom, top);
  if (!same && bottom.buffer() == top.buffer() && bottom.offset() < top.offset() + top.bytes() &&
      top.offset() < bottom.offset() + bottom.bytes())
    return make_error("Vulkan softmax: input and output partly share memory (at {} and {})",
                      bottom.offset(), top.offset());
  const std::array<int, 4> e = s.outer_first();
  std::int32_t inner = 1;
  for (int k = a + 1; k < s.dims; ++k) inner *= e[k];
  const std::int32_t len = e[a], rows = std::int32_t(s.total() / std::size_t(len));
  // The packed axis: logical values per step along it, packed elements between its groups.
  const std::int32_t ginner = s.dims == 1 ? 1 : s.dims == 2 ? s.w : s.w * s.h * s.d;
  const std::int32_t gstride = s.dims == 1 ? 1 : s.dims == 2 ? s.w : std::int32_t(bottom.cstep());
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "softmax.comp (f16)" : "softmax.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::softmax_f16)
                            : std::span<const std::uint32_t>(shaders::softmax_f32),
                        2, 5 * 4};
  // Rows of 256 and more (a classifier's 1000 logits) take a workgroup each, of 256 invocations
  // where the device allows (each holding up to 8 of the row's values: one read of the row up to
  // 2048), else 64; short ones (many of them, such as a softmax over channels at every pixel) an
  // invocation each.
  const bool wide = len >= 256;
  const SpecValue spec[] = {SpecValue::of(3, pack), SpecValue::of(4, wide ? 1 : 0)};
  const std::int32_t push[5] = {rows, inner, len, ginner, gstride};
  const std::uint32_t local = wide && rec.max_workgroup_invocations() >= 256 ? 256 : 64;
  const VkMat* blobs[] = {&bottom, &top};
  return rec.dispatch(code, {local, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(std::size_t(rows), wide ? 1 : local));
}

}  // namespace infer::vk
