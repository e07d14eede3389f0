// A per-channel affine map on the GPU (shaders/affine.comp): y = x * a[i] + b[i] along the
// blob's packing axis, what BatchNorm (a = slope / sqrt(var + eps), b = bias - mean * a), Scale and
// Bias reduce to on the GPU. 1-D to 4-D blobs, packs 1 and 4, f32 or f16 storage with f32
// arithmetic, in place or not.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/affine_f16.hpp>
#include <infer_shaders/affine_f32.hpp>
#include <string_view>

namespace infer::vk {

namespace detail {

/// Whether two blobs' memory overlaps.
inline bool affine_overlaps(const VkMat& x, const VkMat& y) {
  return x.buffer() == y.buffer() && x.offset() < y.offset() + y.bytes() &&
         y.offset() < x.offset() + x.bytes();
}

/// What the shader needs of a coefficient blob: 1-D at pack 1 of `n` values of `type`, apart from
/// the output.
inline Status check_affine_coefficients(std::string_view name, const VkMat& m, int n, ElemType type,
                                        const VkMat& top) {
  if (m.empty()) return make_error("Vulkan affine: {} is an unbound blob", name);
  const Shape& s = m.shape();
  if (s.dims != 1 || s.w != n || m.elempack() != 1 || m.type() != type)
    return make_error(
        "Vulkan affine: {} must be 1-D of {} {} values at pack 1 (one per position along the "
        "packing axis), got {}-D {}x{}x{}x{} {} pack {}",
        name, n, to_string(type), s.dims, s.w, s.h, s.d, s.c, to_string(m.type()), m.elempack());
  if (affine_overlaps(m, top))
    return make_error("Vulkan affine: {} (at byte {}) overlaps the output (at byte {})", name,
                      m.offset(), top.offset());
  return {};
}

}  // namespace detail

/// Records top = bottom * a[i] + b[i], i the position along the packing axis (w of 1-D, h of 2-D,
/// c of 3-D/4-D); a null `a` multiplies by 1, a null `b` adds 0. bottom is 1-D to 4-D at pack 1 or
/// 4; top has its shape, type and pack and is its memory (in place) or shares none with it; a and
/// b are 1-D blobs at pack 1 of the blob's storage type, one value per position.
inline Status record_affine(Recorder& rec, const VkMat& bottom, const VkMat& top, const VkMat* a,
                            const VkMat* b) {
  if (bottom.empty() || top.empty()) return make_error("Vulkan affine: an unbound blob");
  const Shape& s = bottom.shape();
  if (!(top.shape() == s) || top.type() != bottom.type() || top.elempack() != bottom.elempack())
    return make_error(
        "Vulkan affine: input {}x{}x{}x{} ({}-D) {} pack {} and output {}x{}x{}x{} ({}-D) {} "
        "pack {} differ",
        s.w, s.h, s.d, s.c, s.dims, to_string(bottom.type()), bottom.elempack(), top.shape().w,
        top.shape().h, top.shape().d, top.shape().c, top.shape().dims, to_string(top.type()),
        top.elempack());
  if (s.dims < 1 || s.dims > 4) return make_error("Vulkan affine: a {}-D blob (1 to 4)", s.dims);
  INFER_TRY(check_blob(rec, bottom, "Vulkan affine"));
  const int pack = bottom.elempack();
  const int n = s.packed_extent();
  if (n % pack != 0)
    return make_error("Vulkan affine: pack {} does not divide the packed extent {}", pack, n);
  const bool same = same_memory(bottom, top);
  if (!same && detail::affine_overlaps(bottom, top))
    return make_error("Vulkan affine: input and output partly share memory (at {} and {})",
                      bottom.offset(), top.offset());
  if (a) INFER_TRY(detail::check_affine_coefficients("a", *a, n, bottom.type(), top));
  if (b) INFER_TRY(detail::check_affine_coefficients("b", *b, n, bottom.type(), top));
  if (s.total() == 0) return {};
  // The packing axis: packed elements of one group, packed elements between groups.
  const std::int32_t plane = s.dims == 1 ? 1 : s.dims == 2 ? s.w : s.w * s.h * s.d;
  const std::int32_t gstride = s.dims == 1 ? 1 : s.dims == 2 ? s.w : std::int32_t(bottom.cstep());
  const std::int32_t count = std::int32_t(s.total());
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "affine.comp (f16)" : "affine.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::affine_f16)
                            : std::span<const std::uint32_t>(shaders::affine_f32),
                        4, 3 * 4};
  const SpecValue spec[] = {SpecValue::of(3, pack), SpecValue::of(4, a ? 1 : 0),
                            SpecValue::of(5, b ? 1 : 0)};
  const std::int32_t push[3] = {count, plane, gstride};
  constexpr std::uint32_t kLocal = 64;
  // A missing coefficient blob is not read; its binding must still name a buffer: bottom stands in.
  const VkMat* blobs[] = {&bottom, &top, a ? a : &bottom, b ? b : &bottom};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                      groups_1d(std::size_t(count), kLocal));
}

}  // namespace infer::vk
