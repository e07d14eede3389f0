// The quantized forms of Convolution, ConvolutionDepthWise and InnerProduct (ncnn's
// int8_scale_term) against a plain-loop reference written from ncnn's rules: q = float2int8(v x
// scale) for inputs and weights, int32 sums, out = sum / (bottom scale x weight scale) + bias, the
// activation, and with a term above 100 float2int8(out x top scale). The sum's scaling and bias
// are one fused multiply-add, as in ncnn's x86 kernels. Every pack the input
// channels allow, float inputs (quantized by the layer) and int8 inputs, dequantized and
// requantized outputs, 1 and 2 threads; 1x1, 3x3 (stride 1 and 2), dilated 5x5, asymmetric
// kernels, channel counts that leave partial blocks, a 3-channel stem; depthwise with per-group and
// single scales, grouped; InnerProduct on 1-D and 3-D inputs. Loading the scales in ncnn's order
// (f32 and int8-tagged weights) and the errors. Where the CPU offers AMX tiles (kernels/amx.hpp)
// every case runs on them and again with Option::use_amx off (VNNI).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <infer/io/model_bin.hpp>
#include <infer/kernels/amx.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/innerproduct.hpp>

#include "support/fused_instances.hpp"
#include "support/heap_count.hpp"
#include "support/random_values.hpp"
#include "support/ref_tensor.hpp"

using infer::ElemType;
using infer::float2int8;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::Status;
using infer::layers::ActivationParam;
using infer::layers::Convolution;
using infer::layers::ConvolutionDepthWise;
using infer::layers::InnerProduct;
using infer::test::RefTensor;

namespace {

float act_ref(float x, const ActivationParam& a) {
  switch (a.type) {
    case 1:
      return x > 0.f ? x : 0.f;
    case 2:
      return x > 0.f ? x : x * a.params[0];
    case 3:
      return std::min(std::max(x, a.params[0]), a.params[1]);
    default:
      return x;
  }
}

/// What a quantized convolution computes, from ncnn's rules (groups: 1 for Convolution).
struct QuantConv {
  int cin = 0, cout = 0, group = 1, kw = 1, kh = 1, sw = 1, sh = 1, dw = 1, dh = 1;
  int pl = 0, pr = 0, pt = 0, pb = 0;
  int term = 2;
  std::vector<float> w, bias, wscale;  // wscale: one per output channel or per group
  float bscale = 127.f / 3.f, tscale = 127.f / 4.f;
  ActivationParam act;
  /// A fused residual sum's other input (the output's shape; empty: none), added before the
  /// activation.
  RefTensor residual{};

  RefTensor run(const RefTensor& x, bool x_int8) const {
    const int W = x.shape.w, H = x.shape.h;
    const int ow = (W + pl + pr - (dw * (kw - 1) + 1)) / sw + 1;
    const int oh = (H + pt + pb - (dh * (kh - 1) + 1)) / sh + 1;
    RefTensor out(Shape::of(ow, oh, cout));
    const int cin_g = cin / group, cout_g = cout / group;
    for (int oc = 0; oc < cout; ++oc) {
      const int g = oc / cout_g;
      const float ws = wscale[std::size_t(oc) * wscale.size() / std::size_t(cout)];
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          std::int32_t sum = 0;
          for (int c = 0; c < cin_g; ++c)
            for (int ky = 0; ky < kh; ++ky)
              for (int kx = 0; kx < kw; ++kx) {
                const int iy = oy * sh - pt + ky * dh, ix = ox * sw - pl + kx * dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const float v = x.at(ix, iy, 0, g * cin_g + c);
                const std::int32_t qx = x_int8 ? std::int32_t(v) : float2int8(v * bscale);
                const float wv = w[((std::size_t(oc) * cin_g + c) * kh + ky) * kw + kx];
                sum += qx * std::int32_t(float2int8(wv * ws));
              }
          const float scale_in = ws == 0.f ? 0.f : 1.f / (bscale * ws);
          float v = std::fma(float(sum), scale_in, bias.empty() ? 0.f : bias[std::size_t(oc)]);
          if (!residual.v.empty()) v += residual.at(ox, oy, 0, oc);
          v = act_ref(v, act);
          out.at(ox, oy, 0, oc) = term > 100 ? float(float2int8(v * tscale)) : v;
        }
    }
    return out;
  }
};

using infer::test::uniform;

/// Weight scales as ncnn's quantization tools write them: 127 / max|w| per group of weights.
std::vector<float> absmax_scales(const std::vector<float>& w, int groups) {
  std::vector<float> s(static_cast<std::size_t>(groups));
  const std::size_t per = w.size() / std::size_t(groups);
  for (std::size_t g = 0; g < s.size(); ++g) {
    float m = 0;
    for (std::size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[g * per + i]));
    s[g] = m > 0 ? 127.f / m : 1.f;
  }
  return s;
}

/// The input as the layer takes it: f32, or its integer values as i8, at `pack`.
Mat input_mat(const RefTensor& x, bool as_int8, int pack) {
  Option opt;
  Mat f = infer::test::to_mat(x), out;
  REQUIRE(infer::convert(f, out, as_int8 ? ElemType::i8 : ElemType::f32, pack, opt).ok());
  REQUIRE(out.elempack() == pack);
  return out;
}

/// Compares a layer's output with the reference: dequantized outputs to float rounding, int8
/// outputs within one step (a product landing on a rounding boundary).
void compare(const Mat& top, const RefTensor& want, bool requant) {
  REQUIRE(top.type() == (requant ? ElemType::i8 : ElemType::f32));
  const RefTensor got = infer::test::from_mat(top);
  REQUIRE(got.shape == want.shape);
  float peak = 1e-6f;
  for (float v : want.v) peak = std::max(peak, std::fabs(v));
  std::size_t off_by_one = 0;
  for (std::size_t i = 0; i < want.v.size(); ++i) {
    const float d = std::fabs(got.v[i] - want.v[i]);
    INFO("value " << i << " got " << got.v[i] << " want " << want.v[i]);
    if (requant) {
      REQUIRE(d <= 1.f);
      off_by_one += d > 0.f;
    } else {
      REQUIRE(d <= 1e-5f * peak + 1e-6f);
    }
  }
  CHECK(off_by_one <= want.v.size() / 100 + 1);
}

