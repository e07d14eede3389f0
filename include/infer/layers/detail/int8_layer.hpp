// What the quantized forms of Convolution, ConvolutionDepthWise and InnerProduct share (ncnn's
// 8=int8_scale_term): the scales read after the weights and bias, the weights quantized at
// prepare (or taken as stored when the .bin tags them int8), the epilogue's per-channel factors,
// and the input quantized by the bottom scale where it does not arrive as int8 already.
//
// ncnn's rules: weights q_w = float2int8(w x weight scale), one scale per output channel
// (Convolution, InnerProduct) or group (ConvolutionDepthWise; term 2/102: one for all); input
// q_x = float2int8(x x bottom scale); out = sum(q_w q_x) / (bottom scale x weight scale) + bias
// (0 where a weight scale is 0), then the activation; with a term above 100 the output is
// requantized, float2int8(out x top scale), for the next int8 layer.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <infer/convert.hpp>
#include <infer/element.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/amx.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/kernels/int8_stem.hpp>
#include <infer/kernels/int8_winograd.hpp>
#include <infer/kernels/int8_winograd43.hpp>
#include <infer/kernels/int8_winograd43_wrap.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>
#include <span>
#include <vector>

namespace infer::layers::detail {

/// The int8 state of one quantized layer.
struct Int8Part {
  /// ncnn's weight_data_int8_scales: one per output channel, or per group (expanded from one
  /// where the term says so).
  std::vector<float> weight_scales{};
  float bottom_scale = 0.f;  ///< ncnn's bottom_blob_int8_scales[0]
  float top_scale = 0.f;     ///< ncnn's top_blob_int8_scales[0] (term > 100), else 0
  /// The composer's requantization of a float output (term below 100; graph/requantize.hpp):
  /// the scale the output is written at instead, as int8 (top_scale then holds it too), or 0.
  float requant_scale = 0.f;
  /// weight_data holds int8 values as stored (an int8-tagged .bin buffer): used as they are.
  bool weights_are_int8 = false;

