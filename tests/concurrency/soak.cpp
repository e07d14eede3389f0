// Soak: squeezenet, 10,000 forwards through one NetContext. After a warm-up of 10 forwards, no
// forward may allocate (every operator new of the process is counted, the Mats' memory included),
// and resident memory over the last 9,000 forwards must stay within 1 MB of where it was at
// forward 1,000. Prints the figures; exits non-zero when a bound is broken.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <infer/net.hpp>
#include <new>


#ifndef INFER_MODELS_DIR
#error "INFER_MODELS_DIR must name the models/ directory"
#endif

namespace {
std::atomic<long> g_allocations{0};

void* counted(std::size_t n, std::size_t align) {
  ++g_allocations;
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n);
  return p;
}

/// Resident memory of this process, in bytes (/proc/self/statm).
long resident_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * 4096;
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted(n, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = counted(n, std::size_t(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, std::size_t(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, std::size_t(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  const int total = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int warmup = 10, settle = total / 10;
  infer::Option opt;
  opt.num_threads = 2;
  infer::Net net({}, opt);
  const auto path = std::filesystem::path(INFER_MODELS_DIR) / "squeezenet.param";
  if (!net.load_param(path).ok() || !net.load_random_weights(3).ok()) {
    fmt::print(stderr, "soak: cannot load {}\n", path.string());
    return 1;
  }
  const infer::Shape shape = net.input_shape();
  infer::Mat input(shape);
  for (int c = 0; c < shape.c; ++c) {
    float* p = static_cast<float*>(input.channel_data(c));
    for (int i = 0; i < shape.w * shape.h; ++i) p[i] = float(std::sin(0.37 * i + 1.3 * c));
  }
  infer::NetContext ctx = net.context();
  long allocations_after_warmup = 0, rss_settled = 0, rss_max = 0, rss_first = 0;
  const auto start = std::chrono::steady_clock::now();
  auto timed_from = start;
  for (int i = 0; i < total; ++i) {
    const long before = g_allocations.load();
    if (infer::Status s = ctx.run(input); !s.ok()) {
      fmt::print(stderr, "soak: forward {}: {}\n", i, s.message());
      return 1;
    }
    if (i >= warmup) allocations_after_warmup += g_allocations.load() - before;
    if (i == warmup) {
      rss_first = resident_bytes();
      timed_from = std::chrono::steady_clock::now();
    }
    if (i == settle) rss_settled = rss_max = resident_bytes();
    if (i > settle && i % 100 == 0) rss_max = std::max(rss_max, resident_bytes());
  }
  rss_max = std::max(rss_max, resident_bytes());
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - timed_from).count();
  const long growth = rss_max - rss_settled;
  fmt::print(
      "soak: squeezenet {} forwards (2 threads): {:.2f} ms each, {:.1f} forwards/s\n"
      "  allocations after the first {} forwards: {}\n"
      "  resident memory: {:.1f} MB after warm-up, {:.1f} MB at forward {}, at most {:.1f} MB "
      "after it (growth {} KB, bound 1024 KB)\n",
      total, 1000 * secs / (total - warmup - 1), (total - warmup - 1) / secs, warmup,
      allocations_after_warmup, rss_first / 1e6, rss_settled / 1e6, settle, rss_max / 1e6,
      growth / 1024);
  bool ok = true;
  if (allocations_after_warmup != 0) {
    fmt::print(stderr, "soak: FAILED: forwards allocated after warm-up\n");
    ok = false;
  }
  if (growth > 1024 * 1024) {
    fmt::print(stderr, "soak: FAILED: resident memory grew by more than 1 MB\n");
    ok = false;
  }
  return ok ? 0 : 1;
}
