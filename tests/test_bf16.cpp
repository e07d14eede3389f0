// bf16 arithmetic (kernels/bf16.hpp): Convolution's GEMM (1x1 read in place, im2col gathers of
// packs 4, 8 and 16, pack-1 outputs, partial channel blocks, the small-map channel split) and
// InnerProduct's one-sample product multiply bf16 pairs
// into f32 sums, on bf16 storage and on f32 storage with Option::bf16_arithmetic. They are checked
// against a reference that rounds inputs and weights to bf16 and sums in double: what remains is
// f32 summation order (and bf16 output rounding on bf16 storage), so the bounds are tight. The
// same outputs differ from the unrounded f32 reference by more than f32 rounding, which shows the
// bf16 path ran (no silent f32 fallback). Winograd in bf16 also rounds its transformed inputs and
// weights, which no direct reference reproduces: it is held to the f32 reference within a stated
// bound. Pack-1 inputs (3-channel stems) and builds without AVX512_BF16 keep f32 arithmetic: no
// bf16 weights are prepared, and the outputs are the f32 reference's. Where the CPU offers AMX
// tiles (kernels/amx.hpp) every convolution runs both ways, on the tiles (Winograd's 3x3 layers
// then take the tiles' im2col GEMM, held to the GEMM's bound) and with Option::use_amx off on
// vdpbf16ps.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/convert.hpp>
#include <infer/kernels/amx.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/innerproduct.hpp>
#include <initializer_list>
#include <vector>

#include "support/fused_instances.hpp"
#include "support/random_values.hpp"
#include "support/ref_tensor.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::Status;
using infer::layers::Convolution;
using infer::layers::InnerProduct;
using infer::test::RefTensor;

namespace {

constexpr bool kBf16 = infer::kernels::bf16dot::kAvailable;
// The sanitizer build runs f32 storage only (with the option): bf16 storage would compile the
// layers' bf16 kernels again in this file, which its other test files do not sweep either.
#ifdef INFER_TEST_SANITIZED
constexpr bool kBf16Storage = false;
#else
constexpr bool kBf16Storage = true;
#endif

using infer::test::round_bf16;
using infer::test::uniform;

struct ConvCase {
  int cin, cout, k, stride, dil, pad, w, h;
  int act = 0;  // 0 none, 1 ReLU, 2 leaky 0.1
};

float act_ref(float x, int act) {
  if (act == 1) return x > 0.f ? x : 0.f;
  if (act == 2) return x > 0.f ? x : 0.1f * x;
  return x;
}

/// The convolution of x, sums in double; `rounded`: inputs and weights rounded to bf16 first.
RefTensor conv_ref(const ConvCase& c, const RefTensor& x, const std::vector<float>& w,
                   const std::vector<float>& bias, bool rounded) {
  const int ow = (c.w + 2 * c.pad - (c.dil * (c.k - 1) + 1)) / c.stride + 1;
  const int oh = (c.h + 2 * c.pad - (c.dil * (c.k - 1) + 1)) / c.stride + 1;
  RefTensor out(Shape::of(ow, oh, c.cout));
  auto r = [&](float v) { return rounded ? round_bf16(v) : v; };
  for (int oc = 0; oc < c.cout; ++oc)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        double sum = bias[std::size_t(oc)];
        for (int ic = 0; ic < c.cin; ++ic)
          for (int ky = 0; ky < c.k; ++ky)
            for (int kx = 0; kx < c.k; ++kx) {
              const int iy = oy * c.stride - c.pad + ky * c.dil;
              const int ix = ox * c.stride - c.pad + kx * c.dil;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              sum += double(r(x.at(ix, iy, 0, ic))) *
                     double(r(w[((std::size_t(oc) * c.cin + ic) * c.k + ky) * c.k + kx]));
            }
        out.at(ox, oy, 0, oc) = act_ref(float(sum), c.act);
      }
  return out;
}

/// Largest |got - want| over the largest |want|.
float rel_error(const Mat& top, const RefTensor& want) {
  const RefTensor got = infer::test::from_mat(top);
  REQUIRE(got.shape == want.shape);
  float peak = 1e-6f, err = 0.f;
  for (std::size_t i = 0; i < want.v.size(); ++i) {
    peak = std::max(peak, std::fabs(want.v[i]));
    err = std::max(err, std::fabs(got.v[i] - want.v[i]));
  }
  return err / peak;
}

