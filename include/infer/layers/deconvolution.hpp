// ncnn Deconvolution: a transposed 2-D convolution of a 3-D blob (w, h, c), + bias, then the pads
// (or ncnn's output_w/output_h with pad -233/-234) cut from the border and the fused activation.
// f32/f16/bf16 storage with f32 arithmetic and weights, every pack. i8 is left out: ncnn's
// Deconvolution has no int8 path (its weights are f32 or f16 only).
// Deconvolution runs the packed GEMM with a col2im add (kernels::deconvolution_gemm) wherever the
// target has a float batch (Deconvolution::algorithm()), else the direct gather kernel.
// The detail:: helpers here also serve DeconvolutionDepthWise, which is the grouped form and
// keeps the direct kernels.
#pragma once

#include <climits>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/deconvolution.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <utility>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/deconvolution.hpp>
#endif

namespace infer::layers {

namespace detail {

/// The geometry parameters of Deconvolution(DepthWise) with ncnn's defaults resolved (kSameAs
/// fields take the parameter ncnn defaults them to).
struct DeconvParams {
  Window2D win;
  Pads2D pads;
  int output_pad_right = 0, output_pad_bottom = 0;
  int output_w = 0, output_h = 0;
};

template <class L>
constexpr DeconvParams deconv_params(const L& l) {
  return {conv_window(l),     conv_pads(l),
          l.output_pad_right, resolve(l.output_pad_bottom, l.output_pad_right),
          l.output_w,         resolve(l.output_h, l.output_w)};
}

/// Output extent of a transposed convolution and where it sits in the uncut output.
struct DeconvPlan {
  int outw = 0, outh = 0;          ///< output extent after the cut
  int offset_x = 0, offset_y = 0;  ///< output (0, 0) in the uncut output
  int full_w = 0, full_h = 0;      ///< uncut extent: (w - 1) * stride + kernel extent + output pad
  const char* error = nullptr;     ///< why the parameters give no output; null when they do
};

/// Input channels the weights of a (grouped) transposed convolution take, or 0 when
/// weight_data_size is not kernel_w * kernel_h * (channels / group) * num_output for a whole
/// channel count.
template <class L>
constexpr int deconv_channels(const L& l, int group) {
  const Window2D win = conv_window(l);
  const long long maxk = static_cast<long long>(win.kernel_w) * win.kernel_h;
  if (win.kernel_w <= 0 || win.kernel_h <= 0 || group <= 0 || l.num_output <= 0 ||
      l.num_output % group != 0)
    return 0;
  // weight_data_size = maxk * (channels / group) * (num_output / group) * group
  const long long per_group_channel = maxk * l.num_output;
  if (l.weight_data_size <= 0 || l.weight_data_size % per_group_channel != 0) return 0;
  const long long channels = l.weight_data_size / per_group_channel * group;
  return channels > (1 << 30) ? 0 : static_cast<int>(channels);
}

/// Why the parameters cannot describe a transposed convolution (a static message), or null.
template <class L>
constexpr const char* deconv_param_error(const L& l, int group) {
  const DeconvParams d = deconv_params(l);
  if (l.num_output <= 0) return "num_output must be positive";
  if (d.win.kernel_w <= 0 || d.win.kernel_h <= 0) return "kernel_w and kernel_h must be positive";
  if (d.win.dilation_w <= 0 || d.win.dilation_h <= 0)
    return "dilation_w and dilation_h must be positive";
  if (d.win.stride_w <= 0 || d.win.stride_h <= 0) return "stride_w and stride_h must be positive";
  if (d.output_pad_right < 0 || d.output_pad_bottom < 0)
    return "output_pad_right and output_pad_bottom must not be negative";
  if (group <= 0) return "group must be positive";
  if (l.num_output % group != 0) return "num_output must be a multiple of group";
  if (!l.activation.valid()) return "activation_type must be one of ncnn's 0..6";
  if (deconv_channels(l, group) == 0)
    return "weight_data_size must be kernel_w * kernel_h * (input channels / group) * num_output";
  return nullptr;
}

/// The output of a transposed convolution of a w x h input, as ncnn computes it: the uncut output
/// is (w - 1) * stride_w + dilation_w * (kernel_w - 1) + 1 + output_pad_right wide (likewise h);
/// positive pads are cut from its borders; otherwise output_w/output_h (both set) give the size,
/// the cut split evenly with the odd value at the end (pad -233, ONNX SAME_UPPER) or at the start
/// (pad -234, SAME_LOWER). The parameters have passed deconv_param_error.
template <class L>
constexpr DeconvPlan deconv_plan(const L& l, int w, int h) {
  const DeconvParams d = deconv_params(l);
  DeconvPlan p;
  const long long fw =
      static_cast<long long>(w - 1) * d.win.stride_w + d.win.extent_w() + d.output_pad_right;
  const long long fh =
      static_cast<long long>(h - 1) * d.win.stride_h + d.win.extent_h() + d.output_pad_bottom;
  if (fw > (1 << 30) || fh > (1 << 30)) {
    p.error = "the output would be larger than 2^30 on a side";
    return p;
  }
  p.full_w = static_cast<int>(fw);
  p.full_h = static_cast<int>(fh);
  const int pads[4] = {d.pads.left, d.pads.right, d.pads.top, d.pads.bottom};
  bool positive = false, negative = false, upper = false, lower = false;
  for (int v : pads) {
    positive = positive || v > 0;
    negative = negative || v < 0;
    upper = upper || v == kPadSameUpper;
    lower = lower || v == kPadSameLower;
  }
  if (positive) {
    if (negative) {
      p.error = "pads mix positive values with negative ones (-233/-234 go on all four pads)";
      return p;
    }
    p.outw = p.full_w - d.pads.left - d.pads.right;
    p.outh = p.full_h - d.pads.top - d.pads.bottom;
    p.offset_x = d.pads.left;
    p.offset_y = d.pads.top;
    if (p.outw < 1 || p.outh < 1) p.error = "the pads cut away the whole output";
    return p;
  }
  if (d.output_w > 0 && d.output_h > 0) {
    const int wcut = p.full_w - d.output_w, hcut = p.full_h - d.output_h;
    if (wcut < 0 || hcut < 0) {
      p.error = "output_w/output_h are larger than the uncut output";
      return p;
    }
    if (!upper && !lower) {
      p.error = "output_w/output_h need pads of -233 (SAME_UPPER) or -234 (SAME_LOWER)";
      return p;
    }
    p.outw = d.output_w;
    p.outh = d.output_h;
    p.offset_x = upper ? wcut / 2 : wcut - wcut / 2;
    p.offset_y = upper ? hcut / 2 : hcut - hcut / 2;
    return p;
  }
  p.outw = p.full_w;
  p.outh = p.full_h;
  return p;
}

/// infer_shapes of Deconvolution (group 1) and DeconvolutionDepthWise.
template <class L>
constexpr ShapeCheck deconv_infer_shapes(const L& l, int group, std::span<const Shape> in,
                                         std::span<Shape> out) {
  if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
  if (const char* e = deconv_param_error(l, group)) return shape_error(e);
  if (in[0].dims != 3) return shape_error("expects a 3-D input (w, h, c)");
  if (in[0].c != deconv_channels(l, group))
    return shape_error("input channels differ from what weight_data_size implies");
  const DeconvPlan p = deconv_plan(l, in[0].w, in[0].h);
  if (p.error) return shape_error(p.error);
  out[0] = Shape::of(p.outw, p.outh, l.num_output);
  return {};
}

/// Whether a grouped transposed convolution is depthwise (one input and one output channel per
/// group), the case with its own kernel.
template <class L>
constexpr bool deconv_is_depthwise(const L& l, int group) {
  return group == l.num_output && deconv_channels(l, group) == group;
}

/// Parameter and weight-count checks with the values in the message.
template <class L>
Status deconv_check(const L& l, int group, const char* name) {
  if (const char* e = deconv_param_error(l, group)) {
    const Window2D win = conv_window(l);
    return make_error(
        "{}: {} (num_output {}, kernel {}x{}, dilation {}x{}, stride {}x{}, group {}, "
        "weight_data_size {}, activation_type {})",
        name, e, l.num_output, win.kernel_w, win.kernel_h, win.dilation_w, win.dilation_h,
        win.stride_w, win.stride_h, group, l.weight_data_size, l.activation.type);
  }
  if (l.weight_data.size() != std::size_t(l.weight_data_size))
    return make_error("{}: weight_data holds {} values, weight_data_size is {}", name,
                      l.weight_data.size(), l.weight_data_size);
  if (l.bias_term && l.bias_data.size() != std::size_t(l.num_output))
    return make_error("{}: bias_data holds {} values, expected num_output = {}", name,
                      l.bias_data.size(), l.num_output);
  return {};
}

/// Reads weight_data (tagged: f32 or f16) and, with bias_term, bias_data (raw f32).
template <class L>
Status deconv_load(L& l, int group, const char* name, io::ModelBin& mb) {
  if (const char* e = deconv_param_error(l, group))
    return make_error("{}: cannot load weights: {} (num_output {}, weight_data_size {})", name, e,
                      l.num_output, l.weight_data_size);
  auto w = mb.load(std::size_t(l.weight_data_size), io::WeightType::tagged);
  if (!w.ok()) return make_error("{}: weight_data: {}", name, w.message());
  std::vector<float> bias;
  if (l.bias_term) {
    auto b = mb.load(std::size_t(l.num_output), io::WeightType::raw_f32);
    if (!b.ok()) return make_error("{}: bias_data: {}", name, b.message());
    bias = std::move(b).value();
  }
  l.weight_data = std::move(w).value();
  l.bias_data = std::move(bias);
  l.prepared_pack = 0;
  return {};
}

/// Lays the weights out for the kernels at `pack`: depthwise as [channel group][k][lane], any
/// other grouping as one DeconvBlock per group of output channels, [k][input channel][lane].
template <class L>
Status deconv_prepare(L& l, int group, int pack, const char* name) {
  INFER_TRY(deconv_check(l, group, name));
  if (pack != 1 && pack != 4 && pack != 8 && pack != 16)
    return make_error("{}: pack must be 1, 4, 8 or 16, got {}", name, pack);
  const int maxk = conv_window(l).maxk();
  const int channels = deconv_channels(l, group);
  const int out_pack = pack_for(l.num_output, pack);
  l.packed_weight.clear();
  l.packed_blocks.clear();
  if (deconv_is_depthwise(l, group)) {
    l.packed_weight.resize(std::size_t(maxk) * channels);
    for (int c = 0; c < channels; ++c)
      for (int k = 0; k < maxk; ++k)
        l.packed_weight[(std::size_t(c / out_pack) * maxk + k) * out_pack + c % out_pack] =
            l.weight_data[std::size_t(c) * maxk + k];
  } else {
    const int cg = channels / group, nog = l.num_output / group;
    for (int o0 = 0; o0 < l.num_output; o0 += out_pack) {
      // The lanes' groups are consecutive, so the block reads their input channels as one range.
      const int g0 = o0 / nog, g1 = (o0 + out_pack - 1) / nog;
      kernels::DeconvBlock blk{g0 * cg, (g1 - g0 + 1) * cg, l.packed_weight.size()};
      l.packed_weight.resize(blk.weight_offset + std::size_t(maxk) * blk.q_count * out_pack, 0.f);
      float* dst = l.packed_weight.data() + blk.weight_offset;
      for (int lane = 0; lane < out_pack; ++lane) {
        const int o = o0 + lane, go = o / nog;
        for (int qq = 0; qq < cg; ++qq) {
          const int qi = go * cg + qq - blk.q_begin;
          const float* src = l.weight_data.data() + (std::size_t(o) * cg + qq) * maxk;
          for (int k = 0; k < maxk; ++k)
            dst[(std::size_t(k) * blk.q_count + qi) * out_pack + lane] = src[k];
        }
      }
      l.packed_blocks.push_back(blk);
    }
  }
  l.prepared_pack = pack;
  return {};
}

/// Lays the weights out for kernels::deconvolution_gemm (group 1): packed_weight as its A blocks,
/// packed_bias as bias_data (zeros without bias_term) padded to whole GEMM blocks. The layout does
/// not depend on `pack`, which prepared_pack records all the same.
template <class L>
Status deconv_prepare_gemm(L& l, int pack, const char* name) {
  INFER_TRY(deconv_check(l, 1, name));
  if (pack != 1 && pack != 4 && pack != 8 && pack != 16)
    return make_error("{}: pack must be 1, 4, 8 or 16, got {}", name, pack);
  const int maxk = conv_window(l).maxk();
  const int channels = deconv_channels(l, 1);
  l.packed_weight.resize(kernels::deconvolution_gemm_weights_size(channels, l.num_output, maxk));
  kernels::deconvolution_gemm_weights(l.weight_data.data(), l.packed_weight.data(), channels,
                                      l.num_output, maxk);
  l.packed_blocks.clear();
  l.packed_bias.resize(kernels::gemm::bias_size(l.num_output));
  kernels::gemm::pack_bias(l.bias_term ? l.bias_data.data() : nullptr, l.packed_bias.data(),
                           l.num_output);
  l.prepared_pack = pack;
  return {};
}

/// Folds y = x * a[o] + b[o] on each output channel o into weights and bias.
template <class L>
Status deconv_fold_affine(L& l, int group, const char* name, std::span<const float> a,
                          std::span<const float> b) {
  INFER_TRY(deconv_check(l, group, name));
  if (l.activation.type != 0)
    return make_error("{}: cannot fold an affine map behind fused activation_type {}", name,
                      l.activation.type);
  const std::size_t n = std::size_t(l.num_output);
  if (a.size() != n || (!b.empty() && b.size() != n))
    return make_error("{}: fold_affine needs {} scales and {} (or no) biases, got {} and {}", name,
                      n, n, a.size(), b.size());
  const std::size_t per_output = l.weight_data.size() / n;
  for (std::size_t o = 0; o < n; ++o)
    for (std::size_t i = 0; i < per_output; ++i) l.weight_data[o * per_output + i] *= a[o];
  if (!l.bias_term) l.bias_data.assign(n, 0.f);
  for (std::size_t o = 0; o < n; ++o)
    l.bias_data[o] = l.bias_data[o] * a[o] + (b.empty() ? 0.f : b[o]);
  l.bias_term = 1;
  l.prepared_pack = 0;
  return {};
}

/// The forward of Deconvolution and DeconvolutionDepthWise with the activation functor `act`: the
/// packed GEMM (weights from deconv_prepare_gemm, group 1) or the direct kernels (deconv_prepare).
template <StorageElement T,   ///< storage type of input and output
          int Pack,           ///< input elempack
          bool Gemm = false,  ///< run kernels::deconvolution_gemm (group must be 1)
          class Act, class L>
Status deconv_forward(const L& l, int group, const char* name, const Mat& bottom, Mat& top,
                      const Option& opt, const Act& act) {
  INFER_TRY(deconv_check(l, group, name));
  if (!bottom.is<T, Pack>())
    return make_error("{}: forward<{}, {}> got a {} input", name, to_string(elem_type_v<T>), Pack,
                      bottom.describe());
  const Shape in = bottom.shape();
  if (in.dims != 3)
    return make_error("{}: expects a 3-D input (w, h, c), got {}", name, bottom.describe());
  const int channels = deconv_channels(l, group);
  if (in.c != channels)
    return make_error("{}: input {} has {} channels, the weights take {} (weight_data_size {})",
                      name, bottom.describe(), in.c, channels, l.weight_data_size);
  const DeconvPlan p = deconv_plan(l, in.w, in.h);
  if (p.error)
    return make_error("{}: {} (input {}x{}, uncut output {}x{}, output_w {} output_h {})", name,
                      p.error, in.w, in.h, p.full_w, p.full_h, deconv_params(l).output_w,
                      deconv_params(l).output_h);
  const int out_pack = pack_for(l.num_output, Pack);
  const Window2D win = conv_window(l);
  const int maxk = win.maxk();
  const bool depthwise = deconv_is_depthwise(l, group);
  // The prepared layout must match this pack, the algorithm and the current parameters.
  bool prepared = l.prepared_pack == Pack;
  if constexpr (Gemm) {
    prepared = prepared && group == 1 &&
               l.packed_weight.size() ==
                   kernels::deconvolution_gemm_weights_size(channels, l.num_output, maxk) &&
               l.packed_bias.size() == kernels::gemm::bias_size(l.num_output);
  } else if (prepared && depthwise) {
    prepared = l.packed_weight.size() == std::size_t(maxk) * channels;
  } else if (prepared) {
    const std::size_t blocks = std::size_t(l.num_output / out_pack);
    if (l.packed_blocks.size() != blocks) {
      prepared = false;
    } else {  // the last block reads the last input channels and ends the weights
      const kernels::DeconvBlock& last = l.packed_blocks.back();
      prepared = last.q_begin + last.q_count <= channels &&
                 last.weight_offset + std::size_t(maxk) * last.q_count * out_pack ==
                     l.packed_weight.size();
    }
  }
  if (!prepared)
    return make_error("{}: weights are not prepared for pack {} (call prepare(type, {}, opt))",
                      name, Pack, Pack);

  INFER_TRY(top.create(Shape::of(p.outw, p.outh, l.num_output), elem_type_v<T>, out_pack,
                       opt.blob_alloc()));
  kernels::DeconvGeometry g;
  g.w = in.w;
  g.h = in.h;
  g.in_pack = Pack;
  g.in_cstep = bottom.cstep() * Pack;
  g.outw = p.outw;
  g.outh = p.outh;
  g.out_groups = l.num_output / out_pack;
  g.out_cstep = top.cstep() * out_pack;
  g.kernel_w = win.kernel_w;
  g.kernel_h = win.kernel_h;
  g.dilation_w = win.dilation_w;
  g.dilation_h = win.dilation_h;
  g.stride_w = win.stride_w;
  g.stride_h = win.stride_h;
  g.offset_x = p.offset_x;
  g.offset_y = p.offset_y;
  if constexpr (Gemm) {
    const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
    const std::size_t workspace_floats =
        kernels::deconvolution_gemm_workspace_per_thread(channels, g) * std::size_t(threads);
    if (workspace_floats > std::size_t(INT_MAX))
      return make_error("{}: the {}x{} output needs a workspace of {} floats, past 2^31", name,
                        p.outw, p.outh, workspace_floats);
    Mat workspace;
    INFER_TRY(workspace.create(Shape::of(int(workspace_floats)), ElemType::f32, 1,
                               opt.workspace_alloc()));
    return with_pack<Pack>(out_pack, [&](auto out_pack_constant) -> Status {
      constexpr int OutPack = decltype(out_pack_constant)::value;
      kernels::deconvolution_gemm<T, Pack, OutPack>(
          bottom.view<T, Pack>(), top.view<T, OutPack>(), g, l.packed_weight.data(),
          l.packed_bias.data(), act, static_cast<float*>(workspace.data()), threads);
      return {};
    });
  } else {  // the direct kernels, not instantiated for a layer that runs the GEMM
    const T* src = bottom.data_as<const T>();
    T* dst = top.data_as<T>();
    const float* bias = l.bias_term ? l.bias_data.data() : nullptr;
    if (depthwise) {  // input and output channels coincide, so both are packed by Pack
      kernels::deconvolution_depthwise<T, Pack>(src, dst, g, l.packed_weight.data(), bias, act,
                                                opt.num_threads);
      return {};
    }
    return with_pack<Pack>(out_pack, [&](auto out_pack_constant) -> Status {
      constexpr int OutPack = decltype(out_pack_constant)::value;
      kernels::deconvolution<T, OutPack>(src, dst, g, l.packed_weight.data(),
                                         l.packed_blocks.data(), bias, act, opt.num_threads);
      return {};
    });
  }
}

}  // namespace detail

/// ncnn Deconvolution. Parameters default as in ncnn; those ncnn defaults to another parameter hold
/// kSameAs, so `Deconvolution{.num_output = 8, .kernel_w = 4, .stride_w = 2, .pad_left = 1, ...}`
/// is a 4x4 stride-2 deconvolution cutting 1 from every side, as the .param keys 0=8 1=4 3=2 4=1
/// are.
struct Deconvolution {
  static constexpr std::string_view ncnn_type = "Deconvolution";  ///< its type in .param files
  int num_output = 0;            ///< ncnn 0=num_output
  int kernel_w = 0;              ///< ncnn 1=kernel_w
  int dilation_w = 1;            ///< ncnn 2=dilation_w
  int stride_w = 1;              ///< ncnn 3=stride_w
  int pad_left = 0;              ///< ncnn 4=pad_left; -233/-234 with output_w/h: SAME_UPPER/LOWER
  int bias_term = 0;             ///< ncnn 5=bias_term
  int weight_data_size = 0;      ///< ncnn 6=weight_data_size
  ActivationParam activation{};  ///< ncnn 9=activation_type, 10=activation_params
  int kernel_h = kSameAs;        ///< ncnn 11=kernel_h; kSameAs: kernel_w
  int dilation_h = kSameAs;      ///< ncnn 12=dilation_h; kSameAs: dilation_w
  int stride_h = kSameAs;        ///< ncnn 13=stride_h; kSameAs: stride_w
  int pad_top = kSameAs;         ///< ncnn 14=pad_top; kSameAs: pad_left
  int pad_right = kSameAs;       ///< ncnn 15=pad_right; kSameAs: pad_left
  int pad_bottom = kSameAs;      ///< ncnn 16=pad_bottom; kSameAs: pad_top
  int output_pad_right = 0;      ///< ncnn 18=output_pad_right: extra columns at the right
  int output_pad_bottom = kSameAs;  ///< ncnn 19=output_pad_bottom; kSameAs: output_pad_right
  int output_w = 0;                 ///< ncnn 20=output_w: output width, with pads of -233/-234
  int output_h = kSameAs;           ///< ncnn 21=output_h; kSameAs: output_w

