// ncnn Convolution: y = act(conv(pad(x, pad_value), weight, stride, dilation) + bias) on 3-D
// (w, h, c) blobs. The algorithm follows the shape: Winograd (kernels/winograd.hpp) for 3x3
// stride-1 convolutions with enough channels, F(4x4, 3x3) or on small output maps F(2x2, 3x3) where
// prepare() is told the input shape (algorithm()); a packed GEMM (kernels/gemm.hpp)
// reading a 1x1 stride-1 input in place and gathering every other window (1x1 stride 2, 3x3,
// dilation) chunk by chunk (im2col); the direct kernel where the GEMM's per-thread panel would be
// too large (huge num_input x kernel size) or the target has no float batch. f32/f16/bf16 storage,
// every input pack; the output pack is pack_for(num_output, pack). Arithmetic is f32, except that
// on AVX512_BF16 builds bf16 storage (and f32 with Option::bf16_arithmetic) has the GEMM and
// Winograd of packed inputs multiply in bf16 (kernels/bf16.hpp; prepare rounds the weights), on
// AMX tiles where the CPU offers them (kernels/amx.hpp: an im2col GEMM, 3x3 layers included).
// Quantized (ncnn's 8=int8_scale_term, detail/int8_layer.hpp): an int8 GEMM (kernels/int8.hpp) on
// an int8 input (a float input is quantized by the bottom scale first), its output f32
// (dequantized) or, with a term above 100, int8 requantized by the top scale; always on the CPU.
// Not supported, an Error: 1-D/2-D inputs (ncnn runs those as InnerProduct / Convolution1D-like
// cases). ncnn's 19=dynamic_weight (weights from a second blob) is not a member.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/amx.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/kernels/winograd.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/layers/detail/int8_layer.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <utility>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#endif

namespace infer::layers {

/// Parameters default as in ncnn; those ncnn defaults to another parameter hold kSameAs, so
/// `Convolution{.num_output = 16, .kernel_w = 3, .pad_left = 1, ...}` is a 3x3 convolution with
/// 1 pad on every side, as the .param keys 0=16 1=3 4=1 are.
struct Convolution {
  static constexpr std::string_view ncnn_type = "Convolution";  ///< its type in .param files
  /// Its GPU forward adds a second input (a residual of the output's shape) before the
  /// activation: the composer fuses a following sum into it on the GPU (graph/fuse.hpp).
  static constexpr bool vulkan_fuses_residual = true;
  /// Its GPU forward multiplies its input's channels by a vector (a squeeze-excitation gate the
  /// composer fused) as its GEMM kernels gather the input: inputs of at least 5 channels (fewer
  /// take conv_small_input.comp, which does not).
  static constexpr int vulkan_gate_min_channels = 5;
  /// Its GPU kernels read and write packs 1 and 4 independently: the composer gives its output
  /// the widest pack the output channels allow.
  static constexpr bool vulkan_any_out_pack = true;
  int num_output = 0;        ///< ncnn 0=num_output
  int kernel_w = 0;          ///< ncnn 1=kernel_w
  int dilation_w = 1;        ///< ncnn 2=dilation_w
  int stride_w = 1;          ///< ncnn 3=stride_w
  int pad_left = 0;          ///< ncnn 4=pad_left; kPadSameUpper/-Lower (-233/-234): SAME
  int bias_term = 0;         ///< ncnn 5=bias_term
  int weight_data_size = 0;  ///< ncnn 6=weight_data_size
  /// ncnn 8=int8_scale_term: 0 float; else quantized, its scales in `int8`; above 100 the output
  /// is requantized to int8.
  int int8_scale_term = 0;
  ActivationParam activation{};  ///< ncnn 9=activation_type, 10=activation_params
  int kernel_h = kSameAs;        ///< ncnn 11=kernel_h; kSameAs: kernel_w
  int dilation_h = kSameAs;      ///< ncnn 12=dilation_h; kSameAs: dilation_w
  int stride_h = kSameAs;        ///< ncnn 13=stride_h; kSameAs: stride_w
  int pad_top = kSameAs;         ///< ncnn 14=pad_top; kSameAs: pad_left
  int pad_right = kSameAs;       ///< ncnn 15=pad_right; kSameAs: pad_left
  int pad_bottom = kSameAs;      ///< ncnn 16=pad_bottom; kSameAs: pad_top
  float pad_value = 0.f;         ///< ncnn 18=pad_value
  /// [num_output][num_input][kernel_h][kernel_w], weight_data_size values (load() or the caller).
  std::vector<float> weight_data{};
  /// [num_output] when bias_term (load() or the caller).
  std::vector<float> bias_data{};
  /// weight_data in the layout of the kernel prepared_algo names, for input pack prepared_pack
  /// (prepare()); Winograd's transformed weights take 4x the floats (F(2x2): 1.78x).
  std::vector<float> weight_packed{};
  /// bias_data, or zeros without bias_term; padded to whole GEMM blocks for the GEMM and Winograd
  /// (prepare()).
  std::vector<float> bias_packed{};
  /// weight_packed rounded to bf16 pairs (kernels/bf16.hpp) where prepare chose bf16 arithmetic
  /// (detail::bf16_arithmetic) for the GEMM or Winograd; weight_packed is then empty.
  std::vector<bf16> weight_bf16{};
  /// weight_bf16 holds the AMX GEMM's weights (kernels/amx.hpp: gemm::pack_weights' blocks in
  /// pairs, K padded to whole tiles), which a Winograd layer's forward then runs too (prepare():
  /// bf16 arithmetic, Option::use_amx and amx::usable()).
  bool weight_amx = false;
  int prepared_pack = 0;  ///< the input pack weight_packed is laid out for; 0: not prepared
  /// The quantized form's scales (load() or the caller: one weight scale per output channel) and
  /// prepared weights.
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

  /// Input channels the weights imply: weight_data_size / (kernel_w * kernel_h * num_output).
  constexpr int num_input() const {
    const detail::Window2D win = detail::conv_window(*this);
    const std::int64_t per_input = std::int64_t(win.kernel_w) * win.kernel_h * num_output;
    return per_input > 0 ? int(weight_data_size / per_input) : 0;
  }

  /// The kernels forward can run; which one is algorithm()'s choice.
  enum class Algorithm {
    direct,    ///< kernels/convolution.hpp: any window, no float batch needed
    gemm,      ///< kernels/gemm.hpp: in place (1x1 s1) or im2col
    winograd,  ///< kernels/winograd.hpp: F(4x4, 3x3), 3x3 stride 1 dilation 1 only
    int8,      ///< kernels/int8.hpp: the quantized layer's int8 GEMM
    /// kernels/winograd.hpp: F(2x2, 3x3), where Winograd runs on an output map of at most
    /// kWinogradSmallPixels (algorithm(pack, in)).
    winograd_small,
  };
  /// The algorithm weight_packed (weight_bf16) is laid out for: algorithm(prepared_pack, in) of
  /// the shape prepare() was given.
  Algorithm prepared_algo = Algorithm::direct;