template <class L>
void sweep(L& layer, const QuantConv& q, const RefTensor& x, const char* what,
           const Shape& prepare_shape = {}) {
  const bool amx = infer::kernels::amx::usable() && infer::kernels::amx::kInt8Available;
  for (const bool as_int8 : {false, true}) {
    RefTensor xin = x;
    if (as_int8)
      for (float& v : xin.v) v = float(float2int8(v * q.bscale));
    const RefTensor want = q.run(xin, as_int8);
    for (int pack : {1, 4, 8, 16})
      for (const bool use_amx : {true, false}) {
        if (q.cin % pack != 0) continue;
        if constexpr (requires { layer.group; })
          if (layer.group > 1 && layer.group < q.cin && (q.cin / layer.group) % pack != 0 &&
              pack > 1)
            continue;
        if (!use_amx && !amx) continue;  // the same run as use_amx on
        Option opt;
        opt.use_amx = use_amx;
        if constexpr (std::same_as<L, Convolution>)
          REQUIRE(layer.prepare(ElemType::i8, pack, opt, prepare_shape).ok());
        else
          REQUIRE(layer.prepare(ElemType::i8, pack, opt).ok());
        // The GEMM takes AMX tiles where they are offered and K fills a tile row.
        if constexpr (std::same_as<L, Convolution>)
          CHECK(layer.int8.packed.amx ==
                (use_amx && amx &&
                 (pack == 1 && q.cin % 4 != 0 && q.cin < 16 ? (q.cin + 3) / 4 * 4 : q.cin) * q.kw *
                         q.kh >=
                     64));
        const Mat in = input_mat(xin, as_int8, pack);
        for (int threads : {1, 2}) {
          opt.num_threads = threads;
          INFO(what << " pack " << pack << (as_int8 ? " int8" : " f32") << " input, threads "
                    << threads << ", term " << q.term << ", activation " << q.act.type);
          Mat top;
          Status st = Status{};
          infer::layers::detail::with_pack<16>(pack, [&](auto p) {
            constexpr int P = decltype(p)::value;
            st = as_int8 ? layer.template forward<infer::i8, P>(in, top, opt)
                         : layer.template forward<infer::f32, P>(in, top, opt);
          });
          INFO((st.ok() ? std::string("ok") : st.message()));
          REQUIRE(st.ok());
          CHECK(top.elempack() == infer::pack_for(q.cout, pack));
          compare(top, want, q.term > 100);
          // Into a top the caller holds at the widest pack (a plan's buffer): written at its pack.
          const int wide = infer::pack_for(q.cout, 16);
          bool any_pack = true;
          if constexpr (requires { layer.group; }) any_pack = !layer.depthwise();
          if (any_pack && wide != top.elempack()) {
            Mat held;
            REQUIRE(
                held.create(want.shape, q.term > 100 ? ElemType::i8 : ElemType::f32, wide).ok());
            const void* where = held.data();
            infer::layers::detail::with_pack<16>(pack, [&](auto p) {
              constexpr int P = decltype(p)::value;
              st = as_int8 ? layer.template forward<infer::i8, P>(in, held, opt)
                           : layer.template forward<infer::f32, P>(in, held, opt);
            });
            REQUIRE(st.ok());
            CHECK(held.data() == where);
            CHECK(held.elempack() == wide);
            compare(held, want, q.term > 100);
          }
        }
      }
  }
}

QuantConv make_conv(int cin, int cout, int k, int stride, int dil, int pad, int term,
                    ActivationParam act, unsigned seed, int group = 1, int kh = 0,
                    int stride_h = 0) {
  QuantConv q;
  q.cin = cin;
  q.cout = cout;
  q.group = group;
  q.kw = k;
  q.kh = kh ? kh : k;
  q.sw = stride;
  q.sh = stride_h ? stride_h : stride;
  q.dw = q.dh = dil;
  q.pl = q.pr = q.pt = q.pb = pad;
  q.term = term;
  q.act = act;
  const std::size_t n = std::size_t(cout) * std::size_t(cin / group) * std::size_t(q.kw * q.kh);
  const float a = std::sqrt(3.f / float(n / std::size_t(cout)));
  q.w = uniform(n, -a, a, seed);
  q.bias = uniform(std::size_t(cout), -0.1f, 0.1f, seed + 1);
  return q;
}

Convolution conv_layer(const QuantConv& q) {
  Convolution c{.num_output = q.cout,
                .kernel_w = q.kw,
                .dilation_w = q.dw,
                .stride_w = q.sw,
                .pad_left = q.pl,
                .bias_term = 1,
                .weight_data_size = int(q.w.size()),
                .int8_scale_term = q.term,
                .activation = q.act,
                .kernel_h = q.kh,
                .dilation_h = q.dh,
                .stride_h = q.sh};
  c.weight_data = q.w;
  c.bias_data = q.bias;
  c.int8.weight_scales = q.wscale;
  c.int8.bottom_scale = q.bscale;
  c.int8.top_scale = q.term > 100 ? q.tscale : 0.f;
  return c;
}

}  // namespace