  /// [kernel_w, kernel_h, num_input, num_output] innermost first: o-major, then input channel,
  /// then ky, then kx. From load() or filled directly.
  std::vector<float> weight_data{};
  std::vector<float> bias_data{};  ///< [num_output] when bias_term

  /// Weights in the layout of the kernel algorithm() picks, from prepare(): GEMM blocks (see
  /// deconv_prepare_gemm) or the direct kernel's (see deconv_prepare).
  std::vector<float> packed_weight{};
  std::vector<kernels::DeconvBlock> packed_blocks{};  ///< direct kernel: per output channel group
  std::vector<float> packed_bias{};  ///< GEMM: bias padded to whole blocks, from prepare()
  int prepared_pack = 0;  ///< the pack prepare() laid the weights out for; 0: not prepared

  using storage = float_storage;
  using packs = all_packs;

  /// The kernel forward runs; fixed by the target alone (group is 1 and every shape gains).
  enum class Algorithm {
    direct,  ///< kernels::deconvolution: gather form, no float batch needed
    gemm,    ///< kernels::deconvolution_gemm: packed GEMM + col2im add
  };

  /// The packed GEMM wherever the target has a float batch: measured (AVX-512, f32, 1 thread,
  /// benchmarks/bench_deconv.cpp) it is 4 to 15 times faster than the direct kernel on every
  /// shape tried, FCN/U-Net upsampling layers (about 6x) and small channel counts with pack 1
  /// (c3 -> 16, c16 -> 3) alike, so no shape keeps the direct kernel.
  static constexpr Algorithm algorithm() {
    return kernels::gemm::kAvailable ? Algorithm::gemm : Algorithm::direct;
  }

