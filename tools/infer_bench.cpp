// infer-bench: whole-model latency, as ncnn's benchncnn measures it (random weights, warm-up runs,
// then min / median / max / average over the loops), through infer::Net and through the model's
// generated static graph (CPU). With --ncnn, a peer's figures are measured beside it in the same
// sitting; no peer figure is a constant here.
//
//   infer-bench [--threads N] [--loops N] [--warmup N] [--models-dir DIR] [--profile]
//               [--device cpu|vulkan[:N]] [--gpu-storage f16|f32] [--spin-us N] [--no-gate-fusion]
//               [--fp16-weights] [--bf16 | --bf16-vs-f32] [--no-amx]
//               [--ncnn BENCHNCNN [--rounds N]]
//               [MODEL...]
//
// On a GPU the warm-up runs go on for at least a second (clocks that boost only under sustained
// load); --loops of a few hundred keep them there while timing.
//
// --spin-us N: how long a GPU forward polls its fence before blocking (Option::vulkan_spin_us,
// default 2000; 0 blocks at once). --no-gate-fusion leaves squeeze-excitation multiplies as steps
// of their own on the GPU (graph::Target::fuse_gates), to compare with their fusion.
//
// --fp16-weights stores InnerProduct weights as f16 (Option::fp16_weights), as ncnn's x86 build
// does by default where the CPU has F16C.
//
// --bf16 multiplies in bf16 (Option::bf16_arithmetic: Convolution and InnerProduct on AVX512_BF16's
// vdpbf16ps, f32 sums and storage). --bf16-vs-f32 times each model both ways, alternating f32 and
// bf16 runs for --rounds rounds, and prints each side's best, median and spread and the ratio.
// Where the CPU has AMX tiles (kernels/amx.hpp) bf16 Convolution runs on them; --no-amx keeps it
// on vdpbf16ps (Option::use_amx). The header line says which ran.
//
// --ncnn BENCHNCNN runs ncnn's benchncnn binary on the same models (param=FILE shape=[w,h,c]),
// the same threads, loops and device, alternating with infer's own run of each model, for
// --rounds rounds (default 3), and prints each side's best and median of the round minima, their
// spread, the ratio ncnn / infer and what each side computes in.
//
// --profile prints each model's slowest steps and the time per kind of step (more runs, timed
// step by step; each step's minimum). --callers N measures throughput instead: one loaded network
// per model serving N threads at once, each with its own NetContext.
//
// MODEL is a name in the models directory (squeezenet) or a path to a .param file.
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <infer/kernels/amx.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/net.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "device_option.hpp"

#ifndef INFER_MODELS_DIR
#define INFER_MODELS_DIR "models"
#endif

// The generated static graphs of the benchmark networks (infer_add_model in tools/CMakeLists.txt).
#ifdef INFER_BENCH_STATIC_GRAPHS
#include "alexnet.hpp"
#include "efficientnet_b0.hpp"
#include "mnasnet.hpp"
#include "mobilenet.hpp"
#include "mobilenet_v2.hpp"
#include "mobilenet_v3.hpp"
#include "resnet18.hpp"
#include "resnet50.hpp"
#include "shufflenet_v2.hpp"
#include "squeezenet.hpp"
#include "vgg16.hpp"
#endif

