// ncnn ConvolutionDepthWise: Convolution with the channels split into `group` groups, each
// convolved with its own num_output / group filters, on 3-D (w, h, c) blobs. group == channels ==
// num_output is the depthwise case, vectorized over a channel group's pack lanes: 3x3 and 5x5 at
// stride 1 or 2 (no dilation) by the register-tiled kernels/convolution_depthwise.hpp, which
// reads the unpadded input; the rest by the direct kernel on a padded copy. Any other
// grouping runs the direct convolution kernel once per group; where a group's input channels are
// not a multiple of the input pack, or its outputs not of the output pack, that layer computes at
// pack 1 (input unpacked, output repacked, both in workspace memory). f32/f16/bf16 storage, every
// pack; output pack pack_for(num_output, pack). Quantized (ncnn's 8=int8_scale_term,
// detail/int8_layer.hpp): depthwise on the int8 values in f32 registers, grouped through the int8
// GEMM (kernels/int8.hpp); output f32, or int8 requantized with a term above 100; always on the
// CPU. Not supported, an Error: 1-D/2-D inputs. ncnn's 19=dynamic_weight is not a member.
#pragma once

#include <climits>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/convert.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/kernels/convolution_depthwise.hpp>
#include <infer/kernels/convolution_grouped.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/detail/int8_layer.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <utility>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#endif

namespace infer::layers {

/// Parameters default as in ncnn; those ncnn defaults to another parameter hold kSameAs (see
/// Convolution).
struct ConvolutionDepthWise {
  static constexpr std::string_view ncnn_type = "ConvolutionDepthWise";  ///< its type in .param files
  /// Grouped (not depthwise) forms run their GEMM only where every group's channels are whole
  /// packs: the composer picks such a pack (see graph/placement.hpp).
  static constexpr bool packs_fill_groups = true;
  /// Its GPU forward adds a second input (a residual of the output's shape) before the
  /// activation: the composer fuses a following sum into it on the GPU (graph/fuse.hpp).
  static constexpr bool vulkan_fuses_residual = true;
  int num_output = 0;            ///< ncnn 0=num_output
  int kernel_w = 0;              ///< ncnn 1=kernel_w
  int dilation_w = 1;            ///< ncnn 2=dilation_w
  int stride_w = 1;              ///< ncnn 3=stride_w
  int pad_left = 0;              ///< ncnn 4=pad_left; kPadSameUpper/-Lower (-233/-234): SAME
  int bias_term = 0;             ///< ncnn 5=bias_term
  int weight_data_size = 0;      ///< ncnn 6=weight_data_size
  int group = 1;                 ///< ncnn 7=group
  /// ncnn 8=int8_scale_term: 0 float; 1/101 one weight scale per group, 2/102 one for all; above
  /// 100 the output is requantized to int8. Scales in `int8`.
  int int8_scale_term = 0;
  ActivationParam activation{};  ///< ncnn 9=activation_type, 10=activation_params
  int kernel_h = kSameAs;        ///< ncnn 11=kernel_h; kSameAs: kernel_w
  int dilation_h = kSameAs;      ///< ncnn 12=dilation_h; kSameAs: dilation_w
  int stride_h = kSameAs;        ///< ncnn 13=stride_h; kSameAs: stride_w
  int pad_top = kSameAs;         ///< ncnn 14=pad_top; kSameAs: pad_left
  int pad_right = kSameAs;       ///< ncnn 15=pad_right; kSameAs: pad_left
  int pad_bottom = kSameAs;      ///< ncnn 16=pad_bottom; kSameAs: pad_top
  float pad_value = 0.f;         ///< ncnn 18=pad_value
  /// [group][num_output / group][num_input / group][kernel_h][kernel_w], weight_data_size values.
  std::vector<float> weight_data{};
  /// [num_output] when bias_term.
  std::vector<float> bias_data{};
  /// weight_data in the kernels' layout for input pack prepared_pack (prepare()).
  std::vector<float> weight_packed{};
  /// bias_data, or num_output zeros without bias_term (prepare()).
  std::vector<float> bias_packed{};
  int prepared_pack = 0;  ///< the input pack weight_packed is laid out for; 0: not prepared
  int compute_pack = 0;   ///< the input pack the grouped kernel runs at (prepared_pack or 1)
  /// Grouped (not depthwise) convolutions whose groups fill whole packs: one Convolution per
  /// group, each running the packed GEMM on its channel range (prepare()); empty otherwise.
  std::vector<Convolution> group_convs{};
  /// The quantized form's scales (load() or the caller: `group` weight scales) and prepared
  /// weights.
  detail::Int8Part int8{};

  /// Float storage; i8 for a quantized layer's int8 input (its output type: int8_output_type()).
  using storage = storage_list<f32, f16, bf16, i8>;
  using packs = all_packs;

