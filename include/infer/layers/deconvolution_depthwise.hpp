// ncnn DeconvolutionDepthWise: the grouped transposed convolution (group input channels map to
// group output channels; group == channels == num_output is depthwise and has its own kernel).
// Same parameters and cut as Deconvolution plus 7=group; f32/f16/bf16 storage with f32
// arithmetic and weights, every pack; no i8 (ncnn's layer has no int8 path either).
#pragma once

#include <infer/layers/deconvolution.hpp>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/deconvolution.hpp>
#endif

namespace infer::layers {

/// ncnn DeconvolutionDepthWise. As in Deconvolution, the parameters ncnn defaults to another
/// parameter hold kSameAs.
struct DeconvolutionDepthWise {
  static constexpr std::string_view ncnn_type = "DeconvolutionDepthWise";  ///< its type in .param files
  int num_output = 0;          ///< ncnn 0=num_output
  int kernel_w = 0;            ///< ncnn 1=kernel_w
  int dilation_w = 1;          ///< ncnn 2=dilation_w
  int stride_w = 1;            ///< ncnn 3=stride_w
  int pad_left = 0;            ///< ncnn 4=pad_left; -233/-234 with output_w/h: SAME_UPPER/LOWER
  int bias_term = 0;           ///< ncnn 5=bias_term
  int weight_data_size = 0;    ///< ncnn 6=weight_data_size
  int group = 1;               ///< ncnn 7=group
  ActivationParam activation;  ///< ncnn 9=activation_type, 10=activation_params
  int kernel_h = kSameAs;      ///< ncnn 11=kernel_h; kSameAs: kernel_w
  int dilation_h = kSameAs;    ///< ncnn 12=dilation_h; kSameAs: dilation_w
  int stride_h = kSameAs;      ///< ncnn 13=stride_h; kSameAs: stride_w
  int pad_top = kSameAs;       ///< ncnn 14=pad_top; kSameAs: pad_left
  int pad_right = kSameAs;     ///< ncnn 15=pad_right; kSameAs: pad_left
  int pad_bottom = kSameAs;    ///< ncnn 16=pad_bottom; kSameAs: pad_top
  int output_pad_right = 0;    ///< ncnn 18=output_pad_right: extra columns at the right
  int output_pad_bottom = kSameAs;  ///< ncnn 19=output_pad_bottom; kSameAs: output_pad_right
  int output_w = 0;                 ///< ncnn 20=output_w: output width, with pads of -233/-234
  int output_h = kSameAs;           ///< ncnn 21=output_h; kSameAs: output_w

  /// [kernel_w, kernel_h, num_input / group, num_output / group, group] innermost first, so the
  /// weights of output channel o are one run: o-major, then its group's input channel, ky, kx.
  std::vector<float> weight_data;
  std::vector<float> bias_data;  ///< [num_output] when bias_term

  /// Weights in the kernel's layout for prepared_pack, from prepare(); see deconv_prepare.
  std::vector<float> packed_weight;
  std::vector<kernels::DeconvBlock> packed_blocks;  ///< per output channel group (not depthwise)
  int prepared_pack = 0;  ///< the pack prepare() laid the weights out for; 0: not prepared

  using storage = float_storage;
  using packs = all_packs;

  /// Reads weight_data and (with bias_term) bias_data in ncnn's .bin order.
  Status load(io::ModelBin& mb) {
    return detail::deconv_load(*this, group, "DeconvolutionDepthWise", mb);
  }

  /// Lays the weights out for the kernel at `pack` (weights stay f32 for every storage type).
  Status prepare(ElemType /*type*/, int pack, const Option& /*opt*/) {
    return detail::deconv_prepare(*this, group, pack, "DeconvolutionDepthWise");
  }

  /// Folds a following per-channel y = x * a + b (BatchNorm, Scale) into weights and bias; call
  /// prepare again afterwards.
  Status fold_affine(std::span<const float> a, std::span<const float> b) {
    return detail::deconv_fold_affine(*this, group, "DeconvolutionDepthWise", a, b);
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return detail::deconv_infer_shapes(*this, group, in, out);
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    return with_activation(
        activation, [&](const auto& a) { return forward_fused<T, Pack>(bottom, top, opt, a); });
  }

  /// forward with `act` applied to the accumulators in place of `activation`.
  template <StorageElement T, int Pack, class Act>
  Status forward_fused(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    return detail::deconv_forward<T, Pack>(*this, group, "DeconvolutionDepthWise", bottom, top, opt,
                                           act);
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the transposed convolution kernel (gather form) over the plan deconv_plan gives
  /// for the input; the step's activation in its epilogue.
  Status upload_vulkan(vk::Uploader& up) const { return detail::upload_weights_and_bias(*this, up); }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1 || step.weights.empty())
      return make_error("DeconvolutionDepthWise GPU forward: one input, one output and the weights needed");
    const Shape& s = in[0].shape();
    const detail::DeconvPlan plan = detail::deconv_plan(*this, s.w, s.h);
    if (plan.error) return make_error("DeconvolutionDepthWise GPU forward: {}", plan.error);
    const detail::Window2D win = detail::conv_window(*this);
    vk::DeconvolutionParams p;
    p.kernel_w = win.kernel_w;
    p.kernel_h = win.kernel_h;
    p.dilation_w = win.dilation_w;
    p.dilation_h = win.dilation_h;
    p.stride_w = win.stride_w;
    p.stride_h = win.stride_h;
    p.offset_x = plan.offset_x;
    p.offset_y = plan.offset_y;
    p.group = group;
    p.act = vk::gpu_activation(step.act);
    return vk::record_deconvolution(rec, in[0], out[0], step.weights[0],
                                    step.weights.size() > 1 ? &step.weights[1] : nullptr, p);
  }
#endif
};

}  // namespace infer::layers
