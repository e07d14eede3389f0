// InnerProduct (fully connected) at batch 1 on the classifier shapes of VGG-16, ResNet-50 and
// MobileNetV2, 1 and 2 threads. A matrix-vector product reads each weight once for one FMA, so it
// is bound by memory bandwidth: bw_fraction_of_peak holds the bytes it moves (weights, input,
// bias, output) per second against the best STREAM-like rate this machine reaches on as many
// threads (support/peak.hpp); fma_fraction_of_peak is the same run against the AVX-512 FMA peak.
// Rates are per second of CPU time on one thread, of wall time on two (as the peaks are timed).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <infer/layers/innerproduct.hpp>
#include <memory>
#include <string>

#include "support/peak.hpp"

namespace {

using infer::Mat;
using infer::Shape;
using infer::layers::InnerProduct;

/// The blob pack the layer runs at: the widest native batch, as the composer picks.
constexpr int kPack = infer::simd::max_width;

/// One prepared layer, kept while the benchmarks of its shape run (VGG's fc6 holds 2 x 411 MB:
/// ncnn's weights and the repacked ones), rebuilt when the shape changes.
const InnerProduct& layer_for(int num_input, int num_output) {
  static std::unique_ptr<InnerProduct> cached;
  if (!cached || cached->num_output != num_output || cached->num_input() != num_input) {
    cached.reset();  // free the previous weights first
    auto ip = std::make_unique<InnerProduct>();
    ip->num_output = num_output;
    ip->bias_term = 1;
    ip->weight_data_size = num_input * num_output;
    ip->activation = {1, {}};  // ReLU, as VGG's fc6/fc7: the fused epilogue is part of the run
    ip->weight_data.resize(std::size_t(num_input) * num_output);
    for (std::size_t i = 0; i < ip->weight_data.size(); ++i)
      ip->weight_data[i] = float(int(i % 197) - 98) * 1e-3f;
    ip->bias_data.assign(std::size_t(num_output), 0.01f);
    infer::Option opt;
    if (auto s = ip->prepare(infer::ElemType::f32, kPack, opt); !s.ok()) return *ip;
    cached = std::move(ip);
  }
  return *cached;
}

/// Batch 1 (a 1-D input: the matrix-vector kernel) or a batch of `batch` rows (a 2-D input of
/// num_input columns, rows packed by kPack: the GEMM kernel).
void run_fc(benchmark::State& state, int num_input, int num_output, int batch, int threads) {
  const InnerProduct& ip = layer_for(num_input, num_output);
  infer::Option opt;
  opt.num_threads = threads;
  Mat in, out;
  const Shape shape = batch == 1 ? Shape::of(num_input) : Shape::of(num_input, batch);
  if (auto s = in.create(shape, infer::ElemType::f32, kPack); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  float* x = in.data_as<float>();
  for (int k = 0; k < num_input * batch; ++k) x[k] = float(k % 13) * 0.1f;
  // Measured before the timed loop (cached), so the first benchmark pays it, untimed.
  const double bw = infer::bench::memory_bandwidth_gbs(threads) * 1e9;
  const double fma = infer::bench::fma_peak_gflops(infer::bench::Isa::avx512, threads) * 1e9;
  if (auto s = ip.forward<float, kPack>(in, out, opt); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  const double start = infer::bench::seconds_now(threads);
  for (auto _ : state) {
    auto s = ip.forward<float, kPack>(in, out, opt);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  const double seconds = infer::bench::seconds_now(threads) - start;
  const double n = num_input, m = num_output;
  const double rows = batch;
  const double flops = 2 * n * m * rows * double(state.iterations());
  const double bytes =
      (n * m + rows * n + m + rows * m) * sizeof(float) * double(state.iterations());
  state.counters["GFLOP_per_s"] = flops / seconds * 1e-9;
  state.counters["GB_per_s"] = bytes / seconds * 1e-9;
  state.counters["bw_fraction_of_peak"] = bytes / seconds / bw;
  if (fma > 0) state.counters["fma_fraction_of_peak"] = flops / seconds / fma;
}

const bool registered = [] {
  struct Fc {
    const char* name;
    int num_input, num_output, batch;
  };
  // The batch-16 runs are the GEMM (weights reused 16 times: compute-bound, see
  // fma_fraction_of_peak); batch 1 is memory-bound (bw_fraction_of_peak).
  const Fc layers[] = {{"vgg16/fc6_25088x4096", 25088, 4096, 1},
                       {"vgg16/fc7_4096x4096", 4096, 4096, 1},
                       {"vgg16/fc8_4096x1000", 4096, 1000, 1},
                       {"resnet50/fc_2048x1000", 2048, 1000, 1},
                       {"mobilenetv2/classifier_1280x1000", 1280, 1000, 1},
                       {"vgg16/fc7_4096x4096_batch16", 4096, 4096, 16},
                       {"resnet50/fc_2048x1000_batch16", 2048, 1000, 16}};
  for (const Fc& fc : layers)
    for (int threads : {1, 2}) {
      auto* b = benchmark::RegisterBenchmark(
          (std::string(fc.name) + "/threads:" + std::to_string(threads)).c_str(), run_fc,
          fc.num_input, fc.num_output, fc.batch, threads);
      b->MinTime(0.3);
      // One thread: its CPU time, which time spent descheduled on this shared machine does not
      // inflate. Two: wall time (the main thread's CPU time would leave out the other's work), so
      // these figures hold only when both cores are free.
      if (threads > 1) b->UseRealTime();
    }
  return true;
}();

}  // namespace
