// Grouped convolutions (ncnn's ConvolutionDepthWise with 1 < group < channels) across group
// widths: 192 input and 192 output channels in groups of 2 to 64 channels, 1x1 and 3x3 (pad 1),
// stride 1 and 2, on 14x14 to 56x56 maps, f32, fused ReLU. Each layer runs at the pack a plan gives
// it (graph/placement.hpp's own_pack: the widest that fills every group's input and output
// channels, else the widest that divides the channels) and through the layer's forward, so the
// algorithm is the one a network gets (per-group GEMM, the grouped-pack kernel, 1x1 groups of up to
// three packs along rows, or groups narrower than packed_group_min() unpacked and vectorized across
// pixels). GFLOP/s count the grouped
// convolution's own work (2 x 192 x width x k x k x outh x outw, the products a dense layer of 192
// channels does divided by the groups), and `peak_fraction` divides them by this machine's measured
// FMA peak on as many threads (AVX-512 where the CPU has it, else AVX2). The CPU issue's targets:
// 0.5 of the peak at 16 or more channels per group, 0.35 at 8, one thread, maps of 14x14 and
// larger.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <infer/layers/convolution_depthwise.hpp>
#include <random>
#include <string>

#include "support/peak.hpp"

namespace {

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::layers::ConvolutionDepthWise;

constexpr int kChannels = 192;  // divisible by every width below

struct GroupedShape {
  int width, k, stride, size;
  int out() const { return (size + 2 * (k / 2) - k) / stride + 1; }
  double flops() const { return 2.0 * kChannels * width * k * k * out() * out(); }
  std::string name() const {
    return "grouped/w" + std::to_string(width) + "/" + std::to_string(k) + "x" + std::to_string(k) +
           "_s" + std::to_string(stride) + "_" + std::to_string(size);
  }
};

ConvolutionDepthWise make_grouped(const GroupedShape& s) {
  ConvolutionDepthWise c{.num_output = kChannels,
                         .kernel_w = s.k,
                         .stride_w = s.stride,
                         .pad_left = s.k / 2,
                         .bias_term = 1,
                         .weight_data_size = kChannels * s.width * s.k * s.k,
                         .group = kChannels / s.width};
  c.activation = {1, {0.f, 0.f}};
  std::mt19937 rng(unsigned(s.width * 100 + s.k));
  std::uniform_real_distribution<float> dist(-0.3f, 0.3f);
  c.weight_data.resize(std::size_t(c.weight_data_size));
  for (float& v : c.weight_data) v = dist(rng);
  c.bias_data.assign(std::size_t(kChannels), 0.01f);
  return c;
}

/// The pack a plan runs the layer at (placement.hpp's own_pack on this build's widest pack):
/// groups of at least packed_group_min() channels at the widest pack they fill.
int plan_pack(const GroupedShape& s) {
  constexpr int widest = infer::simd::max_width;
  for (int q = widest; q > 1 && s.width >= make_grouped(s).packed_group_min(); q /= 2)
    if (s.width % q == 0) return q;
  for (int q = widest; q > 1; q /= 2)
    if (kChannels % q == 0) return q;
  return 1;
}

template <int Pack>
void run_at(benchmark::State& state, const GroupedShape& s) {
  const int threads = int(state.range(0));
  infer::PoolAllocator pool(infer::default_allocator());
  Option opt;
  opt.num_threads = threads;
  opt.workspace_allocator = &pool;
  ConvolutionDepthWise c = make_grouped(s);
  const Shape in_shape = Shape::of(s.size, s.size, kChannels);
  if (!c.prepare(ElemType::f32, Pack, opt, in_shape).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(in_shape, ElemType::f32, Pack);
  in.fill(0.5f);
  Mat out;
  for (auto _ : state) {
    const infer::Status st = c.forward<float, Pack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  using benchmark::Counter;
  state.counters["GFLOP_per_s"] = Counter(s.flops() * 1e-9, Counter::kIsIterationInvariantRate);
  namespace b = infer::bench;
  const b::Isa isa = b::cpu_supports(b::Isa::avx512) && infer::simd::max_width >= 16
                         ? b::Isa::avx512
                         : b::Isa::avx2;
  if (const double peak = b::fma_peak_gflops(isa, threads); peak > 0)
    state.counters["peak_fraction"] =
        Counter(s.flops() * 1e-9 / peak, Counter::kIsIterationInvariantRate);
  state.counters["pack"] = Pack;
  state.counters["algorithm"] = double(int(c.algorithm(Pack)));
}

void run(benchmark::State& state, const GroupedShape& s) {
  switch (plan_pack(s)) {
    case 16:
      if constexpr (infer::simd::max_width >= 16) return run_at<16>(state, s);
      break;
    case 8:
      return run_at<8>(state, s);
    case 4:
      return run_at<4>(state, s);
    default:
      return run_at<1>(state, s);
  }
  state.SkipWithError("no pack for this width");
}

const bool kRegistered = [] {
  for (const int width : {2, 4, 8, 16, 24, 32, 64})
    for (const int k : {1, 3})
      for (const int stride : {1, 2})
        for (const int size : {14, 28, 56}) {
          if (stride == 2 && size == 14) continue;
          const GroupedShape s{width, k, stride, size};
          benchmark::RegisterBenchmark(s.name().c_str(), [s](benchmark::State& st) { run(st, s); })
              ->Arg(1)
              ->Arg(2)
              ->ArgName("threads")
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
        }
  return true;
}();

}  // namespace
