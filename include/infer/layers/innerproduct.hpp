// ncnn InnerProduct (fully connected): y = act(W x + b) on the input flattened to num_input =
// weight_data_size / num_output values (1-D output), or, for a 2-D input of num_input columns and
// more than one row, row by row (a 2-D output of num_output columns), as ncnn does.
// f32/f16/bf16 storage with f32 arithmetic and weights, every pack; on AVX512_BF16 builds bf16
// storage (and f32 with Option::bf16_arithmetic) has the one-sample product multiply in bf16 on
// bf16 weights (kernels/bf16.hpp). Quantized (ncnn's
// 8=int8_scale_term, detail/int8_layer.hpp): the input (int8, or float quantized by the bottom
// scale) times int8 weights on the int8 kernels (kernels/int8.hpp), dequantized to f32 with the
// bias and activation; one row (1-D or 3-D input) only, on the CPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/kernels/innerproduct.hpp>
#include <infer/kernels/int8.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/layers/detail/int8_layer.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#endif

namespace infer::layers {

struct InnerProduct {
  static constexpr std::string_view ncnn_type = "InnerProduct";  ///< its type in .param files
  int num_output = 0;          ///< ncnn 0=num_output
  int bias_term = 0;           ///< ncnn 1=bias_term
  int weight_data_size = 0;    ///< ncnn 2=weight_data_size: num_input * num_output
  /// ncnn 8=int8_scale_term: 0 float; else quantized (one weight scale per output), scales in
  /// `int8`.
  int int8_scale_term = 0;
  ActivationParam activation;  ///< ncnn 9=activation_type, 10=activation_params

  /// [num_input, num_output] innermost first: the num_input weights of output o start at
  /// o * num_input. From load() or filled directly.
  std::vector<float> weight_data{};
  std::vector<float> bias_data{};  ///< [num_output] when bias_term

  /// weight_data as the kernels stream it: [o / B][k][o % B] with B = kernels::gemv_block, the
  /// last block padded with zeros. From prepare().
  std::vector<float> packed_weight{};
  /// packed_weight as f16, for the one-sample product when prepare's Option asks for f16 weights
  /// (Option::fp16_weights); empty otherwise.
  std::vector<f16> packed_weight_f16{};
  /// weight_data as bf16 pairs (kernels::bf16dot::gemv_pack), for the one-sample product where
  /// prepare chose bf16 arithmetic (bf16 storage, or f32 with Option::bf16_arithmetic, on a build
  /// with AVX512_BF16); empty otherwise.
  std::vector<bf16> packed_weight_bf16{};
  std::vector<float> packed_bias{};  ///< bias_data padded to whole blocks; empty without bias_term
  int prepared_pack = 0;           ///< the pack prepare() was called for; 0: not prepared
  /// The quantized form's scales (load() or the caller) and prepared weights.
  detail::Int8Part int8{};

  /// Float storage; i8 for a quantized layer's int8 input (its output is f32).
  using storage = storage_list<f32, f16, bf16, i8>;
  using packs = all_packs;

  /// Whether the layer computes in int8 (int8_scale_term != 0).
  constexpr bool quantized() const { return int8_scale_term != 0; }
  /// A quantized layer's output type: f32 (ncnn's int8 InnerProduct dequantizes).
  constexpr ElemType int8_output_type() const { return ElemType::f32; }

  /// On the GPU with f16 storage it reads and writes vectors in f32 too (its products are f32
  /// sums of f16 weights): a squeeze-excitation block's vectors keep f32 between its products.
  constexpr bool vulkan_f32_vectors() const { return true; }

  /// Inputs per output: weight_data_size / num_output.
  constexpr int num_input() const { return num_output > 0 ? weight_data_size / num_output : 0; }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    if (const char* e = param_error()) return shape_error(e);
    const Shape s = in[0];
    if (s.dims == 2 && s.w == num_input() && s.h > 1) {
      out[0] = Shape::of(num_output, s.h);
      return {};
    }
    if (s.total() != std::size_t(num_input()))
      return shape_error("input size differs from num_input = weight_data_size / num_output");
    out[0] = Shape::of(num_output);
    return {};
  }

