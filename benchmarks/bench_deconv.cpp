// Deconvolution on the upsampling layers of FCN / U-Net style decoders, f32, 1 and 2 threads:
// GFLOP/s in transposed-convolution flops (2 x cin x cout x k x k x inh x inw) and the fraction of
// this machine's measured AVX-512 FMA peak on as many threads. The layer runs the algorithm it
// chooses (Deconvolution::algorithm(): the packed GEMM with a col2im add); .../direct runs the
// direct gather kernel on the same shape through the kernel, which is what the layer ran before.
// .../f16 and .../bf16 run the layer on that storage. The small-channel shapes (an RGB head, a
// 3-channel input) back the choice of the GEMM for every shape.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <infer/convert.hpp>
#include <infer/kernels/deconvolution.hpp>
#include <infer/layers/deconvolution.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/peak.hpp"

namespace {

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::layers::Deconvolution;

/// One deconvolution layer: input w = h = size, cin -> cout, k x k, stride, pad cut from each side.
struct DeconvShape {
  const char* name;
  int cin, cout, k, stride, pad, size;
};

constexpr DeconvShape kShapes[] = {
    {"fcn/deconv4x4_s2_c256_k128_14", 256, 128, 4, 2, 1, 14},
    {"unet/deconv4x4_s2_c128_k64_28", 128, 64, 4, 2, 1, 28},
    {"deconv3x3_s1_c64_k64_56", 64, 64, 3, 1, 1, 56},
    {"unet/deconv2x2_s2_c512_k256_7", 512, 256, 2, 2, 0, 7},
    // U-Net's last up-convolution: a 224x224 output, 6 MiB of f32 sums per 32 channels, which
    // the GEMM holds only a band of rows of at a time.
    {"unet/deconv2x2_s2_c128_k64_112", 128, 64, 2, 2, 0, 112},
    {"head/deconv4x4_s2_c16_k3_56", 16, 3, 4, 2, 1, 56},
    {"small/deconv3x3_s2_c3_k16_56", 3, 16, 3, 2, 1, 56},
};

Deconvolution make_deconv(const DeconvShape& s) {
  Deconvolution d{.num_output = s.cout,
                  .kernel_w = s.k,
                  .stride_w = s.stride,
                  .pad_left = s.pad,
                  .bias_term = 1,
                  .weight_data_size = s.cout * s.cin * s.k * s.k};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  d.weight_data.resize(std::size_t(d.weight_data_size));
  for (float& v : d.weight_data) v = dist(rng);
  d.bias_data.assign(std::size_t(s.cout), 0.01f);
  return d;
}

void set_counters(benchmark::State& state, const DeconvShape& s, int threads) {
  const double gflop = 2e-9 * s.cin * s.cout * s.k * s.k * s.size * s.size;
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  const double peak = infer::bench::fma_peak_gflops(infer::bench::Isa::avx512, threads);
  if (peak > 0)
    state.counters["avx512_peak_fraction"] =
        benchmark::Counter(gflop / peak, benchmark::Counter::kIsIterationInvariantRate);
}

/// The layer's own forward on storage T (Pack: the input pack, pack_for(cin, 16)).
template <class T, int Pack>
void run_layer(benchmark::State& state, const DeconvShape& s) {
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  Deconvolution d = make_deconv(s);
  if (!d.prepare(infer::elem_type_v<T>, Pack, opt).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat f32_in(Shape::of(s.size, s.size, s.cin), ElemType::f32, Pack), in;
  f32_in.fill(0.5f);
  if (!infer::convert(f32_in, in, infer::elem_type_v<T>, Pack, opt).ok()) {
    state.SkipWithError("convert failed");
    return;
  }
  Mat out;
  for (auto _ : state) {
    const infer::Status st = d.forward<T, Pack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

/// The direct gather kernel (the layer's algorithm before the GEMM), weights in its layout.
template <int Pack>
void run_direct(benchmark::State& state, const DeconvShape& s) {
  namespace k = infer::kernels;
  namespace detail = infer::layers::detail;
  const int threads = int(state.range(0));
  Deconvolution d = make_deconv(s);
  if (!detail::deconv_prepare(d, 1, Pack, "Deconvolution").ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  const int outw = (s.size - 1) * s.stride + s.k - 2 * s.pad;
  const int out_pack = infer::pack_for(s.cout, Pack);
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::f32, Pack);
  in.fill(0.5f);
  Mat out(Shape::of(outw, outw, s.cout), ElemType::f32, out_pack);
  k::DeconvGeometry g;
  g.w = g.h = s.size;
  g.in_pack = Pack;
  g.in_cstep = in.cstep() * Pack;
  g.outw = g.outh = outw;
  g.out_groups = s.cout / out_pack;
  g.out_cstep = out.cstep() * out_pack;
  g.kernel_w = g.kernel_h = s.k;
  g.stride_w = g.stride_h = s.stride;
  g.offset_x = g.offset_y = s.pad;
  for (auto _ : state) {
    detail::with_pack<Pack>(out_pack, [&](auto op) {
      k::deconvolution<float, decltype(op)::value>(
          in.data_as<const float>(), out.data_as<float>(), g, d.packed_weight.data(),
          d.packed_blocks.data(), d.bias_data.data(), infer::act::Identity{}, threads);
    });
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

/// Registers `f` on 1 and 2 threads. One thread is timed by CPU time, so time spent descheduled
/// on a shared machine does not count; two by wall time, as their CPU time adds up.
template <class F>
void register_threads(const std::string& name, F f) {
  benchmark::RegisterBenchmark(name.c_str(), f)
      ->ArgName("threads")
      ->Arg(1)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(name.c_str(), f)
      ->ArgName("threads")
      ->Arg(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

template <int Pack>
void register_shape(const DeconvShape& s) {
  const std::string base = s.name;
  register_threads(base, [s](benchmark::State& st) { run_layer<float, Pack>(st, s); });
  register_threads(base + "/direct", [s](benchmark::State& st) { run_direct<Pack>(st, s); });
  if (s.cin >= 64) {  // the same GEMM on f16 and bf16 storage (widened in registers)
    register_threads(base + "/f16",
                     [s](benchmark::State& st) { run_layer<infer::f16, Pack>(st, s); });
    register_threads(base + "/bf16",
                     [s](benchmark::State& st) { run_layer<infer::bf16, Pack>(st, s); });
  }
}

const bool kRegistered = [] {
  for (const DeconvShape& s : kShapes) {
    switch (infer::pack_for(s.cin, 16)) {
      case 16:
        register_shape<16>(s);
        break;
      case 8:
        register_shape<8>(s);
        break;
      case 4:
        register_shape<4>(s);
        break;
      default:
        register_shape<1>(s);
    }
  }
  return true;
}();

}  // namespace
