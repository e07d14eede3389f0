// Element conversion kernels against this machine's own memory bandwidth: memory/copy measures a
// streaming copy first, and each conversion reports its traffic as a fraction of that.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/kernels/cast.hpp>
#include <string>
#include <vector>

namespace {

using infer::bf16;
using infer::f16;
using infer::i8;

constexpr std::size_t kCopyBytes = std::size_t{256} << 20;  // well past any L3 cache

/// Bytes per second (read + written) of the last memory/copy run; 0 until it has run.
double g_copy_bytes_per_second = 0;

/// Copies kCopyBytes `repeats` times and returns the traffic rate.
double copy_rate(std::vector<char>& src, std::vector<char>& dst, int repeats) {
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  return 2.0 * static_cast<double>(kCopyBytes) * repeats / seconds.count();
}

/// The copy rate the fractions refer to, measured here when memory/copy was filtered out.
double peak_bytes_per_second() {
  if (g_copy_bytes_per_second == 0) {
    std::vector<char> src(kCopyBytes, 1), dst(kCopyBytes, 0);
    copy_rate(src, dst, 1);  // warm-up
    g_copy_bytes_per_second = copy_rate(src, dst, 4);
  }
  return g_copy_bytes_per_second;
}

void copy(benchmark::State& state) {
  std::vector<char> src(kCopyBytes, 1), dst(kCopyBytes, 0);  // filled, so pages are mapped
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  const double bytes =
      2.0 * static_cast<double>(kCopyBytes) * static_cast<double>(state.iterations());
  g_copy_bytes_per_second = bytes / seconds.count();
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["GB_per_s"] = g_copy_bytes_per_second * 1e-9;
}

/// Runs `kernel(src, dst, n)` and reports its traffic against the copy rate.
template <class From, class To, class Kernel>
void convert(benchmark::State& state, Kernel kernel) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<From> src(n);
  for (std::size_t i = 0; i < n; ++i) {
    src[i] = infer::from_f32<From>(static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.003f);
  }
  std::vector<To> dst(n);
  for (auto _ : state) {
    kernel(src.data(), dst.data(), n);
    benchmark::ClobberMemory();
  }
  const double bytes = static_cast<double>(n * (sizeof(From) + sizeof(To))) *
                       static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["bw_fraction_of_peak"] =
      benchmark::Counter(bytes / peak_bytes_per_second(), benchmark::Counter::kIsRate);
}

template <class From, class To, class Kernel>
void register_convert(const std::string& name, Kernel kernel) {
  for (auto [label, n] :
       {std::pair{"16M", std::int64_t{16} << 20}, {"16K", std::int64_t{16} << 10}}) {
    benchmark::RegisterBenchmark(("convert/" + name + "/" + label).c_str(),
                                 [kernel](benchmark::State& s) { convert<From, To>(s, kernel); })
        ->Arg(n)
        ->UseRealTime();
  }
}

// Registered at start-up in this order, so memory/copy runs (and sets the peak) first.
const bool registered = [] {
  benchmark::RegisterBenchmark("memory/copy/256M", copy)->UseRealTime()->MinTime(1.0);
  register_convert<float, f16>(
      "f32_to_f16", [](const float* s, f16* d, std::size_t n) { infer::kernels::cast(s, d, n); });
  register_convert<f16, float>(
      "f16_to_f32", [](const f16* s, float* d, std::size_t n) { infer::kernels::cast(s, d, n); });
  register_convert<float, bf16>(
      "f32_to_bf16", [](const float* s, bf16* d, std::size_t n) { infer::kernels::cast(s, d, n); });
  register_convert<bf16, float>(
      "bf16_to_f32", [](const bf16* s, float* d, std::size_t n) { infer::kernels::cast(s, d, n); });
  register_convert<float, i8>("quantize_f32_to_i8", [](const float* s, i8* d, std::size_t n) {
    infer::kernels::quantize(s, d, n, 127.0f / 3.0f);
  });
  register_convert<i8, float>("dequantize_i8_to_f32", [](const i8* s, float* d, std::size_t n) {
    infer::kernels::dequantize(s, d, n, 3.0f / 127.0f);
  });
  return true;
}();

}  // namespace
