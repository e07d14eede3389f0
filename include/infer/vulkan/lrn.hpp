// LRN on the GPU (shaders/lrn.comp): ncnn's local response normalization of a 3-D blob exactly as
// the CPU layer (layers/lrn.hpp) computes it, across channels or within a channel, packs 1 and 4,
// f32 or f16 storage with f32 arithmetic. Across channels runs in place or not; within a channel
// reads neighbouring pixels, so it needs an output apart from the input.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/lrn_f16.hpp>
#include <infer_shaders/lrn_f32.hpp>

namespace infer::vk {

/// The longest across-channel window the kernel keeps (in registers): 2 * min(local_size / 2,
/// c - 1) + 1 channels at most.
inline constexpr int kLrnMaxWindow = 255;

/// Records top = LRN(bottom) with ncnn's parameters: region_type 0 (across channels: channels
/// ch - local_size/2 .. ch + local_size/2, alpha / local_size) or 1 (within channel: a local_size x
/// local_size window starting local_size/2 before the pixel, alpha / local_size^2); squares outside
/// the blob count as 0; y = x * (bias + alpha / n * sum)^-beta. bottom is 3-D; top has its shape,
/// type and pack and is its memory (region 0 only) or shares none with it.
inline Status record_lrn(Recorder& rec, const VkMat& bottom, const VkMat& top, int region_type,
                         int local_size, float alpha, float beta, float bias) {
  if (bottom.empty() || top.empty()) return make_error("Vulkan LRN: an unbound blob");
  const Shape& s = bottom.shape();
  if (!(top.shape() == s) || top.type() != bottom.type() || top.elempack() != bottom.elempack())
    return make_error(
        "Vulkan LRN: input {}x{}x{}x{} ({}-D) {} pack {} and output {}x{}x{}x{} ({}-D) {} pack "
        "{} differ",
        s.w, s.h, s.d, s.c, s.dims, to_string(bottom.type()), bottom.elempack(), top.shape().w,
        top.shape().h, top.shape().d, top.shape().c, top.shape().dims, to_string(top.type()),
        top.elempack());
  if (s.dims != 3) return make_error("Vulkan LRN: input must be 3-D (w, h, c), got {}-D", s.dims);
  if (region_type != 0 && region_type != 1)
    return make_error(
        "Vulkan LRN: region_type must be 0 (across channels) or 1 (within channel), got {}",
        region_type);
  if (local_size < 1)
    return make_error("Vulkan LRN: local_size must be positive, got {}", local_size);
  INFER_TRY(check_blob(rec, bottom, "Vulkan LRN"));
  const int pack = bottom.elempack();
  if (s.c % pack != 0)
    return make_error("Vulkan LRN: pack {} does not divide the {} channels", pack, s.c);
  const bool same = same_memory(bottom, top);
  if (!same && bottom.buffer() == top.buffer() && bottom.offset() < top.offset() + top.bytes() &&
      top.offset() < bottom.offset() + bottom.bytes())
    return make_error("Vulkan LRN: input and output partly share memory (at {} and {})",
                      bottom.offset(), top.offset());
  if (same && region_type == 1)
    return make_error(
        "Vulkan LRN: within-channel LRN (region_type 1) reads neighbouring pixels and cannot run "
        "in place; give the output memory apart from the input");
  // A window wider than the blob sees only zeros beyond it: clamp the ring to the channels.
  const int radius = std::min(local_size / 2, std::max(s.c - 1, 0));
  const int taps = 2 * radius + 1;
  if (region_type == 0 && taps > kLrnMaxWindow)
    return make_error(
        "Vulkan LRN: an across-channel window of {} channels (local_size {}, {} channels); the "
        "kernel keeps at most {}",
        taps, local_size, s.c, kLrnMaxWindow);
  if (s.total() == 0) return {};
  const float n = region_type == 0 ? float(local_size) : float(local_size) * float(local_size);
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "lrn.comp (f16)" : "lrn.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::lrn_f16)
                            : std::span<const std::uint32_t>(shaders::lrn_f32),
                        2, 7 * 4};
  // Each region reads only its own window constant; the other stays 1 so it makes no new pipeline.
  const SpecValue spec[] = {SpecValue::of(3, region_type), SpecValue::of(4, pack),
                            SpecValue::of(5, region_type == 1 ? local_size : 1),
                            SpecValue::of(6, region_type == 0 ? taps : 1)};
  struct Push {
    std::int32_t w, h, c, cstep;
    float k, bias, beta;
  };
  static_assert(sizeof(Push) == 7 * 4, "Push must match the shader's push block");
  const Push push{s.w, s.h, s.c, std::int32_t(bottom.cstep()), alpha / n, bias, beta};
  // Region 0: one invocation per pixel; region 1: one per value.
  const std::size_t pixels = std::size_t(s.w) * std::size_t(s.h);
  const std::size_t count = region_type == 0 ? pixels : pixels * std::size_t(s.c);
  constexpr std::uint32_t kLocal = 64;
  const VkMat* blobs[] = {&bottom, &top};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(&push, 1)),
                      groups_1d(std::size_t(count), kLocal));
}

}  // namespace infer::vk
