// The convolution kernel on the GPU (shaders/convolution.comp), the portable direct form: any
// window, stride, dilation, groups and zero padding, input and output at pack 1 or 4, bias,
// residual and activation in the epilogue, f32 or f16 storage; depthwise at pack 4 runs
// shaders/convolution_dw.comp (four channels per invocation), and an input of at most 4 channels
// in one group (an image) shaders/conv_small_input.comp (a pixel's window read once for 8 output
// channels, the weights in shared memory). The GPU Convolution and ConvolutionDepthWise forwards
// record it; the implicit GEMM (conv_gemm.hpp) is the fast path for convolutions with several
// input channels per group.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/conv_small_input_f16.hpp>
#include <infer_shaders/conv_small_input_f32.hpp>
#include <infer_shaders/convolution_dw_f16.hpp>
#include <infer_shaders/convolution_dw_f32.hpp>
#include <infer_shaders/convolution_f16.hpp>
#include <infer_shaders/convolution_f32.hpp>
#include <string_view>
#include <utility>

namespace infer::vk {

/// A convolution's window and epilogue, the padding resolved (left and top; the output's extent
/// says where the right and bottom end).
struct ConvolutionParams {
  int kernel_w = 1, kernel_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int stride_w = 1, stride_h = 1;
  int pad_left = 0, pad_top = 0;
  int group = 1;
  float pad_value = 0.f;  ///< what taps outside the input read (ncnn's 18=pad_value)
  GpuActivation act;  ///< applied to the sum plus bias (and residual) before the store
  /// A blob of the output's shape added before the activation (a residual sum the composer fused
  /// into the convolution), at pack 1 or 4; null: none.
  const VkMat* residual = nullptr;
  /// A vector of a value per input channel that multiplies the input before the window's
  /// products, gate_act applied after it (a squeeze-excitation block's multiply the composer
  /// fused into the convolution reading it); null: none. Only the GEMM kernels
  /// (record_conv_gemm) take one.
  const VkMat* gate = nullptr;
  GpuActivation gate_act;
};

/// Whether a convolution of 3-D blobs runs on shaders/conv_small_input.comp: one group, at most 4
/// input channels and at most 200 weights an output channel (4 channels x 7x7): a network's first
/// layer on an image, whose K is too short for the implicit GEMM's tiles.
constexpr bool conv_small_input(int in_c, int group, int kernel_w, int kernel_h) {
  return group == 1 && in_c >= 1 && in_c <= 4 && in_c * kernel_w * kernel_h <= 200;
}

namespace detail {

/// What every convolution kernel checks: the blobs' storage types agree (weights and bias too)
/// and the device reads them, the window's sizes are >= 1, the groups divide both channel counts.
inline Status check_conv(Recorder& rec, const VkMat& bottom, const VkMat& top,
                         const VkMat& weights, const VkMat* bias, const ConvolutionParams& cp,
                         int in_c, int out_c, std::string_view what) {
  for (const VkMat* m : {&top, &weights, bias})
    if (m && m->type() != bottom.type())
      return make_error("{}: storage types differ ({} and {})", what, to_string(bottom.type()),
                        to_string(m->type()));
  for (const VkMat* m : {&bottom, &top, &weights}) INFER_TRY(check_blob(rec, *m, what));
  if (cp.kernel_w < 1 || cp.kernel_h < 1 || cp.dilation_w < 1 || cp.dilation_h < 1 ||
      cp.stride_w < 1 || cp.stride_h < 1)
    return make_error("{}: kernel {}x{}, dilation {}x{}, stride {}x{} must be >= 1", what,
                      cp.kernel_w, cp.kernel_h, cp.dilation_w, cp.dilation_h, cp.stride_w,
                      cp.stride_h);
  if (cp.group < 1 || in_c % cp.group != 0 || out_c % cp.group != 0)
    return make_error("{}: group {} must divide {} input and {} output channels", what, cp.group,
                      in_c, out_c);
  if (const VkMat* r = cp.residual) {
    if (r->type() != bottom.type())
      return make_error("{}: residual storage {}, the blobs' is {}", what, to_string(r->type()),
                        to_string(bottom.type()));
    INFER_TRY(check_blob(rec, *r, what));
    const Shape& a = r->shape();
    const Shape& b = top.shape();
    if (a.dims != b.dims || a.w != b.w || a.h != b.h || a.c != b.c)
      return make_error("{}: residual {}x{}x{} ({}-D), output {}x{}x{} ({}-D): they must match",
                        what, a.w, a.h, a.c, a.dims, b.w, b.h, b.c, b.dims);
  }
  if (const VkMat* v = cp.gate) {
    if (v->type() != bottom.type())
      return make_error("{}: gate storage {}, the blobs' is {}", what, to_string(v->type()),
                        to_string(bottom.type()));
    INFER_TRY(check_blob(rec, *v, what));
    if (v->shape().dims != 1 || v->shape().w != in_c)
      return make_error("{}: a gate of {} values ({}-D) for {} input channels: one per channel, 1-D",
                        what, v->shape().total(), v->shape().dims, in_c);
  }
  return {};
}

/// The residual's pack (0: none) and channel step, for the kernels' constants.
inline std::pair<int, std::int32_t> residual_layout(const ConvolutionParams& cp) {
  if (!cp.residual) return {0, 0};
  return {cp.residual->elempack(),
          std::int32_t(cp.residual->shape().dims == 1 ? 1 : cp.residual->cstep())};
}

/// The specialization constants 3-16 the convolution kernels share: window, dilation, stride,
/// group, the packs, bias, activation and pad value.
inline std::array<SpecValue, 14> conv_spec(const ConvolutionParams& cp, int in_pack, int out_pack,
                                           bool bias) {
  return {SpecValue::of(3, cp.kernel_w),       SpecValue::of(4, cp.kernel_h),
          SpecValue::of(5, cp.dilation_w),     SpecValue::of(6, cp.dilation_h),
          SpecValue::of(7, cp.stride_w),       SpecValue::of(8, cp.stride_h),
          SpecValue::of(9, cp.group),          SpecValue::of(10, in_pack),
          SpecValue::of(11, out_pack),         SpecValue::of(12, bias ? 1 : 0),
          SpecValue::of(13, int(cp.act.kind)), SpecValue::of(14, cp.act.p0),
          SpecValue::of(15, cp.act.p1),        SpecValue::of(16, cp.pad_value)};
}

}  // namespace detail

/// Records top = act(conv(bottom, weights) + bias + residual) (no gate). Blobs are 3-D, or 1-D read as 1x1 with w
/// channels (InnerProduct over a flat blob: a window over the whole input, 1x1 out); all of one
/// storage type (weights and bias too, 1-D at pack 1); weights hold outc * (c / group) *
/// kernel_h * kernel_w values in ncnn's order; `bias` may be null. Mismatched shapes, types or
/// counts are errors naming them.
inline Status record_convolution(Recorder& rec, const VkMat& bottom, const VkMat& top,
                                 const VkMat& weights, const VkMat* bias,
                                 const ConvolutionParams& cp) {
  // A 1-D blob of c values at pack p is c / p packed elements in a row: 1x1, channel step 1.
  auto as_3d = [](const VkMat& m) {
    return m.shape().dims == 1 ? Shape::of(1, 1, m.shape().w) : m.shape();
  };
  const Shape in = as_3d(bottom), out = as_3d(top);
  const std::size_t cstep = bottom.shape().dims == 1 ? 1 : bottom.cstep();
  const std::size_t out_cstep = top.shape().dims == 1 ? 1 : top.cstep();
  if ((bottom.shape().dims != 3 && bottom.shape().dims != 1) ||
      (top.shape().dims != 3 && top.shape().dims != 1))
    return make_error("Vulkan convolution: blobs must be 3-D (or 1-D), got {}-D input and {}-D "
                      "output",
                      bottom.shape().dims, top.shape().dims);
  INFER_TRY(detail::check_conv(rec, bottom, top, weights, bias, cp, in.c, out.c,
                               "Vulkan convolution"));
  if (cp.gate)
    return make_error("Vulkan convolution: a gate is fused only into the GEMM kernels "
                      "(record_conv_gemm), not the direct kernel ({} input channels, group {})",
                      in.c, cp.group);
  const std::size_t taps = std::size_t(out.c) * std::size_t(in.c / cp.group) *
                           std::size_t(cp.kernel_h) * std::size_t(cp.kernel_w);
  if (weights.shape().total() != taps)
    return make_error("Vulkan convolution: {} weights, expected {} ({} outputs x {} inputs per "
                      "group x {}x{})",
                      weights.shape().total(), taps, out.c, in.c / cp.group, cp.kernel_w,
                      cp.kernel_h);
  if (bias && bias->shape().total() != std::size_t(out.c))
    return make_error("Vulkan convolution: {} bias values for {} output channels",
                      bias->shape().total(), out.c);
  // The shader indexes with 32-bit ints; the z dimension of a dispatch is only guaranteed 65535.
  if (out.c > 65535)
    return make_error("Vulkan convolution: {} output channels, at most 65535", out.c);
  const bool f16 = bottom.type() == ElemType::f16;
  const auto [res_pack, res_cstep] = detail::residual_layout(cp);
  // Constants 3-17 every kernel here reads; 18 (the input channels) conv_small_input.comp alone.
  std::array<SpecValue, 16> spec{};
  const auto shared = detail::conv_spec(cp, bottom.elempack(), top.elempack(), bias != nullptr);
  std::copy(shared.begin(), shared.end(), spec.begin());
  spec[14] = SpecValue::of(17, res_pack);
  spec[15] = SpecValue::of(18, in.c);
  const std::int32_t push[11] = {in.w,        in.h,       in.c,     std::int32_t(cstep),
                                 out.w,       out.h,      out.c,    std::int32_t(out_cstep),
                                 cp.pad_left, cp.pad_top, res_cstep};
  // Bindings without a blob (no bias, no residual) must still name a buffer: the weights stand
  // in, unread.
  const VkMat* blobs[] = {&bottom, &top, &weights, bias ? bias : &weights,
                          cp.residual ? cp.residual : &weights};
  if (bottom.shape().dims == 3 && conv_small_input(in.c, cp.group, cp.kernel_w, cp.kernel_h)) {
    // Tiles of 64 pixels along x (and z past 65535 of them), blocks of 32 channels along y.
    const ShaderCode code{f16 ? "conv_small_input.comp (f16)" : "conv_small_input.comp (f32)",
                          f16 ? std::span<const std::uint32_t>(shaders::conv_small_input_f16)
                              : std::span<const std::uint32_t>(shaders::conv_small_input_f32),
                          5, 11 * 4};
    const std::size_t tiles = (std::size_t(out.w) * std::size_t(out.h) + 63) / 64;
    if (tiles > std::size_t(65535) * 65535)
      return make_error("Vulkan convolution: {}x{} output pixels exceed the dispatch limits", out.w,
                        out.h);
    return rec.dispatch(code, {64, 4, 1}, spec, blobs, std::as_bytes(std::span(push)),
                        {std::uint32_t(std::min<std::size_t>(tiles, 65535)),
                         (std::uint32_t(out.c) + 31) / 32, std::uint32_t((tiles + 65534) / 65535)});
  }
  // Depthwise with both blobs at pack 4: a channel quad per invocation.
  const bool dw = bottom.shape().dims == 3 && cp.group == in.c && in.c == out.c &&
                  bottom.elempack() == 4 && top.elempack() == 4;
  const ShaderCode code =
      dw ? ShaderCode{f16 ? "convolution_dw.comp (f16)" : "convolution_dw.comp (f32)",
                      f16 ? std::span<const std::uint32_t>(shaders::convolution_dw_f16)
                          : std::span<const std::uint32_t>(shaders::convolution_dw_f32),
                      5, 11 * 4}
         : ShaderCode{f16 ? "convolution.comp (f16)" : "convolution.comp (f32)",
                      f16 ? std::span<const std::uint32_t>(shaders::convolution_f16)
                          : std::span<const std::uint32_t>(shaders::convolution_f32),
                      5, 11 * 4};
  constexpr std::uint32_t kLocal[3] = {8, 8, 1};
  return rec.dispatch(
      code, {kLocal[0], kLocal[1], kLocal[2]}, std::span(spec).first(15), blobs,
      std::as_bytes(std::span(push)),
      {(std::uint32_t(out.w) + kLocal[0] - 1) / kLocal[0],
       (std::uint32_t(out.h) + kLocal[1] - 1) / kLocal[1], std::uint32_t(dw ? out.c / 4 : out.c)});
}

}  // namespace infer::vk