  /// Reads weight_data (tagged: f32 or f16) and, with bias_term, bias_data (raw f32).
  Status load(io::ModelBin& mb) {
    if (const char* e = param_error())
      return make_error(
          "InnerProduct: cannot load weights: {} (num_output {}, weight_data_size {})", e,
          num_output, weight_data_size);
    auto w = mb.load(std::size_t(weight_data_size), io::WeightType::tagged);
    if (!w.ok()) return make_error("InnerProduct: weight_data: {}", w.message());
    int8.weights_are_int8 = mb.last_type() == ElemType::i8;
    if (int8.weights_are_int8 && !quantized())
      return make_error("InnerProduct: int8 weights stored for a layer without int8_scale_term");
    std::vector<float> bias;
    if (bias_term) {
      auto b = mb.load(std::size_t(num_output), io::WeightType::raw_f32);
      if (!b.ok()) return make_error("InnerProduct: bias_data: {}", b.message());
      bias = std::move(b).value();
    }
    if (quantized())  // ncnn's InnerProduct has no top scale: its output is always dequantized
      INFER_TRY(detail::load_int8_scales(mb, std::min(int8_scale_term, 100), num_output,
                                         num_output, "InnerProduct", int8));
    weight_data = std::move(w).value();
    bias_data = std::move(bias);
    prepared_pack = 0;
    return {};
  }

  /// Repacks the weights for the kernels (f32 for every storage type; the layout is the same for
  /// every pack); with opt.fp16_weights also an f16 copy, which the one-sample product streams.
  Status prepare(ElemType type, int pack, const Option& opt) {
    INFER_TRY(check());
    if (pack != 1 && pack != 4 && pack != 8 && pack != 16)
      return make_error("InnerProduct: pack must be 1, 4, 8 or 16, got {}", pack);
    if (quantized()) {
      INFER_TRY(detail::check_int8_scales(int8, std::min(int8_scale_term, 100),
                                          std::size_t(num_output), "InnerProduct"));
      const std::vector<std::int8_t> q = detail::quantized_weights(weight_data, int8);
      int8.packed = kernels::int8::pack_weights(q.data(), 1, num_output, num_input(), 1);
      detail::fill_epilogue(int8, num_output, 1, num_output, int8.packed.m_pad, bias_data);
      int8.prepared_pack = 1;
      prepared_pack = pack;
      return {};
    }
    packed_weight.resize(kernels::gemv_packed_size(num_input(), num_output));
    kernels::gemv_pack_weights(weight_data.data(), num_input(), num_output, packed_weight.data());
    packed_weight_f16.clear();
    packed_weight_bf16.clear();
    if (kernels::bf16dot::kAvailable &&
        (type == ElemType::bf16 || (type == ElemType::f32 && opt.bf16_arithmetic))) {
      packed_weight_bf16.resize(kernels::bf16dot::gemv_size(num_input(), num_output));
      kernels::bf16dot::gemv_pack(weight_data.data(), num_input(), num_output,
                                  packed_weight_bf16.data());
    } else if (opt.fp16_weights) {
      packed_weight_f16.resize(packed_weight.size());
      for (std::size_t i = 0; i < packed_weight.size(); ++i)
        packed_weight_f16[i] = f32_to_f16(packed_weight[i]);
    }
    packed_bias.clear();
    if (bias_term) {
      packed_bias.assign(kernels::gemv_packed_size(1, num_output), 0.f);
      std::copy(bias_data.begin(), bias_data.end(), packed_bias.begin());
    }
    prepared_pack = pack;
    return {};
  }

  /// Folds a following per-output y = x * a + b (BatchNorm, Scale) into weights and bias; call
  /// prepare again afterwards.
  Status fold_affine(std::span<const float> a, std::span<const float> b) {
    INFER_TRY(check());
    if (activation.type != 0)
      return make_error("InnerProduct: cannot fold an affine map behind fused activation_type {}",
                        activation.type);
    if (quantized())
      return make_error("InnerProduct: cannot fold an affine map into int8 weights (int8_scale_term "
                        "{}): their scales were chosen for the weights as stored",
                        int8_scale_term);
    const std::size_t m = std::size_t(num_output), n = std::size_t(num_input());
    if (a.size() != m || (!b.empty() && b.size() != m))
      return make_error(
          "InnerProduct: fold_affine needs {0} scales and {0} (or no) biases, got {1} and {2}", m,
          a.size(), b.size());
    for (std::size_t o = 0; o < m; ++o)
      for (std::size_t k = 0; k < n; ++k) weight_data[o * n + k] *= a[o];
    if (!bias_term) bias_data.assign(m, 0.f);
    for (std::size_t o = 0; o < m; ++o)
      bias_data[o] = bias_data[o] * a[o] + (b.empty() ? 0.f : b[o]);
    bias_term = 1;
    prepared_pack = 0;
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    return with_activation(
        activation, [&](const auto& a) { return forward_fused<T, Pack>(bottom, top, opt, a); });
  }
#ifdef INFER_HAS_VULKAN
  /// On the GPU: a matrix-vector product over the input (1-D, or 3-D w x h x c read in ncnn's
  /// c-h-w weight order), giving num_output values. A 2-D input (one product per row) is not run
  /// on the GPU.
  Status upload_vulkan(vk::Uploader& up) const { return detail::upload_weights_and_bias(*this, up); }
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1 || step.weights.empty())
      return make_error("InnerProduct GPU forward: one input, one output and the weights needed");
    const Shape& s = in[0].shape();
    if (s.dims != 1 && s.dims != 3)
      return make_error("InnerProduct GPU forward: a {}-D input; the GPU kernel takes 1-D or 3-D",
                        s.dims);
    if (s.total() != std::size_t(num_input()))
      return make_error("InnerProduct GPU forward: {} input values, num_input is {}", s.total(),
                        num_input());
    return vk::record_gemv(rec, in[0], out[0], step.weights[0],
                           step.weights.size() > 1 ? &step.weights[1] : nullptr,
                           vk::gpu_activation(step.act));
  }