  /// Whether the layer computes in int8 (int8_scale_term != 0).
  constexpr bool quantized() const { return int8_scale_term != 0; }
  /// A quantized layer's output as its parameters declare it: i8 when it requantizes
  /// (int8_scale_term > 100), else f32. The composer may requantize a float one
  /// (requantize_output), which makes forward write i8 (int8_written_type()).
  constexpr ElemType int8_output_type() const {
    return int8_scale_term > 100 ? ElemType::i8 : ElemType::f32;
  }
  /// The type a quantized forward writes: i8 when the term or the composer requantizes.
  constexpr ElemType int8_written_type() const {
    return detail::int8_requantizes(int8, int8_scale_term) ? ElemType::i8 : ElemType::f32;
  }
  /// The composer's choice for a quantized layer with a float output (graph/requantize.hpp):
  /// write it requantized by `scale` (its readers' input scale) instead; 0 undoes it.
  constexpr void requantize_output(float scale) {
    detail::set_int8_requant(int8, int8_scale_term, scale);
  }

  /// Input channels the weights imply: weight_data_size / (kernel_w * kernel_h * num_output /
  /// group), as ncnn computes them.
  constexpr int num_input() const {
    const detail::Window2D win = detail::conv_window(*this);
    if (group <= 0) return 0;
    const std::int64_t per_input = std::int64_t(win.kernel_w) * win.kernel_h * (num_output / group);
    return per_input > 0 ? int(weight_data_size / per_input) : 0;
  }
  /// Whether each channel is convolved alone (group == channels == num_output).
  constexpr bool depthwise() const { return group == num_output && num_input() == group; }

  /// The narrowest group, in input and output channels, that runs at a pack it fills: 8, or 4 at
  /// a stride above 1. Narrower groups run unpacked, vectorized across output pixels
  /// (kernels::convolution_grouped_planar, which reads a stride-1 window in place but gathers a
  /// strided one: there the grouped-pack kernel at pack 4 is the faster).
  constexpr int packed_group_min() const {
    return stride_w > 1 || detail::resolve(stride_h, stride_w) > 1 ? 4 : 8;
  }

  /// The kernels forward can run; which one is algorithm()'s choice.
  enum class Algorithm {
    fast,              ///< depthwise 3x3 / 5x5, stride 1 / 2: kernels/convolution_depthwise.hpp
    direct,            ///< depthwise, any other window: the direct depthwise kernel
    group_gemm,        ///< grouped, groups of whole packs: one Convolution (GEMM) per group
    grouped,           ///< grouped: the direct kernel per group, at the input's pack
    grouped_unpacked,  ///< grouped, groups that do not fill whole packs: computed at pack 1
    int8,              ///< quantized: kernels/int8.hpp (depthwise, or the grouped int8 GEMM)
  };

  /// The kernel forward runs for input pack `pack`, decided by the parameters alone (prepare()
  /// lays the weights out for it; a static graph instantiates only it).
  /// One group's part of an input of shape `in` (dims 0 where `in` is not 3-D).
  constexpr Shape group_shape(const Shape& in) const {
    return in.dims == 3 && group > 0 ? Shape::of(in.w, in.h, in.c / group) : Shape{};
  }

  /// The layout prepare(type, pack, opt, in) makes beyond the pack (ShapePreparedLayer): the
  /// group convolutions' algorithm for one group of `in` where they run, else 0.
  constexpr int layout(int pack, const Shape& in) const {
    return algorithm(pack) == Algorithm::group_gemm
               ? int(group_conv().algorithm(pack, group_shape(in))) + 1
               : 0;
  }

  constexpr Algorithm algorithm(int pack) const {
    if (quantized()) return Algorithm::int8;
    if (depthwise())
      return kernels::depthwise_kxk_supported(geometry()) ? Algorithm::fast : Algorithm::direct;
    const int cin_g = num_input() / group, cout_g = num_output / group;
    // Narrow groups: vectorized across pixels, unpacked (kernels::convolution_grouped_planar; at
    // pack 1, Algorithm::grouped runs it too).
    if (pack > 1 && (cin_g < packed_group_min() || cout_g < packed_group_min()))
      return Algorithm::grouped_unpacked;
    // Groups of exactly one pack in and out: the direct kernel over every group at once
    // (kernels::convolution_grouped_pack) beats a small GEMM per group.
    if (pack > 1 && cin_g == pack && cout_g == pack) return Algorithm::grouped;
    // 1x1 groups of a few whole packs: read in place, every output pack of a tile from one load
    // of each input value (kernels::convolution_grouped_1x1), where a GEMM per group would gather.
    if (pack > 1 && grouped_1x1(pack)) return Algorithm::grouped;
    if (pack > 1 && cin_g % pack == 0 && cout_g % pack == 0 && group_conv().uses_gemm())
      return Algorithm::group_gemm;
    return cin_g % pack == 0 && cout_g % pack_for(num_output, pack) == 0
               ? Algorithm::grouped
               : Algorithm::grouped_unpacked;
  }