  /// Winograd's tile: F(kWinogradOut x kWinogradOut, 3 x 3). The kernel has F(6x6) too, which
  /// does 1.78 multiplications per output against F(4x4)'s 2.25, but measured (AVX-512, f32
  /// pack 16, 1 thread, best of 3) F(4x4) is as fast or faster on the 3x3 s1 layers of ResNet-50
  /// and VGG-16 but vgg16 c128_112 (F(6x6) 5.3 ms against 6.7): its 36 positions take 4x the
  /// weights (F(6x6): 7.1x), which stream from memory on the 256/512-channel layers (c256_14:
  /// 0.43 ms against 0.96, c512_14: 3.0 against 6.3), and its 4x4 tiles waste less of the small
  /// maps (c512_7: 1.3 against 2.1). One variant keeps the layer's instantiations down.
  static constexpr int kWinogradOut = 4;
  /// Whether an int8 first layer runs the float stem kernel (prepare()): without VNNI.
  static constexpr bool kUsesInt8Stem = !kernels::int8::kVnni;
  /// The tile of Algorithm::winograd_small: F(2x2, 3x3) (see kWinogradSmallPixels).
  static constexpr int kWinogradSmallOut = 2;

  /// Output maps at least this wide and high take the int8 Winograd F(4x4, 3x3) instead of
  /// F(2x2, 3x3) (prepare()): its 36 positions' weights are 2.25x F(2x2)'s, used by fewer tiles
  /// on a small map.
  static constexpr int kInt8Wino43Pixels = 16;
  /// ... and at least this many input channels: its output transform runs on int64 sums (the
  /// exactness argument of kernels/int8_winograd43.hpp), a fixed cost per tile and output channel
  /// that fewer channels' products do not repay (squeezenet_int8's 16- and 32-channel 3x3
  /// layers ran slower on it than on F(2x2); Zen 3, 1 thread).
  static constexpr int kInt8Wino43Channels = 64;
  /// With VNNI: 3x3 stride-1 layers whose output map is known to be at least this wide and high,
  /// of at least this many input channels, take the int8 Winograd F(4x4, 3x3) on int32 sums
  /// (kernels/int8_winograd43_wrap.hpp) where the weights keep its sums exact; the GEMM
  /// elsewhere. Measured against the VNNI GEMM (Zen 4, 1 thread, per-step minimum): resnet18_int8
  /// 56x56x64 0.46 ms against 0.78, 28x28x128 0.46-0.53 against 0.64; vgg16_int8 28x28x512 6.7
  /// against 8.6; but 14x14x256 0.69 against 0.60 (a 14x14 map is 16 tiles of 4x4: 31% of the
  /// products on pixels past the edge, and the weights, 8x the int8 layer's, stream per forward).
  static constexpr int kInt8WrapPixels = 16;
  static constexpr int kInt8WrapChannels = 16;

  /// The kernel forward runs for input pack `pack`, decided by the parameters alone, so prepare()
  /// lays out the weights for the one kernel that will read them.
  ///
  /// Winograd for 3x3 stride 1 dilation 1 with num_input >= 16 and num_output >= 16 on packed
  /// inputs (pack 4/8/16 of a native batch; pack 1 stays on the GEMM). Measured (AVX-512, 1
  /// thread, f32 pack 16, pad 1, best of 3) against the im2col GEMM: 1.2x faster on resnet50
  /// c512_7 and 1.5x on vgg16 c512_14 (small maps of many channels, where the 4x larger weights
  /// stream from memory), 2.6-3.5x on the other 3x3 s1 layers of ResNet-50 and VGG-16, 2.9x on
  /// 16 -> 16 channels at 56x56 (the GEMM's K = 144 is short there). Fewer channels were not
  /// measured; spatial size does not enter (prepare() does not know it) and no measured map
  /// (7x7 up) made the GEMM faster.
  constexpr Algorithm algorithm(int pack) const {
    if (quantized()) return Algorithm::int8;
    if (uses_winograd(pack)) return Algorithm::winograd;
    return uses_gemm() ? Algorithm::gemm : Algorithm::direct;
  }

  /// Output maps of at most this many pixels take Winograd F(2x2, 3x3) instead of F(4x4, 3x3).
  /// F(2x2)'s weights are 16 positions against 36, and on a small map each transformed weight is
  /// used by few tiles: F(4x4) streams 2.25x the bytes per product there (512 x 512 channels: 37.7
  /// MB against 16.8 a layer, beyond L2 and, in a network, L3), and its 4x4 tiles waste more of
  /// an odd map. Measured (this project's AVX-512 VM, f32 pack 16, kernels alone with the weights
  /// cycled through 1.2 GB of copies as a network streams them, best of 3 x copies, F(4x4) against
  /// F(2x2) ms): 1 thread, 512 -> 512 at 7x7 3.64 / 2.57, at 10x10 5.66 / 3.34, at 14x14 6.70 /
  /// 4.51; 256 at 7x7 0.95 / 0.65, at 14x14 1.51 / 1.20; 128 at 14x14 0.37 / 0.30; 64 at 7x7
  /// 0.057 / 0.038; at 20x20 a tie (256: 1.95 / 1.87; 2 threads 1.09 / 1.27); at 28x28 and up
  /// F(4x4) wins (128: 0.99 / 1.26, 256 -> 512: 5.6 / 7.9; 2 threads 128: 0.54 / 0.58). 2
  /// threads, 512 at 7x7 2.32 / 1.44, at 14x14 3.68 / 2.48.
  static constexpr int kWinogradSmallPixels = 16 * 16;