  // ---- prepared (prepare()) ----
  kernels::int8::PackedWeights packed{};  ///< GEMM layout (Convolution, grouped, InnerProduct)
  /// Winograd F(2x2, 3x3) layout (Convolution 3x3 stride 1, prepare() says when); else empty.
  kernels::int8::winograd::Weights wino{};
  /// Winograd F(4x4, 3x3) layout, in place of wino where prepare() chose it; else empty.
  kernels::int8::winograd43::Weights43 wino43{};
  /// Winograd F(4x4, 3x3) on VNNI (int32 sums modulo 2^32), where prepare() chose it; else empty.
  kernels::int8::winograd43_wrap::Weights wino43_wrap{};
  std::vector<float> dw_weights{};        ///< depthwise layout [c / pack][maxk][pack]
  std::vector<float> scale_in{}, bias{};  ///< epilogue factors by slot
  std::vector<std::int32_t> zero_comp{};  ///< the depthwise epilogue's (no compensation)
  int prepared_pack = 0;                  ///< the depthwise layout's pack; 1 for the GEMM
  /// A few unpacked input channels (a 3-channel stem) padded to this many (a multiple of 4,
  /// zero weights) and read at pack 4, four channels of a pixel at once; 0 otherwise.
  int padded_channels = 0;
  /// A pack-1 input of at most 4 channels (a network's first layer) on VNNI runs
  /// kernels::int8::stem on `packed` (4 channels a tap) instead of the GEMM (prepare() says when).
  bool stem_vnni = false;
  /// A pack-1 input of at most kernels::gemm::kStemMaxChannels channels (a network's first layer)
  /// into a packed output: kernels::gemm::convolution_stem's weights (the int8 values as floats,
  /// pack_weights<1>) and its epilogue's scale and bias (pack_bias's padding); else empty.
  std::vector<float> stem_weights{}, stem_scale{}, stem_bias{};
};

/// Whether a layer of int8_scale_term `term` writes int8: the term requantizes, or the composer
/// asked it to (Int8Part::requant_scale).
constexpr bool int8_requantizes(const Int8Part& q, int term) {
  return term > 100 || q.requant_scale > 0.f;
}

/// Sets the composer's requantization of a float output (term below 100) to `scale`; 0 undoes it.
/// A term above 100 keeps its own top scale.
constexpr void set_int8_requant(Int8Part& q, int term, float scale) {
  if (term > 100) return;
  q.requant_scale = scale;
  q.top_scale = scale;
}

/// Reads the scales that follow the weights (and bias) in ncnn's order: `weight_count` weight
/// scales (expanded to `expand_to` when 1 is read for several), the bottom scale, and the top scale
/// when `term` > 100.
inline Status load_int8_scales(io::ModelBin& mb, int term, int weight_count, int expand_to,
                               const char* who, Int8Part& q) {
  auto w = mb.load(std::size_t(weight_count), io::WeightType::raw_f32);
  if (!w.ok()) return make_error("{}: weight_data_int8_scales: {}", who, w.message());
  q.weight_scales = std::move(w).value();
  if (weight_count == 1 && expand_to > 1)
    q.weight_scales.assign(std::size_t(expand_to), q.weight_scales[0]);
  auto b = mb.load(1, io::WeightType::raw_f32);
  if (!b.ok()) return make_error("{}: bottom_blob_int8_scales: {}", who, b.message());
  q.bottom_scale = b.value()[0];
  q.top_scale = 0.f;
  if (term > 100) {
    auto t = mb.load(1, io::WeightType::raw_f32);
    if (!t.ok()) return make_error("{}: top_blob_int8_scales: {}", who, t.message());
    q.top_scale = t.value()[0];
  }
  return {};
}

/// Checks the scales a layer of `num_output` channels holds: the counts, and every scale finite
/// and not negative (a requantizing layer's top scale above 0).
inline Status check_int8_scales(const Int8Part& q, int term, std::size_t weight_count,
                                const char* who) {
  if (q.weight_scales.size() != weight_count)
    return make_error("{}: {} weight scales, int8_scale_term {} needs {}", who,
                      q.weight_scales.size(), term, weight_count);
  for (std::size_t i = 0; i < q.weight_scales.size(); ++i)
    if (!(q.weight_scales[i] >= 0.f) || !std::isfinite(q.weight_scales[i]))
      return make_error("{}: weight scale {} is {}, expected a finite value >= 0", who, i,
                        q.weight_scales[i]);
  if (!(q.bottom_scale > 0.f) || !std::isfinite(q.bottom_scale))
    return make_error("{}: bottom blob scale {}, expected a finite value > 0", who, q.bottom_scale);
  if (term > 100 && (!(q.top_scale > 0.f) || !std::isfinite(q.top_scale)))
    return make_error("{}: top blob scale {} (int8_scale_term {}), expected a finite value > 0",
                      who, q.top_scale, term);
  return {};
}

/// The int8 weights: as stored when they arrived int8, else float2int8(w x scale) with one scale
/// per weight_scales.size()-th of the weights (ncnn's order: output channel, or group, outermost).
inline std::vector<std::int8_t> quantized_weights(std::span<const float> w, const Int8Part& q) {
  std::vector<std::int8_t> out(w.size());
  const std::size_t per = w.size() / q.weight_scales.size();
  for (std::size_t i = 0; i < w.size(); ++i)
    out[i] = q.weights_are_int8 ? std::int8_t(w[i]) : float2int8(w[i] * q.weight_scales[i / per]);
  return out;
}

/// The epilogue factors for `groups` groups of m output channels laid out m_pad apart: scale_in
/// and bias of output channel g * m + i at slot g * m_pad + i (0 in the padding).
inline void fill_epilogue(Int8Part& q, int num_output, int groups, int m, int m_pad,
                          std::span<const float> bias) {
  q.scale_in.assign(std::size_t(groups) * std::size_t(m_pad), 0.f);
  q.bias.assign(q.scale_in.size(), 0.f);
  const std::size_t scales = q.weight_scales.size();
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < m; ++i) {
      const int oc = g * m + i;
      const float ws = q.weight_scales[std::size_t(oc) * scales / std::size_t(num_output)];
      const std::size_t slot = std::size_t(g) * std::size_t(m_pad) + std::size_t(i);
      q.scale_in[slot] = ws == 0.f ? 0.f : 1.f / (q.bottom_scale * ws);
      q.bias[slot] = bias.empty() ? 0.f : bias[std::size_t(oc)];
    }
}

