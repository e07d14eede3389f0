// From a parsed .param layer line (io/param_dict.hpp) to an infer layer: set_params() per layer
// type reads ncnn's keys with ncnn's defaults and rejects what ncnn would reject or what cannot
// mean anything (a kernel of 0, an unknown pooling_type, a weight count that does not divide),
// naming file, line, layer and key; visit_ncnn_layer() picks the layer type by its ncnn name.
// "Input" is not a layer here: the network loader turns it into a graph input (input_shape()).
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <infer/io/param_dict.hpp>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/bias.hpp>
#include <infer/layers/binary_op.hpp>
#include <infer/layers/clip.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/crop.hpp>
#include <infer/layers/deconvolution.hpp>
#include <infer/layers/deconvolution_depthwise.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/layers/dropout.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/elu.hpp>
#include <infer/layers/flatten.hpp>
#include <infer/layers/gelu.hpp>
#include <infer/layers/hardsigmoid.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/interp.hpp>
#include <infer/layers/lrn.hpp>
#include <infer/layers/memory_data.hpp>
#include <infer/layers/mish.hpp>
#include <infer/layers/noop.hpp>
#include <infer/layers/padding.hpp>
#include <infer/layers/permute.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/reduction.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/reshape.hpp>
#include <infer/layers/scale.hpp>
#include <infer/layers/shuffle_channel.hpp>
#include <infer/layers/sigmoid.hpp>
#include <infer/layers/slice.hpp>
#include <infer/layers/softmax.hpp>
#include <infer/layers/split.hpp>
#include <infer/layers/swish.hpp>
#include <infer/layers/tanh.hpp>
#include <infer/mat.hpp>
#include <infer/status.hpp>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace infer::io {