  /// algorithm(pack) for an input of shape `in`: Winograd F(2x2, 3x3) (winograd_small) where
  /// Winograd runs on an output of at most kWinogradSmallPixels pixels. An input shape the layer
  /// rejects (or dims 0: not known) keeps algorithm(pack).
  constexpr Algorithm algorithm(int pack, const Shape& in) const {
    const Algorithm a = algorithm(pack);
    if (a != Algorithm::winograd || in.dims != 3 || in.c != num_input()) return a;
    detail::WindowPlan plan;
    if (!detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this), in.w, in.h, plan)
             .ok())
      return a;
    return std::int64_t(plan.outw) * plan.outh <= kWinogradSmallPixels ? Algorithm::winograd_small
                                                                       : a;
  }

  /// The layout prepare(type, pack, opt, in) makes beyond the pack (ShapePreparedLayer).
  constexpr int layout(int pack, const Shape& in) const { return int(algorithm(pack, in)); }

  /// The algorithm forward runs at input pack `pack`: the one prepare() laid the weights out for,
  /// or algorithm(pack) where it prepared another pack (forward then reports the mismatch).
  constexpr Algorithm chosen(int pack) const {
    return prepared_pack == pack ? prepared_algo : algorithm(pack);
  }

  /// algorithm(pack) == Algorithm::winograd.
  constexpr bool uses_winograd(int pack) const {
    if (!kernels::gemm::kAvailable || pack < 4 || pack > simd::max_width) return false;
    const detail::Window2D w = detail::conv_window(*this);
    if (w.kernel_w != 3 || w.kernel_h != 3 || w.stride_w != 1 || w.stride_h != 1 ||
        w.dilation_w != 1 || w.dilation_h != 1)
      return false;
    return num_input() >= kWinogradMinChannels && num_output >= kWinogradMinChannels;
  }

  /// Whether forward runs the packed GEMM where it does not run Winograd (else the direct kernel).
  constexpr bool uses_gemm() const {
    if (!kernels::gemm::kAvailable) return false;
    // The GEMM's B panel per thread: kChunkTiles x kTileN pixels of K = num_input x maxk floats.
    constexpr std::int64_t kMaxK =
        (std::int64_t(16) << 20) /
        (std::int64_t(sizeof(float)) * kernels::gemm::kChunkTiles * kernels::gemm::kTileN);
    return std::int64_t(num_input()) * detail::conv_window(*this).maxk() <= kMaxK;
  }

  /// The input packs (a bit-or of 1, 4, 8, 16) at which, on the CPU at f32, the layer writes its
  /// output at any pack the graph planned (forward_padded follows the planned output's pack): an
  /// f32 pack-1 input (a 3-channel stem), read by the GEMM's or the direct kernel's gather
  /// whatever the output's pack, and any pack where the layer runs the GEMM, whose epilogue
  /// stores whole vectors of either pack. The composer gives such an output the pack its readers
  /// run at (the widest its channels allow after a pack-1 input), with no repack after it: an
  /// expanding 1x1 of 8 channels at pack 8 into 32 at pack 16 before a depthwise layer.
  /// Winograd and int8 layers write their input's pack.
  constexpr unsigned cpu_wide_out_packs() const {
    if (quantized()) return 0;
    unsigned packs = 1;
    for (int pack : {4, 8, 16})
      if (pack <= simd::max_width && algorithm(pack) == Algorithm::gemm) packs |= unsigned(pack);
    return packs;
  }

  /// Checks the parameters alone (static messages).
  constexpr ShapeCheck check_params() const {
    if (int8_scale_term < 0) return shape_error("int8_scale_term must be >= 0");
    if (num_output <= 0) return shape_error("num_output must be > 0");
    const detail::Window2D win = detail::conv_window(*this);
    if (ShapeCheck c = detail::check_window(win); !c.ok()) return c;
    if (std::int64_t(win.maxk()) * num_output > INT_MAX || weight_data_size <= 0 ||
        weight_data_size % (win.maxk() * num_output) != 0)
      return shape_error("weight_data_size must be kernel_w * kernel_h * num_input * num_output");
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
      return make_error("Convolution: weight_data_size {} and num_output {} must be > 0",
                        weight_data_size, num_output);
    auto w = mb.load(std::size_t(weight_data_size), io::WeightType::tagged);
    if (!w.ok()) return make_error("Convolution: weight_data: {}", w.message());
    weight_data = std::move(w).value();
    int8.weights_are_int8 = mb.last_type() == ElemType::i8;
    if (int8.weights_are_int8 && !quantized())
      return make_error("Convolution: int8 weights stored for a layer without int8_scale_term");
    bias_data.clear();
    if (bias_term) {
      auto b = mb.load(std::size_t(num_output), io::WeightType::raw_f32);
      if (!b.ok()) return make_error("Convolution: bias_data: {}", b.message());
      bias_data = std::move(b).value();
    }
    if (quantized())
      INFER_TRY(detail::load_int8_scales(mb, int8_scale_term, num_output, num_output, "Convolution",
                                         int8));
    prepared_pack = 0;
    return {};
  }

  /// Lays the weights out for input pack `pack` (output pack pack_for(num_output, pack)) and the
  /// kernel algorithm(pack, in) picks for input shape `in` (dims 0, not known: algorithm(pack));
  /// forward runs that kernel on whatever shape it is given. The GEMM and Winograd weights are
  /// rounded to bf16 pairs where `type` and `opt` ask for bf16 arithmetic
  /// (detail::bf16_arithmetic); else they stay f32 for every storage type.
  Status prepare(ElemType type, int pack, const Option& opt, const Shape& in = {}) {
    INFER_TRY(check_weights());
    prepared_pack = 0;
    weight_bf16.clear();
    weight_amx = false;
    // A pack-1 input (a 3-channel stem) keeps f32 arithmetic: its cost is the value-by-value
    // gather, not the products (measured on an Intel Xeon with AVX512_BF16: resnet50's conv1 2.1
    // ms in f32, 8.0 ms through the bf16 pair gather).
    const bool bf16_arith =
        pack > 1 && detail::bf16_arithmetic(type, opt, kernels::bf16dot::kAvailable);
    // The f32 layout of `blocks` GEMM blocks of K = k, rounded to bf16 pairs.
    auto round_to_bf16 = [&](std::size_t blocks, std::size_t k) {
      if (!bf16_arith) return;
      weight_bf16.resize(kernels::bf16dot::pairs_size(blocks, k));
      kernels::bf16dot::to_pairs(weight_packed.data(), blocks, k, weight_bf16.data());
      weight_packed = {};
    };
    if (pack != 1 && pack != 4 && pack != 8 && pack != 16)
      return make_error("Convolution: pack must be 1, 4, 8 or 16, got {}", pack);
    const int cin = num_input();
    if (cin % pack != 0)
      return make_error(
          "Convolution: pack {} does not divide the {} input channels weight_data_size {} "
          "implies",
          pack, cin, weight_data_size);
    const int maxk = detail::conv_window(*this).maxk();
    if (quantized()) {
      INFER_TRY(
          detail::check_int8_scales(int8, int8_scale_term, std::size_t(num_output), "Convolution"));
      std::vector<std::int8_t> q = detail::quantized_weights(weight_data, int8);
      // A stem of a few unpacked channels (3 of an image): padded to a multiple of 4 with zero
      // weights, so that its gather reads four channels of a pixel at once.
      int8.padded_channels = pack == 1 && cin % 4 != 0 && cin < 16 ? (cin + 3) / 4 * 4 : 0;
      if (int8.padded_channels) {
        const int c4 = int8.padded_channels;
        std::vector<std::int8_t> padded(std::size_t(num_output) * std::size_t(c4 * maxk), 0);
        for (int o = 0; o < num_output; ++o)
          for (int c = 0; c < cin; ++c)
            for (int k = 0; k < maxk; ++k)
              padded[(std::size_t(o) * std::size_t(c4) + std::size_t(c)) * std::size_t(maxk) +
                     std::size_t(k)] =
                  q[(std::size_t(o) * std::size_t(cin) + std::size_t(c)) * std::size_t(maxk) +
                    std::size_t(k)];
        q = std::move(padded);
      }
      int8.packed = detail::pack_gemm_weights(
          q.data(), 1, num_output, int8.padded_channels ? int8.padded_channels : cin, maxk, opt);
      detail::fill_epilogue(int8, num_output, 1, num_output, int8.packed.m_pad, bias_data);
      // A first layer (a pack-1 input of at most 4 channels) on VNNI: kernels::int8::stem, the
      // GEMM's weights and sums without its gather (one 4-byte value a tap and pixel, bounds
      // tested, which cost such a layer more than its products: README, "int8 stem on VNNI").
      // Where the GEMM runs on AMX tiles (K of 64 and more) it stays there.
      int8.stem_vnni = kernels::int8::stem::kAvailable && pack == 1 &&
                       cin <= kernels::int8::stem::kMaxChannels && !int8.packed.amx;
      // A first layer (a few unpacked channels into a packed output), without VNNI: the float
      // stem kernel on the integer values, exact (its sums stay below 2^24) and without the GEMM's
      // gather, which cost a 3 -> 64 channel 3x3 stride-2 layer at 113x113 three times the stem's
      // time on AVX2 (README). With VNNI (or AMX tiles) the int8 products are 4x the FMA's per
      // instruction, and the stem is not measured against them: the GEMM stays.
      int8.stem_weights = {};
      int8.stem_scale = {};
      int8.stem_bias = {};
      if (kUsesInt8Stem && pack == 1 && cin <= kernels::gemm::kStemMaxChannels &&
          cin * maxk <= kernels::gemm::kStemMaxTaps) {
        const std::vector<std::int8_t> q8 = detail::quantized_weights(weight_data, int8);
        const std::vector<float> qf(q8.begin(), q8.end());
        int8.stem_weights.resize(kernels::gemm::weights_size(num_output, cin * maxk));
        kernels::gemm::pack_weights<1>(qf.data(), int8.stem_weights.data(), cin, num_output, maxk);
        int8.stem_scale.resize(kernels::gemm::bias_size(num_output));
        int8.stem_bias.resize(kernels::gemm::bias_size(num_output));
        kernels::gemm::pack_bias(int8.scale_in.data(), int8.stem_scale.data(), num_output);
        kernels::gemm::pack_bias(int8.bias.data(), int8.stem_bias.data(), num_output);
      }
      // 3x3 stride 1 of at least 16 channels in and out, without VNNI: Winograd F(2x2, 3x3) in
      // integers (kernels/int8_winograd.hpp; the same sums, 2.25x fewer products as int16
      // pairs), used on maps of at least 8x8 (on smaller ones the partial tiles and the weights,
      // read per tile chunk, cost more than it saves). VNNI's vpdpbusd does 64 products an
      // instruction, faster than the int16 products even at 2.25x fewer.
      const detail::Window2D win = detail::conv_window(*this);
      int8.wino = {};
      int8.wino43 = {};
      int8.wino43_wrap = {};
      // The windows either Winograd kernel takes: 3x3, stride 1, dilation 1.
      const bool wino_window = win.kernel_w == 3 && win.kernel_h == 3 && win.stride_w == 1 &&
                               win.stride_h == 1 && win.dilation_w == 1 && win.dilation_h == 1;
      // With VNNI (and no AMX tiles, whose GEMM does 16x vpdpwssd's products an instruction):
      // F(4x4, 3x3) on int32 sums where the output map is known to be at least kInt8WrapPixels
      // on a side and the weights keep the sums exact (kernels/int8_winograd43_wrap.hpp).
      if (kernels::int8::kVnni && kernels::int8::winograd43_wrap::kAvailable &&
          !int8.packed.amx && wino_window && cin >= kInt8WrapChannels && num_output >= 16 &&
          !int8.padded_channels) {
        detail::WindowPlan wplan;
        if (in.dims == 3 &&
            detail::plan_window(win, detail::conv_pads(*this), in.w, in.h, wplan).ok() &&
            wplan.outw >= kInt8WrapPixels && wplan.outh >= kInt8WrapPixels)
          int8.wino43_wrap =
              kernels::int8::winograd43_wrap::transform_weights(q.data(), num_output, cin);
      }
      if (!kernels::int8::kVnni && wino_window && cin >= 16 && num_output >= 16 &&
          cin <= kernels::int8::winograd::kMaxChannels && !int8.padded_channels) {
        // F(4x4, 3x3) (kernels/int8_winograd43.hpp: 1.78x fewer products than F(2x2)) where the
        // output map is known to be at least kInt8Wino43Pixels on a side and there are at least
        // kInt8Wino43Channels inputs; F(2x2) elsewhere and where prepare() is not told the
        // input's shape.
        detail::WindowPlan wplan;
        const bool large =
            in.dims == 3 && cin >= kInt8Wino43Channels &&
            detail::plan_window(win, detail::conv_pads(*this), in.w, in.h, wplan).ok() &&
            wplan.outw >= kInt8Wino43Pixels && wplan.outh >= kInt8Wino43Pixels;
        if (large)
          int8.wino43 = kernels::int8::winograd43::transform_weights(q.data(), num_output, cin);
        if (int8.wino43.u.empty())
          int8.wino = kernels::int8::winograd::transform_weights(q.data(), num_output, cin);
      }
      int8.prepared_pack = 1;
      prepared_pack = pack;
      prepared_algo = Algorithm::int8;
      return {};
    }
    // bf16 on AMX tiles: the im2col GEMM for Winograd's 3x3 layers too, its products 16x the
    // FMA's per instruction where Winograd saves 2.25x of them.
    if (bf16_arith && opt.use_amx && kernels::amx::usable() &&
        (uses_winograd(pack) || uses_gemm())) {
      weight_packed.resize(kernels::gemm::weights_size(num_output, cin * maxk));
      detail::with_pack<16>(pack, [&](auto in_pack) {
        kernels::gemm::pack_weights<decltype(in_pack)::value>(
            weight_data.data(), weight_packed.data(), cin, num_output, maxk);
      });
      const std::size_t blocks = kernels::gemm::bias_size(num_output) / kernels::gemm::kBlockM;
      const std::size_t k = std::size_t(cin) * std::size_t(maxk);
      weight_bf16.resize(kernels::amx::pairs_size(blocks, k));
      kernels::amx::to_pairs(weight_packed.data(), blocks, k, weight_bf16.data());
      weight_packed = {};
      weight_amx = true;
      bias_packed.resize(kernels::gemm::bias_size(num_output));
      kernels::gemm::pack_bias(bias_term ? bias_data.data() : nullptr, bias_packed.data(),
                               num_output);
      prepared_pack = pack;
      // The GEMM's layout, Winograd's layers included; named as algorithm(pack, in) names it, the
      // algorithm a static graph compiles for this shape (F(2x2) on small maps), whose forward
      // then runs the tiles (forward_float: weight_amx).
      prepared_algo = algorithm(pack, in);
      return {};
    }
    const Algorithm algo = algorithm(pack, in);
    if (algo == Algorithm::winograd || algo == Algorithm::winograd_small) {
      auto transform = [&]<int Out>(std::integral_constant<int, Out>) {
        weight_packed.resize(kernels::winograd::weights_size<Out>(num_output, cin));
        kernels::winograd::transform_weights<Out>(weight_data.data(), weight_packed.data(), cin,
                                                  num_output);
        round_to_bf16(
            std::size_t(kernels::winograd::kPositions<Out>) *
                std::size_t(kernels::gemm::bias_size(num_output) / kernels::gemm::kBlockM),
            std::size_t(cin));
      };
      if (algo == Algorithm::winograd)
        transform(std::integral_constant<int, kWinogradOut>{});
      else
        transform(std::integral_constant<int, kWinogradSmallOut>{});
      bias_packed.resize(kernels::gemm::bias_size(num_output));
      kernels::gemm::pack_bias(bias_term ? bias_data.data() : nullptr, bias_packed.data(),
                               num_output);
      prepared_pack = pack;
      prepared_algo = algo;
      return {};
    }
    if (uses_gemm()) {
      weight_packed.resize(kernels::gemm::weights_size(num_output, cin * maxk));
      bias_packed.resize(kernels::gemm::bias_size(num_output));
      detail::with_pack<16>(pack, [&](auto in_pack) {
        kernels::gemm::pack_weights<decltype(in_pack)::value>(
            weight_data.data(), weight_packed.data(), cin, num_output, maxk);
      });
      round_to_bf16(kernels::gemm::bias_size(num_output) / kernels::gemm::kBlockM,
                    std::size_t(cin) * std::size_t(maxk));
      kernels::gemm::pack_bias(bias_term ? bias_data.data() : nullptr, bias_packed.data(),
                               num_output);
      prepared_pack = pack;
      prepared_algo = Algorithm::gemm;
      return {};
    }
    weight_packed.resize(weight_data.size());
    detail::with_pack<16>(pack, [&](auto in_pack) {
      detail::with_pack<decltype(in_pack)::value>(pack_for(num_output, pack), [&](auto out_pack) {
        kernels::convolution_direct_weights<decltype(in_pack)::value, decltype(out_pack)::value>(
            weight_data.data(), weight_packed.data(), cin, num_output, maxk);
      });
    });
    bias_packed = bias_term ? bias_data : std::vector<float>(std::size_t(num_output), 0.f);
    prepared_pack = pack;
    prepared_algo = Algorithm::direct;
    return {};
  }

  /// Folds a following y = x * a[p] + b[p] per output channel into the weights and bias (sets
  /// bias_term). Not past a fused activation, which does not commute with it.
  Status fold_affine(std::span<const float> a, std::span<const float> b) {
    INFER_TRY(check_weights());
    if (activation.type != 0)
      return make_error("Convolution: cannot fold an affine map behind activation_type {}",
                        activation.type);
    if (quantized())
      return make_error(
          "Convolution: cannot fold an affine map into int8 weights (int8_scale_term "
          "{}): their scales were chosen for the weights as stored",
          int8_scale_term);
    if (a.size() != std::size_t(num_output) || b.size() != std::size_t(num_output))
      return make_error("Convolution: fold_affine needs {} values in a and b, got {} and {}",
                        num_output, a.size(), b.size());
    const std::size_t per = weight_data.size() / std::size_t(num_output);
    if (!bias_term) bias_data.assign(std::size_t(num_output), 0.f);
    for (std::size_t p = 0; p < std::size_t(num_output); ++p) {
      for (std::size_t i = 0; i < per; ++i) weight_data[p * per + i] *= a[p];
      bias_data[p] = bias_data[p] * a[p] + b[p];
    }
    bias_term = 1;
    prepared_pack = 0;  // the laid-out copy is stale
    weight_packed.clear();
    weight_bf16.clear();
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    if (!activation.valid())
      return make_error("Convolution: activation_type {} is not one of ncnn's 0..6",
                        activation.type);
    return with_activation(
        activation, [&](const auto& a) { return forward_fused<T, Pack>(bottom, top, opt, a); });
  }
