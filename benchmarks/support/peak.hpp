// This machine's own limits, measured once per process, so that every kernel benchmark can report
// its rate as a fraction of what the hardware does: the fp32 FMA peak of AVX2 (8 lanes) and
// AVX-512 (16 lanes) on 1..N threads, and the memory bandwidth of STREAM-like loops on buffers far
// past the last-level cache.
//
// Rates are the best of several trials: the machine is shared, and the best trial is the one least
// disturbed by other processes. One thread is timed by this process's CPU time (time spent
// descheduled does not count, as in the kernel benchmarks' CPU time); several threads by wall
// time, which counts any time one of them waits for a core: figures on N threads are only
// meaningful when N cores are free. Results are cached in statics; the first query of each pays
// the measurement (about 0.1-0.5 s).
#pragma once

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <infer/kernels/amx.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace infer::bench {

/// The vector instructions whose multiply-add peak can be measured.
enum class Isa {
  avx2,         ///< 8 fp32 lanes, vfmadd on ymm
  avx512,       ///< 16 fp32 lanes, vfmadd on zmm
  avx512_vnni,  ///< vpdpbusd on zmm: 64 u8 x s8 products into 16 int32 lanes
  avx512_bf16,  ///< vdpbf16ps on zmm: 32 bf16 products into 16 fp32 lanes
  amx_bf16,     ///< tdpbf16ps: a 16 x 32 by 32 x 16 bf16 tile product into 16 x 16 fp32 sums
  amx_int8,     ///< tdpbusd: a 16 x 64 by 64 x 16 u8 x s8 tile product into 16 x 16 int32 sums
};

inline const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    case Isa::avx512_vnni:
      return "avx512_vnni";
    case Isa::amx_bf16:
      return "amx_bf16";
    case Isa::amx_int8:
      return "amx_int8";
    default:
      return "avx512_bf16";
  }
}

/// Whether this CPU (not the compiler's target) executes `isa`.
inline bool cpu_supports(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f");
    case Isa::avx512_vnni:
      return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
    case Isa::amx_bf16:
    case Isa::amx_int8:
      // The tile state must also be granted to the process (Linux asks once per process).
      return infer::kernels::amx::usable();
    default:
      return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw");
  }
}

/// Arithmetic operations one instruction of `isa` does (a multiply-add counting 2).
inline int ops_per_instruction(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return 16;
    case Isa::avx512:
      return 32;
    case Isa::avx512_vnni:
      return 128;
    case Isa::amx_bf16:
      return 16 * 16 * 32 * 2;
    case Isa::amx_int8:
      return 16 * 16 * 64 * 2;
    default:
      return 64;
  }
}

/// Seconds on the clock that times `threads` threads: process CPU time for one, wall time else
/// (the clock the kernel benchmarks use too, to compare like with like).
inline double seconds_now(int threads) {
  if (threads == 1) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace peak_detail {

/// Independent FMA chains: more than latency (4 cycles) x FMA pipes (2), so the pipes never wait.
inline constexpr int kChains = 12;
/// FMA rounds per call: ~25 M FMA instructions, >10 ms per trial, longer than a scheduler time
/// slice, so a trial on a shared machine is either clean or visibly slow; the best trial is kept.
inline constexpr long kRounds = 1 << 21;
inline constexpr int kTrials = 7;

// acc = acc * a + b with a < 1 stays bounded, so no overflow or denormal slows the loop; the sum
// returned keeps the compiler from discarding it.
__attribute__((target("avx2,fma"), noinline)) inline float fma_loop_avx2(long rounds) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(float(i));
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  // Every chain feeds the result, or the compiler drops the unused ones.
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"), noinline)) inline float fma_loop_avx512(long rounds) {
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  // Every chain feeds the result, or the compiler drops the unused ones. (Lane 0 only:
  // _mm512_reduce_add_ps trips -Wuninitialized inside GCC 12's own header.)
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_cvtss_f32(s);
}

// Integer sums wrap harmlessly; the bf16 products (1e-3 squared) keep the sums far from overflow.
__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) inline float vnni_loop(
    long rounds) {
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  __m512i acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  return float(lanes[0]);
}

__attribute__((target("avx512f,avx512bw,avx512bf16"), noinline)) inline float bf16_loop(
    long rounds) {
  const __m512 x = _mm512_set1_ps(1e-3f);
  const __m512bh a = _mm512_cvtne2ps_pbh(x, x);
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(float(i));
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, a);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_cvtss_f32(s);
}