namespace detail {

/// Records "name must be >= lo, got v" against `key`.
/// Stores a list parameter into a fixed-capacity field, or records that it holds too many.
template <class T, std::size_t N>
void read_list(ParamReader& r, int key, const char* name, SmallVector<T, N>& field,
               const std::vector<T>& values) {
  if (values.size() > N) {
    r.fail(key,
           fmt::format("{} holds {} values, at most {} are supported", name, values.size(), N));
    return;
  }
  field = values;
}

inline void require_at_least(ParamReader& r, int key, const char* name, std::int64_t v,
                             std::int64_t lo) {
  if (v < lo) r.fail(key, fmt::format("{} must be >= {}, got {}", name, lo, v));
}

/// Records "name must be lo..hi (meaning), got v" against `key`.
inline void require_in(ParamReader& r, int key, const char* name, int v, int lo, int hi,
                       std::string_view meaning) {
  if (v < lo || v > hi)
    r.fail(key, fmt::format("{} must be {}..{} ({}), got {}", name, lo, hi, meaning, v));
}

/// An ncnn axis given before the blob's rank is known: -4..3 fits some rank of 1 to 4.
inline void require_axis(ParamReader& r, int key, const char* name, int v) {
  if (v < -4 || v > 3) r.fail(key, fmt::format("{} must be -4..3, got {}", name, v));
}

/// A 0/1 switch (ncnn treats any nonzero value as 1; a value other than 0 or 1 is taken as a
/// corrupt file here).
inline int read_flag(ParamReader& r, int key, const char* name, int def) {
  const int v = r.get(key, def);
  if (v != 0 && v != 1) r.fail(key, fmt::format("{} must be 0 or 1, got {}", name, v));
  return v;
}

/// A key ncnn defaults to another key: absent, it stays kSameAs (the layer resolves it).
inline int read_same_as(ParamReader& r, int key, const char* name, int def) {
  const int v = r.get(key, def);
  if (v == layers::kSameAs && r.layer().params.has(key))
    r.fail(key, fmt::format("{} is out of range, got {}", name, v));
  return v;
}

/// A key naming an ncnn feature infer does not implement: only its off value 0 is accepted.
inline void require_off(ParamReader& r, int key, const char* name, const char* feature) {
  const int v = r.get(key, 0);
  if (v != 0) r.fail(key, fmt::format("{}={} ({}) is not supported, only 0", name, v, feature));
}

/// 9=activation_type and 10=activation_params of the fusing layers.
inline layers::ActivationParam read_activation(ParamReader& r) {
  layers::ActivationParam a;
  a.type = r.get(9, 0);
  const std::vector<float> p = r.get_floats(10);
  if (!a.valid()) {
    r.fail(9, fmt::format("activation_type must be 0..6 (none, relu, leakyrelu, clip, sigmoid, "
                          "mish, hardswish), got {}",
                          a.type));
    return a;
  }
  // ncnn reads params[0] for leakyrelu (slope) and params[0..1] for clip and hardswish.
  const std::size_t need = a.type == 2 ? 1 : (a.type == 3 || a.type == 6) ? 2 : 0;
  if (p.size() < need)
    r.fail(10, fmt::format("activation_type {} needs {} activation_params, got {}", a.type, need,
                           p.size()));
  else if (p.size() > a.params.size())
    r.fail(10, fmt::format("at most {} activation_params, got {}", a.params.size(), p.size()));
  for (std::size_t i = 0; i < p.size() && i < a.params.size(); ++i) a.params[i] = p[i];
  if (a.type == 3 && p.size() >= 2 && p[0] > p[1])
    r.fail(10, fmt::format("clip activation min {} is above max {}", p[0], p[1]));
  return a;
}

/// Pads of the convolution family (keys pad_left, pad_right, pad_top, pad_bottom): each >= 0, or
/// all four -233 (SAME_UPPER) or all four -234 (SAME_LOWER). `v` holds them resolved.
inline void check_same_pads(ParamReader& r, const int (&keys)[4], const int (&v)[4]) {
  static constexpr const char* kName[4] = {"pad_left", "pad_right", "pad_top", "pad_bottom"};
  const bool same = (v[0] == layers::kPadSameUpper || v[0] == layers::kPadSameLower) &&
                    v[1] == v[0] && v[2] == v[0] && v[3] == v[0];
  if (same) return;
  for (int i = 0; i < 4; ++i) {
    if (v[i] < 0) {
      r.fail(keys[i], fmt::format("{} must be >= 0, or -233 (SAME_UPPER) / -234 (SAME_LOWER) on "
                                  "all four pads, got {}",
                                  kName[i], v[i]));
      return;
    }
  }
}

/// The keys every convolution-family layer shares (0-6, the 9/10 activation, 11-16), read and
/// range-checked.
template <class L>
void read_window(ParamReader& r, L& l) {
  using layers::detail::resolve;
  l.num_output = r.get(0, l.num_output);
  l.kernel_w = r.get(1, l.kernel_w);
  l.dilation_w = r.get(2, l.dilation_w);
  l.stride_w = r.get(3, l.stride_w);
  l.pad_left = r.get(4, l.pad_left);
  l.bias_term = read_flag(r, 5, "bias_term", l.bias_term);
  l.weight_data_size = r.get(6, l.weight_data_size);
  l.activation = read_activation(r);
  l.kernel_h = read_same_as(r, 11, "kernel_h", l.kernel_h);
  l.dilation_h = read_same_as(r, 12, "dilation_h", l.dilation_h);
  l.stride_h = read_same_as(r, 13, "stride_h", l.stride_h);
  l.pad_top = read_same_as(r, 14, "pad_top", l.pad_top);
  l.pad_right = read_same_as(r, 15, "pad_right", l.pad_right);
  l.pad_bottom = read_same_as(r, 16, "pad_bottom", l.pad_bottom);
  require_at_least(r, 0, "num_output", l.num_output, 1);
  require_at_least(r, 1, "kernel_w", l.kernel_w, 1);
  require_at_least(r, 11, "kernel_h", resolve(l.kernel_h, l.kernel_w), 1);
  require_at_least(r, 2, "dilation_w", l.dilation_w, 1);
  require_at_least(r, 12, "dilation_h", resolve(l.dilation_h, l.dilation_w), 1);
  require_at_least(r, 3, "stride_w", l.stride_w, 1);
  require_at_least(r, 13, "stride_h", resolve(l.stride_h, l.stride_w), 1);
}

/// The keys Convolution and ConvolutionDepthWise share (all but 7=group), checked.
template <class L>
void read_conv(L& l, ParamReader& r) {
  read_window(r, l);
  l.int8_scale_term = r.get(8, l.int8_scale_term);
  l.pad_value = r.get(18, l.pad_value);
  require_off(r, 19, "dynamic_weight", "weights from a second input blob");
  const layers::detail::Pads2D p = layers::detail::conv_pads(l);
  check_same_pads(r, {4, 15, 14, 16}, {p.left, p.right, p.top, p.bottom});
  if (l.int8_scale_term != 0)
    r.fail(8, fmt::format("int8_scale_term={} (int8 weights) is not supported, only 0",
                          l.int8_scale_term));
  require_at_least(r, 6, "weight_data_size", l.weight_data_size, 1);
}

/// The keys Deconvolution and DeconvolutionDepthWise share (all but 7=group), checked.
template <class L>
void read_deconv(L& l, ParamReader& r) {
  using layers::detail::resolve;
  read_window(r, l);
  l.output_pad_right = r.get(18, l.output_pad_right);
  l.output_pad_bottom = read_same_as(r, 19, "output_pad_bottom", l.output_pad_bottom);
  l.output_w = r.get(20, l.output_w);
  l.output_h = read_same_as(r, 21, "output_h", l.output_h);
  require_off(r, 28, "dynamic_weight", "weights from a second input blob");
  // ncnn cuts positive pads from the output; -233/-234 (all four) split the cut that output_w/h
  // ask for; other negative values, or positive mixed with negative, mean nothing.
  const layers::detail::Pads2D p = layers::detail::conv_pads(l);
  const int pads[4] = {p.left, p.right, p.top, p.bottom};
  check_same_pads(r, {4, 15, 14, 16}, pads);
  require_at_least(r, 18, "output_pad_right", l.output_pad_right, 0);
  require_at_least(r, 19, "output_pad_bottom", resolve(l.output_pad_bottom, l.output_pad_right), 0);
  require_at_least(r, 20, "output_w", l.output_w, 0);
  const int output_h = resolve(l.output_h, l.output_w);
  require_at_least(r, 21, "output_h", output_h, 0);
  // Positive pads take precedence over output_w/h in ncnn; with no pad at all nothing says how
  // to cut down to the size asked for.
  if (l.output_w > 0 && output_h > 0 && !p.any())
    r.fail(20, fmt::format("output_w/output_h ({}x{}) need pads of -233 (SAME_UPPER) or -234 "
                           "(SAME_LOWER), got 0",
                           l.output_w, output_h));
  require_at_least(r, 6, "weight_data_size", l.weight_data_size, 1);
}

/// weight_data_size % (kernel_w * kernel_h * per_channel) == 0, per_channel being num_output
/// (or num_output / group): the weights hold a whole number of input channels.
template <class L>
void check_weight_count(ParamReader& r, const L& l, std::int64_t per_channel, const char* expect) {
  const layers::detail::Window2D win = layers::detail::conv_window(l);
  const std::int64_t block = std::int64_t(win.kernel_w) * win.kernel_h * per_channel;
  if (l.weight_data_size > 0 && block > 0 && l.weight_data_size % block != 0)
    r.fail(6, fmt::format("weight_data_size {} is not a multiple of {} = {}", l.weight_data_size,
                          block, expect));
}

/// A key, its name and the value read.
struct KeyValue {
  int key;
  const char* name;
  int value;
};

/// Each value >= 0.
inline void require_non_negative(ParamReader& r, std::initializer_list<KeyValue> values) {
  for (const KeyValue& v : values) require_at_least(r, v.key, v.name, v.value, 0);
}

/// "path: line N: " (or "offset N: " for a binary file).
inline std::string spec_location(const ParamFile& file, const LayerSpec& spec) {
  if (spec.line > 0) return fmt::format("{}: line {}: ", file.source, spec.line);
  return fmt::format("{}: offset {}: ", file.source, spec.offset);
}

}  // namespace detail

