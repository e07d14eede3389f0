// Element conversion kernels against this machine's own memory bandwidth: memory/copy measures a
// streaming copy first, and each conversion reports its traffic as a fraction of that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <infer/kernels/cast.hpp>
#include <infer/kernels/pack.hpp>
#include <memory>
#include <string>
#include <utility>

namespace {

using infer::bf16;
using infer::f16;
using infer::i8;

// 256 MiB each, far past the L3 cache. In a VM the copy rate still falls with the footprint
// (nested paging), so the large conversions use buffers of the same size as the copy.
constexpr std::size_t kPoolBytes = std::size_t{256} << 20;
constexpr std::size_t kLarge = 64 << 20;  // elements: 256 MiB of f32
constexpr std::size_t kSmall = 16 << 10;  // elements: 64 KiB of f32, resident in L2
constexpr double kMinSeconds = 0.3;       // per benchmark: keeps the whole run near 10 s

/// Source (0) and destination (1) buffers shared by every benchmark, so pages are mapped once.
std::byte* pool(int which) {
  static const std::unique_ptr<std::byte[]> buffers[2] = {
      std::make_unique<std::byte[]>(kPoolBytes), std::make_unique<std::byte[]>(kPoolBytes)};
  return buffers[which].get();
}

/// Which input the source buffer holds: the element type (by the address of its tag) and length.
template <class T>
constexpr char kTypeTag = 0;
const char* g_filled_type = nullptr;
std::size_t g_filled_n = 0;

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

/// CPU seconds this process has used. Rates use CPU time, as the library's own do by default,
/// because on a shared machine wall time also counts the time other processes hold the core.
double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

void copy_pool() {
  copy_floats(reinterpret_cast<const float*>(pool(0)), reinterpret_cast<float*>(pool(1)),
              kPoolBytes / sizeof(float));
  benchmark::ClobberMemory();
}

/// The copy rate the fractions refer to; measured here when memory/copy was filtered out.
double peak_bytes_per_second() {
  if (g_copy_bytes_per_second == 0) {
    copy_pool();  // warm-up
    const double start = cpu_seconds();
    for (int r = 0; r < 8; ++r) copy_pool();
    g_copy_bytes_per_second = 8 * 2.0 * kPoolBytes / (cpu_seconds() - start);
  }
  return g_copy_bytes_per_second;
}

void copy(benchmark::State& state) {
  copy_pool();  // maps the pages before timing
  const double start = cpu_seconds();
  for (auto _ : state) copy_pool();
  const double bytes = 2.0 * kPoolBytes * static_cast<double>(state.iterations());
  g_copy_bytes_per_second = bytes / (cpu_seconds() - start);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["GB_per_s"] = g_copy_bytes_per_second * 1e-9;
}

/// Runs `kernel(src, dst, n)` and reports its traffic (bytes read + written) against the copy rate.
template <class From, class To, class Kernel>
void convert(benchmark::State& state, std::size_t n, Kernel kernel) {
  // Byte storage implicitly creates the element objects; refilled only when the input changes,
  // not on each of the several calls the library makes to size the run.
  auto* src = reinterpret_cast<From*>(pool(0));
  auto* dst = reinterpret_cast<To*>(pool(1));
  if (g_filled_type != &kTypeTag<From> || g_filled_n != n) {
    for (std::size_t i = 0; i < n; ++i) {
      src[i] =
          infer::from_f32<From>(static_cast<float>(static_cast<int>(i % 2001) - 1000) * 0.003f);
    }
    g_filled_type = &kTypeTag<From>;
    g_filled_n = n;
  }
  const double start = cpu_seconds();
  for (auto _ : state) {
    kernel(src, dst, n);
    benchmark::ClobberMemory();
  }
  const double seconds = (cpu_seconds() - start);
  const double bytes = static_cast<double>(n * (sizeof(From) + sizeof(To))) *
                       static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["GB_per_s"] = bytes / seconds * 1e-9;
  state.counters["bw_fraction_of_peak"] = bytes / seconds / peak_bytes_per_second();
}

template <class From, class To, class Kernel>
void register_convert(const std::string& name, Kernel kernel) {
  for (auto [label, n] : {std::pair{"64M", kLarge}, std::pair{"16K", kSmall}}) {
    // n is captured rather than passed as an Arg, which would append itself to the name.
    benchmark::RegisterBenchmark(
        ("convert/" + name + "/" + label).c_str(),
        [kernel, n = n](benchmark::State& s) { convert<From, To>(s, n, kernel); });
  }
}

/// Repacks n elements as 64 channels of n / 64 values, from pack In to pack Out.
template <class V, int In, int Out>
void register_repack(const std::string& name) {
  register_convert<V, V>(name, [](const V* s, V* d, std::size_t n) {
    constexpr int kChannels = 64;
    const std::size_t per_channel = n / kChannels;
    infer::kernels::repack<V, In, Out>(s, per_channel, d, per_channel, kChannels, per_channel, 1);
  });
}

// Registered at start-up in this order, so memory/copy runs (and sets the peak) first.
const bool registered = [] {
  benchmark::RegisterBenchmark("memory/copy/256M", copy);
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
  register_repack<float, 1, 16>("pack_f32_1_to_16");
  register_repack<float, 16, 1>("unpack_f32_16_to_1");
  register_repack<float, 1, 8>("pack_f32_1_to_8");
  register_repack<float, 8, 1>("unpack_f32_8_to_1");
  register_repack<float, 4, 16>("pack_f32_4_to_16");
  register_repack<f16, 1, 16>("pack_f16_1_to_16");
  register_repack<f16, 16, 1>("unpack_f16_16_to_1");
  return true;
}();

}  // namespace