#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AMX_INT8__)
// Four sum tiles (what the convolutions keep), each product independent of the last three, on
// tiles of small values; `rounds` x kChains / 4 rounds of four products, so that a call issues as
// many instructions as kChains per round would. Int8 sums wrap harmlessly.
template <bool Int8>
inline float amx_loop(long rounds) {
  infer::kernels::amx::detail::configure();
  alignas(64) static std::uint16_t a[16 * 32];
  alignas(64) float sums[16 * 16];
  std::fill_n(a, 16 * 32, std::uint16_t(0x3a83));  // 1e-3 in bf16; bytes 0x83, 0x3a as int8
  _tile_loadd(4, a, 64);
  _tile_loadd(5, a, 64);
  _tile_loadd(6, a, 64);
  _tile_loadd(7, a, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long r = 0; r < rounds * kChains / 4; ++r) {
    if constexpr (Int8) {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    } else {
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, sums, 64);
  _tile_release();
  return sums[0];
}
#else
template <bool Int8>
inline float amx_loop(long) {
  return 0.f;
}
#endif

inline double measure_fma_peak(Isa isa, int threads) {
  const int ops = ops_per_instruction(isa);
  auto loop = isa == Isa::avx2          ? fma_loop_avx2
              : isa == Isa::avx512      ? fma_loop_avx512
              : isa == Isa::avx512_vnni ? vnni_loop
              : isa == Isa::amx_bf16    ? amx_loop<false>
              : isa == Isa::amx_int8    ? amx_loop<true>
                                        : bf16_loop;
  // A tile product takes 16 cycles where the others take one: fewer rounds, the same time.
  const long rounds = isa == Isa::amx_bf16 || isa == Isa::amx_int8 ? kRounds / 16 : kRounds;
  volatile float sink = 0;
  loop(rounds / 8);  // warm-up: lets the core leave any low-power state for wide vectors
  double best = 0;
  for (int t = 0; t < kTrials; ++t) {
    const double start = seconds_now(threads);
    float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    sum += loop(rounds);
    const double seconds = seconds_now(threads) - start;
    sink = sink + sum;
    best = std::max(best, double(ops) * kChains * double(rounds) * threads / seconds);
  }
  return best * 1e-9;
}

/// 256 MiB per buffer: far past the last-level cache even as a VM reports it (the rate in a VM
/// still falls with the footprint, nested paging, so the buffers match the largest weights).
inline constexpr std::size_t kFloats = std::size_t{64} << 20;

}  // namespace peak_detail

/// Giga operations per second (a multiply-add counting 2: fp32 GFLOP/s for the FMA and bf16
/// instructions, int8 GOP/s for VNNI) of `isa` on `threads` threads; 0 where the CPU lacks `isa`.
/// Measured on the first query of each (isa, threads), then cached.
inline double fma_peak_gflops(Isa isa, int threads = 1) {
  static std::mutex mutex;
  static std::map<std::pair<Isa, int>, double> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace({isa, threads}, 0.0);
  if (inserted && cpu_supports(isa)) it->second = peak_detail::measure_fma_peak(isa, threads);
  return it->second;
}

/// STREAM-like rates in GB/s (1e9 bytes), counting the bytes each loop names, as STREAM does:
/// read = sum(a) (a bytes), copy = b = a (2), triad = c = a + s * b (3).
struct MemoryBandwidth {
  double read = 0;
  double copy = 0;
  double triad = 0;
};

namespace peak_detail {

inline MemoryBandwidth measure_bandwidth(int threads) {
  const std::size_t n = kFloats;
  // Plain arrays filled by the threads that later stream them, so pages land near those threads.
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  float* pa = a.get();
  float* pb = b.get();
  float* pc = c.get();
  const long ln = long(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < ln; ++i) pa[i] = 1.f, pb[i] = 2.f, pc[i] = 0.f;

  MemoryBandwidth best;
  volatile float sink = 0;
  auto time = [&](auto&& body) {
    const double start = seconds_now(threads);
    body();
    return seconds_now(threads) - start;
  };
  const double bytes = double(n) * sizeof(float);
  for (int t = 0; t < 3; ++t) {
    float sum = 0;
    const double read_s = time([&] {
      // Lane-wise partial sums over each thread's share vectorize without reassociating
      // (no -ffast-math needed); they are added up once at the end.
      constexpr long kLanes = 64;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
      {
        const long per = ln / kLanes / omp_get_num_threads();
        const float* p = pa + per * kLanes * omp_get_thread_num();
        float part[kLanes] = {};
        for (long blk = 0; blk < per; ++blk, p += kLanes)
          for (long j = 0; j < kLanes; ++j) part[j] += p[j];
        for (long j = 0; j < kLanes; ++j) sum += part[j];
      }
    });
    sink = sink + sum;
    const double copy_s = time([&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (long i = 0; i < ln; ++i) pb[i] = pa[i];
    });
    const double triad_s = time([&] {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (long i = 0; i < ln; ++i) pc[i] = pa[i] + 3.f * pb[i];
    });
    best.read = std::max(best.read, bytes / read_s * 1e-9);
    best.copy = std::max(best.copy, 2 * bytes / copy_s * 1e-9);
    best.triad = std::max(best.triad, 3 * bytes / triad_s * 1e-9);
  }
  sink = sink + pc[n / 2];
  return best;
}

}  // namespace peak_detail

/// Read, copy and triad bandwidth on `threads` threads, measured on the first query, then cached.
inline MemoryBandwidth memory_bandwidth(int threads = 1) {
  static std::mutex mutex;
  static std::map<int, MemoryBandwidth> cache;
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(threads);
  if (inserted) it->second = peak_detail::measure_bandwidth(threads);
  return it->second;
}

/// The bandwidth a memory-bound kernel is held against: the best of read, copy and triad on
/// `threads` threads (so a fraction of 1 is as fast as any STREAM loop moves bytes).
inline double memory_bandwidth_gbs(int threads = 1) {
  const MemoryBandwidth m = memory_bandwidth(threads);
  return std::max({m.read, m.copy, m.triad});
}

}  // namespace infer::bench