// ---- parameterless layers -----------------------------------------------------------------------

/// Layers ncnn gives no parameters: any key is an error.
inline Status set_params(layers::Sigmoid&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::TanH&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::Swish&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::Mish&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::Split&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::Flatten&, ParamReader& r) { return r.finish(); }
inline Status set_params(layers::Noop&, ParamReader& r) { return r.finish(); }

// ---- activations --------------------------------------------------------------------------------

/// 0=slope.
inline Status set_params(layers::ReLU& l, ParamReader& r) {
  l.slope = r.get(0, l.slope);
  return r.finish();
}

/// 0=min 1=max (min <= max).
inline Status set_params(layers::Clip& l, ParamReader& r) {
  l.min = r.get(0, l.min);
  l.max = r.get(1, l.max);
  if (l.min > l.max) r.fail(1, fmt::format("max {} is below min {}", l.max, l.min));
  return r.finish();
}

/// 0=alpha.
inline Status set_params(layers::ELU& l, ParamReader& r) {
  l.alpha = r.get(0, l.alpha);
  return r.finish();
}

/// 0=fast_gelu.
inline Status set_params(layers::GELU& l, ParamReader& r) {
  l.fast_gelu = detail::read_flag(r, 0, "fast_gelu", l.fast_gelu ? 1 : 0) != 0;
  return r.finish();
}

/// 0=alpha 1=beta.
inline Status set_params(layers::HardSigmoid& l, ParamReader& r) {
  l.alpha = r.get(0, l.alpha);
  l.beta = r.get(1, l.beta);
  return r.finish();
}

/// 0=alpha 1=beta.
inline Status set_params(layers::HardSwish& l, ParamReader& r) {
  l.alpha = r.get(0, l.alpha);
  l.beta = r.get(1, l.beta);
  return r.finish();
}

/// 0=scale.
inline Status set_params(layers::Dropout& l, ParamReader& r) {
  l.scale = r.get(0, l.scale);
  return r.finish();
}

// ---- per-channel affine -------------------------------------------------------------------------

/// 0=channels (>= 1) 1=eps (>= 0).
inline Status set_params(layers::BatchNorm& l, ParamReader& r) {
  l.channels = r.get(0, l.channels);
  l.eps = r.get(1, l.eps);
  detail::require_at_least(r, 0, "channels", l.channels, 1);
  if (l.eps < 0.f) r.fail(1, fmt::format("eps must be >= 0, got {}", l.eps));
  return r.finish();
}

/// 0=scale_data_size (>= 1, or -233: the scale is a second input) 1=bias_term.
inline Status set_params(layers::Scale& l, ParamReader& r) {
  l.scale_data_size = r.get(0, l.scale_data_size);
  l.bias_term = detail::read_flag(r, 1, "bias_term", l.bias_term ? 1 : 0) != 0;
  if (l.scale_data_size != -233 && l.scale_data_size < 1)
    r.fail(0, fmt::format("scale_data_size must be >= 1, or -233 (scale from a second input), "
                          "got {}",
                          l.scale_data_size));
  return r.finish();
}

/// 0=bias_data_size (>= 1).
inline Status set_params(layers::Bias& l, ParamReader& r) {
  l.bias_data_size = r.get(0, l.bias_data_size);
  detail::require_at_least(r, 0, "bias_data_size", l.bias_data_size, 1);
  return r.finish();
}

// ---- element-wise over several blobs ------------------------------------------------------------

/// 0=op_type (0..11) 1=with_scalar 2=b. With_scalar=1 takes one input, 0 two.
inline Status set_params(layers::BinaryOp& l, ParamReader& r) {
  l.op_type = r.get(0, l.op_type);
  l.with_scalar = detail::read_flag(r, 1, "with_scalar", l.with_scalar);
  l.b = r.get(2, l.b);
  detail::require_in(r, 0, "op_type", l.op_type, 0, 11,
                     "add, sub, mul, div, max, min, pow, rsub, rdiv, rpow, atan2, ratan2");
  const std::size_t inputs = r.layer().bottoms.size();
  const std::size_t want = l.with_scalar ? 1 : 2;
  if (inputs != 0 && inputs != want)
    r.fail(1, fmt::format("with_scalar={} takes {} input(s), the layer has {}", l.with_scalar, want,
                          inputs));
  return r.finish();
}

/// 0=op_type (0 prod, 1 sum, 2 max) 1=coeffs (sum: one per input, or none).
inline Status set_params(layers::Eltwise& l, ParamReader& r) {
  l.op_type = r.get(0, l.op_type);
  detail::read_list(r, 1, "coeffs", l.coeffs, r.get_floats(1));
  detail::require_in(r, 0, "op_type", l.op_type, 0, 2, "prod, sum, max");
  const std::size_t inputs = r.layer().bottoms.size();
  if (l.op_type == 1 && !l.coeffs.empty() && inputs != 0 && l.coeffs.size() != inputs)
    r.fail(1, fmt::format("coeffs holds {} values for {} inputs", l.coeffs.size(), inputs));
  return r.finish();
}

// ---- data movement ------------------------------------------------------------------------------

/// 0=axis (-4..3).
inline Status set_params(layers::Concat& l, ParamReader& r) {
  l.axis = r.get(0, l.axis);
  detail::require_axis(r, 0, "axis", l.axis);
  return r.finish();
}