  /// Whether groups of whole packs at `pack` run kernels::convolution_grouped_1x1 rather than a
  /// GEMM per group: a 1x1 window at horizontal stride 1 or 2, at most kGrouped1x1MaxPacks packs
  /// in and out a group (past that the GEMM's blocking pays for its gathers).
  constexpr bool grouped_1x1(int pack) const {
    const int cin_g = num_input() / group, cout_g = num_output / group;
    return kernel_w == 1 && detail::resolve(kernel_h, kernel_w) == 1 &&
           (stride_w == 1 || stride_w == 2) && cin_g % pack == 0 && cout_g % pack == 0 &&
           cin_g <= kGrouped1x1MaxPacks * pack && cout_g <= kGrouped1x1MaxPacks * pack;
  }
  static constexpr int kGrouped1x1MaxPacks = 3;

  /// One group's convolution (without weights): what Algorithm::group_gemm runs per group.
  constexpr Convolution group_conv() const {
    const int cin_g = num_input() / group, cout_g = num_output / group;
    return Convolution{.num_output = cout_g,
                       .kernel_w = kernel_w,
                       .dilation_w = dilation_w,
                       .stride_w = stride_w,
                       .pad_left = pad_left,
                       .bias_term = 1,
                       .weight_data_size = cin_g * cout_g * detail::conv_window(*this).maxk(),
                       .kernel_h = kernel_h,
                       .dilation_h = dilation_h,
                       .stride_h = stride_h,
                       .pad_top = pad_top,
                       .pad_right = pad_right,
                       .pad_bottom = pad_bottom,
                       .pad_value = pad_value};
  }

  /// The window as the kernels take it.
  constexpr kernels::ConvGeometry geometry() const {
    const detail::Window2D w = detail::conv_window(*this);
    return {w.kernel_w, w.kernel_h, w.dilation_w, w.dilation_h, w.stride_w, w.stride_h};
  }

  /// Checks the parameters alone (static messages).
  constexpr ShapeCheck check_params() const {
    if (int8_scale_term < 0) return shape_error("int8_scale_term must be >= 0");
    if (num_output <= 0) return shape_error("num_output must be > 0");
    if (group <= 0 || num_output % group != 0)
      return shape_error("group must be > 0 and divide num_output");
    const detail::Window2D win = detail::conv_window(*this);
    if (ShapeCheck c = detail::check_window(win); !c.ok()) return c;
    const std::int64_t per_input = std::int64_t(win.maxk()) * (num_output / group);
    if (per_input > INT_MAX || weight_data_size <= 0 || weight_data_size % per_input != 0 ||
        num_input() % group != 0)
      return shape_error(
          "weight_data_size must be kernel_w * kernel_h * num_input * num_output / group, with "
          "group dividing num_input");
    if (!activation.valid()) return shape_error("activation_type must be 0..6");
    return {};
  }

