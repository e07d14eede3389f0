// The transposed-convolution kernel on the GPU (shaders/deconvolution.comp), gather form: any
// window, stride, dilation and groups (depthwise included), the output cut out of the uncut
// output anywhere (pads, output_pad, output_w/h), input and output at pack 1 or 4, bias and an
// activation in the epilogue, f32 or f16 storage. The GPU Deconvolution and
// DeconvolutionDepthWise forwards record it with the cut their layer resolves
// (detail::deconv_plan).
#pragma once

#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/deconvolution_f16.hpp>
#include <infer_shaders/deconvolution_f32.hpp>

namespace infer::vk {

/// A transposed convolution's window and epilogue, the cut resolved: input (sy, sx) with tap
/// (ky, kx) reaches uncut output (sy * stride_h + ky * dilation_h, sx * stride_w + kx *
/// dilation_w), and output (0, 0) is uncut output (offset_y, offset_x): the left and top pads,
/// or the SAME_UPPER/LOWER split of output_w/h (detail::DeconvPlan's offsets). The output's
/// extent says where the cut ends, so output_pad is only a larger output.
struct DeconvolutionParams {
  int kernel_w = 1, kernel_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int stride_w = 1, stride_h = 1;
  int offset_x = 0, offset_y = 0;  ///< output (0, 0) in the uncut output
  int group = 1;
  GpuActivation act;  ///< applied to the sum plus bias before the store
};

/// Records top = act(deconv(bottom, weights) + bias). Blobs are 3-D, all of one storage type
/// (weights and bias too, 1-D at pack 1); weights hold outc * (c / group) * kernel_h * kernel_w
/// values as the CPU layers keep them, [out channel][input channel of its group][ky][kx] (ncnn's
/// weight_data); `bias` may be null. Mismatched shapes, types or counts are errors naming them.
inline Status record_deconvolution(Recorder& rec, const VkMat& bottom, const VkMat& top,
                                   const VkMat& weights, const VkMat* bias,
                                   const DeconvolutionParams& dp) {
  const Shape& in = bottom.shape();
  const Shape& out = top.shape();
  if (in.dims != 3 || out.dims != 3)
    return make_error("Vulkan deconvolution: blobs must be 3-D, got {}-D input and {}-D output",
                      in.dims, out.dims);
  for (const VkMat* m : {&top, &weights, bias})
    if (m && m->type() != bottom.type())
      return make_error("Vulkan deconvolution: storage types differ ({} and {})",
                        to_string(bottom.type()), to_string(m->type()));
  for (const VkMat* m : {&bottom, &top, &weights})
    INFER_TRY(check_blob(rec, *m, "Vulkan deconvolution"));
  if (dp.kernel_w < 1 || dp.kernel_h < 1 || dp.dilation_w < 1 || dp.dilation_h < 1 ||
      dp.stride_w < 1 || dp.stride_h < 1)
    return make_error("Vulkan deconvolution: kernel {}x{}, dilation {}x{}, stride {}x{} must be "
                      ">= 1",
                      dp.kernel_w, dp.kernel_h, dp.dilation_w, dp.dilation_h, dp.stride_w,
                      dp.stride_h);
  if (dp.offset_x < 0 || dp.offset_y < 0)
    return make_error("Vulkan deconvolution: offset {}x{} into the uncut output must not be "
                      "negative (resolve -233/-234 pads first)",
                      dp.offset_x, dp.offset_y);
  if (dp.group < 1 || in.c % dp.group != 0 || out.c % dp.group != 0)
    return make_error("Vulkan deconvolution: group {} must divide {} input and {} output "
                      "channels",
                      dp.group, in.c, out.c);
  const std::size_t taps = std::size_t(out.c) * std::size_t(in.c / dp.group) *
                           std::size_t(dp.kernel_h) * std::size_t(dp.kernel_w);
  if (weights.shape().total() != taps)
    return make_error("Vulkan deconvolution: {} weights, expected {} ({} outputs x {} inputs per "
                      "group x {}x{})",
                      weights.shape().total(), taps, out.c, in.c / dp.group, dp.kernel_w,
                      dp.kernel_h);
  if (bias && bias->shape().total() != std::size_t(out.c))
    return make_error("Vulkan deconvolution: {} bias values for {} output channels",
                      bias->shape().total(), out.c);
  // The shader indexes with 32-bit ints; the z dimension of a dispatch is only guaranteed 65535.
  if (out.c > 65535)
    return make_error("Vulkan deconvolution: {} output channels, at most 65535", out.c);
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "deconvolution.comp (f16)" : "deconvolution.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::deconvolution_f16)
                            : std::span<const std::uint32_t>(shaders::deconvolution_f32),
                        4, 10 * 4};
  const SpecValue spec[] = {
      SpecValue::of(3, dp.kernel_w),       SpecValue::of(4, dp.kernel_h),
      SpecValue::of(5, dp.dilation_w),     SpecValue::of(6, dp.dilation_h),
      SpecValue::of(7, dp.stride_w),       SpecValue::of(8, dp.stride_h),
      SpecValue::of(9, dp.group),          SpecValue::of(10, bottom.elempack()),
      SpecValue::of(11, top.elempack()),   SpecValue::of(12, bias ? 1 : 0),
      SpecValue::of(13, int(dp.act.kind)), SpecValue::of(14, dp.act.p0),
      SpecValue::of(15, dp.act.p1)};
  constexpr std::uint32_t kLocal[3] = {8, 8, 1};
  const std::int32_t push[10] = {in.w,  in.h,  in.c,  std::int32_t(bottom.cstep()),
                                 out.w, out.h, out.c, std::int32_t(top.cstep()),
                                 dp.offset_x, dp.offset_y};
  // The bias binding must name a buffer even without a bias: the weights stand in, unread.
  const VkMat* blobs[] = {&bottom, &top, &weights, bias ? bias : &weights};
  return rec.dispatch(code, {kLocal[0], kLocal[1], kLocal[2]}, spec, blobs,
                      std::as_bytes(std::span(push)),
                      {(std::uint32_t(out.w) + kLocal[0] - 1) / kLocal[0],
                       (std::uint32_t(out.h) + kLocal[1] - 1) / kLocal[1], std::uint32_t(out.c)});
}

}  // namespace infer::vk
