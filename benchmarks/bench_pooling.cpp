// Pooling on the pooling layers of ResNet-50 and VGG-16 (224x224 input), f32 pack 16, 1 and 2
// threads. Pooling is memory-bound: each benchmark reports its traffic (input + output, each once)
// in GB/s and as a fraction of this machine's measured STREAM bandwidth on as many threads, and
// GFLOP/s counting one operation (max or add) per window position. The smaller working sets stay
// in the last-level cache while a benchmark repeats, so a fraction above 1 is possible.
// `.../general` runs the general per-window kernel on the same shape, for comparison.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <infer/kernels/pooling.hpp>
#include <infer/layers/pooling.hpp>
#include <string>

#include "support/peak.hpp"

namespace {

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::layers::Pooling;

constexpr int kPack = 16;

/// One pooling layer: c channels of size x size; k x k windows of stride `stride`, pad `pad`
/// (max), or global average pooling when k is 0.
struct PoolShape {
  const char* name;
  int c, k, stride, pad, size;

  int out() const { return k == 0 ? 1 : (size + 2 * pad - k) / stride + 1; }
  double ops() const {
    return k == 0 ? double(c) * size * size : double(c) * k * k * out() * out();
  }
  double bytes() const { return 4.0 * (double(c) * size * size + double(c) * out() * out()); }
};

constexpr PoolShape kShapes[] = {
    {"resnet50/maxpool3x3_s2_c64_112", 64, 3, 2, 1, 112},
    {"resnet50/global_avgpool_c2048_7", 2048, 0, 1, 0, 7},
    {"vgg16/maxpool2x2_s2_c64_224", 64, 2, 2, 0, 224},
    {"vgg16/maxpool2x2_s2_c128_112", 128, 2, 2, 0, 112},
    {"vgg16/maxpool2x2_s2_c256_56", 256, 2, 2, 0, 56},
    {"vgg16/maxpool2x2_s2_c512_28", 512, 2, 2, 0, 28},
    {"vgg16/maxpool2x2_s2_c512_14", 512, 2, 2, 0, 14},
};

Pooling make_pool(const PoolShape& s) {
  Pooling p;
  if (s.k == 0) {
    p.pooling_type = 1;
    p.global_pooling = 1;
  } else {
    p.kernel_w = s.k;
    p.stride_w = s.stride;
    p.pad_left = s.pad;
  }
  return p;
}

void set_counters(benchmark::State& state, const PoolShape& s, int threads) {
  using benchmark::Counter;
  state.counters["GFLOP_per_s"] = Counter(s.ops() * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["GB_per_s"] = Counter(s.bytes() * 1e-9, Counter::kIsIterationInvariantRate);
  const double peak = infer::bench::memory_bandwidth_gbs(threads);
  if (peak > 0)
    state.counters["bw_peak_fraction"] =
        Counter(s.bytes() * 1e-9 / peak, Counter::kIsIterationInvariantRate);
}

/// The layer as the graph calls it (the fast paths for these shapes).
void run_layer(benchmark::State& state, const PoolShape& s) {
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  const Pooling pool = make_pool(s);
  Mat in(Shape::of(s.size, s.size, s.c), ElemType::f32, kPack);
  in.fill(0.5f);
  Mat out;
  for (auto _ : state) {
    const infer::Status st = pool.forward<float, kPack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

/// The general per-window kernel over every channel group, for comparison (one thread).
void run_general(benchmark::State& state, const PoolShape& s) {
  const Pooling pool = make_pool(s);
  Pooling::Plan plan;
  const Shape in_shape = Shape::of(s.size, s.size, s.c);
  if (!pool.plan(in_shape, plan).ok()) {
    state.SkipWithError("plan failed");
    return;
  }
  Mat in(in_shape, ElemType::f32, kPack);
  in.fill(0.5f);
  Mat out(plan.out, ElemType::f32, kPack);
  const auto src = in.view<float, kPack>();
  const auto dst = out.view<float, kPack>();
  for (auto _ : state) {
    for (int q = 0; q < src.c; ++q) {
      float* d = s.k == 0 ? dst.data + std::size_t(q) * kPack : dst.channel(q);
      if (s.k == 0) {
        infer::kernels::pool<float, kPack>(src.channel(q), src.w, d, plan.x, plan.y, plan.out_w,
                                           plan.out_h, infer::kernels::PoolAvg{});
      } else {
        infer::kernels::pool<float, kPack>(src.channel(q), src.w, d, plan.x, plan.y, plan.out_w,
                                           plan.out_h, infer::kernels::PoolMax{});
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, 1);
}

// Counters use wall time (UseRealTime): with 2 threads the process CPU time counts both.
const bool kRegistered = [] {
  for (const PoolShape& s : kShapes) {
    benchmark::RegisterBenchmark(s.name, [s](benchmark::State& st) { run_layer(st, s); })
        ->ArgName("threads")
        ->Arg(1)
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const PoolShape& s : {kShapes[0], kShapes[1], kShapes[3]}) {
    benchmark::RegisterBenchmark((std::string(s.name) + "/general").c_str(),
                                 [s](benchmark::State& st) { run_general(st, s); })
        ->ArgName("threads")
        ->Arg(1)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