#ifdef INFER_HAS_VULKAN
  /// On the GPU: the direct convolution kernel (shaders/convolution.comp), the step's activation
  /// in its epilogue; weight_data and bias_data uploaded as they are (folded where BatchNorm or
  /// Scale were folded into them).
  Status upload_vulkan(vk::Uploader& up) const { return detail::upload_conv_weights(*this, 1, up); }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    return detail::conv_vulkan(*this, 1, in, out, step, rec, "Convolution");
  }
#endif

  /// forward with `act` applied to the accumulators in place of `activation`. Defined after the
  /// class, not inline: a small dispatcher that GCC would otherwise instantiate (and inline, all
  /// three algorithms with it) even where layers/instances.hpp declares it extern.
  template <StorageElement T, int Pack, class Act>
  Status forward_fused(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const;
  /// forward_fused with a residual sum taken in: top = act(conv(bottom) + bias + residual), where
  /// `residual` has the output's shape, type and pack (ResNet's shortcut, which the composer fuses
  /// into the convolution that produces the sum's other input: graph/fuse.hpp). Every float
  /// algorithm adds it in the kernel's epilogue, before the store; so do the int8 kernels of a
  /// quantized layer with a float output (int8_scale_term below 100: `residual` f32). Shares
  /// forward_fused's instantiation of the kernels.
  template <StorageElement T, int Pack, class Act>
  Status forward_residual(const Mat& bottom, const Mat& residual, Mat& top, const Option& opt,
                          const Act& act) const;

  /// forward_fused with the algorithm fixed while compiling, which must be algorithm(Pack): only
  /// its kernels are instantiated. A static graph knows each layer's parameters, so its steps
  /// call this (graph::run_fused_node).
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status forward_with(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    return run_with<T, Pack, Algo>(bottom, nullptr, top, opt, act);
  }
  /// forward_residual with the algorithm fixed while compiling (as forward_with).
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status forward_with_residual(const Mat& bottom, const Mat& residual, Mat& top, const Option& opt,
                               const Act& act) const {
    return run_with<T, Pack, Algo>(bottom, &residual, top, opt, act);
  }

  /// The quantized forward: `bottom` int8 (or float, quantized here by the bottom scale) at pack
  /// Pack; `top` int8_written_type() at the pack `top` already holds (a plan's buffer: the composer
  /// gives a quantized layer's output the widest pack), else at pack_for(num_output, Pack).
  /// `residual` (may be null): a fused sum's other input, f32 at the output's shape and pack,
  /// added before the activation (the output must then be f32: int8_scale_term below 100).
  template <int Pack, class Act>
  Status forward_int8(const Mat& bottom, Mat& top, const Option& opt, const Act& act,
                      const Mat* residual = nullptr) const {
    if (int8.prepared_pack == 0 || int8.scale_in.empty())
      return make_error("Convolution: int8 weights are not prepared (call prepare after load)");
    if (bottom.elempack() != Pack || bottom.dims() != 3)
      return make_error("Convolution: int8 input {}, expected 3-D at pack {}", bottom.describe(),
                        Pack);
    const Shape s = bottom.shape();
    if (s.c != num_input())
      return make_error("Convolution: input {} has {} channels, weight_data_size {} implies {}",
                        bottom.describe(), s.c, weight_data_size, num_input());
    detail::WindowPlan plan;
    const ShapeCheck c =
        detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this), s.w, s.h, plan);
    if (!c.ok()) return make_error("Convolution: input {}: {}", bottom.describe(), c.error);
    auto in = detail::int8_input(bottom, int8, opt, "Convolution");
    if (!in.ok()) return in.error();
    const Shape out_shape = Shape::of(plan.outw, plan.outh, num_output);
    const int out_pack = detail::int8_out_pack(top, out_shape, int8_written_type(), Pack);
    if (residual && int8_written_type() != ElemType::f32)
      return make_error(
          "Convolution: a residual sum is fused only into a quantized layer with a float output "
          "(int8_scale_term {} requantizes)",
          int8_scale_term);
    INFER_TRY(top.create(out_shape, int8_written_type(), out_pack, opt.blob_alloc()));
    INFER_TRY(detail::check_residual(residual, top, "Convolution"));
    const detail::Window2D w = detail::conv_window(*this);
    const kernels::int8::ConvWindow win{
        {w.kernel_w, w.kernel_h, w.dilation_w, w.dilation_h, w.stride_w, w.stride_h},
        plan.pads.left,
        plan.pads.top,
        plan.outw,
        plan.outh,
        float2int8(pad_value * int8.bottom_scale)};
    const bool requantize = detail::int8_requantizes(int8, int8_scale_term);
    if constexpr (Pack == 1) {
      if (int8.stem_vnni)
        return detail::run_int8_stem(in.value().template view<i8, 1>(), top, int8, win,
                                     requantize, act, opt, residual);
      if (!int8.stem_weights.empty() && out_pack > 1) {
        // Widened to f32 with the pad (a quantized value): the stem's inner loop then broadcasts
        // floats from memory as the float stem does rather than converting each byte (which took
        // an int8 3 -> 64 channel layer at 113x113 to 1.6x the float layer's time).
        auto padded = detail::pad_input<i8, 1, float>(in.value(), plan.pads, float(win.pad), opt);
        if (!padded.ok()) return make_error("Convolution: padding: {}", padded.message());
        const kernels::ConvGeometry g{w.kernel_w,   w.kernel_h, w.dilation_w,
                                      w.dilation_h, w.stride_w, w.stride_h};
        const kernels::gemm::StemEpilogue e{int8.stem_bias.data(), int8.stem_scale.data(),
                                            int8.top_scale};
        const MatView<float, 1> src = padded.value().template view<float, 1>();
        const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
        detail::with_pack<16>(out_pack, [&](auto op) {
          constexpr int OutPack = decltype(op)::value;
          if constexpr (OutPack > 1) {
            if (requantize)
              kernels::gemm::convolution_stem<float, i8, OutPack>(
                  src, top.view<i8, OutPack>(), int8.stem_weights.data(), e, g, act, threads);
            else
              kernels::gemm::convolution_stem<float, float, OutPack>(
                  src, top.view<float, OutPack>(), int8.stem_weights.data(), e, g, act, threads,
                  residual ? residual->view<float, OutPack>() : MatView<float, OutPack>{});
          }
        });
        return {};
      }
    }
    if (Pack == 1 && int8.padded_channels) {
      auto padded = detail::int8_pad_channels(in.value(), int8.padded_channels, opt);
      if (!padded.ok()) return padded.error();
      return detail::run_int8_gemm(padded.value().template view<i8, 4>(), top, int8, win,
                                   requantize, act, opt, residual);
    }
    if ((!int8.wino.u.empty() && plan.outw >= 8 && plan.outh >= 8) || !int8.wino43.u.empty() ||
        !int8.wino43_wrap.u.empty())
      return detail::run_int8_wino(in.value().template view<i8, Pack>(), top, int8, win, requantize,
                                   act, opt, residual);
    return detail::run_int8_gemm(in.value().template view<i8, Pack>(), top, int8, win, requantize,
                                 act, opt, residual);
  }

 private:
  /// forward_with, a residual (may be null) added before the activation.
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status run_with(const Mat& bottom, const Mat* residual, Mat& top, const Option& opt,
                  const Act& act) const {
    if constexpr (Algo == Algorithm::int8 && !std::same_as<T, i8>) {
      // A float input to the quantized layer: the int8 instance quantizes it, so that a program
      // compiles the int8 kernels once (in forward_fused<i8>), not once per float type.
      if (!quantized() || algorithm(Pack) != Algo)
        return make_error("Convolution: forward_with algorithm {} at pack {}, the layer chooses {}",
                          int(Algo), Pack, int(algorithm(Pack)));
      return dispatch<i8, Pack>(bottom, residual, top, opt, act);
    } else if constexpr (Algo == Algorithm::int8 || std::same_as<T, i8>) {
      if (!quantized())
        return make_error("Convolution: an int8 input needs int8_scale_term (got {})",
                          bottom.describe());
      if (algorithm(Pack) != Algo)
        return make_error("Convolution: forward_with algorithm {} at pack {}, the layer chooses {}",
                          int(Algo), Pack, int(algorithm(Pack)));
      return forward_int8<Pack>(bottom, top, opt, act, residual);
    } else {
      if (chosen(Pack) != Algo)
        return make_error(
            "Convolution: forward_with algorithm {} at pack {}, the layer is prepared for {}",
            int(Algo), Pack, int(chosen(Pack)));
      return forward_float<T, Pack, Algo>(bottom, residual, top, opt, act);
    }
  }

  /// forward_fused and forward_residual: the algorithm chosen at run time.
  template <StorageElement T, int Pack, class Act>
  Status dispatch(const Mat& bottom, const Mat* residual, Mat& top, const Option& opt,
                  const Act& act) const;

  /// forward_with for the float algorithms.
  template <StorageElement T, int Pack, Algorithm Algo, class Act>
  Status forward_float(const Mat& bottom, const Mat* residual, Mat& top, const Option& opt,
                       const Act& act) const {
    detail::WindowPlan plan;
    INFER_TRY(check_input<T, Pack>(bottom, plan));
    constexpr Algorithm algo = Algo;
    constexpr bool gemm = algo == Algorithm::gemm;
    const int maxk = detail::conv_window(*this).maxk();
    constexpr bool wino = algo == Algorithm::winograd || algo == Algorithm::winograd_small;
    constexpr int wino_out = algo == Algorithm::winograd_small ? kWinogradSmallOut : kWinogradOut;
    const std::size_t weights_want =
        wino   ? kernels::winograd::weights_size<wino_out>(num_output, num_input())
        : gemm ? kernels::gemm::weights_size(num_output, num_input() * maxk)
               : std::size_t(weight_data_size);
    // bf16 weights (prepare chose bf16 arithmetic): the same blocks in pairs.
    const bool bf16_weights = !weight_bf16.empty();
    const std::size_t mblocks = kernels::gemm::bias_size(num_output) / kernels::gemm::kBlockM;
    const std::size_t bf16_want =
        weight_amx ? kernels::amx::pairs_size(mblocks, std::size_t(num_input()) * maxk)
        : wino     ? weights_want
        : gemm     ? kernels::bf16dot::pairs_size(mblocks, std::size_t(num_input()) * maxk)
                   : 0;
    if (prepared_pack != Pack ||
        (bf16_weights ? weight_bf16.size() != bf16_want : weight_packed.size() != weights_want) ||
        bias_packed.size() != (algo != Algorithm::direct ? kernels::gemm::bias_size(num_output)
                                                         : std::size_t(num_output)))
      return make_error(
          "Convolution: weights are not prepared for pack {} (prepared for {}; call prepare "
          "after load)",
          Pack, prepared_pack);
    if (bf16_weights && !kBf16Storage<T>)
      return make_error(
          "Convolution: weights prepared for bf16 arithmetic, forward at {} storage (prepare with "
          "this storage type)",
          to_string(elem_type_v<T>));
    if constexpr (wino) {
      if (weight_amx) return forward_padded<T, Pack, true>(bottom, residual, top, plan, opt, act);
      if constexpr (Pack > 1 && simd::has_width<Pack>)
        return forward_winograd<T, Pack, wino_out>(bottom, residual, top, plan, opt, act);
      else
        return make_error("Convolution: Winograd needs a packed input, got pack {}", Pack);
    } else {
      return forward_padded<T, Pack, gemm>(bottom, residual, top, plan, opt, act);
    }
  }

  /// forward_with's GEMM and direct paths: on an explicitly padded copy of the input.
  template <StorageElement T, int Pack, bool Gemm, class Act>
  Status forward_padded(const Mat& bottom, const Mat* residual, Mat& top,
                        const detail::WindowPlan& plan, const Option& opt, const Act& act) const {
    const int maxk = detail::conv_window(*this).maxk();
    auto padded = detail::pad_input<T, Pack>(bottom, plan.pads, pad_value, opt);
    if (!padded.ok()) return make_error("Convolution: padding: {}", padded.message());
    // The output's pack: the input's, or at f32 after a pack-1 input or on the GEMM the one the
    // graph planned for its output (cpu_wide_out_packs), which a planned output Mat already holds.
    constexpr int kOutMax =
        std::same_as<T, f32> && (Pack == 1 || Gemm) ? std::max(Pack, simd::max_width) : Pack;
    const Shape out_shape = Shape::of(plan.outw, plan.outh, num_output);
    int out_pack = pack_for(num_output, Pack);
    if constexpr (kOutMax > Pack) {
      const int planned = top.elempack();
      if (!top.empty() && top.type() == elem_type_v<T> && top.shape() == out_shape &&
          planned <= kOutMax && (planned == 4 || planned == 8 || planned == 16))
        out_pack = planned;
    }
    INFER_TRY(top.create(out_shape, elem_type_v<T>, out_pack, opt.blob_alloc()));
    INFER_TRY(detail::check_residual(residual, top, "Convolution"));
    const detail::Window2D w = detail::conv_window(*this);
    const kernels::ConvGeometry g{w.kernel_w,   w.kernel_h, w.dilation_w,
                                  w.dilation_h, w.stride_w, w.stride_h};
    const Mat& src = padded.value();
    if constexpr (Gemm && kBf16Storage<T> && Pack > 1 && kernels::amx::kAvailable) {
      if (weight_amx) {
        const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
        const std::size_t per_thread = kernels::amx::workspace_per_thread(num_input() * maxk);
        Mat workspace;
        INFER_TRY(workspace.create(Shape::of(int(per_thread * std::size_t(threads))),
                                   ElemType::bf16, 1, opt.workspace_alloc()));
        detail::with_pack<kOutMax>(out_pack, [&](auto op) {
          constexpr int OutPack = decltype(op)::value;
          kernels::amx::convolution_gemm<T, Pack, OutPack>(
              src.view<T, Pack>(), top.view<T, OutPack>(), weight_bf16.data(), bias_packed.data(),
              g, act, workspace.data_as<bf16>(), threads,
              detail::residual_view<T, OutPack>(residual));
        });
        return {};
      }
    }
    if constexpr (Gemm && kBf16Storage<T> && Pack > 1) {
      if (!weight_bf16.empty()) {
        const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
        const std::size_t per_thread = kernels::bf16dot::workspace_per_thread(num_input() * maxk);
        Mat workspace;
        INFER_TRY(workspace.create(Shape::of(int(per_thread * std::size_t(threads))),
                                   ElemType::bf16, 1, opt.workspace_alloc()));
        detail::with_pack<kOutMax>(out_pack, [&](auto op) {
          constexpr int OutPack = decltype(op)::value;
          kernels::bf16dot::convolution_gemm<T, Pack, OutPack>(
              src.view<T, Pack>(), top.view<T, OutPack>(), weight_bf16.data(), bias_packed.data(),
              g, act, workspace.data_as<bf16>(), threads,
              detail::residual_view<T, OutPack>(residual));
        });
        return {};
      }
    }
    if constexpr (Gemm) {
      const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
      const std::size_t per_thread = kernels::gemm::workspace_per_thread(num_input() * maxk);
      Mat workspace;
      INFER_TRY(workspace.create(Shape::of(int(per_thread * std::size_t(threads))), ElemType::f32,
                                 1, opt.workspace_alloc()));
      detail::with_pack<kOutMax>(out_pack, [&](auto op) {
        constexpr int OutPack = decltype(op)::value;
        kernels::gemm::convolution_gemm<T, Pack, OutPack>(
            src.view<T, Pack>(), top.view<T, OutPack>(), weight_packed.data(), bias_packed.data(),
            g, act, static_cast<float*>(workspace.data()), threads,
            detail::residual_view<T, OutPack>(residual));
      });
      return {};
    } else {
      detail::with_pack<kOutMax>(out_pack, [&](auto op) {
        constexpr int OutPack = decltype(op)::value;
        kernels::convolution_direct<T, Pack, OutPack>(
            src.view<T, Pack>(), top.view<T, OutPack>(), weight_packed.data(), bias_packed.data(),
            g, act, opt.num_threads, detail::residual_view<T, OutPack>(residual));
      });
      return {};
    }
  }

  /// Storage types whose GEMM and Winograd paths can multiply in bf16 (prepare decides).
  template <StorageElement T>
  static constexpr bool kBf16Storage = kernels::bf16dot::kAvailable &&
                                       (std::same_as<T, f32> || std::same_as<T, bf16>);

  /// Fewest input and output channels that take Winograd (see algorithm()).
  static constexpr int kWinogradMinChannels = 16;

  /// forward_fused's Winograd path, F(Out x Out, 3 x 3): the kernel reads the unpadded input, the
  /// pads bounds-checked.
  template <StorageElement T, int Pack, int Out, class Act>
  Status forward_winograd(const Mat& bottom, const Mat* residual, Mat& top,
                          const detail::WindowPlan& plan, const Option& opt, const Act& act) const {
    const int out_pack = pack_for(num_output, Pack);
    INFER_TRY(top.create(Shape::of(plan.outw, plan.outh, num_output), elem_type_v<T>, out_pack,
                         opt.blob_alloc()));
    INFER_TRY(detail::check_residual(residual, top, "Convolution"));
    const int threads = opt.num_threads > 1 ? opt.num_threads : 1;
    const kernels::winograd::Plan wp =
        kernels::winograd::plan<Out>(plan.outw, plan.outh, num_input(), num_output, threads);
    Mat workspace;
    INFER_TRY(workspace.create(Shape::of(int(wp.workspace() * std::size_t(threads))), ElemType::f32,
                               1, opt.workspace_alloc()));
    detail::with_pack<Pack>(out_pack, [&](auto op) {
      constexpr int OutPack = decltype(op)::value;
      auto run = [&](const auto* weights) {
        kernels::winograd::convolution_winograd<T, Pack, OutPack, Out>(
            bottom.view<T, Pack>(), plan.pads.left, plan.pads.top, pad_value,
            top.view<T, OutPack>(), weights, bias_packed.data(), act,
            static_cast<float*>(workspace.data()), threads,
            detail::residual_view<T, OutPack>(residual));
      };
      if constexpr (kBf16Storage<T>) {
        if (!weight_bf16.empty()) return run(weight_bf16.data());
      }
      run(weight_packed.data());
    });
    return {};
  }

  Status check_weights() const {
    if (!activation.valid())
      return make_error("Convolution: activation_type {} is not one of ncnn's 0..6",
                        activation.type);
    if (ShapeCheck c = check_params(); !c.ok())
      return make_error("Convolution: {} (num_output {}, kernel {}x{}, weight_data_size {})",
                        c.error, num_output, kernel_w, detail::resolve(kernel_h, kernel_w),
                        weight_data_size);
    if (weight_data.size() != std::size_t(weight_data_size))
      return make_error(
          "Convolution: weight_data holds {} values, weight_data_size is {} (load "
          "the weights first)",
          weight_data.size(), weight_data_size);
    if (bias_term && bias_data.size() != std::size_t(num_output))
      return make_error("Convolution: bias_data holds {} values, expected num_output = {}",
                        bias_data.size(), num_output);
    return {};
  }

  template <StorageElement T, int Pack>
  Status check_input(const Mat& bottom, detail::WindowPlan& plan) const {
    if (!bottom.is<T, Pack>())
      return make_error("Convolution: input is {}, expected {} pack {}", bottom.describe(),
                        to_string(elem_type_v<T>), Pack);
    if (bottom.dims() != 3)
      return make_error("Convolution: input {} must be 3-D (w, h, c)", bottom.describe());
    const Shape s = bottom.shape();
    if (s.c != num_input())
      return make_error(
          "Convolution: input {} has {} channels, weight_data_size {} implies {} (= {} / ({} x "
          "{} kernel x {} outputs))",
          bottom.describe(), s.c, weight_data_size, num_input(), weight_data_size,
          detail::conv_window(*this).kernel_w, detail::conv_window(*this).kernel_h, num_output);
    const ShapeCheck c =
        detail::plan_window(detail::conv_window(*this), detail::conv_pads(*this), s.w, s.h, plan);
    if (!c.ok()) return make_error("Convolution: input {}: {}", bottom.describe(), c.error);
    return {};
  }
};