/// `bottom` as int8: itself when it is int8, else quantized by the bottom scale into workspace
/// memory (float types through f32).
inline Result<Mat> int8_input(const Mat& bottom, const Int8Part& q, const Option& opt,
                              const char* who) {
  if (bottom.type() == ElemType::i8) return bottom;
  Option ws = opt;  // the quantized copy is the layer's temporary
  ws.blob_allocator = opt.workspace_alloc();
  Mat f32 = bottom, out;
  if (bottom.type() != ElemType::f32) INFER_TRY(cast(bottom, f32, ElemType::f32, ws));
  const float scale[1] = {q.bottom_scale};
  const Status s = cast(f32, out, ElemType::i8, ws, scale);
  if (!s.ok())
    return make_error("{}: quantizing input {}: {}", who, bottom.describe(), s.message());
  return out;
}

/// The pack a quantized layer writes `shape` (of `type`) at: the pack of `top` where it already
/// holds that shape and type (a plan's buffer, at the widest pack the channels allow), else
/// pack_for(channels, in_pack).
inline int int8_out_pack(const Mat& top, const Shape& shape, ElemType type, int in_pack) {
  if (!top.empty() && top.shape() == shape && top.type() == type) {
    const int p = top.elempack();
    if ((p == 1 || p == 4 || p == 8 || p == 16) && shape.c % p == 0) return p;
  }
  return pack_for(shape.c, in_pack);
}

/// `in` (int8, pack 1, c channels) as `channels` (a multiple of 4, >= c) channels at pack 4, the
/// added ones 0, in workspace memory.
inline Result<Mat> int8_pad_channels(const Mat& in, int channels, const Option& opt) {
  const Shape s = in.shape();
  Mat out;
  INFER_TRY(out.create(Shape::of(s.w, s.h, channels), ElemType::i8, 4, opt.workspace_alloc()));
  const std::size_t plane = std::size_t(s.w) * std::size_t(s.h);
  for (int g = 0; g < channels / 4; ++g) {
    auto* dst = static_cast<std::int8_t*>(out.channel_data(g));
    for (int l = 0; l < 4; ++l) {
      const int c = g * 4 + l;
      const auto* src = c < s.c ? static_cast<const std::int8_t*>(in.channel_data(c)) : nullptr;
      for (std::size_t i = 0; i < plane; ++i) dst[i * 4 + std::size_t(l)] = src ? src[i] : 0;
    }
  }
  return out;
}

/// The epilogue view of a prepared part (`comp`: the GEMM's compensation, or zeros), with a fused
/// residual sum's other input (f32, the output's shape and pack; may be null).
inline kernels::int8::Epilogue epilogue_of(const Int8Part& q, const std::int32_t* comp,
                                           const Mat* residual = nullptr) {
  return {q.scale_in.data(),
          q.bias.data(),
          comp,
          q.top_scale,
          residual ? static_cast<const float*>(residual->data()) : nullptr,
          residual ? residual->cstep() * std::size_t(residual->elempack()) : 0};
}

/// int8::pack_weights for the GEMM (groups of m outputs over cin inputs x maxk taps), laid out for
/// AMX tiles (kernels/amx.hpp: tdpbusd, 16 pixels x 64 k x 16 channels an instruction) where the
/// build and CPU have them, Option::use_amx holds and K = cin x maxk fills a tile row (64 k); with
/// less the tile's zero padding costs more than VNNI (measured on an Intel Xeon with AMX: a
/// grouped 1x1 of 8 channels per group 1.5x slower on the tiles, a 3-channel stem 1.8x).
inline kernels::int8::PackedWeights pack_gemm_weights(const std::int8_t* q, int groups, int m,
                                                      int cin, int maxk, const Option& opt) {
  const bool amx =
      kernels::amx::kInt8Available && opt.use_amx && cin * maxk >= 64 && kernels::amx::usable();
  kernels::int8::PackedWeights p =
      kernels::int8::pack_weights(q, groups, m, cin, maxk, amx ? 64 : 16);
  p.amx = amx;
  return p;
}