  /// algorithm() == Algorithm::gemm.
  static constexpr bool uses_gemm() { return algorithm() == Algorithm::gemm; }

  /// Reads weight_data and (with bias_term) bias_data in ncnn's .bin order.
  Status load(io::ModelBin& mb) { return detail::deconv_load(*this, 1, "Deconvolution", mb); }

  /// Lays the weights out for the kernel at `pack` (weights stay f32 for every storage type).
  Status prepare(ElemType /*type*/, int pack, const Option& /*opt*/) {
    if constexpr (uses_gemm()) {
      return detail::deconv_prepare_gemm(*this, pack, "Deconvolution");
    } else {
      return detail::deconv_prepare(*this, 1, pack, "Deconvolution");
    }
  }

  /// Folds a following per-channel y = x * a + b (BatchNorm, Scale) into weights and bias; call
  /// prepare again afterwards.
  Status fold_affine(std::span<const float> a, std::span<const float> b) {
    return detail::deconv_fold_affine(*this, 1, "Deconvolution", a, b);
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return detail::deconv_infer_shapes(*this, 1, in, out);
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    return with_activation(
        activation, [&](const auto& a) { return forward_fused<T, Pack>(bottom, top, opt, a); });
  }

  /// forward with `act` applied to the accumulators in place of `activation`.
  template <StorageElement T, int Pack, class Act>
  Status forward_fused(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    return detail::deconv_forward<T, Pack, uses_gemm()>(*this, 1, "Deconvolution", bottom, top, opt,
                                                        act);
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the transposed convolution kernel (gather form) over the plan deconv_plan gives
  /// for the input; the step's activation in its epilogue.
  Status upload_vulkan(vk::Uploader& up) const { return detail::upload_weights_and_bias(*this, up); }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1 || step.weights.empty())
      return make_error("Deconvolution GPU forward: one input, one output and the weights needed");
    const Shape& s = in[0].shape();
    const detail::DeconvPlan plan = detail::deconv_plan(*this, s.w, s.h);
    if (plan.error) return make_error("Deconvolution GPU forward: {}", plan.error);
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
    p.group = 1;
    p.act = vk::gpu_activation(step.act);
    return vk::record_deconvolution(rec, in[0], out[0], step.weights[0],
                                    step.weights.size() > 1 ? &step.weights[1] : nullptr, p);
  }
#endif
};

}  // namespace infer::layers