TEST_CASE("int8 Convolution matches ncnn's rules", "[int8][convolution]") {
  struct Case {
    int cin, cout, k, stride, dil, pad, w, h, kh = 0, stride_h = 0;
  };
  const Case cases[] = {
      {16, 32, 1, 1, 1, 0, 7, 5},  // 1x1 stride 1, two whole blocks
      {12, 20, 3, 1, 1, 1, 9, 6},  // 3x3, a partial block
      {3, 24, 3, 2, 1, 1, 11, 9},  // a 3-channel stem, stride 2
      // Stems into a packed output (the sweep's held top): kernels::gemm::convolution_stem on
      // the integer values; rows wider than its tile, one-row blocks, 4 x 7x7, 1 x 5x5 dilated,
      // and 3 x 13x13 (507 taps, the most it takes is 512)
      {3, 64, 3, 2, 1, 1, 67, 9},
      {4, 17, 7, 2, 1, 3, 45, 13},
      {1, 8, 5, 1, 2, 4, 40, 7},
      {3, 20, 13, 3, 1, 2, 50, 16},
      // 4 x 12x12: 576 taps, past the stem's 512: the int8 GEMM
      {4, 16, 12, 2, 1, 1, 30, 14},
      // On VNNI every stem above takes kernels::int8::stem (one to four blocks of 16 outputs at
      // once, rows ending in partial tiles of its 6 pixels); and five blocks (four, then one),
      // a 3 x 5 dilated window with strides 1 x 2 and a row narrower than a tile; three blocks
      // from a 1x1 window
      {2, 72, 3, 1, 2, 0, 9, 11, 5, 2},
      {3, 40, 1, 1, 1, 0, 8, 3},
      {8, 17, 5, 1, 2, 2, 10, 10},        // dilated 5x5, 17 outputs
      {32, 48, 1, 1, 1, 0, 13, 7, 3, 2},  // 1 x 3 kernel, strides 1 x 2, three blocks
      {64, 130, 1, 1, 1, 0, 1, 1},        // a 1x1 map, 9 blocks (the last of 2 channels)
      {16, 16, 3, 1, 1, 1, 26, 3},        // several chunks of pixel tiles
      // 3x3 stride 1 on maps of 8x8 and up: Winograd F(2x2, 3x3) in integers
      {17, 24, 3, 1, 1, 1, 11, 9},   // odd channels in, a partial block out, odd tiles
      {32, 40, 3, 1, 1, 0, 12, 10},  // no padding: a 10x8 output
      {24, 16, 3, 1, 1, 2, 9, 8},    // padding 2: an 11x10 output, windows mostly padding
      {16, 33, 3, 1, 1, 1, 40, 30},  // several chunks of tiles, 33 outputs
      // AMX: K = 576 over several tile rows, several panels of pixels, 72 outputs (an odd block)
      {64, 72, 3, 2, 1, 1, 27, 23},
      // 3x3 stride 1 of 64 channels and more whose output is 16x16 and up, prepared with its
      // shape: Winograd F(4x4, 3x3) (odd channels, partial tiles at both edges, padding 0 and 2,
      // several chunks, and 256 channels summed in more than one int32 slice)
      {67, 24, 3, 1, 1, 1, 19, 17},
      {64, 40, 3, 1, 1, 0, 22, 20},
      {72, 16, 3, 1, 1, 2, 17, 16},
      {64, 33, 3, 1, 1, 1, 45, 38},
      {256, 20, 3, 1, 1, 1, 16, 18},
  };
  const ActivationParam acts[] = {{}, {1, {0.f, 0.f}}, {2, {0.1f, 0.f}}, {3, {-1.f, 2.f}}};
  unsigned seed = 11;
  for (const Case& c : cases) {
    for (int term : {2, 102}) {
      const ActivationParam act = acts[seed % 4];
      QuantConv q = make_conv(c.cin, c.cout, c.k, c.stride, c.dil, c.pad, term, act, seed, 1, c.kh,
                              c.stride_h);
      q.wscale = absmax_scales(q.w, c.cout);
      const RefTensor x = [&] {
        RefTensor t(Shape::of(c.w, c.h, c.cin));
        t.v = uniform(t.v.size(), -3.f, 3.f, seed + 2);
        return t;
      }();
      Convolution layer = conv_layer(q);
      CAPTURE(c.cin, c.cout, c.k, c.stride, c.dil, c.pad, c.w, c.h);
      sweep(layer, q, x, "Convolution");
      // Prepared at pack 1, an input of so few channels gets stem weights where its taps fit the
      // stem kernel (the sweep above ran them into its held, packed top).
      REQUIRE(layer.prepare(ElemType::i8, 1, Option{}).ok());
      if (c.cin <= infer::kernels::gemm::kStemMaxChannels)
        CHECK(layer.int8.stem_weights.empty() ==
              (!Convolution::kUsesInt8Stem ||
               c.cin * c.k * (c.kh ? c.kh : c.k) > infer::kernels::gemm::kStemMaxTaps));
      // On VNNI, an input of at most 4 channels takes the int8 stem kernel (AMX tiles keep the
      // GEMM where they take it).
      CHECK(layer.int8.stem_vnni == (infer::kernels::int8::stem::kAvailable && c.cin <= 4 &&
                                     !layer.int8.packed.amx));
      // Without VNNI, the 3x3 stride-1 cases of 16 channels and more in and out carry Winograd
      // weights (used on maps of 8x8 and up; the sweep's results match the reference either way).
      const bool wino = !infer::kernels::int8::kVnni && c.k == 3 && c.kh == 0 && c.stride == 1 &&
                        c.stride_h == 0 && c.dil == 1 && c.cin >= 16 && c.cout >= 16;
      CHECK(layer.int8.wino.u.empty() == !wino);
      CHECK(layer.int8.wino43.u.empty());  // not told the shape: F(2x2)
      // Told the input's shape, an output of 16x16 and up takes F(4x4, 3x3) instead.
      const int outw = (c.w + 2 * c.pad - 3) / 1 + 1, outh = (c.h + 2 * c.pad - 3) / 1 + 1;
      if (wino && outw >= 16 && outh >= 16 && c.cin >= Convolution::kInt8Wino43Channels) {
        sweep(layer, q, x, "Convolution (prepared for its shape)", x.shape);
        CHECK_FALSE(layer.int8.wino43.u.empty());
        CHECK(layer.int8.wino.u.empty());
        if (c.cin == 256) CHECK(layer.int8.wino43.slice < 256);  // more than one int32 slice
      }
      // With VNNI, told the input's shape, an output of kInt8WrapPixels and up takes F(4x4, 3x3)
      // on int32 sums (these weights keep them exact): partial tile groups and chunks, a last
      // block of 16 output channels, one and several chunks, threads sharing a chunk.
      namespace w43w = infer::kernels::int8::winograd43_wrap;
      const bool wrap = infer::kernels::int8::kVnni && w43w::kAvailable && c.k == 3 &&
                        c.kh == 0 && c.stride == 1 && c.stride_h == 0 && c.dil == 1 &&
                        c.cin >= Convolution::kInt8WrapChannels && c.cout >= 16;
      if (wrap && outw >= Convolution::kInt8WrapPixels && outh >= Convolution::kInt8WrapPixels) {
        sweep(layer, q, x, "Convolution (prepared for its shape, F(4x4) on VNNI)", x.shape);
        CHECK_FALSE(layer.int8.wino43_wrap.u.empty());
      }
      if (wrap && (outw < Convolution::kInt8WrapPixels || outh < Convolution::kInt8WrapPixels)) {
        REQUIRE(layer.prepare(ElemType::i8, 1, Option{}, x.shape).ok());
        CHECK(layer.int8.wino43_wrap.u.empty());  // a small map stays on the GEMM
      }
      ++seed;
    }
  }
}

