// The GPU forward bodies layers share (with INFER_HAS_VULKAN): an element-wise activation in place
// (after a copy when the plan runs the layer out of place), and a convolution of any window over
// the layer's own fields, the weights being what its upload_vulkan added.
#pragma once

#include <infer/layers/detail/conv_common.hpp>
#include <infer/vulkan/activation.hpp>
#include <infer/vulkan/conv_gemm.hpp>
#include <infer/vulkan/convolution.hpp>
#include <infer/vulkan/recorder.hpp>
#include <span>
#include <string_view>

namespace infer::layers::detail {

using vk::same_memory;

/// Whether `part` already is the range of `whole` starting at `first` along axis `a` (the plan
/// placed a Concat input or Slice output there): the same buffer, at the byte offset of that
/// range, which holds for whole channel groups of 3-D and 4-D blobs of one type and pack.
inline bool is_range_of(const vk::VkMat& part, const vk::VkMat& whole, int a, int first) {
  const Shape& p = part.shape();
  const Shape& w = whole.shape();
  if (part.buffer() != whole.buffer() || w.dims < 3 || a != 0 || p.dims != w.dims) return false;
  if (part.type() != whole.type() || part.elempack() != whole.elempack() ||
      part.cstep() != whole.cstep() || first % whole.elempack() != 0)
    return false;
  const std::size_t group_bytes =
      whole.cstep() * elem_size(whole.type()) * std::size_t(whole.elempack());
  return part.offset() == whole.offset() + std::size_t(first / whole.elempack()) * group_bytes;
}

/// out = f(in) for a one-blob element-wise layer.
inline Status unary_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                           vk::Recorder& rec, const vk::GpuActivation& f) {
  if (in.size() != 1 || out.size() != 1)
    return make_error("element-wise GPU forward: one input and one output, got {} and {}",
                      in.size(), out.size());
  if (!same_memory(in[0], out[0])) {
    if (in[0].bytes() != out[0].bytes())
      return make_error("element-wise GPU forward: input {} bytes, output {} bytes",
                        in[0].bytes(), out[0].bytes());
    INFER_TRY(rec.copy(in[0], 0, out[0], 0, in[0].bytes()));
    INFER_TRY(rec.barrier());
  }
  if (f.kind == vk::Activation::none) return {};
  return vk::record_activation(rec, out[0], f);
}

/// A convolution layer L (Convolution, ConvolutionDepthWise) with `group` groups on the GPU: its
/// window and pads planned for the input's size as its CPU forward plans them; weights[0] its
/// weights, weights[1] its bias when it has one; with step.gated input 1 is a gate the composer
/// fused in (the GEMM kernels multiply the input's channels by it); a last input beyond those is
/// a sum the composer fused in, added with the step's activation in the epilogue.
template <class L>
Status conv_vulkan(const L& layer, int group, std::span<const vk::VkMat> in,
                   std::span<const vk::VkMat> out, const vk::GpuStep& step, vk::Recorder& rec,
                   std::string_view what) {
  const std::size_t gates = step.gated ? 1 : 0;
  if (in.size() < 1 + gates || in.size() > 2 + gates || out.size() != 1)
    return make_error("{} GPU forward: one input ({}and a residual) and one output, got {} and {}",
                      what, step.gated ? "a gate " : "", in.size(), out.size());
  if (step.weights.empty())
    return make_error("{} GPU forward: no weights were uploaded", what);
  const Shape& s = in[0].shape();
  const Window2D win = conv_window(layer);
  WindowPlan plan;
  if (ShapeCheck c = plan_window(win, conv_pads(layer), s.w, s.h, plan); !c.ok())
    return make_error("{} GPU forward: {} (input {}x{}x{})", what, c.error, s.w, s.h, s.c);
  vk::ConvolutionParams p;
  p.kernel_w = win.kernel_w;
  p.kernel_h = win.kernel_h;
  p.dilation_w = win.dilation_w;
  p.dilation_h = win.dilation_h;
  p.stride_w = win.stride_w;
  p.stride_h = win.stride_h;
  p.pad_left = plan.pads.left;
  p.pad_top = plan.pads.top;
  p.group = group;
  p.pad_value = layer.pad_value;
  p.act = vk::gpu_activation(step.act);
  if (in.size() == 2 + gates) p.residual = &in[1 + gates];
  if (step.gated) {
    p.gate = &in[1];
    p.gate_act = vk::gpu_activation(step.gate_act);
  }
  const vk::VkMat* bias = step.weights.size() > 1 ? &step.weights[1] : nullptr;
  if (s.dims == 3 && vk::conv_runs_gemm(s.c, group, win.kernel_w, win.kernel_h))
    return vk::record_conv_gemm(rec, in[0], out[0], step.weights[0], bias, p);
  return vk::record_convolution(rec, in[0], out[0], step.weights[0], bias, p);
}

/// Uploads `weights`, then the layer's bias when it has one.
template <class L>
Status upload_with_bias(const L& layer, std::span<const float> weights, vk::Uploader& up) {
  auto w = up.add(weights);
  INFER_TRY(w);
  if (layer.bias_term && !layer.bias_data.empty()) {
    auto b = up.add(layer.bias_data);
    INFER_TRY(b);
  }
  return {};
}

/// Uploads a convolution layer's weights (laid out for the GEMM kernel when conv_vulkan runs it
/// as one: vk::conv_runs_gemm), then its bias when it has one.
template <class L>
Status upload_conv_weights(const L& layer, int group, vk::Uploader& up) {
  const Window2D win = conv_window(layer);
  const std::size_t per_output = std::size_t(layer.num_output) * std::size_t(win.maxk());
  const int in_per_group = per_output > 0 ? int(layer.weight_data.size() / per_output) : 0;
  if (group >= 1 && vk::conv_runs_gemm(in_per_group * group, group, win.kernel_w, win.kernel_h) &&
      std::size_t(in_per_group) * per_output == layer.weight_data.size())
    return upload_with_bias(layer,
                            vk::conv_gemm_weights(layer.weight_data, layer.num_output,
                                                  in_per_group, win.kernel_h, win.kernel_w),
                            up);
  return upload_with_bias(layer, layer.weight_data, up);
}

/// Uploads a convolution-like layer's weights as they are, then its bias when it has one.
template <class L>
Status upload_weights_and_bias(const L& layer, vk::Uploader& up) {
  return upload_with_bias(layer, layer.weight_data, up);
}

}  // namespace infer::layers::detail
