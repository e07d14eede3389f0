// ConvolutionDepthWise on the depthwise layers of MobileNetV2 (and two 5x5 of EfficientNet-B0),
// 224x224 input, f32 pack 16, fused ReLU6, 1 and 2 threads; and ShuffleNetV2's 58-channel layers,
// which run at pack 1. These layers do few flops per byte,
// so beside GFLOP/s (2 x k x k x c x outh x outw) each reports its traffic (input + output +
// weights and bias, each once) in GB/s and as a fraction of this machine's measured STREAM
// bandwidth on as many threads, and GFLOP/s as a fraction of the measured AVX-512 FMA peak (stride
// 1 and 5x5 are bound by the FMA units rather than memory). The working sets (1-4 MB) stay in the
// last-level cache while a benchmark repeats, so a fraction above 1 is possible and means the
// kernel runs faster than DRAM could feed it.
// `.../direct_padded` runs the general direct kernel on a padded copy, the path these shapes
// took before the register-tiled kernels; `.../row_kernel` the register-tiled row kernel at pack 1
// (scalar: a channel has no lanes), the path pack 1 took before the plane kernel.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <infer/kernels/activation.hpp>
#include <infer/kernels/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/peak.hpp"

namespace {

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::layers::ConvolutionDepthWise;

constexpr int kPack = 16;

/// One depthwise layer of a model: c channels of size x size, k x k, stride, pad k / 2, at pack.
struct DwShape {
  const char* name;
  int c, k, stride, size;
  int pack = kPack;