TEST_CASE("int8 Convolution forward_residual adds the sum in every int8 kernel's epilogue",
          "[int8][convolution][residual]") {
  // A quantized layer with a float output (term 2) takes ResNet's shortcut in, as the composer
  // fuses it: y = act(sum * scale_in + bias + r). Each int8 kernel: the GEMM (1x1, and a 3x3 on
  // a map too small for Winograd), Winograd (F(2x2) and F(4x4) without VNNI, F(4x4) on int32
  // sums with it), the stem (3 channels at pack 1); every pack the input channels allow, int8
  // and f32 inputs, 1 and 2 threads, the residual at the output's pack and at the widest.
  struct Case {
    int cin, cout, k, stride, pad, w, h;
  };
  const Case cases[] = {
      {16, 33, 1, 1, 0, 9, 7},   // 1x1 GEMM, a partial block
      {24, 16, 3, 1, 1, 6, 5},   // 3x3 on a 6x5 map: the GEMM
      {16, 24, 3, 1, 1, 18, 17}, // 3x3 stride 1: Winograd (F(4x4) on int32 sums with VNNI)
      {64, 20, 3, 1, 1, 19, 16}, // 64 channels: F(4x4) without VNNI too, odd tiles
      {3, 40, 3, 2, 1, 23, 15},  // a 3-channel stem, stride 2
  };
  const infer::act::ReLU relu{};
  unsigned seed = 31;
  for (const Case& c : cases) {
    QuantConv q = make_conv(c.cin, c.cout, c.k, c.stride, 1, c.pad, 2, {}, seed++);
    q.wscale = absmax_scales(q.w, c.cout);
    q.act = {1, {0.f, 0.f}};  // the sum's ReLU, fused after it
    const RefTensor x = [&] {
      RefTensor t(Shape::of(c.w, c.h, c.cin));
      t.v = uniform(t.v.size(), -3.f, 3.f, seed + 7);
      return t;
    }();
    const int ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    const int oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
    q.residual = RefTensor(Shape::of(ow, oh, c.cout));
    q.residual.v = uniform(q.residual.v.size(), -2.f, 2.f, seed + 9);
    Convolution layer = conv_layer(q);
    CAPTURE(c.cin, c.cout, c.k, c.stride, c.w, c.h);
    for (const bool as_int8 : {false, true}) {
      RefTensor xin = x;
      if (as_int8)
        for (float& v : xin.v) v = float(float2int8(v * q.bscale));
      const RefTensor want = q.run(xin, as_int8);
      for (int pack : {1, 4, 8, 16}) {
        if (c.cin % pack != 0) continue;
        Option opt;
        REQUIRE(layer.prepare(ElemType::i8, pack, opt, x.shape).ok());
        const Mat in = input_mat(xin, as_int8, pack);
        for (const int out_pack : {infer::pack_for(c.cout, pack), infer::pack_for(c.cout, 16)}) {
          const Mat res = input_mat(q.residual, false, out_pack);
          for (int threads : {1, 2}) {
            opt.num_threads = threads;
            INFO("pack " << pack << (as_int8 ? " int8" : " f32") << " input, output pack "
                         << out_pack << ", threads " << threads);
            Mat top;
            REQUIRE(top.create(want.shape, ElemType::f32, out_pack).ok());
            Status st;
            infer::layers::detail::with_pack<16>(pack, [&](auto p) {
              constexpr int P = decltype(p)::value;
              st = as_int8 ? layer.template forward_residual<infer::i8, P>(in, res, top, opt, relu)
                           : layer.template forward_residual<infer::f32, P>(in, res, top, opt,
                                                                            relu);
            });
            INFO((st.ok() ? std::string("ok") : st.message()));
            REQUIRE(st.ok());
            CHECK(top.elempack() == out_pack);
            compare(top, want, false);
          }
        }
      }
    }
    // With VNNI, the kernels these shapes were meant for ran (the last prepare, at the widest
    // pack the input allows): F(4x4) on int32 sums, the stem.
    if (infer::kernels::int8::kVnni && !layer.int8.packed.amx && c.k == 3 && c.stride == 1 &&
        c.cin >= 16 && ow >= 16 && oh >= 16)
      CHECK_FALSE(layer.int8.wino43_wrap.u.empty());
    if (c.cin == 3) CHECK(layer.int8.stem_vnni == infer::kernels::int8::stem::kAvailable);
  }
  // A residual that does not match the output, or one given to a requantizing layer: errors.
  QuantConv q = make_conv(16, 16, 1, 1, 1, 0, 2, {}, 5);
  q.wscale = absmax_scales(q.w, 16);
  Convolution layer = conv_layer(q);
  REQUIRE(layer.prepare(ElemType::i8, 16, Option{}).ok());
  RefTensor x(Shape::of(5, 4, 16));
  x.v = uniform(x.v.size(), -1.f, 1.f, 3);
  const Mat in = input_mat(x, false, 16);
  Mat top, wrong;
  REQUIRE(wrong.create(Shape::of(4, 4, 16), ElemType::f32, 16).ok());
  Status st = layer.forward_residual<infer::f32, 16>(in, wrong, top, Option{}, relu);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("residual") && Catch::Contains("does not match"));
  q.term = 102;
  Convolution requant = conv_layer(q);
  REQUIRE(requant.prepare(ElemType::i8, 16, Option{}).ok());
  Mat fits;
  REQUIRE(fits.create(Shape::of(5, 4, 16), ElemType::f32, 16).ok());
  st = requant.forward_residual<infer::f32, 16>(in, fits, top, Option{}, relu);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("requantizes"));
}