  /// One 3-D input of num_input() channels; output (outw, outh, num_output).
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    if (ShapeCheck c = check_params(); !c.ok()) return c;
    if (in[0].dims != 3) return shape_error("input must be 3-D (w, h, c)");
    if (in[0].c != num_input())
      return shape_error("input channels differ from what weight_data_size implies");
    detail::WindowPlan plan;
    const ShapeCheck c = detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this),
                                             in[0].w, in[0].h, plan);
    if (!c.ok()) return c;
    out[0] = Shape::of(plan.outw, plan.outh, num_output);
    return {};
  }

  /// weight_data (tagged, weight_data_size values), then bias_data (raw f32) when bias_term.
  Status load(io::ModelBin& mb) {
    if (weight_data_size <= 0 || (bias_term && num_output <= 0))
      return make_error("ConvolutionDepthWise: weight_data_size {} and num_output {} must be > 0",
                        weight_data_size, num_output);
    auto w = mb.load(std::size_t(weight_data_size), io::WeightType::tagged);
    if (!w.ok()) return make_error("ConvolutionDepthWise: weight_data: {}", w.message());
    weight_data = std::move(w).value();
    int8.weights_are_int8 = mb.last_type() == ElemType::i8;
    if (int8.weights_are_int8 && !quantized())
      return make_error(
          "ConvolutionDepthWise: int8 weights stored for a layer without int8_scale_term");
    bias_data.clear();
    if (bias_term) {
      auto b = mb.load(std::size_t(num_output), io::WeightType::raw_f32);
      if (!b.ok()) return make_error("ConvolutionDepthWise: bias_data: {}", b.message());
      bias_data = std::move(b).value();
    }
    if (quantized()) {
      // ncnn: 1 / 101 give a weight scale per group, 2 / 102 one for every group.
      const bool one = int8_scale_term == 2 || int8_scale_term == 102;
      INFER_TRY(detail::load_int8_scales(mb, int8_scale_term, one ? 1 : group, group,
                                         "ConvolutionDepthWise", int8));
    }
    prepared_pack = 0;
    return {};
  }

  /// Lays the weights out for input pack `pack` (output pack pack_for(num_output, pack)), and
  /// chooses the pack a grouped layer computes at. Weights stay f32 for every storage type. `in`
  /// (dims 0: not known) is passed on, one group's channels of it, to the group convolutions'
  /// prepare (Convolution's Winograd tile follows the map's size).
  Status prepare(ElemType type, int pack, const Option& opt, const Shape& in = {}) {
    INFER_TRY(check_weights());
    if (pack != 1 && pack != 4 && pack != 8 && pack != 16)
      return make_error("ConvolutionDepthWise: pack must be 1, 4, 8 or 16, got {}", pack);
    const int cin = num_input();
    if (cin % pack != 0)
      return make_error(
          "ConvolutionDepthWise: pack {} does not divide the {} input channels weight_data_size {} "
          "implies",
          pack, cin, weight_data_size);
    const int maxk = detail::conv_window(*this).maxk();
    if (quantized()) return prepare_int8(pack, opt);
    weight_packed.resize(weight_data.size());
    if (depthwise()) {
      detail::with_pack<16>(pack, [&](auto p) {
        kernels::convolution_depthwise_weights<decltype(p)::value>(weight_data.data(),
                                                                   weight_packed.data(), cin, maxk);
      });
      compute_pack = pack;
    } else {
      const int cin_g = cin / group, cout_g = num_output / group;
      INFER_TRY(prepare_group_convs(type, pack, opt, in));
      const int out_pack = pack_for(num_output, pack);
      const bool packed = algorithm(pack) != Algorithm::grouped_unpacked;
      compute_pack = packed ? pack : 1;
      const int cpack_out = packed ? out_pack : 1;
      const std::size_t per_group = std::size_t(cin_g) * cout_g * maxk;
      detail::with_pack<16>(compute_pack, [&](auto in_pack) {
        detail::with_pack<decltype(in_pack)::value>(cpack_out, [&](auto out_p) {
          for (int g = 0; g < group; ++g)
            kernels::convolution_direct_weights<decltype(in_pack)::value, decltype(out_p)::value>(
                weight_data.data() + g * per_group, weight_packed.data() + g * per_group, cin_g,
                cout_g, maxk);
        });
      });
    }
    bias_packed = bias_term ? bias_data : std::vector<float>(std::size_t(num_output), 0.f);
    prepared_pack = pack;
    return {};
  }

  /// The quantized layer's weights: depthwise as floats of the int8 values [c / pack][maxk][pack],
  /// grouped in the int8 GEMM's layout; the epilogue's factors by channel.
  Status prepare_int8(int pack, const Option& opt) {
    INFER_TRY(detail::check_int8_scales(int8, int8_scale_term, std::size_t(group),
                                        "ConvolutionDepthWise"));
    const int maxk = detail::conv_window(*this).maxk();
    const std::vector<std::int8_t> q = detail::quantized_weights(weight_data, int8);
    if (depthwise()) {
      int8.dw_weights.assign(q.size(), 0.f);
      for (int c = 0; c < num_output; ++c)
        for (int k = 0; k < maxk; ++k)
          int8.dw_weights[(std::size_t(c / pack) * std::size_t(maxk) + std::size_t(k)) *
                              std::size_t(pack) +
                          std::size_t(c % pack)] = float(q[std::size_t(c) * maxk + k]);
      detail::fill_epilogue(int8, num_output, num_output, 1, 1, bias_data);
      int8.prepared_pack = pack;
    } else {
      const int cin_g = num_input() / group, cout_g = num_output / group;
      int8.packed = detail::pack_gemm_weights(q.data(), group, cout_g, cin_g, maxk, opt);
      detail::fill_epilogue(int8, num_output, group, cout_g, int8.packed.m_pad, bias_data);
      int8.prepared_pack = 1;
    }
    prepared_pack = pack;
    return {};
  }

  /// Builds group_convs when every group's input and output channels fill whole packs and the
  /// GEMM takes the group's window (then the grouped direct kernel is not used).
  Status prepare_group_convs(ElemType type, int pack, const Option& opt, const Shape& in) {
    group_convs.clear();
    if (algorithm(pack) != Algorithm::group_gemm) return {};
    const int cout_g = num_output / group;
    const std::size_t per_group = std::size_t(group_conv().weight_data_size);
    std::vector<Convolution> convs;
    for (int g = 0; g < group; ++g) {
      Convolution c = group_conv();
      c.weight_data.assign(weight_data.begin() + std::ptrdiff_t(g * per_group),
                           weight_data.begin() + std::ptrdiff_t((g + 1) * per_group));
      c.bias_data = bias_term ? std::vector<float>(bias_data.begin() + g * cout_g,
                                                   bias_data.begin() + (g + 1) * cout_g)
                              : std::vector<float>(std::size_t(cout_g), 0.f);
      INFER_TRY(c.prepare(type, pack, opt, group_shape(in)));
      convs.push_back(std::move(c));
    }
    group_convs = std::move(convs);
    return {};
  }

  /// Folds a following y = x * a[p] + b[p] per output channel into the weights and bias (sets
  /// bias_term). Not past a fused activation, which does not commute with it.
  Status fold_affine(std::span<const float> a, std::span<const float> b) {
    INFER_TRY(check_weights());
    if (activation.type != 0)
      return make_error("ConvolutionDepthWise: cannot fold an affine map behind activation_type {}",
                        activation.type);
    if (quantized())
      return make_error(
          "ConvolutionDepthWise: cannot fold an affine map into int8 weights (int8_scale_term "
          "{}): their scales were chosen for the weights as stored",
          int8_scale_term);
    if (a.size() != std::size_t(num_output) || b.size() != std::size_t(num_output))
      return make_error(
          "ConvolutionDepthWise: fold_affine needs {} values in a and b, got {} and {}", num_output,
          a.size(), b.size());
    // Output channel p's weights are one block in ncnn's order whatever the grouping.
    const std::size_t per = weight_data.size() / std::size_t(num_output);
    if (!bias_term) bias_data.assign(std::size_t(num_output), 0.f);
    for (std::size_t p = 0; p < std::size_t(num_output); ++p) {
      for (std::size_t i = 0; i < per; ++i) weight_data[p * per + i] *= a[p];
      bias_data[p] = bias_data[p] * a[p] + b[p];
    }
    bias_term = 1;
    prepared_pack = 0;
    weight_packed.clear();
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    if (!activation.valid())
      return make_error("ConvolutionDepthWise: activation_type {} is not one of ncnn's 0..6",
                        activation.type);
    return with_activation(
        activation, [&](const auto& a) { return forward_fused<T, Pack>(bottom, top, opt, a); });
  }
