// This machine's limits, which the kernel benchmarks report fractions of: the fp32 FMA peaks of
// AVX2 and AVX-512, the int8 peaks of AVX-512 VNNI (vpdpbusd) and of AMX tiles (tdpbusd;
// GOP_per_s), the bf16 peaks of AVX512_BF16 (vdpbf16ps) and of AMX tiles (tdpbf16ps; the AMX
// figures where the CPU and OS offer the tiles), on 1 and 2 threads (GFLOP_per_s), and
// STREAM-like memory bandwidth (GB_per_s).
// Each figure is measured once (support/peak.hpp caches it); the benchmark loop only re-reads it.
#include <benchmark/benchmark.h>

#include <string>

#include "support/peak.hpp"

namespace {

using infer::bench::Isa;

void fma_peak(benchmark::State& state, Isa isa, int threads) {
  if (!infer::bench::cpu_supports(isa)) {
    state.SkipWithError((std::string(to_string(isa)) + " is not supported by this CPU").c_str());
    return;
  }
  const double gflops = infer::bench::fma_peak_gflops(isa, threads);
  for (auto _ : state) benchmark::DoNotOptimize(gflops);
  state.counters[isa == Isa::avx512_vnni || isa == Isa::amx_int8 ? "GOP_per_s" : "GFLOP_per_s"] =
      gflops;
}

void bandwidth(benchmark::State& state, int which, int threads) {
  const infer::bench::MemoryBandwidth m = infer::bench::memory_bandwidth(threads);
  const double gbs = which == 0 ? m.read : which == 1 ? m.copy : m.triad;
  for (auto _ : state) benchmark::DoNotOptimize(gbs);
  state.counters["GB_per_s"] = gbs;
}

const bool registered = [] {
  for (int threads : {1, 2}) {
    const std::string t = "/threads:" + std::to_string(threads);
    for (Isa isa :
         {Isa::avx2, Isa::avx512, Isa::avx512_vnni, Isa::avx512_bf16, Isa::amx_bf16, Isa::amx_int8})
      benchmark::RegisterBenchmark(("peak/fma_" + std::string(to_string(isa)) + t).c_str(),
                                   fma_peak, isa, threads)
          ->Iterations(1);
    const char* names[] = {"read", "copy", "triad"};
    for (int which = 0; which < 3; ++which)
      benchmark::RegisterBenchmark(("memory/" + std::string(names[which]) + "_256M" + t).c_str(),
                                   bandwidth, which, threads)
          ->Iterations(1);
  }
  return true;
}();

}  // namespace