  int out() const { return (size + 2 * (k / 2) - k) / stride + 1; }
  double flops() const { return 2.0 * c * k * k * out() * out(); }
  double bytes() const {
    return 4.0 * (double(c) * size * size + double(c) * out() * out() + double(c) * (k * k + 1));
  }
};

constexpr DwShape kShapes[] = {
    {"mobilenetv2/dw3x3_s1_c32_112", 32, 3, 1, 112},
    {"mobilenetv2/dw3x3_s2_c96_112", 96, 3, 2, 112},
    {"mobilenetv2/dw3x3_s1_c144_56", 144, 3, 1, 56},
    {"mobilenetv2/dw3x3_s2_c144_56", 144, 3, 2, 56},
    {"mobilenetv2/dw3x3_s1_c192_28", 192, 3, 1, 28},
    {"mobilenetv2/dw3x3_s2_c192_28", 192, 3, 2, 28},
    {"mobilenetv2/dw3x3_s1_c384_14", 384, 3, 1, 14},
    {"mobilenetv2/dw3x3_s1_c576_14", 576, 3, 1, 14},
    {"mobilenetv2/dw3x3_s2_c576_14", 576, 3, 2, 14},
    {"mobilenetv2/dw3x3_s1_c960_7", 960, 3, 1, 7},
    {"efficientnet_b0/dw5x5_s2_c144_56", 144, 5, 2, 56},
    {"efficientnet_b0/dw5x5_s1_c240_28", 240, 5, 1, 28},
    {"shufflenet_v2/dw3x3_s1_c58_28_pack1", 58, 3, 1, 28, 1},
    {"shufflenet_v2/dw3x3_s2_c58_56_pack1", 58, 3, 2, 56, 1},
};

/// The layer with ReLU6 fused (activation_type 3, Clip 0..6), as MobileNetV2 runs it.
ConvolutionDepthWise make_dw(const DwShape& s) {
  ConvolutionDepthWise c{.num_output = s.c,
                         .kernel_w = s.k,
                         .stride_w = s.stride,
                         .pad_left = s.k / 2,
                         .bias_term = 1,
                         .weight_data_size = s.c * s.k * s.k,
                         .group = s.c};
  c.activation = {3, {0.f, 6.f}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-0.3f, 0.3f);
  c.weight_data.resize(std::size_t(c.weight_data_size));
  for (float& v : c.weight_data) v = dist(rng);
  c.bias_data.assign(std::size_t(s.c), 0.01f);
  return c;
}

void set_counters(benchmark::State& state, const DwShape& s, int threads) {
  using benchmark::Counter;
  state.counters["GFLOP_per_s"] = Counter(s.flops() * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["GB_per_s"] = Counter(s.bytes() * 1e-9, Counter::kIsIterationInvariantRate);
  const double peak = infer::bench::memory_bandwidth_gbs(threads);
  if (peak > 0)
    state.counters["bw_peak_fraction"] =
        Counter(s.bytes() * 1e-9 / peak, Counter::kIsIterationInvariantRate);
  // Stride 1 (and 5x5) does enough multiply-adds per byte to be bound by the FMA units instead.
  const double fma = infer::bench::fma_peak_gflops(infer::bench::Isa::avx512, threads);
  if (fma > 0)
    state.counters["avx512_peak_fraction"] =
        Counter(s.flops() * 1e-9 / fma, Counter::kIsIterationInvariantRate);
}

/// The layer as the graph calls it (the register-tiled kernel for these shapes).
template <int Pack>
void run_layer_at(benchmark::State& state, const DwShape& s) {
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  ConvolutionDepthWise dw = make_dw(s);
  if (!dw.prepare(ElemType::f32, Pack, opt).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(Shape::of(s.size, s.size, s.c), ElemType::f32, Pack);
  in.fill(0.5f);
  Mat out;
  for (auto _ : state) {
    const infer::Status st = dw.forward<float, Pack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}
void run_layer(benchmark::State& state, const DwShape& s) {
  if (s.pack == 1)
    run_layer_at<1>(state, s);
  else
    run_layer_at<kPack>(state, s);
}

/// The row kernel at pack 1 (3x3 only), for comparison with the plane kernel the layer runs.
void run_row_kernel(benchmark::State& state, const DwShape& s) {
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  ConvolutionDepthWise dw = make_dw(s);
  if (!dw.prepare(ElemType::f32, 1, opt).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(Shape::of(s.size, s.size, s.c), ElemType::f32, 1);
  in.fill(0.5f);
  Mat out(Shape::of(s.out(), s.out(), s.c), ElemType::f32, 1);
  const infer::act::Clip relu6{0.f, 6.f};
  const infer::kernels::DepthwisePads pads{1, 1, 0.f};
  for (auto _ : state) {
    if (s.stride == 1)
      infer::kernels::convolution_depthwise_kxk<float, 1, 3, 1>(
          in.view<float, 1>(), out.view<float, 1>(), dw.weight_packed.data(), dw.bias_packed.data(),
          pads, relu6, threads);
    else
      infer::kernels::convolution_depthwise_kxk<float, 1, 3, 2>(
          in.view<float, 1>(), out.view<float, 1>(), dw.weight_packed.data(), dw.bias_packed.data(),
          pads, relu6, threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

/// The general direct kernel on a padded copy (copy included), for comparison.
void run_direct_padded(benchmark::State& state, const DwShape& s) {
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  ConvolutionDepthWise dw = make_dw(s);
  if (!dw.prepare(ElemType::f32, kPack, opt).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(Shape::of(s.size, s.size, s.c), ElemType::f32, kPack);
  in.fill(0.5f);
  Mat out(Shape::of(s.out(), s.out(), s.c), ElemType::f32, kPack);
  const int p = s.k / 2;
  const infer::kernels::ConvGeometry g{s.k, s.k, 1, 1, s.stride, s.stride};
  const infer::act::Clip relu6{0.f, 6.f};
  for (auto _ : state) {
    auto padded = infer::layers::detail::pad_input<float, kPack>(in, {p, p, p, p}, 0.f, opt);
    if (!padded.ok()) {
      state.SkipWithError(padded.message().c_str());
      return;
    }
    infer::kernels::convolution_depthwise_direct<float, kPack>(
        padded.value().view<float, kPack>(), out.view<float, kPack>(), dw.weight_packed.data(),
        dw.bias_packed.data(), g, relu6, threads);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

// Counters use wall time (UseRealTime): with 2 threads the process CPU time counts both.
const bool kRegistered = [] {
  for (const DwShape& s : kShapes) {
    benchmark::RegisterBenchmark(s.name, [s](benchmark::State& st) { run_layer(st, s); })
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const DwShape& s : {kShapes[12], kShapes[13]}) {
    benchmark::RegisterBenchmark((std::string(s.name) + "/row_kernel").c_str(),
                                 [s](benchmark::State& st) { run_row_kernel(st, s); })
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const DwShape& s : {kShapes[0], kShapes[3], kShapes[10]}) {
    benchmark::RegisterBenchmark((std::string(s.name) + "/direct_padded").c_str(),
                                 [s](benchmark::State& st) { run_direct_padded(st, s); })
        ->ArgName("threads")
        ->Arg(1)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