#endif

  /// forward with `act` applied to the accumulators in place of `activation`.
  template <StorageElement T, int Pack, class Act>
  Status forward_fused(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    if (quantized()) return forward_int8<T, Pack>(bottom, top, opt, act);
    if constexpr (std::same_as<T, i8>) {
      return make_error("InnerProduct: an int8 input needs int8_scale_term (got {})",
                        bottom.describe());
    } else {
      return forward_float<T, Pack>(bottom, top, opt, act);
    }
  }

  /// The quantized forward: `bottom` (T at Pack; a float input is quantized by the bottom scale)
  /// as one row of num_input values; `top` num_output f32 values.
  template <StorageElement T, int Pack, class Act>
  Status forward_int8(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    INFER_TRY(check());
    if (!bottom.is<T, Pack>())
      return make_error("InnerProduct: forward<{}, {}> got a {} input", to_string(elem_type_v<T>),
                        Pack, bottom.describe());
    if (int8.prepared_pack == 0 || int8.scale_in.empty())
      return make_error("InnerProduct: int8 weights are not prepared (call prepare after load)");
    const int n = num_input();
    const Shape s = bottom.shape();
    if (s.total() != std::size_t(n))
      return make_error(
          "InnerProduct: int8 input {} holds {} values, the weights take num_input = {} (one "
          "row: the int8 form does not take a batch of rows)",
          bottom.describe(), s.total(), n);
    // The input in logical order, quantized, then as the products read it (in place):
    // temporaries from the workspace allocator.
    Mat flat, gathered;
    INFER_TRY(flat.create(Shape::of(n), ElemType::f32, 1, opt.workspace_alloc()));
    INFER_TRY(gathered.create(Shape::of(int8.packed.k4 * 4), ElemType::i8, 1,
                              opt.workspace_alloc()));
    flatten<T, Pack>(bottom, flat.data_as<float>());
    const float* f = flat.data_as<const float>();
    auto* q = gathered.data_as<std::int8_t>();
    for (int i = 0; i < n; ++i)
      q[i] = std::same_as<T, i8> ? std::int8_t(f[i]) : float2int8(f[i] * int8.bottom_scale);
    auto* xs = gathered.data_as<std::uint8_t>();
    kernels::int8::gather_vector(q, n, int8.packed.k4, xs);
    INFER_TRY(top.create(Shape::of(num_output), ElemType::f32, pack_for(num_output, Pack),
                         opt.blob_alloc()));
    kernels::int8::gemv(xs, top.data_as<float>(), int8.packed,
                        detail::epilogue_of(int8, int8.packed.comp.data()), act, opt.num_threads);
    return {};
  }

 private:
  /// forward_fused of the float layer.
  template <StorageElement T, int Pack, class Act>
  Status forward_float(const Mat& bottom, Mat& top, const Option& opt, const Act& act) const {
    INFER_TRY(check());
    if (!bottom.is<T, Pack>())
      return make_error("InnerProduct: forward<{}, {}> got a {} input", to_string(elem_type_v<T>),
                        Pack, bottom.describe());
    if (prepared_pack != Pack ||
        packed_weight.size() != kernels::gemv_packed_size(num_input(), num_output) ||
        packed_bias.size() != (bias_term ? kernels::gemv_packed_size(1, num_output) : 0))
      return make_error(
          "InnerProduct: weights are not prepared for pack {} (call prepare(type, {}, opt))", Pack,
          Pack);
    const int n = num_input();
    const Shape s = bottom.shape();
    const float* bias = bias_term ? packed_bias.data() : nullptr;
    if (s.dims == 2 && s.w == n && s.h > 1) {  // a batch of rows; the rows stay packed by Pack
      INFER_TRY(top.create(Shape::of(num_output, s.h), elem_type_v<T>, Pack, opt.blob_alloc()));
      kernels::innerproduct_gemm<T, Pack>(bottom.data_as<const T>(), n, s.h, packed_weight.data(),
                                          bias, top.data_as<T>(), num_output, act, opt.num_threads);
      return {};
    }
    if (s.total() != std::size_t(n))
      return make_error(
          "InnerProduct: input {} holds {} values, the weights take num_input = {} "
          "(weight_data_size {} / num_output {})",
          bottom.describe(), s.total(), n, weight_data_size, num_output);
    // The kernel reads the input in logical order; only a 1-D f32 blob already is that array.
    const float* x = nullptr;
    Mat flat;
    if (std::is_same_v<T, f32> && s.dims == 1) {
      x = bottom.data_as<const float>();
    } else {
      INFER_TRY(flat.create(Shape::of(n), ElemType::f32, 1, opt.workspace_alloc()));
      flatten<T, Pack>(bottom, flat.data_as<float>());
      x = flat.data_as<const float>();
    }
    const int out_pack = pack_for(num_output, Pack);
    INFER_TRY(top.create(Shape::of(num_output), elem_type_v<T>, out_pack, opt.blob_alloc()));
    if (!packed_weight_bf16.empty()) {
      if constexpr (kernels::bf16dot::kAvailable &&
                    (std::same_as<T, f32> || std::same_as<T, bf16>)) {
        // The input rounded to bf16, num_input rounded up to even with a zero.
        Mat xs;
        INFER_TRY(xs.create(Shape::of(n + 1), ElemType::bf16, 1, opt.workspace_alloc()));
        bf16* xb = xs.data_as<bf16>();
        for (int k = 0; k < n; ++k) xb[k] = f32_to_bf16(x[k]);
        xb[n] = bf16{};
        kernels::bf16dot::gemv<T>(xb, n, packed_weight_bf16.data(), bias, top.data_as<T>(),
                                  num_output, act, opt.num_threads);
        return {};
      } else {
        return make_error(
            "InnerProduct: weights prepared for bf16 arithmetic, forward at {} storage (prepare "
            "with this storage type)",
            to_string(elem_type_v<T>));
      }
    }
    if (!packed_weight_f16.empty())
      kernels::innerproduct_gemv<T>(x, n, packed_weight_f16.data(), bias, top.data_as<T>(),
                                    num_output, act, opt.num_threads);
    else
      kernels::innerproduct_gemv<T>(x, n, packed_weight.data(), bias, top.data_as<T>(), num_output,
                                    act, opt.num_threads);
    return {};
  }

  /// Why the parameters are unusable (a static message), or null.
  constexpr const char* param_error() const {
    if (num_output <= 0) return "num_output must be positive";
    if (weight_data_size <= 0 || weight_data_size % num_output != 0)
      return "weight_data_size must be a positive multiple of num_output";
    if (int8_scale_term < 0) return "int8_scale_term must be >= 0";
    if (!activation.valid()) return "activation_type must be one of ncnn's 0..6";
    return nullptr;
  }

  Status check() const {
    if (const char* e = param_error())
      return make_error(
          "InnerProduct: {} (num_output {}, weight_data_size {}, int8_scale_term {}, "
          "activation_type {})",
          e, num_output, weight_data_size, int8_scale_term, activation.type);
    if (weight_data.size() != std::size_t(weight_data_size))
      return make_error("InnerProduct: weight_data holds {} values, weight_data_size is {}",
                        weight_data.size(), weight_data_size);
    if (bias_term && bias_data.size() != std::size_t(num_output))
      return make_error("InnerProduct: bias_data holds {} values, expected num_output = {}",
                        bias_data.size(), num_output);
    return {};
  }

  /// The values of `m` (elempack Pack) in logical order: (c, d, h, w) outermost first.
  template <StorageElement T, int Pack>
  static void flatten(const Mat& m, float* dst) {
    const MatView<T, Pack> v = m.view<T, Pack>();
    if (v.dims == 1) {  // the packed layout of 1-D is the plain one
      for (std::size_t i = 0; i < std::size_t(v.w) * Pack; ++i) dst[i] = to_f32(v.data[i]);
    } else if (v.dims == 2) {  // row group j, column x, lane l holds row j * Pack + l
      const std::size_t w = std::size_t(v.w);
      for (std::size_t j = 0; j < std::size_t(v.h); ++j)
        for (std::size_t x = 0; x < w; ++x)
          for (std::size_t l = 0; l < Pack; ++l)
            dst[(j * Pack + l) * w + x] = to_f32(v.data[(j * w + x) * Pack + l]);
    } else {  // channel group q, plane index i, lane l holds channel q * Pack + l
      const std::size_t plane = std::size_t(v.w) * v.h * v.d;
      for (int q = 0; q < v.c; ++q) {
        const T* src = v.channel(q);
        for (std::size_t i = 0; i < plane; ++i)
          for (std::size_t l = 0; l < Pack; ++l)
            dst[(std::size_t(q) * Pack + l) * plane + i] = to_f32(src[i * Pack + l]);
      }
    }
  }
};

}  // namespace infer::layers