/// 0=slices (each >= 1 or -233, one per output) 1=axis 2=indices (one fewer than the outputs;
/// replaces slices).
inline Status set_params(layers::Slice& l, ParamReader& r) {
  detail::read_list(r, 0, "slices", l.slices, r.get_ints(0));
  l.axis = r.get(1, l.axis);
  detail::read_list(r, 2, "indices", l.indices, r.get_ints(2));
  detail::require_axis(r, 1, "axis", l.axis);
  const std::size_t outputs = r.layer().tops.size();
  if (!l.indices.empty()) {
    if (outputs != 0 && l.indices.size() + 1 != outputs)
      r.fail(2, fmt::format("indices holds {} values for {} outputs (needs one fewer)",
                            l.indices.size(), outputs));
  } else if (l.slices.empty()) {
    r.fail(0, "slices (or 2=indices) must be given");
  } else {
    if (outputs != 0 && l.slices.size() != outputs)
      r.fail(0, fmt::format("slices holds {} values for {} outputs", l.slices.size(), outputs));
    for (int s : l.slices)
      if (s != -233 && s < 1)
        r.fail(0, fmt::format("each slice must be >= 1 or -233 (an even share), got {}", s));
  }
  return r.finish();
}

/// 0=w 1=h 11=d 2=c: each > 0, 0 (keep), -1 (infer) or -233 (drop); 3=permute must be 0.
inline Status set_params(layers::Reshape& l, ParamReader& r) {
  l.w = r.get(0, l.w);
  l.h = r.get(1, l.h);
  l.d = r.get(11, l.d);
  l.c = r.get(2, l.c);
  detail::require_off(r, 3, "permute", "reshape in h-w-c order");
  const std::pair<int, int> keys[4] = {{0, l.w}, {1, l.h}, {11, l.d}, {2, l.c}};
  static constexpr const char* kName[4] = {"w", "h", "d", "c"};
  int inferred = 0;
  for (int i = 0; i < 4; ++i) {
    const int v = keys[i].second;
    if (v < -1 && v != layers::Reshape::kDrop)
      r.fail(keys[i].first, fmt::format("{} must be > 0, 0 (keep), -1 (infer) or -233 (drop), "
                                        "got {}",
                                        kName[i], v));
    if (v == -1 && ++inferred > 1) r.fail(keys[i].first, "at most one extent can be -1 (inferred)");
  }
  if (l.w == layers::Reshape::kDrop) r.fail(0, "w must be given (-233 leaves no output shape)");
  return r.finish();
}

/// 0=order_type (0..23).
inline Status set_params(layers::Permute& l, ParamReader& r) {
  l.order_type = r.get(0, l.order_type);
  detail::require_in(r, 0, "order_type", l.order_type, 0, 23, "ncnn's axis orders");
  return r.finish();
}

/// 0=group (>= 1) 1=reverse.
inline Status set_params(layers::ShuffleChannel& l, ParamReader& r) {
  l.group = r.get(0, l.group);
  l.reverse = detail::read_flag(r, 1, "reverse", l.reverse);
  detail::require_at_least(r, 0, "group", l.group, 1);
  return r.finish();
}

/// 0=top 1=bottom 2=left 3=right 4=type 5=value 6=per_channel_pad_data_size 7=front 8=behind.
inline Status set_params(layers::Padding& l, ParamReader& r) {
  l.top = r.get(0, l.top);
  l.bottom = r.get(1, l.bottom);
  l.left = r.get(2, l.left);
  l.right = r.get(3, l.right);
  l.type = r.get(4, l.type);
  l.value = r.get(5, l.value);
  l.per_channel_pad_data_size = r.get(6, l.per_channel_pad_data_size);
  l.front = r.get(7, l.front);
  l.behind = r.get(8, l.behind);
  if (l.top == -233 || l.top == -234)
    r.fail(0, fmt::format("top={} selects ncnn's two-blob form (pads from a second input), which "
                          "is not supported",
                          l.top));
  detail::require_non_negative(r, {{0, "top", l.top},
                                   {1, "bottom", l.bottom},
                                   {2, "left", l.left},
                                   {3, "right", l.right},
                                   {7, "front", l.front},
                                   {8, "behind", l.behind}});
  detail::require_in(r, 4, "type", l.type, 0, 2, "constant, replicate, reflect");
  detail::require_at_least(r, 6, "per_channel_pad_data_size", l.per_channel_pad_data_size, 0);
  return r.finish();
}

/// Offsets 0,1,13,2 and 6,7,15,8 (>= 0); sizes 3,4,14,5 (>= 0, or -233); or numpy-style
/// 9=starts 10=ends 11=axes.
inline Status set_params(layers::Crop& l, ParamReader& r) {
  l.woffset = r.get(0, l.woffset);
  l.hoffset = r.get(1, l.hoffset);
  l.doffset = r.get(13, l.doffset);
  l.coffset = r.get(2, l.coffset);
  l.outw = r.get(3, l.outw);
  l.outh = r.get(4, l.outh);
  l.outd = r.get(14, l.outd);
  l.outc = r.get(5, l.outc);
  l.woffset2 = r.get(6, l.woffset2);
  l.hoffset2 = r.get(7, l.hoffset2);
  l.doffset2 = r.get(15, l.doffset2);
  l.coffset2 = r.get(8, l.coffset2);
  detail::read_list(r, 9, "starts", l.starts, r.get_ints(9));
  detail::read_list(r, 10, "ends", l.ends, r.get_ints(10));
  detail::read_list(r, 11, "axes", l.axes, r.get_ints(11));
  detail::require_non_negative(r, {{0, "woffset", l.woffset},
                                   {1, "hoffset", l.hoffset},
                                   {13, "doffset", l.doffset},
                                   {2, "coffset", l.coffset},
                                   {6, "woffset2", l.woffset2},
                                   {7, "hoffset2", l.hoffset2},
                                   {15, "doffset2", l.doffset2},
                                   {8, "coffset2", l.coffset2}});
  const std::pair<int, int> outs[4] = {{3, l.outw}, {4, l.outh}, {14, l.outd}, {5, l.outc}};
  for (auto [key, v] : outs)
    if (v < 0 && v != -233)
      r.fail(key, fmt::format("out size must be >= 0 or -233 (to the end), got {}", v));
  if (l.starts.size() != l.ends.size())
    r.fail(10, fmt::format("ends holds {} values for {} starts", l.ends.size(), l.starts.size()));
  if (l.starts.size() > 4) r.fail(9, fmt::format("at most 4 starts, got {}", l.starts.size()));
  if (!l.axes.empty() && l.axes.size() != l.starts.size())
    r.fail(11, fmt::format("axes holds {} values for {} starts", l.axes.size(), l.starts.size()));
  for (int a : l.axes) detail::require_axis(r, 11, "each of axes", a);
  return r.finish();
}