#ifdef INFER_HAS_VULKAN
  /// On the GPU: the direct convolution kernel with `group` groups (depthwise when group is the
  /// channel count), the step's activation in its epilogue.
  Status upload_vulkan(vk::Uploader& up) const {
    return detail::upload_conv_weights(*this, group, up);
  }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    return detail::conv_vulkan(*this, group, in, out, step, rec, "ConvolutionDepthWise");
  }
#endif

  /// forward with `act` applied to the accumulators in place of `activation`. Defined after the
  /// class, not inline (see Convolution::forward_fused).
  template <StorageElement T, int Pack, class Act>
  Status forward_fused(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const;

  /// forward_fused with the algorithm fixed while compiling, which must be algorithm(Pack): only
  /// its kernels are instantiated (a static graph's steps call this).
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status forward_with(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    if constexpr (Algo == Algorithm::int8 && !std::same_as<T, i8>) {
      // A float input to the quantized layer: the int8 instance quantizes it, so that a program
      // compiles the int8 kernels once (in forward_fused<i8>), not once per float type.
      if (!quantized() || algorithm(Pack) != Algo)
        return make_error(
            "ConvolutionDepthWise: forward_with algorithm {} at pack {}, the layer chooses {}",
            int(Algo), Pack, int(algorithm(Pack)));
      return forward_fused<i8, Pack>(bottom, top, opt, act);
    } else if constexpr (Algo == Algorithm::int8 || std::same_as<T, i8>) {
      if (!quantized())
        return make_error("ConvolutionDepthWise: an int8 input needs int8_scale_term (got {})",
                          bottom.describe());
      if (algorithm(Pack) != Algo)
        return make_error(
            "ConvolutionDepthWise: forward_with algorithm {} at pack {}, the layer chooses {}",
            int(Algo), Pack, int(algorithm(Pack)));
      return forward_int8<Pack>(bottom, top, opt, act);
    } else {
      if (algorithm(Pack) != Algo)
        return make_error(
            "ConvolutionDepthWise: forward_with algorithm {} at pack {}, the layer chooses {}",
            int(Algo), Pack, int(algorithm(Pack)));
      return forward_float<T, Pack, Algo>(bottom, top, opt, act);
    }
  }

  /// The quantized forward: `bottom` int8 (or float, quantized here by the bottom scale) at pack
  /// Pack; `top` int8_written_type() at pack_for(num_output, Pack).
  template <int Pack, class Act>
  Status forward_int8(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    const char* who = "ConvolutionDepthWise";
    if (int8.prepared_pack == 0 || int8.scale_in.empty() ||
        (depthwise() && int8.prepared_pack != Pack))
      return make_error("{}: int8 weights are not prepared for pack {} (call prepare after load)",
                        who, Pack);
    if (bottom.elempack() != Pack || bottom.dims() != 3)
      return make_error("{}: int8 input {}, expected 3-D at pack {}", who, bottom.describe(),
                        Pack);
    const Shape s = bottom.shape();
    if (s.c != num_input())
      return make_error("{}: input {} has {} channels, weight_data_size {} implies {}", who,
                        bottom.describe(), s.c, weight_data_size, num_input());
    detail::WindowPlan plan;
    const ShapeCheck c =
        detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this), s.w, s.h, plan);
    if (!c.ok()) return make_error("{}: input {}: {}", who, bottom.describe(), c.error);
    auto in = detail::int8_input(bottom, int8, opt, who);
    if (!in.ok()) return in.error();
    const Shape out_shape = Shape::of(plan.outw, plan.outh, num_output);
    // Depthwise writes the input's pack; grouped, any (as the top buffer holds).
    const ElemType out_type = int8_written_type();
    const int out_pack =
        depthwise() ? Pack : detail::int8_out_pack(top, out_shape, out_type, Pack);
    INFER_TRY(top.create(out_shape, out_type, out_pack, opt.blob_alloc()));
    const kernels::int8::ConvWindow win{geometry(),  plan.pads.left, plan.pads.top,
                                        plan.outw,   plan.outh,
                                        float2int8(pad_value * int8.bottom_scale)};
    const auto src = in.value().template view<i8, Pack>();
    const bool requant = detail::int8_requantizes(int8, int8_scale_term);
    if (depthwise()) {  // out_pack == Pack
      const kernels::int8::Epilogue e = detail::epilogue_of(int8, nullptr);
      // The kernel's rows widened to f32, a ring per thread.
      const int threads = std::max(opt.num_threads, 1);
      const std::size_t floats = kernels::int8::conv_depthwise_workspace_floats<Pack>(win);
      Mat workspace;
      INFER_TRY(workspace.create(Shape::of(int(floats * std::size_t(threads))), ElemType::f32, 1,
                                 opt.workspace_alloc()));
      float* ws = workspace.data_as<float>();
      if (requant)
        kernels::int8::conv_depthwise<i8, Pack>(src, top.view<i8, Pack>(), int8.dw_weights.data(),
                                                win, e, act, ws, threads);
      else
        kernels::int8::conv_depthwise<float, Pack>(src, top.view<float, Pack>(),
                                                   int8.dw_weights.data(), win, e, act, ws,
                                                   threads);
      return {};
    }
    return detail::run_int8_gemm(src, top, int8, win, requant, act, opt);
  }

 private:
  /// forward_with for the float algorithms.
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status forward_float(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    detail::WindowPlan plan;
    INFER_TRY(check_input<T, Pack>(bottom, plan));
    if (prepared_pack != Pack || weight_packed.size() != std::size_t(weight_data_size) ||
        bias_packed.size() != std::size_t(num_output))
      return make_error(
          "ConvolutionDepthWise: weights are not prepared for pack {} (prepared for {}; call "
          "prepare after load)",
          Pack, prepared_pack);
    const int out_pack = pack_for(num_output, Pack);
    const Shape out_shape = Shape::of(plan.outw, plan.outh, num_output);
    const kernels::ConvGeometry g = geometry();
    if constexpr (Algo == Algorithm::fast) {
      // Depthwise 3x3 / 5x5, stride 1 / 2: register-tiled kernels on the unpadded input (5x5
      // stride 1 through a ring of padded rows, pack 1 through a padded f32 copy of each plane,
      // both in workspace memory).
      INFER_TRY(top.create(out_shape, elem_type_v<T>, Pack, opt.blob_alloc()));
      const int threads = std::max(opt.num_threads, 1);
      Mat workspace;
      const std::size_t floats = kernels::depthwise_fast_workspace<Pack>(
          g, plan.outw, plan.outh, num_output / Pack, threads);  // per thread
      if (floats * std::size_t(threads) > std::size_t(INT_MAX))
        return make_error("ConvolutionDepthWise: a {}x{} output needs too large a workspace",
                          plan.outw, plan.outh);
      if (floats)
        INFER_TRY(workspace.create(Shape::of(int(floats * std::size_t(threads))), ElemType::f32, 1,
                                   opt.workspace_alloc()));
      kernels::convolution_depthwise_fast<T, Pack>(bottom.view<T, Pack>(), top.view<T, Pack>(),
                                                   weight_packed.data(), bias_packed.data(), g,
                                                   {plan.pads.left, plan.pads.top, pad_value}, act,
                                                   threads, static_cast<float*>(workspace.data()));
      return {};
    } else if constexpr (Algo == Algorithm::group_gemm) {
      if (group_convs.size() != std::size_t(group))
        return make_error("ConvolutionDepthWise: the group convolutions are not prepared");
      // Each group's GEMM writes its channel range of the output in place.
      INFER_TRY(top.create(out_shape, elem_type_v<T>, out_pack, opt.blob_alloc()));
      const int in_packs = num_input() / group / Pack, out_packs = num_output / group / out_pack;
      for (int gi = 0; gi < group; ++gi) {
        const Mat in = bottom.channel_range(gi * in_packs, in_packs);
        Mat out = top.channel_range(gi * out_packs, out_packs);
        const void* where = out.data();
        INFER_TRY(group_convs[std::size_t(gi)].template forward_fused<T, Pack>(in, out, opt, act));
        if (out.data() != where)
          return make_error("ConvolutionDepthWise: group {} did not write its output range", gi);
      }
      return {};
    } else {
      auto padded = detail::pad_input<T, Pack>(bottom, plan.pads, pad_value, opt);
      if (!padded.ok()) return make_error("ConvolutionDepthWise: padding: {}", padded.message());
      const Mat& src = padded.value();
      if constexpr (Algo == Algorithm::direct) {  // channels == num_output: out_pack == Pack
        INFER_TRY(top.create(out_shape, elem_type_v<T>, Pack, opt.blob_alloc()));
        kernels::convolution_depthwise_direct<T, Pack>(src.view<T, Pack>(), top.view<T, Pack>(),
                                                       weight_packed.data(), bias_packed.data(), g,
                                                       act, opt.num_threads);
        return {};
      } else if constexpr (Algo == Algorithm::grouped && Pack > 1) {
        INFER_TRY(top.create(out_shape, elem_type_v<T>, out_pack, opt.blob_alloc()));
        detail::with_pack<Pack>(out_pack, [&](auto op) {
          grouped<T, Pack, decltype(op)::value>(src, top, g, act, opt.num_threads);
        });
        return {};
      } else {
        // Groups that do not fill whole packs (and any group at pack 1): computed unpacked,
        // vectorized across output pixels (kernels/convolution_grouped.hpp), in workspace memory.
        Option ws = opt;
        ws.blob_allocator = opt.workspace_alloc();
        Mat src1;
        INFER_TRY(convert_packing(src, src1, 1, ws));
        if (out_pack == 1) {
          INFER_TRY(top.create(out_shape, elem_type_v<T>, 1, opt.blob_alloc()));
          return grouped_planar<T>(src1, top, g, act, opt);
        }
        Mat top1;
        INFER_TRY(top1.create(out_shape, elem_type_v<T>, 1, ws.blob_alloc()));
        INFER_TRY(grouped_planar<T>(src1, top1, g, act, opt));
        return convert_packing(top1, top, out_pack, opt);
      }
    }
  }

  /// kernels::convolution_grouped_planar on the padded input `src` and output `dst`, both at
  /// pack 1 (weights in ncnn's order: prepare's layout at pack 1), with its workspace.
  template <StorageElement T, class Act>
  Status grouped_planar(const Mat& src, const Mat& dst, const kernels::ConvGeometry& g,
                        const Act& act, const Option& opt) const {
    const kernels::GroupedPlanarPlan plan = kernels::GroupedPlanarPlan::plan(
        num_input() / group, num_output / group, g, src.w(), dst.h());
    const int threads = std::max(opt.num_threads, 1);
    if (plan.floats * std::size_t(threads) > std::size_t(INT_MAX))
      return make_error("ConvolutionDepthWise: a {}x{} output needs too large a workspace",
                        dst.w(), dst.h());
    Mat workspace;
    INFER_TRY(workspace.create(Shape::of(int(plan.floats * std::size_t(threads))), ElemType::f32,
                               1, opt.workspace_alloc()));
    kernels::convolution_grouped_planar<T>(src.view<T, 1>(), dst.view<T, 1>(),
                                           weight_packed.data(), bias_packed.data(), group, g, act,
                                           threads, plan, static_cast<float*>(workspace.data()));
    return {};
  }

  /// The direct kernel once per group, on the group's channel range of input and output.
  template <StorageElement T, int InPack, int OutPack, class Act>
  void grouped(const Mat& src, const Mat& dst, const kernels::ConvGeometry& g, const Act& act,
               int num_threads) const {
    const int cin_g = num_input() / group, cout_g = num_output / group;
    const std::size_t per_group = std::size_t(cin_g) * cout_g * g.kernel_w * g.kernel_h;
    if constexpr (InPack > 1 && InPack == OutPack) {
      // 1x1 at stride 1 or 2, groups of one to three packs (one pack a group included).
      if (grouped_1x1(InPack)) {
        kernels::convolution_grouped_1x1<T, InPack>(src.view<T, InPack>(), dst.view<T, OutPack>(),
                                                    weight_packed.data(), bias_packed.data(), g,
                                                    group, act, num_threads);
        return;
      }
      if (cin_g == InPack && cout_g == OutPack) {
        kernels::convolution_grouped_pack<T, InPack>(src.view<T, InPack>(), dst.view<T, OutPack>(),
                                                     weight_packed.data(), bias_packed.data(), g,
                                                     act, num_threads);
        return;
      }
    }
    for (int k = 0; k < group; ++k) {
      MatView<T, InPack> in = src.view<T, InPack>();
      in.data = in.channel(k * cin_g / InPack);
      in.c = cin_g / InPack;
      MatView<T, OutPack> out = dst.view<T, OutPack>();
      out.data = out.channel(k * cout_g / OutPack);
      out.c = cout_g / OutPack;
      kernels::convolution_direct<T, InPack, OutPack>(in, out, weight_packed.data() + k * per_group,
                                                      bias_packed.data() + k * cout_g, g, act,
                                                      num_threads);
    }
  }

  Status check_weights() const {
    if (!activation.valid())
      return make_error("ConvolutionDepthWise: activation_type {} is not one of ncnn's 0..6",
                        activation.type);
    if (ShapeCheck c = check_params(); !c.ok())
      return make_error(
          "ConvolutionDepthWise: {} (num_output {}, group {}, kernel {}x{}, weight_data_size {})",
          c.error, num_output, group, kernel_w, detail::resolve(kernel_h, kernel_w),
          weight_data_size);
    if (weight_data.size() != std::size_t(weight_data_size))
      return make_error(
          "ConvolutionDepthWise: weight_data holds {} values, weight_data_size is {} (load the "
          "weights first)",
          weight_data.size(), weight_data_size);
    if (bias_term && bias_data.size() != std::size_t(num_output))
      return make_error("ConvolutionDepthWise: bias_data holds {} values, expected num_output = {}",
                        bias_data.size(), num_output);
    return {};
  }

  template <StorageElement T, int Pack>
  Status check_input(const Mat& bottom, detail::WindowPlan& plan) const {
    if (!bottom.is<T, Pack>())
      return make_error("ConvolutionDepthWise: input is {}, expected {} pack {}", bottom.describe(),
                        to_string(elem_type_v<T>), Pack);
    if (bottom.dims() != 3)
      return make_error("ConvolutionDepthWise: input {} must be 3-D (w, h, c)", bottom.describe());
    const Shape s = bottom.shape();
    if (s.c != num_input())
      return make_error(
          "ConvolutionDepthWise: input {} has {} channels, weight_data_size {} implies {} (group "
          "{}, num_output {})",
          bottom.describe(), s.c, weight_data_size, num_input(), group, num_output);
    const ShapeCheck c =
        detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this), s.w, s.h, plan);
    if (!c.ok())
      return make_error("ConvolutionDepthWise: input {}: {}", bottom.describe(), c.error);
    return {};
  }
};

template <StorageElement T, int Pack, class Act>
Status ConvolutionDepthWise::forward_fused(const Mat& bottom, Mat& top, const Option& opt,
                                           const Act& act) const {
  // An int8 input has one algorithm; only a float one instantiates the float kernels.
  if constexpr (std::same_as<T, i8>) return forward_with<T, Pack, Algorithm::int8>(bottom, top, opt, act);
  switch (algorithm(Pack)) {
    case Algorithm::int8:
      return forward_with<T, Pack, Algorithm::int8>(bottom, top, opt, act);
    case Algorithm::fast:
      return forward_with<T, Pack, Algorithm::fast>(bottom, top, opt, act);
    case Algorithm::direct:
      return forward_with<T, Pack, Algorithm::direct>(bottom, top, opt, act);
    case Algorithm::group_gemm:
      return forward_with<T, Pack, Algorithm::group_gemm>(bottom, top, opt, act);
    case Algorithm::grouped:
      return forward_with<T, Pack, Algorithm::grouped>(bottom, top, opt, act);
    case Algorithm::grouped_unpacked:
      break;
  }
  return forward_with<T, Pack, Algorithm::grouped_unpacked>(bottom, top, opt, act);
}

}  // namespace infer::layers