/// The int8 GEMM of a prepared Convolution or grouped ConvolutionDepthWise: `src` (int8 at
/// InPack) into `top` (created by the caller: f32, or i8 when `requantize`) at its pack, with the
/// panel workspace from the workspace allocator.
template <int InPack, class Act>
Status run_int8_gemm(const MatView<i8, InPack>& src, Mat& top, const Int8Part& q,
                     const kernels::int8::ConvWindow& win, bool requantize, const Act& act,
                     const Option& opt, const Mat* residual = nullptr) {
  const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
  // The threads' panels and the groups' gather tables (the kernels write them there: nothing is
  // allocated per forward once the workspace allocator holds a block this size).
  const int cin = q.packed.k / (win.g.kernel_w * win.g.kernel_h);
  const std::size_t bytes =
      q.packed.amx ? kernels::amx::conv_gemm_int8_workspace_bytes<InPack>(q.packed, cin, threads)
                   : kernels::int8::conv_gemm_workspace_bytes<InPack>(q.packed, cin, threads);
  Mat workspace;
  INFER_TRY(workspace.create(Shape::of(int(bytes)), ElemType::i8, 1, opt.workspace_alloc()));
  const kernels::int8::Epilogue e = epilogue_of(q, q.packed.comp.data(), residual);
  auto* ws = static_cast<std::uint8_t*>(workspace.data());
  with_pack<16>(top.elempack(), [&](auto op) {
    constexpr int OutPack = decltype(op)::value;
    if constexpr (kernels::amx::kInt8Available) {
      if (q.packed.amx) {
        if (requantize)
          kernels::amx::conv_gemm_int8<i8, InPack, OutPack>(src, top.view<i8, OutPack>(), q.packed,
                                                            win, e, act, ws, threads);
        else
          kernels::amx::conv_gemm_int8<float, InPack, OutPack>(src, top.view<float, OutPack>(),
                                                               q.packed, win, e, act, ws, threads);
        return;
      }
    }
    if (requantize)
      kernels::int8::conv_gemm<i8, InPack, OutPack>(src, top.view<i8, OutPack>(), q.packed, win, e,
                                                    act, ws, threads);
    else
      kernels::int8::conv_gemm<float, InPack, OutPack>(src, top.view<float, OutPack>(), q.packed,
                                                       win, e, act, ws, threads);
  });
  return {};
}

/// The VNNI stem kernel of a prepared Convolution (q.stem_vnni): `src` (pack 1, at most 4
/// channels) laid out once as padded words, then kernels::int8::stem::conv_stem on the GEMM's
/// weights and epilogue; as run_int8_gemm, with the words from the workspace allocator.
template <class Act>
Status run_int8_stem(const MatView<i8, 1>& src, Mat& top, const Int8Part& q,
                     const kernels::int8::ConvWindow& win, bool requantize, const Act& act,
                     const Option& opt, const Mat* residual = nullptr) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  namespace st = kernels::int8::stem;
  const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
  Mat words;
  INFER_TRY(words.create(Shape::of(int(st::input_bytes(win))), ElemType::i8, 1,
                         opt.workspace_alloc()));
  auto* w = static_cast<std::uint32_t*>(words.data());
  st::layout_input(src, win, w);
  const kernels::int8::Epilogue e = epilogue_of(q, q.packed.comp.data(), residual);
  with_pack<16>(top.elempack(), [&](auto op) {
    constexpr int OutPack = decltype(op)::value;
    if (requantize)
      st::conv_stem<i8, OutPack>(w, top.view<i8, OutPack>(), q.packed, win, e, act, threads);
    else
      st::conv_stem<float, OutPack>(w, top.view<float, OutPack>(), q.packed, win, e, act,
                                    threads);
  });
  return {};