// ---- softmax, pooling ---------------------------------------------------------------------------

/// 0=axis (-4..3) 1=fixbug0: ncnn refuses axis != 0 without fixbug0=1 (files from before its
/// 3-D axis fix), and so does this.
inline Status set_params(layers::Softmax& l, ParamReader& r) {
  l.axis = r.get(0, l.axis);
  const int fixbug0 = detail::read_flag(r, 1, "fixbug0", 0);
  detail::require_axis(r, 0, "axis", l.axis);
  if (fixbug0 == 0 && l.axis != 0)
    r.fail(1, fmt::format("axis={} without 1=1 (fixbug0): the file predates ncnn's softmax axis "
                          "fix, regenerate it",
                          l.axis));
  return r.finish();
}

/// 0=pooling_type 1=kernel_w 2=stride_w 3=pad_left 4=global_pooling 5=pad_mode
/// 6=avgpool_count_include_pad 7=adaptive_pooling 8=out_w 11..15 the _h/pad keys 18=out_h.
inline Status set_params(layers::Pooling& l, ParamReader& r) {
  using layers::detail::resolve;
  l.pooling_type = r.get(0, l.pooling_type);
  l.kernel_w = r.get(1, l.kernel_w);
  l.stride_w = r.get(2, l.stride_w);
  l.pad_left = r.get(3, l.pad_left);
  l.global_pooling = detail::read_flag(r, 4, "global_pooling", l.global_pooling);
  l.pad_mode = r.get(5, l.pad_mode);
  l.avgpool_count_include_pad =
      detail::read_flag(r, 6, "avgpool_count_include_pad", l.avgpool_count_include_pad);
  l.adaptive_pooling = detail::read_flag(r, 7, "adaptive_pooling", l.adaptive_pooling);
  l.out_w = r.get(8, l.out_w);
  l.kernel_h = detail::read_same_as(r, 11, "kernel_h", l.kernel_h);
  l.stride_h = detail::read_same_as(r, 12, "stride_h", l.stride_h);
  l.pad_top = detail::read_same_as(r, 13, "pad_top", l.pad_top);
  l.pad_right = detail::read_same_as(r, 14, "pad_right", l.pad_right);
  l.pad_bottom = detail::read_same_as(r, 15, "pad_bottom", l.pad_bottom);
  l.out_h = detail::read_same_as(r, 18, "out_h", l.out_h);

  detail::require_in(r, 0, "pooling_type", l.pooling_type, 0, 1, "max, average");
  detail::require_in(r, 5, "pad_mode", l.pad_mode, 0, 3, "full, valid, SAME_UPPER, SAME_LOWER");
  if (l.adaptive_pooling && !l.global_pooling) {
    const int oh = resolve(l.out_h, l.out_w);
    if (l.out_w < 1 && l.out_w != -233)
      r.fail(8, fmt::format("out_w must be >= 1 or -233 (the input's), got {}", l.out_w));
    if (oh < 1 && oh != -233)
      r.fail(18, fmt::format("out_h must be >= 1 or -233 (the input's), got {}", oh));
  } else if (!l.global_pooling) {
    // The window matters only when neither global nor adaptive pooling picks it.
    detail::require_at_least(r, 1, "kernel_w", l.kernel_w, 1);
    detail::require_at_least(r, 11, "kernel_h", resolve(l.kernel_h, l.kernel_w), 1);
    detail::require_at_least(r, 2, "stride_w", l.stride_w, 1);
    detail::require_at_least(r, 12, "stride_h", resolve(l.stride_h, l.stride_w), 1);
    const int top = resolve(l.pad_top, l.pad_left);
    detail::require_non_negative(r, {{3, "pad_left", l.pad_left},
                                     {14, "pad_right", resolve(l.pad_right, l.pad_left)},
                                     {13, "pad_top", top},
                                     {15, "pad_bottom", resolve(l.pad_bottom, top)}});
  }
  return r.finish();
}

// ---- normalization, resizing, reduction, constants ----------------------------------------------

/// 0=region_type (0 across channels, 1 within channel) 1=local_size (>= 1) 2=alpha 3=beta 4=bias.
inline Status set_params(layers::LRN& l, ParamReader& r) {
  l.region_type = r.get(0, l.region_type);
  l.local_size = r.get(1, l.local_size);
  l.alpha = r.get(2, l.alpha);
  l.beta = r.get(3, l.beta);
  l.bias = r.get(4, l.bias);
  detail::require_in(r, 0, "region_type", l.region_type, 0, 1, "across channels, within channel");
  detail::require_at_least(r, 1, "local_size", l.local_size, 1);
  return r.finish();
}