TEST_CASE("int8 Winograd F(4x4, 3x3) on int32 sums: exact up to its bound, refused past it",
          "[int8][convolution]") {
  // kernels/int8_winograd43_wrap.hpp recovers each sum modulo 2^26 from int32 lanes that wrap:
  // exact while every output channel's sum of |w| x 128 stays below 2^25. Weights of +-113 on 256
  // channels (2304 x 113 x 128 = 33.3M, just below 2^25 = 33.55M) against inputs of 127 and -128
  // signed alike (mixed values in the last rows), so that one channel's sums reach 98.8% of the
  // bound and the others' mix signs; +-114 (33.6M) only for non-negative inputs.
  namespace w43w = infer::kernels::int8::winograd43_wrap;
  const int cin = 256, m = 20, W = 13, H = 11;
  auto sign = [](int oc, int c) { return (oc == 0 ? c % 3 : (oc * 7 + c * 5) % 3) == 0 ? -1 : 1; };
  auto weights = [&](int mag) {
    std::vector<std::int8_t> w(std::size_t(m) * cin * 9);
    for (int oc = 0; oc < m; ++oc)
      for (int c = 0; c < cin; ++c)
        for (int k = 0; k < 9; ++k)
          w[(std::size_t(oc) * cin + std::size_t(c)) * 9 + std::size_t(k)] =
              std::int8_t(sign(oc, c) * (oc < 2 ? mag : (oc * 31 + c * 17 + k * 5) % mag));
    return w;
  };
  using w43w::Exactness;
  CHECK(w43w::exact_for(weights(113).data(), m, cin) == Exactness::any);
  // +-114 only for inputs in [0, 127] (its positive and negative sums apart, times 127, within
  // the bound); all +127 not even for those.
  CHECK(w43w::exact_for(weights(114).data(), m, cin) == Exactness::nonnegative);
  CHECK(w43w::transform_weights(weights(114).data(), m, cin).nonnegative_only);
  const std::vector<std::int8_t> all127(std::size_t(m) * cin * 9, 127);
  CHECK(w43w::exact_for(all127.data(), m, cin) == Exactness::none);
  CHECK(w43w::transform_weights(all127.data(), m, cin).u.empty());
  if constexpr (w43w::kAvailable) {
    const std::vector<std::int8_t> w = weights(113);
    const w43w::Weights t = w43w::transform_weights(w.data(), m, cin);
    REQUIRE_FALSE(t.u.empty());
    Mat in;
    REQUIRE(in.create(Shape::of(W, H, cin), ElemType::i8, 16).ok());
    auto x = [&](int c, int iy, int ix) -> int {
      return iy >= 7 && (iy * W + ix) % 5 == 4 ? -sign(1, c) * 77 : (sign(0, c) < 0 ? -128 : 127);
    };
    for (int c = 0; c < cin; ++c)
      for (int iy = 0; iy < H; ++iy)
        for (int ix = 0; ix < W; ++ix)
          static_cast<std::int8_t*>(in.channel_data(c / 16))[(iy * W + ix) * 16 + c % 16] =
              std::int8_t(x(c, iy, ix));
    const int pad = 1, outw = W, outh = H;
    const int tiles = ((outw + 3) / 4) * ((outh + 3) / 4);
    Mat out;
    REQUIRE(out.create(Shape::of(outw, outh, m), ElemType::f32, 4).ok());
    const std::vector<float> ones(std::size_t(t.m_pad), 1.f), zeros(std::size_t(t.m_pad), 0.f);
    [[maybe_unused]] const infer::kernels::int8::Epilogue e{ones.data(), zeros.data(),
                                                            t.zero.data(), 0.f};
    for (int threads : {1, 2}) {
      std::vector<std::uint8_t> ws(w43w::workspace_bytes(t, tiles) * std::size_t(threads));
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
      w43w::conv_wino43_wrap<float, 16, 4>(in.view<infer::i8, 16>(), out.view<float, 4>(), t, pad,
                                           pad, std::int8_t(0), outw, outh, e,
                                           infer::act::Identity{}, ws.data(),
                                           threads);
#endif
      std::int64_t largest = 0;
      int wrong = 0;
      for (int oc = 0; oc < m; ++oc)
        for (int oy = 0; oy < outh; ++oy)
          for (int ox = 0; ox < outw; ++ox) {
            std::int64_t sum = 0;
            for (int c = 0; c < cin; ++c)
              for (int k = 0; k < 9; ++k) {
                const int iy = oy - pad + k / 3, ix = ox - pad + k % 3;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += std::int64_t(w[(std::size_t(oc) * cin + std::size_t(c)) * 9 +
                                      std::size_t(k)]) *
                       x(c, iy, ix);
              }
            largest = std::max(largest, sum < 0 ? -sum : sum);
            const float got = static_cast<const float*>(
                out.channel_data(oc / 4))[(oy * outw + ox) * 4 + oc % 4];
            if (got != float(std::int32_t(sum))) ++wrong;
          }
      CAPTURE(threads, largest);
      CHECK(wrong == 0);
      CHECK(largest > w43w::kLimit * 98 / 100);  // the case reaches the bound
    }
  }
}