Mat as_mat(const RefTensor& x, ElemType type, int pack) {
  Option opt;
  Mat f = infer::test::to_mat(x), out;
  REQUIRE(infer::convert(f, out, type, pack, opt).ok());
  return out;
}

Convolution make_conv(const ConvCase& c, const std::vector<float>& w,
                      const std::vector<float>& bias) {
  Convolution conv{.num_output = c.cout,
                   .kernel_w = c.k,
                   .dilation_w = c.dil,
                   .stride_w = c.stride,
                   .pad_left = c.pad,
                   .bias_term = 1,
                   .weight_data_size = int(w.size())};
  if (c.act == 1) conv.activation.type = 1;
  if (c.act == 2) {
    conv.activation.type = 2;
    conv.activation.params[0] = 0.1f;
  }
  conv.weight_data = w;
  conv.bias_data = bias;
  return conv;
}

/// Runs `conv` at storage `type` and every pack > 1 the input channels allow (`packs`), 1 and 2
/// threads, and returns the largest relative error against `want` (and checks the algorithm and
/// the weights prepare chose).
float run_conv(Convolution& conv, const ConvCase& c, const RefTensor& x, const RefTensor& want,
               ElemType type, Convolution::Algorithm algo,
               std::initializer_list<int> packs = {4, 8, 16}, bool amx_only = false) {
  float worst = 0.f;
  if (!kBf16Storage && type != ElemType::f32) return worst;
  const bool amx = infer::kernels::amx::usable();
  for (int pack : packs) {
    for (const bool use_amx : {true, false}) {
      if (c.cin % pack != 0) continue;
      if (conv.algorithm(pack) != algo) continue;
      if (!use_amx && (!amx || amx_only)) continue;  // !amx: the same run as use_amx on
      Option opt;
      opt.bf16_arithmetic = true;
      opt.use_amx = use_amx;
      REQUIRE(conv.prepare(type, pack, opt).ok());
      CHECK(conv.weight_bf16.empty() == (!kBf16 || pack == 1));
      CHECK(conv.weight_amx == (use_amx && amx && kBf16 && pack > 1));
      const Mat in = as_mat(x, type, pack);
      for (int threads : {1, 2}) {
        opt.num_threads = threads;
        Mat top;
        Status st;
        infer::layers::detail::with_pack<16>(pack, [&](auto p) {
          constexpr int P = decltype(p)::value;
          if constexpr (kBf16Storage)
            st = type == ElemType::bf16 ? conv.forward<infer::bf16, P>(in, top, opt)
                                        : conv.forward<infer::f32, P>(in, top, opt);
          else
            st = conv.forward<infer::f32, P>(in, top, opt);
        });
        INFO("pack " << pack << ", AMX " << conv.weight_amx << ", threads " << threads << ": "
                     << (st.ok() ? std::string("ok") : st.message()));
        REQUIRE(st.ok());
        REQUIRE(top.type() == type);
        worst = std::max(worst, rel_error(top, want));
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("bf16 Convolution GEMM against a bf16-rounded reference", "[bf16][convolution]") {
  const std::vector<ConvCase> cases = {
      {16, 40, 1, 1, 1, 0, 9, 7},       // 1x1 in place (bf16 storage), a partial second block
      {32, 64, 1, 2, 1, 0, 13, 11},     // 1x1 stride 2: gathered
      {4, 32, 3, 2, 1, 1, 23, 19, 1},   // a stem at pack 4: K = 36
      {12, 13, 3, 1, 1, 1, 10, 9, 2},   // 13 outputs: pack-1 output
      {8, 24, 3, 1, 2, 2, 12, 10},      // dilated 3x3 (im2col at packs 4, 8)
      {12, 20, 5, 2, 1, 2, 15, 14, 1},  // 5x5 stride 2
      {64, 128, 3, 2, 1, 1, 14, 14},    // a 7x7 output of many channels: the channel split
      {16, 16, 1, 1, 1, 0, 300, 1},     // many tiles, a partial last one
      // AMX: panels of several steps and a partial last one, K over several K blocks with a
      // partial tile row (K = 1296, dilated), several passes over the output channels (4.1 MB
      // of weights), and a 5x5 output's split of 40 channels over the threads.
      {144, 40, 3, 1, 2, 2, 31, 23, 1},
      {288, 288, 5, 1, 1, 2, 9, 8},
      {48, 40, 3, 2, 1, 1, 9, 9, 2},
  };
  for (const ConvCase& c : cases) {
    const std::vector<float> w = uniform(std::size_t(c.cout) * c.cin * c.k * c.k, -0.5f, 0.5f, 7);
    const std::vector<float> bias = uniform(std::size_t(c.cout), -0.2f, 0.2f, 8);
    RefTensor x(Shape::of(c.w, c.h, c.cin));
    x.v = uniform(x.v.size(), -1.f, 1.f, 9);
    for (float& v : x.v) v = round_bf16(v);  // bf16 storage holds these exactly
    Convolution conv = make_conv(c, w, bias);
    INFO("cin " << c.cin << " cout " << c.cout << " k " << c.k << " stride " << c.stride
                << " dilation " << c.dil << " map " << c.w << "x" << c.h);
    const RefTensor want = conv_ref(c, x, w, bias, true);
    const RefTensor exact = conv_ref(c, x, w, bias, false);
    // f32 storage with Option::bf16_arithmetic: f32 summation order only.
    const float e32 =
        run_conv(conv, c, x, kBf16 ? want : exact, ElemType::f32, Convolution::Algorithm::gemm);
    CHECK(e32 <= 1e-5f);
    // bf16 storage: the output rounded to bf16 (2^-9 relative) on top.
    const float e16 =
        run_conv(conv, c, x, kBf16 ? want : exact, ElemType::bf16, Convolution::Algorithm::gemm);
    CHECK(e16 <= 4e-3f);
    // The rounded weights show: bf16 arithmetic is not the f32 result.
    if (kBf16)
      CHECK(run_conv(conv, c, x, exact, ElemType::f32, Convolution::Algorithm::gemm) > 1e-4f);
  }
}

TEST_CASE("bf16 arithmetic leaves a pack-1 input (a stem) in f32", "[bf16][convolution]") {
  const ConvCase c{3, 32, 3, 2, 1, 1, 23, 19, 1};
  const std::vector<float> w = uniform(std::size_t(c.cout) * c.cin * 9, -0.5f, 0.5f, 37);
  const std::vector<float> bias = uniform(std::size_t(c.cout), -0.2f, 0.2f, 38);
  RefTensor x(Shape::of(c.w, c.h, c.cin));
  x.v = uniform(x.v.size(), -1.f, 1.f, 39);
  for (float& v : x.v) v = round_bf16(v);
  Convolution conv = make_conv(c, w, bias);
  const RefTensor exact = conv_ref(c, x, w, bias, false);
  CHECK(run_conv(conv, c, x, exact, ElemType::f32, Convolution::Algorithm::gemm, {1}) <= 1e-5f);
  CHECK(run_conv(conv, c, x, exact, ElemType::bf16, Convolution::Algorithm::gemm, {1}) <= 5e-3f);
}

TEST_CASE("bf16 Convolution Winograd within its bound of the f32 result", "[bf16][convolution]") {
  // Transformed inputs and weights rounded to bf16 (F(4x4, 3x3)), whose sums the output
  // transform scales by up to 8 x 8: measured on an Intel Xeon (AVX512_BF16) up to 6.1e-2 of the
  // largest output on these (GEMM: 3e-3); held to 1.2e-1.
  const std::vector<ConvCase> cases = {
      {16, 16, 3, 1, 1, 1, 17, 13, 1},
      {32, 48, 3, 1, 1, 1, 7, 7},
      {64, 32, 3, 1, 1, 0, 30, 9, 2},
  };
  for (const ConvCase& c : cases) {
    const std::vector<float> w = uniform(std::size_t(c.cout) * c.cin * 9, -0.5f, 0.5f, 17);
    const std::vector<float> bias = uniform(std::size_t(c.cout), -0.2f, 0.2f, 18);
    RefTensor x(Shape::of(c.w, c.h, c.cin));
    x.v = uniform(x.v.size(), -1.f, 1.f, 19);
    for (float& v : x.v) v = round_bf16(v);
    Convolution conv = make_conv(c, w, bias);
    INFO("cin " << c.cin << " cout " << c.cout << " map " << c.w << "x" << c.h);
    const RefTensor exact = conv_ref(c, x, w, bias, false);
    const float e32 = run_conv(conv, c, x, exact, ElemType::f32, Convolution::Algorithm::winograd);
    const float e16 = run_conv(conv, c, x, exact, ElemType::bf16, Convolution::Algorithm::winograd);
    CHECK(e32 <= (kBf16 ? 1.2e-1f : 1e-5f));
    CHECK(e16 <= (kBf16 ? 1.2e-1f : 5e-3f));
    if (kBf16) CHECK(e32 > 1e-5f);  // rounded: the bf16 GEMMs ran
    // On AMX tiles the layer runs the im2col GEMM: the GEMM's bounds.
    if (kBf16 && infer::kernels::amx::usable()) {
      const RefTensor want = conv_ref(c, x, w, bias, true);
      CHECK(run_conv(conv, c, x, want, ElemType::f32, Convolution::Algorithm::winograd, {4, 8, 16},
                     true) <= 1e-5f);
      CHECK(run_conv(conv, c, x, want, ElemType::bf16, Convolution::Algorithm::winograd, {4, 8, 16},
                     true) <= 4e-3f);
    }
  }
}

TEST_CASE("bf16 InnerProduct one-sample product", "[bf16][innerproduct]") {
  for (const auto& [n, m] : {std::pair{37, 21}, std::pair{256, 100}, std::pair{1000, 64}}) {
    const std::vector<float> w = uniform(std::size_t(n) * m, -0.5f, 0.5f, 27);
    const std::vector<float> bias = uniform(std::size_t(m), -0.2f, 0.2f, 28);
    RefTensor x(Shape::of(n));
    x.v = uniform(std::size_t(n), -1.f, 1.f, 29);
    for (float& v : x.v) v = round_bf16(v);
    InnerProduct ip;
    ip.num_output = m;
    ip.bias_term = 1;
    ip.weight_data_size = n * m;
    ip.activation.type = 1;
    ip.weight_data = w;
    ip.bias_data = bias;
    RefTensor want(Shape::of(m)), exact(Shape::of(m));
    for (int o = 0; o < m; ++o) {
      double s = bias[std::size_t(o)], e = s;
      for (int k = 0; k < n; ++k) {
        s += double(x.v[std::size_t(k)]) * round_bf16(w[std::size_t(o) * n + k]);
        e += double(x.v[std::size_t(k)]) * w[std::size_t(o) * n + k];
      }
      want.v[std::size_t(o)] = std::max(float(s), 0.f);
      exact.v[std::size_t(o)] = std::max(float(e), 0.f);
    }
    for (const ElemType type : {ElemType::f32, ElemType::bf16}) {
      if (!kBf16Storage && type != ElemType::f32) continue;
      Option opt;
      opt.bf16_arithmetic = true;
      REQUIRE(ip.prepare(type, 1, opt).ok());
      CHECK(ip.packed_weight_bf16.empty() == !kBf16);
      for (int threads : {1, 2}) {
        opt.num_threads = threads;
        const Mat in = as_mat(x, type, 1);
        Mat top;
        Status st;
        if constexpr (kBf16Storage)
          st = type == ElemType::bf16 ? ip.forward<infer::bf16, 1>(in, top, opt)
                                      : ip.forward<infer::f32, 1>(in, top, opt);
        else
          st = ip.forward<infer::f32, 1>(in, top, opt);
        INFO("n " << n << " m " << m << " threads " << threads << " "
                  << (st.ok() ? std::string("ok") : st.message()));
        REQUIRE(st.ok());
        const float e = rel_error(top, kBf16 ? want : exact);
        CHECK(e <= (type == ElemType::bf16 ? 4e-3f : 1e-5f));
        if (kBf16 && type == ElemType::f32) CHECK(rel_error(top, exact) > 1e-5f);
      }
    }
  }
}

TEST_CASE("bf16 weights are refused at another storage type", "[bf16][convolution]") {
  if (!kBf16) return;
  const ConvCase c{16, 16, 1, 1, 1, 0, 4, 4};
  Convolution conv = make_conv(c, uniform(256, -1.f, 1.f, 1), uniform(16, -1.f, 1.f, 2));
  Option opt;
  REQUIRE(conv.prepare(ElemType::bf16, 16, opt).ok());
  RefTensor x(Shape::of(4, 4, 16));
  const Mat in = as_mat(x, ElemType::f16, 16);
  Mat top;
  if constexpr (kBf16Storage) {
    const Status st = conv.forward<infer::f16, 16>(in, top, opt);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(),
               Catch::Contains("prepared for bf16 arithmetic") && Catch::Contains("f16 storage"));
  }
}