#else
  (void)src, (void)top, (void)q, (void)win, (void)requantize, (void)act, (void)opt, (void)residual;
  return make_error("Convolution: the int8 stem kernel needs AVX-512 VNNI (prepare() chose it)");
#endif
}

/// The int8 Winograd convolution of a prepared Convolution: F(4x4, 3x3) on VNNI's int32 sums
/// (int8.wino43_wrap) or on int64 sums (int8.wino43) where prepare() laid the weights out for it,
/// else F(2x2, 3x3) (int8.wino); as run_int8_gemm, with its workspace from the workspace
/// allocator.
template <int InPack, class Act>
Status run_int8_wino(const MatView<i8, InPack>& src, Mat& top, const Int8Part& q,
                     const kernels::int8::ConvWindow& win, bool requantize, const Act& act,
                     const Option& opt, const Mat* residual = nullptr) {
  namespace wg = kernels::int8::winograd;
  namespace w43 = kernels::int8::winograd43;
  const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
  // One tile or the other: the weights, the workspace for the output's tiles, and the kernel.
  auto run = [&](const auto& weights, std::size_t workspace_bytes, auto&& conv) -> Status {
    Mat workspace;
    INFER_TRY(workspace.create(Shape::of(int(workspace_bytes * std::size_t(threads))), ElemType::i8,
                               1, opt.workspace_alloc()));
    const kernels::int8::Epilogue e = epilogue_of(q, weights.zero.data(), residual);
    auto* ws = static_cast<std::uint8_t*>(workspace.data());
    with_pack<16>(top.elempack(), [&](auto op) {
      constexpr int OutPack = decltype(op)::value;
      if (requantize)
        conv(top.view<i8, OutPack>(), e, ws);
      else
        conv(top.view<float, OutPack>(), e, ws);
    });
    return {};
  };
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  if (!q.wino43_wrap.u.empty()) {
    // F(4x4) on int32 sums where the weights keep them exact for this input (kernels/
    // int8_winograd43_wrap.hpp); weights exact only for non-negative inputs take the GEMM on an
    // input with a negative value.
    if (q.wino43_wrap.nonnegative_only &&
        !(win.pad >= 0 && kernels::int8::detail::no_negative(src)))
      return run_int8_gemm(src, top, q, win, requantize, act, opt, residual);
    namespace w43w = kernels::int8::winograd43_wrap;
    const int tiles = ((win.outw + 3) / 4) * ((win.outh + 3) / 4);
    return run(q.wino43_wrap, w43w::workspace_bytes(q.wino43_wrap, tiles),
               [&](const auto& out, const kernels::int8::Epilogue& e, std::uint8_t* ws) {
                 w43w::conv_wino43_wrap(src, out, q.wino43_wrap, win.pad_left, win.pad_top,
                                        win.pad, win.outw, win.outh, e, act, ws, threads);
               });
  }
#endif
  if (!q.wino43.u.empty()) {
    const int tiles = ((win.outw + 3) / 4) * ((win.outh + 3) / 4);
    return run(q.wino43, w43::workspace_bytes(q.wino43, tiles),
               [&](const auto& out, const kernels::int8::Epilogue& e, std::uint8_t* ws) {
                 w43::conv_wino43(src, out, q.wino43, win.pad_left, win.pad_top, win.pad, win.outw,
                                  win.outh, e, act, ws, threads);
               });
  }
  const int tiles = ((win.outw + 1) / 2) * ((win.outh + 1) / 2);
  return run(q.wino, wg::workspace_bytes(q.wino, tiles),
             [&](const auto& out, const kernels::int8::Epilogue& e, std::uint8_t* ws) {
               wg::conv_wino23(src, out, q.wino, win.pad_left, win.pad_top, win.pad, win.outw,
                               win.outh, e, act, ws, threads);
             });
}

}  // namespace infer::layers::detail