TEST_CASE("int8 Convolution: F(4x4) weights exact only for non-negative inputs take the GEMM "
          "on a negative one",
          "[int8][convolution]") {
  // 512 input channels of full-range weights (mean |w| about 64): their sums of |w| x 128 pass
  // 2^25, their positive and negative sums x 127 do not, so with VNNI the layer prepared for its
  // shape keeps F(4x4) for non-negative inputs only; both inputs match the reference.
  const int cin = 512, cout = 16, W = 17, H = 16;
  QuantConv q = make_conv(cin, cout, 3, 1, 1, 1, 2, {1, {0.f, 0.f}}, 131);
  q.wscale = absmax_scales(q.w, cout);
  Convolution layer = conv_layer(q);
  namespace w43w = infer::kernels::int8::winograd43_wrap;
  const bool wrap = infer::kernels::int8::kVnni && w43w::kAvailable;
  for (float lo : {-3.f, 0.f}) {
    RefTensor x(Shape::of(W, H, cin));
    x.v = uniform(x.v.size(), lo, 3.f, 133);
    CAPTURE(lo);
    sweep(layer, q, x, "Convolution (F(4x4) for non-negative inputs)", x.shape);
    CHECK(layer.int8.wino43_wrap.u.empty() == !wrap);
    if (wrap) CHECK(layer.int8.wino43_wrap.nonnegative_only);
  }
}

TEST_CASE("int8 Convolution on an input with no negative value (after a ReLU)",
          "[int8][convolution]") {
  // Without VNNI the GEMM's products take such an input as vpmaddubsw's unsigned operand
  // directly (kernels::int8::tile_sums' NonNegative form); the same sums as the signed form.
  struct Case {
    int cin, cout, k, stride, pad, w, h;
  };
  const Case cases[] = {
      {16, 32, 1, 1, 0, 7, 5},   // 1x1, two whole blocks
      {12, 20, 3, 1, 1, 9, 6},   // 3x3, a partial block
      {8, 17, 3, 2, 1, 13, 11},  // strided, 17 outputs
      {64, 130, 1, 1, 0, 3, 2},  // 9 blocks, a partial tile
  };
  unsigned seed = 91;
  for (const Case& c : cases) {
    for (int term : {2, 102}) {
      QuantConv q = make_conv(c.cin, c.cout, c.k, c.stride, 1, c.pad, term, {1, {0.f, 0.f}}, seed);
      q.wscale = absmax_scales(q.w, c.cout);
      RefTensor x(Shape::of(c.w, c.h, c.cin));
      x.v = uniform(x.v.size(), 0.f, 3.f, seed + 2);  // 0 to 3: quantized 0 to 127
      Convolution layer = conv_layer(q);
      CAPTURE(c.cin, c.cout, c.k, c.stride, c.pad, c.w, c.h, term);
      sweep(layer, q, x, "Convolution (non-negative input)");
      ++seed;
    }
  }
}

TEST_CASE("int8 ConvolutionDepthWise matches ncnn's rules: depthwise and grouped",
          "[int8][convolution_depthwise]") {
  struct Case {
    int cin, cout, group, k, stride, pad, w, h, term;
    int dil = 1, kh = 0, stride_h = 0;  // kh, stride_h 0: as k, stride
  };
  const Case cases[] = {
      {24, 24, 24, 3, 1, 1, 9, 7, 101},  // per-channel scales, requantized
      {32, 32, 32, 3, 2, 1, 11, 8, 1},   // stride 2
      {16, 16, 16, 5, 1, 2, 7, 6, 102},  // one scale for all, 5x5
      {48, 48, 48, 3, 1, 0, 4, 4, 2},    // no pad
      // Wide rows: blocks of neighbouring pixels inside the input (8 or 4 a block) and the
      // pixels left over on both sides, stride 1 and 2.
      {16, 16, 16, 3, 1, 1, 23, 5, 101},
      {32, 32, 32, 3, 2, 1, 37, 6, 102},
      {12, 18, 3, 3, 1, 1, 8, 5, 1},    // grouped: 4 in, 6 out a group
      {32, 64, 2, 1, 1, 0, 6, 6, 101},  // grouped 1x1, 16 in and 32 out a group
      {24, 24, 3, 3, 2, 1, 9, 9, 2},    // grouped 8 x 8, stride 2
      // Windows over rows that are not neighbours or not alike: dilation 2 and 3 (pads wider
      // than a row of windows: rows wholly in the pad), 3 wide x 5 high with strides 2 x 1, 7x7.
      {32, 32, 32, 3, 1, 2, 13, 9, 101, 2},
      {16, 16, 16, 3, 1, 4, 6, 5, 1, 3},
      {16, 16, 16, 3, 2, 1, 19, 11, 2, 1, 5, 1},
      {16, 16, 16, 7, 1, 3, 12, 10, 102},
  };
  unsigned seed = 101;
  for (const Case& c : cases) {
    const ActivationParam act = seed % 2 ? ActivationParam{1, {0.f, 0.f}} : ActivationParam{};
    QuantConv q = make_conv(c.cin, c.cout, c.k, c.stride, c.dil, c.pad, c.term, act, seed,
                            c.group, c.kh, c.stride_h);
    const bool one = c.term == 2 || c.term == 102;
    q.wscale = absmax_scales(q.w, one ? 1 : c.group);
    if (one) q.wscale.assign(std::size_t(c.group), q.wscale[0]);
    RefTensor x(Shape::of(c.w, c.h, c.cin));
    x.v = uniform(x.v.size(), -3.f, 3.f, seed + 2);
    ConvolutionDepthWise layer{.num_output = c.cout,
                               .kernel_w = c.k,
                               .dilation_w = c.dil,
                               .stride_w = c.stride,
                               .pad_left = c.pad,
                               .bias_term = 1,
                               .weight_data_size = int(q.w.size()),
                               .group = c.group,
                               .int8_scale_term = c.term,
                               .activation = act};
    if (c.kh) layer.kernel_h = c.kh;
    if (c.stride_h) layer.stride_h = c.stride_h;
    layer.weight_data = q.w;
    layer.bias_data = q.bias;
    layer.int8.weight_scales = q.wscale;
    layer.int8.bottom_scale = q.bscale;
    layer.int8.top_scale = c.term > 100 ? q.tscale : 0.f;
    CAPTURE(c.cin, c.cout, c.group, c.k, c.stride, c.term, c.dil, c.kh, c.stride_h);
    sweep(layer, q, x, "ConvolutionDepthWise");
    ++seed;
  }
}