template <StorageElement T, int Pack, class Act>
Status Convolution::forward_fused(const Mat& bottom, Mat& top, const Option& opt,
                                  const Act& act) const {
  return dispatch<T, Pack>(bottom, nullptr, top, opt, act);
}

template <StorageElement T, int Pack, class Act>
Status Convolution::forward_residual(const Mat& bottom, const Mat& residual, Mat& top,
                                     const Option& opt, const Act& act) const {
  return dispatch<T, Pack>(bottom, &residual, top, opt, act);
}

template <StorageElement T, int Pack, class Act>
Status Convolution::dispatch(const Mat& bottom, const Mat* residual, Mat& top, const Option& opt,
                             const Act& act) const {
  // An int8 input has one algorithm; only a float one instantiates the float kernels.
  if constexpr (std::same_as<T, i8>)
    return run_with<T, Pack, Algorithm::int8>(bottom, residual, top, opt, act);
  switch (chosen(Pack)) {
    case Algorithm::int8:
      return run_with<T, Pack, Algorithm::int8>(bottom, residual, top, opt, act);
    case Algorithm::winograd:
      return run_with<T, Pack, Algorithm::winograd>(bottom, residual, top, opt, act);
    case Algorithm::winograd_small:
      return run_with<T, Pack, Algorithm::winograd_small>(bottom, residual, top, opt, act);
    case Algorithm::gemm:
      return run_with<T, Pack, Algorithm::gemm>(bottom, residual, top, opt, act);
    case Algorithm::direct:
      break;
  }
  return run_with<T, Pack, Algorithm::direct>(bottom, residual, top, opt, act);
}

}  // namespace infer::layers