/// 0=resize_type (1 nearest, 2 bilinear, 3 bicubic) 1=height_scale 2=width_scale (> 0 when the
/// output size is not given) 3=output_height 4=output_width (>= 0) 5=dynamic_target_size (must be
/// 0) 6=align_corner.
inline Status set_params(layers::Interp& l, ParamReader& r) {
  l.resize_type = r.get(0, l.resize_type);
  l.height_scale = r.get(1, l.height_scale);
  l.width_scale = r.get(2, l.width_scale);
  l.output_height = r.get(3, l.output_height);
  l.output_width = r.get(4, l.output_width);
  l.dynamic_target_size = r.get(5, l.dynamic_target_size);
  l.align_corner = detail::read_flag(r, 6, "align_corner", l.align_corner);
  // ncnn's default 0 selects no interpolation (its forward leaves the output unwritten).
  detail::require_in(r, 0, "resize_type", l.resize_type, 1, 3, "nearest, bilinear, bicubic");
  detail::require_non_negative(
      r, {{3, "output_height", l.output_height}, {4, "output_width", l.output_width}});
  if (l.output_height == 0 || l.output_width == 0) {
    if (!(l.height_scale > 0.f))
      r.fail(1, fmt::format("height_scale must be > 0, got {}", l.height_scale));
    if (!(l.width_scale > 0.f))
      r.fail(2, fmt::format("width_scale must be > 0, got {}", l.width_scale));
  }
  if (l.dynamic_target_size != 0)
    r.fail(5, fmt::format("dynamic_target_size={} (the size from a second input) is not "
                          "supported, only 0",
                          l.dynamic_target_size));
  return r.finish();
}

/// 0=operation (0..10) 1=reduce_all 2=coeff 3=axes (-4..3 each) 4=keepdims 5=fixbug0: as ncnn,
/// axes with fixbug0=0 (an old converter's numbering) are refused.
inline Status set_params(layers::Reduction& l, ParamReader& r) {
  l.operation = r.get(0, l.operation);
  l.reduce_all = detail::read_flag(r, 1, "reduce_all", l.reduce_all);
  l.coeff = r.get(2, l.coeff);
  detail::read_list(r, 3, "axes", l.axes, r.get_ints(3));
  l.keepdims = detail::read_flag(r, 4, "keepdims", l.keepdims);
  l.fixbug0 = detail::read_flag(r, 5, "fixbug0", l.fixbug0);
  detail::require_in(r, 0, "operation", l.operation, 0, 10,
                     "sum, asum, sumsq, mean, max, min, prod, l1, l2, logsum, logsumexp");
  if (l.axes.size() > 4) r.fail(3, fmt::format("at most 4 axes, got {}", l.axes.size()));
  for (std::size_t i = 0; i < l.axes.size(); ++i) {
    detail::require_axis(r, 3, "each of axes", l.axes[i]);
    for (std::size_t j = 0; j < i; ++j)
      if (l.axes[i] == l.axes[j]) r.fail(3, fmt::format("axis {} is listed twice", l.axes[i]));
  }
  if (!l.axes.empty() && l.fixbug0 == 0)
    r.fail(5,
           "axes without 5=1 (fixbug0): the file predates ncnn's reduction axes fix, "
           "regenerate it");
  return r.finish();
}

/// 0=w 1=h 11=d 2=c (>= 0; as ncnn counts dims: d given 4-D, else c 3-D, else h 2-D, else 1-D,
/// the extents below the highest given >= 1) 21=load_type (0 tagged, 1 raw f32).
inline Status set_params(layers::MemoryData& l, ParamReader& r) {
  l.w = r.get(0, l.w);
  l.h = r.get(1, l.h);
  l.d = r.get(11, l.d);
  l.c = r.get(2, l.c);
  l.load_type = r.get(21, l.load_type);
  detail::require_non_negative(r, {{0, "w", l.w}, {1, "h", l.h}, {11, "d", l.d}, {2, "c", l.c}});
  if (l.d != 0 && l.c == 0) r.fail(11, "d needs c (2=c) as well");
  if ((l.h != 0 || l.d != 0 || l.c != 0) && l.w == 0)
    r.fail(0, "w must be >= 1 when h, d or c is given");
  if ((l.d != 0 || l.c != 0) && l.h == 0) r.fail(1, "h must be >= 1 when d or c is given");
  detail::require_in(r, 21, "load_type", l.load_type, 0, 1, "tagged, raw f32");
  return r.finish();
}

// ---- weighted layers ----------------------------------------------------------------------------

/// ncnn's Convolution keys (0..6, 8..16, 18, 19): see detail::read_conv.
inline Status set_params(layers::Convolution& l, ParamReader& r) {
  detail::read_conv(l, r);
  detail::check_weight_count(r, l, l.num_output, "kernel_w * kernel_h * num_output");
  return r.finish();
}

/// Convolution's keys plus 7=group (>= 1, dividing num_output and the input channels).
inline Status set_params(layers::ConvolutionDepthWise& l, ParamReader& r) {
  detail::read_conv(l, r);
  l.group = r.get(7, l.group);
  detail::require_at_least(r, 7, "group", l.group, 1);
  if (l.group >= 1 && l.num_output >= 1) {
    if (l.num_output % l.group != 0)
      r.fail(7, fmt::format("group {} does not divide num_output {}", l.group, l.num_output));
    detail::check_weight_count(r, l, l.num_output / l.group,
                               "kernel_w * kernel_h * num_output / group");
    if (l.num_input() > 0 && l.num_input() % l.group != 0)
      r.fail(7, fmt::format("group {} does not divide the {} input channels weight_data_size "
                            "implies",
                            l.group, l.num_input()));
  }
  return r.finish();
}

/// ncnn's Deconvolution keys (0..6, 9..16, 18..21, 28): see detail::read_deconv.
inline Status set_params(layers::Deconvolution& l, ParamReader& r) {
  detail::read_deconv(l, r);
  detail::check_weight_count(r, l, l.num_output, "kernel_w * kernel_h * num_output");
  return r.finish();
}