TEST_CASE("int8 convolutions allocate nothing per forward once the allocators hold their blocks",
          "[int8][convolution]") {
  // The int8 GEMM's gathers of channels not in whole packs of 4 (6 at pack 1; grouped, 6 a
  // group) read per-k offset tables, and the AMX GEMM's pack-16 gathers per-unit tables: both
  // live in the workspace the layer takes from its allocator, so a second forward on the same
  // shape makes no heap allocation (1 and 2 threads; each case also checked against the
  // reference, as the sweeps above do).
  struct Case {
    int cin, cout, group, k, pack;
  };
  const Case cases[] = {{6, 16, 1, 3, 1}, {18, 12, 3, 3, 1}, {32, 32, 1, 3, 16}, {20, 8, 1, 1, 4}};
  unsigned seed = 301;
  for (const Case& c : cases) {
    QuantConv q = make_conv(c.cin, c.cout, c.k, 1, 1, 1, 2, {}, seed, c.group);
    q.wscale = absmax_scales(q.w, c.group > 1 ? c.group : c.cout);
    RefTensor x(Shape::of(13, 11, c.cin));
    x.v = uniform(x.v.size(), -3.f, 3.f, seed + 2);
    for (float& v : x.v) v = float(float2int8(v * q.bscale));
    const RefTensor want = q.run(x, true);
    const Mat in = input_mat(x, true, c.pack);
    auto run = [&](auto& layer) {
      for (int threads : {1, 2}) {
        CAPTURE(c.cin, c.group, c.pack, threads);
        infer::PoolAllocator blobs, workspace;
        Option opt;
        opt.num_threads = threads;
        opt.blob_allocator = &blobs;
        opt.workspace_allocator = &workspace;
        REQUIRE(layer.prepare(ElemType::i8, c.pack, opt).ok());
        Status st{};
        Mat top;
        auto forward = [&] {
          infer::layers::detail::with_pack<16>(c.pack, [&](auto p) {
            constexpr int P = decltype(p)::value;
            st = layer.template forward<infer::i8, P>(in, top, opt);
          });
        };
        forward();
        INFO((st.ok() ? std::string("ok") : st.message()));
        REQUIRE(st.ok());
        const std::size_t heap = infer::test::heap_allocations();
        forward();
        REQUIRE(st.ok());
        CHECK(infer::test::heap_allocations() == heap);
        compare(top, want, false);
      }
    };
    if (c.group == 1) {
      Convolution layer = conv_layer(q);
      run(layer);
    } else {
      ConvolutionDepthWise layer{.num_output = c.cout,
                                 .kernel_w = c.k,
                                 .pad_left = 1,
                                 .bias_term = 1,
                                 .weight_data_size = int(q.w.size()),
                                 .group = c.group,
                                 .int8_scale_term = 2};
      layer.weight_data = q.w;
      layer.bias_data = q.bias;
      layer.int8.weight_scales = q.wscale;
      layer.int8.bottom_scale = q.bscale;
      run(layer);
    }
    ++seed;
  }
}

TEST_CASE("int8 InnerProduct matches ncnn's rules on 1-D and 3-D inputs", "[int8][innerproduct]") {
  for (const Shape& s : {Shape::of(300), Shape::of(4, 3, 16), Shape::of(1, 1, 64)}) {
    for (int nout : {37, 64}) {
      const int n = int(s.total());
      const float a = std::sqrt(3.f / float(n));
      InnerProduct ip{.num_output = nout,
                      .bias_term = 1,
                      .weight_data_size = n * nout,
                      .int8_scale_term = 2,
                      .activation = {1, {0.f, 0.f}}};
      ip.weight_data = uniform(std::size_t(n * nout), -a, a, unsigned(n + nout));
      ip.bias_data = uniform(std::size_t(nout), -0.1f, 0.1f, 5);
      ip.int8.weight_scales = absmax_scales(ip.weight_data, nout);
      ip.int8.bottom_scale = 127.f / 3.f;
      RefTensor x(s);
      x.v = uniform(x.v.size(), -3.f, 3.f, 9);
      RefTensor want(Shape::of(nout));
      for (int o = 0; o < nout; ++o) {
        std::int32_t sum = 0;
        for (int k = 0; k < n; ++k)
          sum += std::int32_t(float2int8(x.v[std::size_t(k)] * ip.int8.bottom_scale)) *
                 std::int32_t(float2int8(ip.weight_data[std::size_t(o * n + k)] *
                                         ip.int8.weight_scales[std::size_t(o)]));
        const float v = std::fma(
            float(sum), 1.f / (ip.int8.bottom_scale * ip.int8.weight_scales[std::size_t(o)]),
            ip.bias_data[std::size_t(o)]);
        want.v[std::size_t(o)] = v > 0.f ? v : 0.f;
      }
      const int packed_axis = s.dims == 1 ? s.w : s.c;
      for (int pack : {1, 4, 8, 16}) {
        if (packed_axis % pack != 0) continue;
        Option opt;
        REQUIRE(ip.prepare(ElemType::i8, pack, opt).ok());
        for (const bool as_int8 : {false, true}) {
          RefTensor xin = x;
          if (as_int8)
            for (float& v : xin.v) v = float(float2int8(v * ip.int8.bottom_scale));
          const Mat in = input_mat(xin, as_int8, pack);
          Mat top;
          Status st = Status{};
          infer::layers::detail::with_pack<16>(pack, [&](auto p) {
            constexpr int P = decltype(p)::value;
            st = as_int8 ? ip.forward<infer::i8, P>(in, top, opt)
                         : ip.forward<infer::f32, P>(in, top, opt);
          });
          INFO("input " << in.describe() << " outputs " << nout << ": "
                        << (st.ok() ? std::string("ok") : st.message()));
          REQUIRE(st.ok());
          compare(top, want, false);
        }
      }
    }
  }
}

