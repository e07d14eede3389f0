// The pooling kernel on the GPU (shaders/pooling.comp): max or average over windows described as
// the CPU kernel takes them (kernels::PoolAxis per axis: sliding or adaptive, the average's count
// bounds), input and output at one pack (1 or 4), f32 or f16 storage. The GPU Pooling forward
// records it with the axes its layer computes (pad modes, global pooling, adaptive outputs).
#pragma once

#include <infer/kernels/pooling.hpp>
#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/pooling_global_f16.hpp>
#include <infer_shaders/pooling_global_f32.hpp>
#include <infer_shaders/pooling_f16.hpp>
#include <infer_shaders/pooling_f32.hpp>

namespace infer::vk {

enum class PoolType { max = 0, average = 1 };

/// Records top = pool(bottom) with windows `x` and `y`. bottom is 3-D; top is 3-D with the same
/// channels, or (global pooling) 1-D of c values with x and y spanning the whole input.
inline Status record_pooling(Recorder& rec, const VkMat& bottom,
                             const VkMat& top, PoolType type, const kernels::PoolAxis& x,
                             const kernels::PoolAxis& y) {
  const Shape& in = bottom.shape();
  const Shape& out = top.shape();
  const bool global = out.dims == 1;
  if (in.dims != 3 || (out.dims != 3 && !global))
    return make_error("Vulkan pooling: input must be 3-D and output 3-D or 1-D, got {}-D and {}-D",
                      in.dims, out.dims);
  const int outw = global ? 1 : out.w, outh = global ? 1 : out.h, outc = global ? out.w : out.c;
  if (outc != in.c)
    return make_error("Vulkan pooling: {} input channels, {} output channels", in.c, outc);
  // The global reduction may write f32 from f16 storage (a squeeze-excitation block's vector).
  const bool f32_out = global && bottom.type() == ElemType::f16 && top.type() == ElemType::f32;
  if ((top.type() != bottom.type() && !f32_out) || top.elempack() != bottom.elempack())
    return make_error("Vulkan pooling: input {} pack {} and output {} pack {} differ",
                      to_string(bottom.type()), bottom.elempack(), to_string(top.type()),
                      top.elempack());
  INFER_TRY(check_blob(rec, bottom, "Vulkan pooling"));
  if (x.in != in.w || y.in != in.h)
    return make_error("Vulkan pooling: windows over {}x{}, input is {}x{}", x.in, y.in, in.w,
                      in.h);
  if (x.kernel < 1 || y.kernel < 1 || x.stride < 1 || y.stride < 1)
    return make_error("Vulkan pooling: kernel {}x{} and stride {}x{} must be >= 1", x.kernel,
                      y.kernel, x.stride, y.stride);
  if ((x.adaptive_out > 0) != (y.adaptive_out > 0) ||
      (x.adaptive_out > 0 && (x.adaptive_out != outw || y.adaptive_out != outh)))
    return make_error("Vulkan pooling: adaptive windows must be on both axes and give the "
                      "output's {}x{}", outw, outh);
  if (in.c > 65535) return make_error("Vulkan pooling: {} channels, at most 65535", in.c);
  const bool f16 = bottom.type() == ElemType::f16;
  // A window over the whole input, nothing padded, every pixel counted: a workgroup per channel.
  const bool whole = global && x.adaptive_out == 0 && x.pad == 0 && y.pad == 0 &&
                     x.kernel == in.w && y.kernel == in.h && x.count_begin <= 0 &&
                     y.count_begin <= 0 && x.count_end >= in.w && y.count_end >= in.h;
  if (whole || (global && x.adaptive_out == 1 && y.adaptive_out == 1)) {
    // A 1-D output of c values at pack p holds channel ch at index ch: the same layout as p = 1.
    const ShaderCode reduce{f16 ? "pooling_global.comp (f16)" : "pooling_global.comp (f32)",
                            f16 ? std::span<const std::uint32_t>(shaders::pooling_global_f16)
                                : std::span<const std::uint32_t>(shaders::pooling_global_f32),
                            2, 4 * 4};
    const SpecValue gspec[] = {SpecValue::of(3, type == PoolType::average ? 1 : 0),
                               SpecValue::of(4, bottom.elempack()),
                               SpecValue::of(5, f32_out ? 1 : 0)};
    const std::int32_t gpush[4] = {in.w, in.h, in.c, std::int32_t(bottom.cstep())};
    const VkMat* gblobs[] = {&bottom, &top};
    const std::uint32_t gx = std::uint32_t(std::min(in.c, 65535));
    return rec.dispatch(reduce, {256, 1, 1}, gspec, gblobs, std::as_bytes(std::span(gpush)),
                        {gx, std::uint32_t((in.c + 65534) / 65535), 1u});
  }
  if (f32_out)
    return make_error(
        "Vulkan pooling: an f32 output from f16 storage needs a window over the "
        "whole input, unpadded");
  const ShaderCode code{f16 ? "pooling.comp (f16)" : "pooling.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::pooling_f16)
                            : std::span<const std::uint32_t>(shaders::pooling_f32),
                        2, 13 * 4};
  const SpecValue spec[] = {SpecValue::of(3, type == PoolType::average ? 1 : 0),
                            SpecValue::of(4, bottom.elempack()),
                            SpecValue::of(5, x.kernel),
                            SpecValue::of(6, y.kernel),
                            SpecValue::of(7, x.stride),
                            SpecValue::of(8, y.stride),
                            SpecValue::of(9, x.adaptive_out > 0 ? 1 : 0)};
  constexpr std::uint32_t kLocal[3] = {8, 8, 1};
  // A 1-D output at pack p is c / p packed elements in a row: channel step 1.
  const std::int32_t out_cstep = global ? 1 : std::int32_t(top.cstep());
  const std::int32_t push[13] = {in.w,          in.h,         in.c,          std::int32_t(bottom.cstep()),
                                 outw,          outh,         out_cstep,     x.pad,
                                 y.pad,         x.count_begin, x.count_end, y.count_begin,
                                 y.count_end};
  const VkMat* blobs[] = {&bottom, &top};
  return rec.dispatch(code, {kLocal[0], kLocal[1], kLocal[2]}, spec, blobs, std::as_bytes(std::span(push)),
                      {(std::uint32_t(outw) + kLocal[0] - 1) / kLocal[0],
                       (std::uint32_t(outh) + kLocal[1] - 1) / kLocal[1], std::uint32_t(in.c)});
}

}  // namespace infer::vk