/// Deconvolution's keys plus 7=group (>= 1, dividing num_output).
inline Status set_params(layers::DeconvolutionDepthWise& l, ParamReader& r) {
  detail::read_deconv(l, r);
  l.group = r.get(7, l.group);
  detail::require_at_least(r, 7, "group", l.group, 1);
  if (l.group >= 1 && l.num_output >= 1 && l.num_output % l.group != 0)
    r.fail(7, fmt::format("group {} does not divide num_output {}", l.group, l.num_output));
  // weight_data_size = maxk * (channels / group) * num_output.
  detail::check_weight_count(r, l, l.num_output, "kernel_w * kernel_h * num_output");
  return r.finish();
}

/// 0=num_output 1=bias_term 2=weight_data_size (a multiple of num_output) 8=int8_scale_term
/// (must be 0) 9=activation_type 10=activation_params.
inline Status set_params(layers::InnerProduct& l, ParamReader& r) {
  l.num_output = r.get(0, l.num_output);
  l.bias_term = detail::read_flag(r, 1, "bias_term", l.bias_term);
  l.weight_data_size = r.get(2, l.weight_data_size);
  l.int8_scale_term = r.get(8, l.int8_scale_term);
  l.activation = detail::read_activation(r);
  detail::require_at_least(r, 0, "num_output", l.num_output, 1);
  detail::require_at_least(r, 2, "weight_data_size", l.weight_data_size, 1);
  if (l.num_output >= 1 && l.weight_data_size >= 1 && l.weight_data_size % l.num_output != 0)
    r.fail(2, fmt::format("weight_data_size {} is not a multiple of num_output {}",
                          l.weight_data_size, l.num_output));
  if (l.int8_scale_term != 0)
    r.fail(8, fmt::format("int8_scale_term={} (int8 weights) is not supported, only 0",
                          l.int8_scale_term));
  return r.finish();
}

// ---- the type list ------------------------------------------------------------------------------

/// An entry of the type table: layer type L, named `name` in .param files.
template <class L>
struct NcnnLayerEntry {
  using type = L;
  std::string_view name;
};

namespace detail {
/// The layer type of a table entry (given as decltype of a reference to it).
template <class Entry>
using entry_layer = typename std::remove_cvref_t<Entry>::type;
}  // namespace detail

/// Every layer type a .param file can name, as (ncnn type name, infer layer type), the common
/// ones first (visit_ncnn_layer compares them in this order).
inline constexpr std::tuple kNcnnLayerTable{
    NcnnLayerEntry<layers::Convolution>{"Convolution"},
    NcnnLayerEntry<layers::ConvolutionDepthWise>{"ConvolutionDepthWise"},
    NcnnLayerEntry<layers::ReLU>{"ReLU"},
    NcnnLayerEntry<layers::Split>{"Split"},
    NcnnLayerEntry<layers::BinaryOp>{"BinaryOp"},
    NcnnLayerEntry<layers::Eltwise>{"Eltwise"},
    NcnnLayerEntry<layers::Pooling>{"Pooling"},
    NcnnLayerEntry<layers::InnerProduct>{"InnerProduct"},
    NcnnLayerEntry<layers::Concat>{"Concat"},
    NcnnLayerEntry<layers::Swish>{"Swish"},
    NcnnLayerEntry<layers::HardSwish>{"HardSwish"},
    NcnnLayerEntry<layers::HardSigmoid>{"HardSigmoid"},
    NcnnLayerEntry<layers::Slice>{"Slice"},
    NcnnLayerEntry<layers::ShuffleChannel>{"ShuffleChannel"},
    NcnnLayerEntry<layers::Softmax>{"Softmax"},
    NcnnLayerEntry<layers::Reshape>{"Reshape"},
    NcnnLayerEntry<layers::BatchNorm>{"BatchNorm"},
    NcnnLayerEntry<layers::Scale>{"Scale"},
    NcnnLayerEntry<layers::Bias>{"Bias"},
    NcnnLayerEntry<layers::Clip>{"Clip"},
    NcnnLayerEntry<layers::Sigmoid>{"Sigmoid"},
    NcnnLayerEntry<layers::TanH>{"TanH"},
    NcnnLayerEntry<layers::Mish>{"Mish"},
    NcnnLayerEntry<layers::ELU>{"ELU"},
    NcnnLayerEntry<layers::GELU>{"GELU"},
    NcnnLayerEntry<layers::Flatten>{"Flatten"},
    NcnnLayerEntry<layers::Permute>{"Permute"},
    NcnnLayerEntry<layers::Padding>{"Padding"},
    NcnnLayerEntry<layers::Crop>{"Crop"},
    NcnnLayerEntry<layers::Dropout>{"Dropout"},
    NcnnLayerEntry<layers::Noop>{"Noop"},
    NcnnLayerEntry<layers::LRN>{"LRN"},
    NcnnLayerEntry<layers::Interp>{"Interp"},
    NcnnLayerEntry<layers::Reduction>{"Reduction"},
    NcnnLayerEntry<layers::MemoryData>{"MemoryData"},
    NcnnLayerEntry<layers::Deconvolution>{"Deconvolution"},
    NcnnLayerEntry<layers::DeconvolutionDepthWise>{"DeconvolutionDepthWise"},
};

/// The ncnn type name of layer type L; empty when the table does not hold L.
template <class L>
inline constexpr std::string_view ncnn_type_name = std::apply(
    [](const auto&... entry) {
      std::string_view name;
      ((std::is_same_v<detail::entry_layer<decltype(entry)>, L> && (name = entry.name, true)) ||
       ...);
      return name;
    },
    kNcnnLayerTable);