TEST_CASE("int8 layers read their scales in ncnn's order, weights f32 or int8-tagged",
          "[int8][load]") {
  // Convolution 2 -> 4, 1x1, bias, term 102: weights, bias, 4 weight scales, bottom, top.
  std::vector<float> w = {0.5f, -1.f, 0.25f, 1.f, -0.75f, 0.1f, 0.3f, -0.2f};
  const std::vector<float> bias = {0.1f, -0.1f, 0.f, 0.2f};
  const std::vector<float> ws = {127.f, 127.f, 127.f / 0.75f, 127.f / 0.3f};
  auto layer = [] {
    return Convolution{.num_output = 4,
                       .kernel_w = 1,
                       .bias_term = 1,
                       .weight_data_size = 8,
                       .int8_scale_term = 102};
  };
  SECTION("f32 weights quantized at prepare") {
    Convolution c = layer();
    infer::io::ModelBinFromArrays mb({w, bias, ws, {42.f}, {10.f}});
    REQUIRE(c.load(mb).ok());
    CHECK(mb.consumed() == 5);
    CHECK(c.int8.weight_scales == ws);
    CHECK(c.int8.bottom_scale == 42.f);
    CHECK(c.int8.top_scale == 10.f);
    CHECK_FALSE(c.int8.weights_are_int8);
    REQUIRE(c.prepare(ElemType::i8, 1, Option{}).ok());
  }
  SECTION("int8-tagged weights taken as stored") {
    std::vector<std::byte> bin;
    auto put = [&](const void* p, std::size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      bin.insert(bin.end(), b, b + n);
    };
    const std::uint32_t tag = infer::io::kTagI8;
    put(&tag, 4);
    const std::int8_t q[8] = {64, -127, 32, 127, -127, 42, 127, -85};
    put(q, 8);
    put(bias.data(), 16);
    put(ws.data(), 16);
    const float scales[2] = {42.f, 10.f};
    put(scales, 8);
    infer::io::ModelBinFromMemory mb(bin, "q.bin");
    Convolution c = layer();
    REQUIRE(c.load(mb).ok());
    CHECK(c.int8.weights_are_int8);
    CHECK(c.weight_data[1] == -127.f);
    REQUIRE(c.prepare(ElemType::i8, 1, Option{}).ok());
    // Input 1 and 2 quantized by 42: the int8 products against the stored weights.
    Mat in(Shape::of(1, 1, 2), ElemType::f32, 1);
    static_cast<float*>(in.channel_data(0))[0] = 1.f / 42.f;
    static_cast<float*>(in.channel_data(1))[0] = 2.f / 42.f;
    Mat top;
    REQUIRE(c.forward<infer::f32, 1>(in, top, Option{}).ok());
    REQUIRE(top.type() == ElemType::i8);
    for (int oc = 0; oc < 4; ++oc) {
      const int sum = q[2 * oc] * 1 + q[2 * oc + 1] * 2;
      const float v =
          std::fma(float(sum), 1.f / (42.f * ws[std::size_t(oc)]), bias[std::size_t(oc)]);
      CHECK(static_cast<const std::int8_t*>(top.channel_data(oc))[0] == float2int8(v * 10.f));
    }
  }
  SECTION("ConvolutionDepthWise term 2: one weight scale for every group") {
    ConvolutionDepthWise d{
        .num_output = 4, .kernel_w = 1, .weight_data_size = 4, .group = 4, .int8_scale_term = 2};
    infer::io::ModelBinFromArrays mb({{1.f, 2.f, 3.f, 4.f}, {31.75f}, {5.f}});
    REQUIRE(d.load(mb).ok());
    CHECK(d.int8.weight_scales == std::vector<float>(4, 31.75f));
    CHECK(d.int8.top_scale == 0.f);
  }
}

TEST_CASE("int8 layers: errors name what is wrong", "[int8][errors]") {
  Convolution c{.num_output = 2, .kernel_w = 1, .weight_data_size = 4, .int8_scale_term = 2};
  c.weight_data = {1.f, 2.f, 3.f, 4.f};
  SECTION("missing scales") {
    infer::io::ModelBinFromArrays mb({{1.f, 2.f, 3.f, 4.f}});
    const Status s = c.load(mb);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("weight_data_int8_scales"));
  }
  SECTION("a bottom scale of 0") {
    c.int8.weight_scales = {1.f, 1.f};
    c.int8.bottom_scale = 0.f;
    const Status s = c.prepare(ElemType::i8, 1, Option{});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("bottom blob scale 0"));
  }
  SECTION("a wrong number of weight scales") {
    c.int8.weight_scales = {1.f};
    c.int8.bottom_scale = 1.f;
    const Status s = c.prepare(ElemType::i8, 1, Option{});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("1 weight scales, int8_scale_term 2 needs 2"));
  }
  SECTION("folding BatchNorm into int8 weights") {
    const float a[2] = {1.f, 1.f}, b[2] = {0.f, 0.f};
    const Status s = c.fold_affine(a, b);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("int8 weights"));
  }
  SECTION("an int8 input to a float layer") {
    Convolution f{.num_output = 2, .kernel_w = 1, .weight_data_size = 4};
    f.weight_data = {1.f, 2.f, 3.f, 4.f};
    REQUIRE(f.prepare(ElemType::f32, 1, Option{}).ok());
    Mat in(Shape::of(3, 3, 2), ElemType::i8, 1), top;
    const Status s = f.forward<infer::i8, 1>(in, top, Option{});
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("needs int8_scale_term"));
  }
  SECTION("int8 weights for a float layer") {
    std::vector<std::byte> bin(4 + 4);
    const std::uint32_t tag = infer::io::kTagI8;
    std::memcpy(bin.data(), &tag, 4);
    infer::io::ModelBinFromMemory mb(bin, "f.bin");
    Convolution f{.num_output = 2, .kernel_w = 1, .weight_data_size = 4};
    const Status s = f.load(mb);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("without int8_scale_term"));
  }
}