namespace {

/// The networks benchncnn runs that models/ holds, in benchncnn's order (the default list).
constexpr std::string_view kModels[] = {
    "squeezenet",     "mobilenet",     "mobilenet_v2",       "mobilenet_v3",
    "shufflenet_v2",  "mnasnet",       "efficientnet_b0",    "resnet18",
    "resnet50",       "vgg16",         "alexnet",            "squeezenet_ssd",
    "mobilenet_ssd",  "mobilenet_yolo", "mobilenetv2_yolov3", "yolov4-tiny",
    "nanodet_m",      "yolo-fastest-1.1", "FastestDet",     "vision_transformer"};

/// The input of a model whose Input line gives no shape: benchncnn's size for it.
infer::Shape input_shape_of(const std::filesystem::path& param, const infer::Net& net) {
  const infer::Shape s = net.input_shape();
  if (s.dims != 0) return s;
  const std::string stem = param.stem().string();
  if (stem == "FastestDet") return infer::Shape::of(352, 352, 3);
  if (stem == "vision_transformer") return infer::Shape::of(384, 384, 3);
  return s;
}

template <class T>
bool parse_number(std::string_view s, T& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

struct Timing {
  double min = 0, median = 0, max = 0, avg = 0;
};

/// The figures of `ms` (one per loop).
Timing summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.min = ms.front();
  t.max = ms.back();
  t.median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  for (double v : ms) t.avg += v / double(ms.size());
  return t;
}

/// Loads `param` into `net` with random weights (as benchncnn runs without weights) and makes its
/// input: the Input's shape, every value 0.01.
infer::Status load_bench_net(const std::filesystem::path& param, infer::Net& net, infer::Mat& in) {
  INFER_TRY(net.load_param(param));
  INFER_TRY(net.load_random_weights(1));
  const infer::Shape shape = input_shape_of(param, net);
  if (shape.dims == 0)
    return infer::make_error("{}: the Input line gives no shape and infer-bench knows none for it",
                             param.string());
  INFER_TRY(in.create(shape, infer::ElemType::f32, 1));
  in.fill(0.01f);
  return {};
}

/// Runs `forward` `warmup` times; on a GPU then on for at least a second: a GPU may idle at a low
/// clock and reach its boost only under sustained load (an H100 here: 345 MHz until about a
/// second of back-to-back work, then 1980).
template <class F>
infer::Status warm_up(const infer::graph::Target& target, int warmup, F&& forward) {
  for (int i = 0; i < warmup; ++i) INFER_TRY(forward());
  if (target.device != infer::graph::Device::cpu && warmup > 0)
    for (const auto start = std::chrono::steady_clock::now();
         std::chrono::steady_clock::now() - start < std::chrono::seconds(1);)
      INFER_TRY(forward());
  return {};
}

infer::Result<Timing> bench(const std::filesystem::path& param, int threads, int warmup, int loops,
                            bool profile, const infer::graph::Target& target,
                            const infer::Option& base) {
  infer::Option opt = base;
  opt.num_threads = threads;
  infer::Net net(target, opt);
  infer::Mat in;
  INFER_TRY(load_bench_net(param, net, in));
  for (const std::string& w : net.param().warnings)
    fmt::print(stderr, "infer-bench: warning: {}\n", w);
  INFER_TRY(warm_up(target, warmup, [&] { return net.run(in); }));
  if (profile) {
    // Per-step times, the minimum of each step over `loops` more runs, slowest first; then the
    // totals by kind of step (layer type, repack, cast).
    infer::NetContext ctx = net.context();
    ctx.set_profiling(true);
    std::vector<infer::StepTiming> steps;
    for (int i = 0; i < std::max(loops, 1); ++i) {
      INFER_TRY(ctx.run(in));
      const auto& run = ctx.step_timings();
      if (steps.empty()) steps = run;
      for (std::size_t s = 0; s < steps.size() && s < run.size(); ++s)
        steps[s].ms = std::min(steps[s].ms, run[s].ms);
    }
    double total = 0;
    std::vector<std::pair<std::string, double>> kinds;
    for (const auto& s : steps) {
      total += s.ms;
      const std::string kind = s.step.substr(0, s.step.find(' '));
      auto k = std::find_if(kinds.begin(), kinds.end(), [&](auto& e) { return e.first == kind; });
      if (k == kinds.end()) kinds.emplace_back(kind, s.ms);
      else k->second += s.ms;
    }
    std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
    std::sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    fmt::print("  {} steps, {:.3f} ms in all (each step's minimum over {} runs)\n", steps.size(),
               total, std::max(loops, 1));
    for (std::size_t i = 0; i < steps.size() && i < 20; ++i)
      fmt::print("    {:8.3f} ms {:5.1f}%  {}\n", steps[i].ms, 100 * steps[i].ms / total,
                 steps[i].step);
    for (const auto& [kind, ms] : kinds)
      fmt::print("    {:8.3f} ms {:5.1f}%  all {}\n", ms, 100 * ms / total, kind);
  }
  // Wall time around one forward through a context (on the GPU: the host's uploads, one submit
  // and wait per segment, the downloads).
  infer::NetContext ctx = net.context();
  std::vector<double> ms;
  for (int i = 0; i < loops; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const infer::Status st = ctx.run(in);
    const auto stop = std::chrono::steady_clock::now();
    INFER_TRY(st);
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return summarize(std::move(ms));
}

/// The same network as a static graph G, on the weights `bin` (the Net's random weights).
template <class G>
infer::Result<Timing> bench_static(const std::vector<std::byte>& bin, infer::Shape shape,
                                   int threads, int warmup, int loops, bool fp16_weights) {
  infer::Option opt;
  opt.num_threads = threads;
  opt.fp16_weights = fp16_weights;
  auto graph = std::make_unique<G>(opt);
  infer::io::ModelBinFromMemory mb(bin);
  INFER_TRY(graph->load(mb));
  infer::Mat in;
  INFER_TRY(in.create(shape, infer::ElemType::f32, 1));
  in.fill(0.01f);
  for (int i = 0; i < warmup; ++i) INFER_TRY(graph->forward(in));
  std::vector<double> ms;
  for (int i = 0; i < loops; ++i) {
    const auto start = std::chrono::steady_clock::now();
    INFER_TRY(graph->forward(in));
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return summarize(std::move(ms));
}

/// The static-graph timing of model `name`, if it was generated into this program.
infer::Result<Timing> bench_static_named(const std::string& name,
                                         const std::filesystem::path& param, int threads,
                                         int warmup, int loops, bool fp16_weights) {
#ifdef INFER_BENCH_STATIC_GRAPHS
  infer::Net net;
  INFER_TRY(net.load_param(param));
  std::vector<std::byte> bin;
  INFER_TRY(net.load_random_weights(1, &bin));
  const infer::Shape shape = input_shape_of(param, net);
#define INFER_BENCH_MODEL(m) \
  if (name == #m)            \
    return bench_static<infer_models::m::Network<>>(bin, shape, threads, warmup, loops, \
                                                    fp16_weights);
  INFER_BENCH_MODEL(squeezenet)
  INFER_BENCH_MODEL(mobilenet)
  INFER_BENCH_MODEL(mobilenet_v2)
  INFER_BENCH_MODEL(mobilenet_v3)
  INFER_BENCH_MODEL(shufflenet_v2)
  INFER_BENCH_MODEL(mnasnet)
  INFER_BENCH_MODEL(efficientnet_b0)
  INFER_BENCH_MODEL(resnet18)
  INFER_BENCH_MODEL(resnet50)
  INFER_BENCH_MODEL(vgg16)
  INFER_BENCH_MODEL(alexnet)
#undef INFER_BENCH_MODEL
#else
  (void)param, (void)threads, (void)warmup, (void)loops, (void)fp16_weights;
#endif
  return infer::make_error("{}: no generated static graph in this build", name);
}

/// One run of ncnn's benchncnn on `param` (its input `shape`): the "min = " figure it prints.
/// `gpu` is benchncnn's device argument (-1: the CPU).
infer::Result<double> run_ncnn(const std::string& benchncnn, const std::filesystem::path& param,
                               const infer::Shape& shape, int threads, int loops, int gpu) {
  const std::string cmd = fmt::format(
      "'{}' {} {} 0 {} 0 param='{}' shape=[{},{},{}] 2>&1", benchncnn, loops, threads, gpu,
      std::filesystem::absolute(param).string(), shape.w, shape.h, shape.c);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return infer::make_error("could not start {}", benchncnn);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  const int rc = pclose(pipe);
  const std::size_t at = out.find("min =");
  double v = 0;
  if (at != std::string::npos) {
    std::size_t b = at + 5;
    while (b < out.size() && out[b] == ' ') ++b;
    std::size_t e = b;
    while (e < out.size() && (std::isdigit(static_cast<unsigned char>(out[e])) || out[e] == '.')) ++e;
    if (e > b && parse_number(std::string_view(out).substr(b, e - b), v)) return v;
  }
  const std::string first = out.substr(0, out.find('\n'));
  return infer::make_error("{} on {} printed no 'min =' figure (exit status {}): {}", benchncnn,
                           param.string(), rc, first.empty() ? "no output" : first);
}

/// Best, median and worst of the round minima.
struct Rounds {
  std::vector<double> mins;
  double best() const { return *std::min_element(mins.begin(), mins.end()); }
  double worst() const { return *std::max_element(mins.begin(), mins.end()); }
  double median() const { return summarize(mins).median; }
};

}  // namespace

/// Throughput of one loaded network serving `callers` threads at once, each with a NetContext of
/// its own (kernels on `threads` threads each): forwards per second over `loops` forwards per
/// caller after `warmup`, best of `rounds` rounds, on the device `target` names (on a GPU each
/// caller's forwards are its own submits, so one caller's upload can overlap another's forward).
infer::Result<double> bench_callers(const std::filesystem::path& param, int callers, int threads,
                                    int warmup, int loops, int rounds,
                                    const infer::graph::Target& target, const infer::Option& base) {
  infer::Option opt = base;
  opt.num_threads = threads;
  infer::Net net(target, opt);
  infer::Mat in;
  INFER_TRY(load_bench_net(param, net, in));
  std::vector<infer::NetContext> ctx;
  for (int c = 0; c < callers; ++c) ctx.push_back(net.context());
  for (auto& x : ctx) INFER_TRY(warm_up(target, warmup, [&] { return x.run(in); }));
  double best = 0;
  for (int r = 0; r < rounds; ++r) {
    std::atomic<int> failed{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int c = 0; c < callers; ++c)
      pool.emplace_back([&, c] {
        for (int i = 0; i < loops; ++i)
          if (!ctx[std::size_t(c)].run(in).ok()) ++failed;
      });
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (failed) return infer::make_error("{} forwards failed", failed.load());
    best = std::max(best, callers * loops / s);
  }
  return best;
}

int main(int argc, char** argv) {
  int threads = 1, loops = 8, warmup = 4, callers = 0, rounds = 3;
  bool profile = false;
  bool bf16_vs_f32 = false;
  std::string ncnn;
  infer::graph::Target target;
  infer::Option base;
  std::string dir = INFER_MODELS_DIR;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto number = [&](int& v, int lo, int hi) {
      if (i + 1 >= argc || !parse_number(std::string_view(argv[i + 1]), v) || v < lo || v > hi) {
        fmt::print(stderr, "infer-bench: {} expects a number in {}..{}\n", arg, lo, hi);
        std::exit(2);
      }
      ++i;
    };
    if (arg == "--threads") {
      number(threads, 1, 1024);
    } else if (arg == "--loops") {
      number(loops, 1, 100000);
    } else if (arg == "--warmup") {
      number(warmup, 0, 100000);
    } else if (arg == "--callers") {
      number(callers, 1, 256);
    } else if (arg == "--spin-us") {
      number(base.vulkan_spin_us, 0, 10000000);
    } else if (arg == "--fp16-weights") {
      base.fp16_weights = true;
    } else if (arg == "--bf16") {
      base.bf16_arithmetic = true;
    } else if (arg == "--bf16-vs-f32") {
      bf16_vs_f32 = true;
    } else if (arg == "--no-amx") {
      base.use_amx = false;
    } else if (arg == "--no-gate-fusion") {
      target.fuse_gates = false;
    } else if (arg == "--rounds") {
      number(rounds, 1, 100);
    } else if (arg == "--ncnn" && i + 1 < argc) {
      ncnn = argv[++i];
      if (!std::filesystem::is_regular_file(ncnn)) {
        fmt::print(stderr, "infer-bench: --ncnn {}: no such file (the path of ncnn's benchncnn)\n",
                   ncnn);
        return 2;
      }
    } else if (arg == "--profile") {
      profile = true;
    } else if (arg == "--models-dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if ((arg == "--device" || arg == "--gpu-storage") && i + 1 < argc) {
      const std::string_view v = argv[++i];
      const infer::Status st = arg == "--device" ? infer::tools::parse_device(v, target, base)
                                                 : infer::tools::parse_gpu_storage(v, target);
      if (!st.ok()) {
        fmt::print(stderr, "infer-bench: {}\n", st.message());
        return 2;
      }
    } else if (arg.starts_with("-")) {
      fmt::print(stderr,
                 "usage: infer-bench [--threads N] [--loops N] [--warmup N] [--models-dir DIR] "
                 "[--profile] [--callers N] [--device cpu|vulkan[:N]] [--gpu-storage f16|f32] "
                 "[--spin-us N] [--no-gate-fusion] [--fp16-weights] [--bf16 | --bf16-vs-f32] "
                 "[--no-amx] [--ncnn BENCHNCNN [--rounds N]] [MODEL...]\n");
      return 2;
    } else {
      models.emplace_back(arg);
    }
  }
  if (models.empty())
    for (std::string_view m : kModels) models.emplace_back(m);

  if (callers > 0) {
    // Throughput of one network shared by `callers` threads (best of 3 rounds).
    const std::string where =
        target.device == infer::graph::Device::cpu
            ? std::string("CPU")
            : fmt::format("Vulkan device {}, {} storage",
                          base.vulkan_device < 0 ? std::string("(best)")
                                                 : std::to_string(base.vulkan_device),
                          infer::to_string(target.gpu_storage));
    fmt::print("infer-bench: one infer::Net per model on the {}, {} caller thread(s) x {} kernel "
               "thread(s), {} forwards per caller per round, best of 3 rounds\n",
               where, callers, threads, loops);
    int failures = 0;
    for (const std::string& m : models) {
      std::filesystem::path path = m;
      if (path.extension() != ".param") path = std::filesystem::path(dir) / (m + ".param");
      auto t = bench_callers(path, callers, threads, warmup, loops, 3, target, base);
      if (!t.ok()) {
        fmt::print(stderr, "infer-bench: {}: {}\n", path.stem().string(), t.message());
        ++failures;
        continue;
      }
      fmt::print("{:>16}  {:8.1f} forwards/s  ({:.2f} ms per forward per caller)\n",
                 path.stem().string(), *t, 1000.0 * callers / *t);
      std::fflush(stdout);
    }
    return failures ? 1 : 0;
  }

  const bool gpu = target.device == infer::graph::Device::vulkan;
  if (bf16_vs_f32) {
    // Side by side: per round, each model in f32 arithmetic, then in bf16.
    if (gpu || !infer::kernels::bf16dot::kAvailable) {
      fmt::print(stderr, "infer-bench: --bf16-vs-f32 needs the CPU and a build with AVX512_BF16 "
                         "(this one has {})\n",
                 infer::kernels::bf16dot::kAvailable ? "it" : "no AVX512_BF16");
      return 2;
    }
    fmt::print(
        "infer-bench: CPU, f32 against bf16 arithmetic (Option::bf16_arithmetic; "
        "Convolution on {}), {} thread(s), {} loop(s) after {} warm-up run(s), {} "
        "interleaved round(s); ms, each side's minimum per round\n",
        base.use_amx && infer::kernels::amx::usable() ? "AMX tiles" : "vdpbf16ps", threads, loops,
        warmup, rounds);
    std::vector<Rounds> f32s(models.size()), bf16s(models.size());
    for (int r = 0; r < rounds; ++r)
      for (std::size_t k = 0; k < models.size(); ++k)
        for (const bool use_bf16 : {false, true}) {
          std::filesystem::path path = models[k];
          if (path.extension() != ".param")
            path = std::filesystem::path(dir) / (models[k] + ".param");
          infer::Option opt = base;
          opt.bf16_arithmetic = use_bf16;
          auto t = bench(path, threads, warmup, loops, false, target, opt);
          if (!t.ok()) {
            fmt::print(stderr, "infer-bench: {}: {}\n", path.stem().string(), t.message());
            return 1;
          }
          (use_bf16 ? bf16s : f32s)[k].mins.push_back(t->min);
        }
    fmt::print("{:>16}  {:>8} {:>8} {:>17}  {:>8} {:>8} {:>17}  {:>7}\n", "model", "f32", "median",
               "spread", "bf16", "median", "spread", "f32/bf16");
    for (std::size_t k = 0; k < models.size(); ++k)
      fmt::print("{:>16}  {:8.3f} {:8.3f} {:>17}  {:8.3f} {:8.3f} {:>17}  {:7.2f}\n",
                 std::filesystem::path(models[k]).stem().string(), f32s[k].best(),
                 f32s[k].median(), fmt::format("{:.3f}-{:.3f}", f32s[k].best(), f32s[k].worst()),
                 bf16s[k].best(), bf16s[k].median(),
                 fmt::format("{:.3f}-{:.3f}", bf16s[k].best(), bf16s[k].worst()),
                 f32s[k].best() / bf16s[k].best());
    return 0;
  }
  if (!ncnn.empty()) {
    // Side by side: per round, each model through infer::Net, then through ncnn's benchncnn.
    fmt::print("infer-bench beside ncnn ({}): {}, {} thread(s), {} loop(s) after {} warm-up run(s) "
               "(infer; benchncnn warms up on its own), {} interleaved round(s); ms, each side's "
               "minimum per round\n",
               ncnn, gpu ? "Vulkan" : "CPU", threads, loops, warmup, rounds);
    fmt::print(
        "  infer computes in {}; ncnn in {}\n",
        gpu ? fmt::format("{} storage, f32 arithmetic", infer::to_string(target.gpu_storage))
        : base.bf16_arithmetic
            ? fmt::format("bf16 arithmetic (Convolution on {}), f32 storage",
                          base.use_amx && infer::kernels::amx::usable() ? "AMX tiles" : "vdpbf16ps")
        : base.fp16_weights ? std::string("fp32, InnerProduct weights stored as f16")
                            : std::string("fp32"),
        gpu ? std::string("its Vulkan defaults (fp16 storage and arithmetic)")
            : std::string("its CPU defaults (fp32 arithmetic; InnerProduct weights stored "
                          "as fp16 where the CPU has F16C)"));
    fmt::print("  (both sides run a model's quantized layers, 8=int8_scale_term, in int8)\n");
    std::vector<std::filesystem::path> paths;
    std::vector<infer::Shape> shapes;
    for (const std::string& m : models) {
      std::filesystem::path path = m;
      if (path.extension() != ".param") path = std::filesystem::path(dir) / (m + ".param");
      infer::Net net;
      if (infer::Status st = net.load_param(path); !st.ok()) {
        fmt::print(stderr, "infer-bench: {}\n", st.message());
        return 1;
      }
      for (const std::string& w : net.param().warnings)
        fmt::print(stderr, "infer-bench: warning: {}\n", w);
      paths.push_back(path);
      shapes.push_back(input_shape_of(path, net));
    }
    std::vector<Rounds> ours(models.size()), theirs(models.size());
    for (int r = 0; r < rounds; ++r)
      for (std::size_t k = 0; k < models.size(); ++k) {
        auto t = bench(paths[k], threads, warmup, loops, false, target, base);
        if (!t.ok()) {
          fmt::print(stderr, "infer-bench: {}: {}\n", paths[k].stem().string(), t.message());
          return 1;
        }
        ours[k].mins.push_back(t->min);
        const int device = gpu ? std::max(base.vulkan_device, 0) : -1;
        auto n = run_ncnn(ncnn, paths[k], shapes[k], threads, loops, device);
        if (!n.ok()) {
          fmt::print(stderr, "infer-bench: {}\n", n.message());
          return 1;
        }
        theirs[k].mins.push_back(*n);
      }
    fmt::print("{:>16}  {:>8} {:>8} {:>17}  {:>8} {:>8} {:>17}  {:>7}\n", "model", "infer", "median",
               "spread", "ncnn", "median", "spread", "ncnn/infer");
    for (std::size_t k = 0; k < models.size(); ++k)
      fmt::print("{:>16}  {:8.3f} {:8.3f} {:>17}  {:8.3f} {:8.3f} {:>17}  {:7.2f}\n",
                 paths[k].stem().string(), ours[k].best(), ours[k].median(),
                 fmt::format("{:.3f}-{:.3f}", ours[k].best(), ours[k].worst()), theirs[k].best(),
                 theirs[k].median(),
                 fmt::format("{:.3f}-{:.3f}", theirs[k].best(), theirs[k].worst()),
                 theirs[k].best() / ours[k].best());
    return 0;
  }
  fmt::print("infer-bench: {}, {} thread(s), {} warm-up run(s), {} loop(s); ms\n",
             gpu ? fmt::format("Vulkan device {}, {} storage",
                               base.vulkan_device < 0 ? std::string("(best)")
                                                      : std::to_string(base.vulkan_device),
                               infer::to_string(target.gpu_storage))
                 : std::string(base.bf16_arithmetic ? "CPU, bf16 arithmetic (f32 storage)"
                               : base.fp16_weights ? "CPU, fp32 (InnerProduct weights f16)"
                                                   : "CPU, fp32"),
             threads, warmup, loops);
  fmt::print("{:>16}  {:>35}  {:>35}\n", "", "infer::Net", gpu ? "" : "static graph");
  fmt::print("{:>16}  {:>8} {:>8} {:>8} {:>8}  {:>8} {:>8} {:>8} {:>8}\n", "model", "min", "median",
             "max", "avg", "min", "median", "max", "avg");
  int failures = 0;
  for (const std::string& m : models) {
    std::filesystem::path path = m;
    if (path.extension() != ".param") path = std::filesystem::path(dir) / (m + ".param");
    const std::string name = path.stem().string();
    auto t = bench(path, threads, warmup, loops, profile, target, base);
    if (!t.ok()) {
      fmt::print(stderr, "infer-bench: {}: {}\n", name, t.message());
      ++failures;
      continue;
    }
    fmt::print("{:>16}  {:8.3f} {:8.3f} {:8.3f} {:8.3f}  ", name, t->min, t->median, t->max, t->avg);
    auto g = gpu ? infer::Result<Timing>(infer::make_error("static graphs run on the CPU"))
                 : bench_static_named(name, path, threads, warmup, loops, base.fp16_weights);
    if (g.ok()) {
      fmt::print("{:8.3f} {:8.3f} {:8.3f} {:8.3f}\n", g->min, g->median, g->max, g->avg);
    } else {
      fmt::print("{:>8} {:>8} {:>8} {:>8}\n", "-", "-", "-", "-");
    }
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}
