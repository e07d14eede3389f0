// Element conversion kernels against this machine's own memory bandwidth: memory/copy measures a
// streaming copy first, and each conversion reports its traffic as a fraction of that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <infer/kernels/cast.hpp>
#include <string>
#include <vector>

namespace {

using infer::bf16;
using infer::f16;
using infer::i8;

constexpr std::size_t kCopyFloats = std::size_t{64} << 20;  // 256 MiB, well past the L3 cache

/// Bytes per second (read + written) of the last memory/copy run; 0 until it has run.
double g_copy_bytes_per_second = 0;

/// STREAM-style copy through the widest batch: the same plain loads and stores the kernels issue,
/// so a kernel at fraction 1 moves its bytes as fast as a copy would.
void copy_floats(const float* src, float* dst, std::size_t n) {
  constexpr int pack = infer::simd::max_width;
  if constexpr (pack > 1) {
    for (std::size_t i = 0; i < n; i += pack) {
      infer::simd::store<pack>(dst + i, infer::simd::load<pack>(src + i));
    }
  } else {
    std::copy_n(src, n, dst);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The copy rate the fractions refer to; measured here when memory/copy was filtered out.
double peak_bytes_per_second() {
  if (g_copy_bytes_per_second == 0) {
    std::vector<float> src(kCopyFloats, 1.0f), dst(kCopyFloats, 0.0f);
    copy_floats(src.data(), dst.data(), kCopyFloats);  // warm-up
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < 4; ++r) copy_floats(src.data(), dst.data(), kCopyFloats);
    g_copy_bytes_per_second = 4 * 2.0 * sizeof(float) * kCopyFloats / seconds_since(start);
  }
  return g_copy_bytes_per_second;
}

void copy(benchmark::State& state) {
  std::vector<float> src(kCopyFloats, 1.0f), dst(kCopyFloats, 0.0f);  // filled: pages mapped
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    copy_floats(src.data(), dst.data(), kCopyFloats);
    benchmark::ClobberMemory();
  }
  const double bytes = 2.0 * sizeof(float) * kCopyFloats * static_cast<double>(state.iterations());
  g_copy_bytes_per_second = bytes / seconds_since(start);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["GB_per_s"] = g_copy_bytes_per_second * 1e-9;
}

/// Runs `kernel(src, dst, n)` and reports its traffic (bytes read + written) against the copy rate.
template <class From, class To, class Kernel>
void convert(benchmark::State& state, Kernel kernel) {
  const auto n = static_cast<std::size_t>(state.range(0));
  // Kept across the several calls the library makes to size the run, so each fills them once.
  static std::vector<From> src;
  static std::vector<To> dst;
  if (src.size() != n) {
    src = std::vector<From>(n);
    for (std::size_t i = 0; i < n; ++i) {
      src[i] =
          infer::from_f32<From>(static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.003f);
    }
    dst = std::vector<To>(n);
  }
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    kernel(src.data(), dst.data(), n);
    benchmark::ClobberMemory();
  }
  const double seconds = seconds_since(start);
  const double bytes = static_cast<double>(n * (sizeof(From) + sizeof(To))) *
                       static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["GB_per_s"] = bytes / seconds * 1e-9;
  state.counters["bw_fraction_of_peak"] = bytes / seconds / peak_bytes_per_second();
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
  benchmark::RegisterBenchmark("memory/copy/256M", copy)->UseRealTime();
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