namespace detail {

inline constexpr auto kNcnnNames =
    std::apply([](const auto&... entry) { return std::array{entry.name...}; }, kNcnnLayerTable);

constexpr bool names_ok() {
  for (std::size_t i = 0; i < kNcnnNames.size(); ++i) {
    if (kNcnnNames[i].empty() || kNcnnNames[i] == "Input") return false;
    for (std::size_t j = 0; j < i; ++j)
      if (kNcnnNames[i] == kNcnnNames[j]) return false;
  }
  return true;
}
static_assert(names_ok(), "kNcnnLayerTable: each name once, none empty, no Input");

/// Builds L from the spec and hands it to f. A layer that reads its own keys
/// (`Status load_param(ParamReader&)`, as user layers do: one file per layer) is built by it;
/// the others by their set_params overload here.
template <class L, class F>
Status build_and_visit(const ParamFile& file, const LayerSpec& spec, F& f) {
  L layer{};
  ParamReader r(file, spec);
  if constexpr (requires { { layer.load_param(r) } -> std::same_as<Status>; }) {
    Status s = layer.load_param(r);
    if (!s.ok()) r.fail(s.message());
    INFER_TRY(r.finish());
  } else {
    INFER_TRY(set_params(layer, r));
  }
  return f(layer);
}

template <class F>
Status visit(const ParamFile& file, const LayerSpec& spec, F& f) {
  Status result;
  const bool found = std::apply(
      [&](const auto&... entry) {
        return ((spec.type == entry.name &&
                 (result = build_and_visit<entry_layer<decltype(entry)>>(file, spec, f), true)) ||
                ...);
      },
      kNcnnLayerTable);
  if (found) return result;
  if (spec.type == "Input")
    return make_error(
        "{}layer Input '{}': Input is not a layer here; the network loader makes it "
        "a graph input (io::input_shape reads its shape)",
        spec_location(file, spec), spec.name);
  // Joined by hand: fmt::join's formatter trips GCC 12's -Wstringop-overflow at -O3.
  std::string names;
  for (std::string_view n : kNcnnNames) names.append(names.empty() ? "" : ", ").append(n);
  return make_error("{}layer '{}': type '{}' is not supported (supported types: {})",
                    spec_location(file, spec), spec.name, spec.type, names);
}

}  // namespace detail

/// Whether visit_ncnn_layer builds layers of ncnn type `type` ("Input" is not one).
inline bool is_supported_ncnn_type(std::string_view type) {
  for (std::string_view n : detail::kNcnnNames)
    if (n == type) return true;
  return false;
}

/// The ncnn type names visit_ncnn_layer builds.
inline std::vector<std::string_view> supported_ncnn_types() {
  return {detail::kNcnnNames.begin(), detail::kNcnnNames.end()};
}

/// Builds the layer `spec` describes (its type picked by spec.type, its fields by set_params) and
/// returns f(layer), f getting the concrete layer as an lvalue (a generic lambda; instantiated
/// once per layer type). An unsupported type, "Input", or a bad parameter gives an Error naming
/// file, line, layer and key, and f is not called.
template <class F>
Status visit_ncnn_layer(const ParamFile& file, const LayerSpec& spec, F&& f) {
  return detail::visit(file, spec, f);
}

/// The blob shape an Input line declares: 0=w 1=h 11=d 2=c, as ncnn's MemoryData counts dims
/// (d given: 4-D; else c: 3-D; else h: 2-D; else w: 1-D). No key at all: the -23330 shape hint
/// when the line has one, else Shape{} (dims 0: the shape comes with the input at run time).
inline Result<Shape> input_shape(const ParamFile& file, const LayerSpec& spec) {
  if (spec.type != "Input")
    return make_error("{}layer {} '{}': not an Input layer", detail::spec_location(file, spec),
                      spec.type, spec.name);
  ParamReader r(file, spec);
  const int w = r.get(0, 0), h = r.get(1, 0), d = r.get(11, 0), c = r.get(2, 0);
  detail::require_at_least(r, 0, "w", w, 0);
  detail::require_at_least(r, 1, "h", h, 0);
  detail::require_at_least(r, 11, "d", d, 0);
  detail::require_at_least(r, 2, "c", c, 0);
  if (d != 0 && c == 0) r.fail(11, "d needs c (2=c) as well");
  // Every extent below the highest one given must be given too (0 would be an empty blob).
  if ((h != 0 || d != 0 || c != 0) && w == 0) r.fail(0, "w must be >= 1 when h, d or c is given");
  if ((d != 0 || c != 0) && h == 0) r.fail(1, "h must be >= 1 when d or c is given");
  Shape s;
  if (d != 0) {
    s = Shape::of(w, h, d, c);
  } else if (c != 0) {
    s = Shape::of(w, h, c);
  } else if (h != 0) {
    s = Shape::of(w, h);
  } else if (w != 0) {
    s = Shape::of(w);
  } else if (spec.params.is_array(30)) {
    // ncnn's shape hint: dims, then w, h, (d,) c.
    const std::vector<ParamValue>& hint = spec.params.entry(30).array;
    const int dims = hint.empty() ? 0 : hint[0].i;
    if (dims < 1 || dims > 4 || hint.size() < std::size_t(dims) + 1) {
      r.fail(30, "the shape hint (-23330) is not dims followed by that many extents");
    } else {
      int e[4] = {1, 1, 1, 1};
      for (int i = 0; i < dims; ++i) {
        e[i] = hint[std::size_t(i) + 1].i;
        if (e[i] < 1) r.fail(30, fmt::format("shape hint extent {} must be >= 1", e[i]));
      }
      s = dims == 1   ? Shape::of(e[0])
          : dims == 2 ? Shape::of(e[0], e[1])
          : dims == 3 ? Shape::of(e[0], e[1], e[2])
                      : Shape::of(e[0], e[1], e[2], e[3]);
    }
  }
  INFER_TRY(r.finish());
  return s;
}

}  // namespace infer::io
