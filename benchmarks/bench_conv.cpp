// Convolution on the layer shapes of ResNet-50 and VGG-16 (224x224 input), f32 at the widest pack
// (16 with AVX-512, 8 with AVX2), 1 and 2 threads: GFLOP/s in direct-convolution flops (2 x cout x
// cin x k x k x outh x outw) and the fraction of this machine's measured AVX-512 FMA peak on as
// many threads (Winograd does fewer multiplications than it is credited with, so it may pass 1).
// The layer runs the algorithm it chooses for the shape (Convolution::algorithm(pack, in), as a
// network prepares it); the 3x3 stride-1 shapes also run each algorithm explicitly through the
// kernels (.../gemm, .../winograd_f6 = F(6x6, 3x3), .../winograd_f4 = F(4x4, 3x3), .../winograd_f2
// = F(2x2, 3x3)), and again with the weights cold (.../cold: each call reads another of as many
// copies of the weights as fill 1.2 GB, beyond the caches, as a network's layers stream theirs).
// Also Convolution with a fused ReLU against Convolution followed by a
// separate ReLU pass; Convolution with a residual sum and the ReLU after it taken in
// (forward_residual: ResNet's shortcut, .../residual_fused) against the unfused steps a plan
// without the fusion runs (the convolution, an Eltwise sum into another blob, the ReLU in place:
// .../residual_unfused); 1x1 layers on 7x7 maps (49 pixels: four full register tiles and a narrow
// one); and the first layers of ShuffleNetV2 and MnasNet, whose 3-channel input runs at pack 1. The
// ResNet-50 and VGG-16 shapes again quantized (int8_scale_term 102: int8 in, int8 out, .../int8):
// GOP/s and the fraction of the measured AVX-512 VNNI (vpdpbusd) peak, or of the AMX tiles'
// (tdpbusd) where the layer runs on them (.../int8_vnni: again without, where AMX runs). Every
// shape again at bf16
// storage (.../bf16: on AVX512_BF16 the GEMM and Winograd multiply in bf16 with vdpbf16ps, or on
// AMX tiles where the CPU has them): GFLOP/s in direct-convolution flops and the fraction of the
// measured vdpbf16ps (or tdpbf16ps) peak; where AMX runs, .../bf16_vdp again without it
// (Option::use_amx off).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <infer/kernels/amx.hpp>
#include <infer/kernels/gemm.hpp>
#include <infer/kernels/winograd.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/relu.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/peak.hpp"

namespace {

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Shape;
using infer::layers::Convolution;

/// The widest pack the build's vectors hold (16 with AVX-512, 8 with AVX2): the pack the layers
/// of such networks run at.
constexpr int kPack = infer::simd::max_width >= 16 ? 16 : infer::simd::max_width >= 8 ? 8 : 4;

/// One convolution layer of a model: input w = h = size, cin -> cout, k x k, stride, pad k / 2,
/// at pack (the input's; the output's as the layer chooses).
struct ConvShape {
  const char* name;
  int cin, cout, k, stride, size;
  int pack = kPack;
};

// ResNet-50 (v1.5: the stride sits on the 3x3 of each first bottleneck) and VGG-16; vgg16's
// c64 at 224 is left out, it takes seconds per run.
constexpr ConvShape kShapes[] = {
    {"resnet50/conv1x1_s1_c64_k256_56", 64, 256, 1, 1, 56},
    {"resnet50/conv1x1_s1_c256_k64_56", 256, 64, 1, 1, 56},
    {"resnet50/conv3x3_s1_c64_56", 64, 64, 3, 1, 56},
    {"resnet50/conv3x3_s2_c128_56", 128, 128, 3, 2, 56},
    {"resnet50/conv1x1_s2_c256_k512_56", 256, 512, 1, 2, 56},
    {"resnet50/conv3x3_s1_c128_28", 128, 128, 3, 1, 28},
    {"resnet50/conv1x1_s1_c1024_k256_14", 1024, 256, 1, 1, 14},
    {"resnet50/conv3x3_s1_c256_14", 256, 256, 3, 1, 14},
    {"resnet50/conv3x3_s1_c512_7", 512, 512, 3, 1, 7},
    {"vgg16/conv3x3_s1_c128_112", 128, 128, 3, 1, 112},
    {"vgg16/conv3x3_s1_c256_56", 256, 256, 3, 1, 56},
    {"vgg16/conv3x3_s1_c512_28", 512, 512, 3, 1, 28},
    {"vgg16/conv3x3_s1_c512_14", 512, 512, 3, 1, 14},
    {"mnasnet/conv1x1_s1_c192_k1152_7", 192, 1152, 1, 1, 7},
    {"shufflenet_v2/conv5_1x1_s1_c464_k1024_7", 464, 1024, 1, 1, 7},
    {"shufflenet_v2/conv1_3x3_s2_c3_k24_224_pack1", 3, 24, 3, 2, 224, 1},
    {"mnasnet/conv1_3x3_s2_c3_k32_224_pack1", 3, 32, 3, 2, 224, 1},
};

Convolution make_conv(const ConvShape& s, int activation_type) {
  Convolution c{.num_output = s.cout,
                .kernel_w = s.k,
                .stride_w = s.stride,
                .pad_left = s.k / 2,
                .bias_term = 1,
                .weight_data_size = s.cout * s.cin * s.k * s.k};
  c.activation.type = activation_type;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
  c.weight_data.resize(std::size_t(c.weight_data_size));
  for (float& v : c.weight_data) v = dist(rng);
  c.bias_data.assign(std::size_t(s.cout), 0.01f);
  return c;
}

double direct_flops(const ConvShape& s) {
  const int out = (s.size + 2 * (s.k / 2) - s.k) / s.stride + 1;
  return 2.0 * s.cout * s.cin * s.k * s.k * out * out;
}

void set_counters(benchmark::State& state, const ConvShape& s, int threads) {
  const double gflop = direct_flops(s) * 1e-9;
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  const double peak = infer::bench::fma_peak_gflops(infer::bench::Isa::avx512, threads);
  if (peak > 0)
    state.counters["avx512_peak_fraction"] =
        benchmark::Counter(gflop / peak, benchmark::Counter::kIsIterationInvariantRate);
}

/// The quantized layer of shape `s` (weights as make_conv's, scales 127 / max|w| per channel,
/// blob scales 127 / 3), int8 in and out, with a fused ReLU, on an int8 input at the widest pack.
void run_int8(benchmark::State& state, const ConvShape& s, bool use_amx) {
  const int threads = int(state.range(0));
  infer::PoolAllocator pool(infer::default_allocator());
  Option opt;
  opt.num_threads = threads;
  opt.use_amx = use_amx;
  opt.workspace_allocator = &pool;
  Convolution conv = make_conv(s, 1);
  conv.int8_scale_term = 102;
  const std::size_t per = conv.weight_data.size() / std::size_t(s.cout);
  for (int oc = 0; oc < s.cout; ++oc) {
    float m = 0;
    for (std::size_t i = 0; i < per; ++i)
      m = std::max(m, std::abs(conv.weight_data[std::size_t(oc) * per + i]));
    conv.int8.weight_scales.push_back(127.f / m);
  }
  conv.int8.bottom_scale = conv.int8.top_scale = 127.f / 3.f;
  if (!conv.prepare(ElemType::i8, kPack, opt).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::i8, kPack);
  std::mt19937 rng(2);
  auto* bytes = static_cast<std::int8_t*>(in.data());
  for (std::size_t i = 0; i < in.bytes(); ++i) bytes[i] = std::int8_t(int(rng() % 255) - 127);
  Mat out;
  for (auto _ : state) {
    infer::Status st = conv.forward<infer::i8, kPack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double gop = direct_flops(s) * 1e-9;
  state.counters["GOP_per_s"] =
      benchmark::Counter(gop, benchmark::Counter::kIsIterationInvariantRate);
  const bool amx = conv.int8.packed.amx;
  const double peak = infer::bench::fma_peak_gflops(
      amx ? infer::bench::Isa::amx_int8 : infer::bench::Isa::avx512_vnni, threads);
  if (peak > 0)
    state.counters[amx ? "amx_peak_fraction" : "vnni_peak_fraction"] =
        benchmark::Counter(gop / peak, benchmark::Counter::kIsIterationInvariantRate);
}

/// The layer of shape `s` with a fused ReLU at bf16 storage (bf16 arithmetic where the CPU and
/// build have AVX512_BF16, on AMX tiles where they have those and `amx`; otherwise f32 arithmetic
/// on bf16 values, and no peak fraction is printed).
template <int Pack>
void run_bf16_at(benchmark::State& state, const ConvShape& s, bool amx) {
  const int threads = int(state.range(0));
  infer::PoolAllocator pool(infer::default_allocator());
  Option opt;
  opt.num_threads = threads;
  opt.use_amx = amx;
  opt.workspace_allocator = &pool;
  Convolution conv = make_conv(s, 1);
  if (!conv.prepare(ElemType::bf16, Pack, opt, Shape::of(s.size, s.size, s.cin)).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::bf16, Pack);
  in.fill(0.5f);
  Mat out;
  for (auto _ : state) {
    infer::Status st = conv.forward<infer::bf16, Pack>(in, out, opt);
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double gflop = direct_flops(s) * 1e-9;
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
  const double peak = infer::bench::fma_peak_gflops(
      conv.weight_amx ? infer::bench::Isa::amx_bf16 : infer::bench::Isa::avx512_bf16, threads);
  if (peak > 0 && !conv.weight_bf16.empty())
    state.counters[conv.weight_amx ? "amx_peak_fraction" : "bf16_peak_fraction"] =
        benchmark::Counter(gflop / peak, benchmark::Counter::kIsIterationInvariantRate);
}

/// Conv (ReLU fused when `fused_relu`), or conv then a separate in-place ReLU pass when `split`.
template <int Pack>
void run_conv_at(benchmark::State& state, const ConvShape& s, bool fused_relu, bool split) {
  const int threads = int(state.range(0));
  // Temporaries (padded input, workspace) from a pool, as a graph gives its layers: after the
  // first call no allocation, and no page faults on fresh memory, is timed.
  infer::PoolAllocator pool(infer::default_allocator());
  Option opt;
  opt.num_threads = threads;
  opt.workspace_allocator = &pool;
  Convolution conv = make_conv(s, fused_relu ? 1 : 0);
  if (!conv.prepare(ElemType::f32, Pack, opt, Shape::of(s.size, s.size, s.cin)).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  const infer::layers::ReLU relu{};
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::f32, Pack);
  in.fill(0.5f);
  Mat out;
  for (auto _ : state) {
    infer::Status st = conv.forward<float, Pack>(in, out, opt);
    if (st.ok() && split) {
      st = out.elempack() == Pack ? relu.forward_inplace<float, Pack>(out, opt)
                                  : infer::make_error("relu_unfused: output pack differs");
    }
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}
void run_conv(benchmark::State& state, const ConvShape& s, bool fused_relu, bool split) {
  if (s.pack == 1)
    run_conv_at<1>(state, s, fused_relu, split);
  else
    run_conv_at<kPack>(state, s, fused_relu, split);
}

/// Conv + residual sum + ReLU: fused (forward_residual) or as three steps.
void run_residual(benchmark::State& state, const ConvShape& s, bool fused) {
  constexpr int Pack = kPack;
  const int threads = int(state.range(0));
  infer::PoolAllocator pool(infer::default_allocator());
  Option opt;
  opt.num_threads = threads;
  opt.workspace_allocator = &pool;
  Convolution conv = make_conv(s, 0);
  if (!conv.prepare(ElemType::f32, Pack, opt, Shape::of(s.size, s.size, s.cin)).ok()) {
    state.SkipWithError("prepare failed");
    return;
  }
  const int out_size = (s.size + 2 * (s.k / 2) - s.k) / s.stride + 1;
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::f32, Pack);
  in.fill(0.5f);
  Mat shortcut(Shape::of(out_size, out_size, s.cout), ElemType::f32, Pack);
  shortcut.fill(-0.25f);
  const infer::layers::Eltwise sum{1};
  const infer::layers::ReLU relu{};
  Mat out, summed[1];
  for (auto _ : state) {
    infer::Status st;
    if (fused) {
      st = conv.forward_residual<float, Pack>(in, shortcut, out, opt, infer::act::ReLU{});
    } else {
      st = conv.forward<float, Pack>(in, out, opt);
      const Mat both[] = {out, shortcut};
      if (st.ok()) st = sum.forward<float, Pack>(both, summed, opt);
      if (st.ok()) st = relu.forward_inplace<float, Pack>(summed[0], opt);
    }
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

enum class Algo { gemm, winograd_f6, winograd_f4, winograd_f2 };

/// One 3x3 stride-1 pad-1 shape on one kernel, called directly (bias, no activation). `cold`: the
/// calls cycle through copies of the weights that fill 1.2 GB (at least two).
void run_kernel(benchmark::State& state, const ConvShape& s, Algo algo, bool cold) {
  namespace k = infer::kernels;
  const int threads = int(state.range(0));
  Option opt;
  opt.num_threads = threads;
  const Convolution conv = make_conv(s, 0);
  std::vector<float> weights, bias(k::gemm::bias_size(s.cout));
  k::gemm::pack_bias(conv.bias_data.data(), bias.data(), s.cout);
  Mat in(Shape::of(s.size, s.size, s.cin), ElemType::f32, kPack);
  in.fill(0.5f);
  Mat out(Shape::of(s.size, s.size, s.cout), ElemType::f32, kPack);
  std::vector<float> workspace;
  Mat padded;
  if (algo == Algo::gemm) {
    weights.resize(k::gemm::weights_size(s.cout, s.cin * 9));
    k::gemm::pack_weights<kPack>(conv.weight_data.data(), weights.data(), s.cin, s.cout, 9);
    workspace.resize(k::gemm::workspace_per_thread(s.cin * 9) * std::size_t(threads));
  } else if (algo == Algo::winograd_f6) {
    weights.resize(k::winograd::weights_size<6>(s.cout, s.cin));
    k::winograd::transform_weights<6>(conv.weight_data.data(), weights.data(), s.cin, s.cout);
    workspace.resize(k::winograd::plan<6>(s.size, s.size, s.cin, s.cout, threads).workspace() *
                     std::size_t(threads));
  } else if (algo == Algo::winograd_f4) {
    weights.resize(k::winograd::weights_size<4>(s.cout, s.cin));
    k::winograd::transform_weights<4>(conv.weight_data.data(), weights.data(), s.cin, s.cout);
    workspace.resize(k::winograd::plan<4>(s.size, s.size, s.cin, s.cout, threads).workspace() *
                     std::size_t(threads));
  } else {
    weights.resize(k::winograd::weights_size<2>(s.cout, s.cin));
    k::winograd::transform_weights<2>(conv.weight_data.data(), weights.data(), s.cin, s.cout);
    workspace.resize(k::winograd::plan<2>(s.size, s.size, s.cin, s.cout, threads).workspace() *
                     std::size_t(threads));
  }
  const std::size_t copies =
      cold ? std::max<std::size_t>(2, (std::size_t(1200) << 20) / (weights.size() * sizeof(float)))
           : 1;
  std::vector<std::vector<float>> weight_copies(copies - 1, weights);
  const k::ConvGeometry g{3, 3, 1, 1, 1, 1};
  std::size_t call = 0;
  for (auto _ : state) {
    const std::size_t copy = call++ % copies;
    const float* w = copy == 0 ? weights.data() : weight_copies[copy - 1].data();
    if (algo == Algo::gemm) {
      // The layer pads into a new blob on every call; so does this.
      auto p = infer::layers::detail::pad_input<float, kPack>(in, {1, 1, 1, 1}, 0.f, opt);
      if (!p.ok()) {
        state.SkipWithError("pad failed");
        return;
      }
      padded = std::move(p).value();
      k::gemm::convolution_gemm<float, kPack, kPack>(
          padded.view<float, kPack>(), out.view<float, kPack>(), w, bias.data(), g,
          infer::act::Identity{}, workspace.data(), threads);
    } else if (algo == Algo::winograd_f6) {
      k::winograd::convolution_winograd<float, kPack, kPack, 6>(
          in.view<float, kPack>(), 1, 1, 0.f, out.view<float, kPack>(), w, bias.data(),
          infer::act::Identity{}, workspace.data(), threads);
    } else if (algo == Algo::winograd_f4) {
      k::winograd::convolution_winograd<float, kPack, kPack, 4>(
          in.view<float, kPack>(), 1, 1, 0.f, out.view<float, kPack>(), w, bias.data(),
          infer::act::Identity{}, workspace.data(), threads);
    } else {
      k::winograd::convolution_winograd<float, kPack, kPack, 2>(
          in.view<float, kPack>(), 1, 1, 0.f, out.view<float, kPack>(), w, bias.data(),
          infer::act::Identity{}, workspace.data(), threads);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, threads);
}

/// Registers `f` on 1 and 2 threads (or 1 only). One thread is timed by CPU time, so time spent
/// descheduled on a shared machine does not count; two by wall time, as their CPU time adds up.
template <class F>
void register_threads(const std::string& name, F f, bool two_threads) {
  benchmark::RegisterBenchmark(name.c_str(), f)
      ->ArgName("threads")
      ->Arg(1)
      ->Unit(benchmark::kMillisecond);
  if (two_threads)
    benchmark::RegisterBenchmark(name.c_str(), f)
        ->ArgName("threads")
        ->Arg(2)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

const bool kRegistered = [] {
  for (const ConvShape& s : kShapes)
    register_threads(
        s.name, [s](benchmark::State& st) { run_conv(st, s, false, false); }, true);
  for (const ConvShape& s : kShapes) {
    if (s.k != 3 || s.stride != 1) continue;
    const std::string base = s.name;
    for (auto [algo, name] : {std::pair{Algo::gemm, "/gemm"},
                              {Algo::winograd_f6, "/winograd_f6"},
                              {Algo::winograd_f4, "/winograd_f4"},
                              {Algo::winograd_f2, "/winograd_f2"}})
      register_threads(
          base + name, [s, algo](benchmark::State& st) { run_kernel(st, s, algo, false); }, false);
    for (auto [algo, name] : {std::pair{Algo::gemm, "/gemm/cold"},
                              {Algo::winograd_f4, "/winograd_f4/cold"},
                              {Algo::winograd_f2, "/winograd_f2/cold"}})
      register_threads(
          base + name, [s, algo](benchmark::State& st) { run_kernel(st, s, algo, true); }, true);
  }
  for (const bool amx : {true, false}) {
    if (!amx && !infer::kernels::amx::usable()) continue;  // .../int8 is already VNNI
    for (const ConvShape& s : kShapes) {
      if (s.pack != kPack) continue;
      register_threads(
          std::string(s.name) + (amx ? "/int8" : "/int8_vnni"),
          [s, amx](benchmark::State& st) { run_int8(st, s, amx); }, true);
    }
  }
  for (const bool amx : {true, false}) {
    if (!amx && !infer::kernels::amx::usable()) continue;  // .../bf16 is already vdpbf16ps
    for (const ConvShape& s : kShapes)
      register_threads(
          std::string(s.name) + (amx ? "/bf16" : "/bf16_vdp"),
          [s, amx](benchmark::State& st) {
            if (s.pack == 1)
              run_bf16_at<1>(st, s, amx);
            else
              run_bf16_at<kPack>(st, s, amx);
          },
          true);
  }
  for (const ConvShape& s : {kShapes[0], kShapes[2], kShapes[7]}) {
    const std::string base = s.name;
    register_threads(
        base + "/relu_fused", [s](benchmark::State& st) { run_conv(st, s, true, false); }, false);
    register_threads(
        base + "/relu_unfused", [s](benchmark::State& st) { run_conv(st, s, false, true); }, false);
  }
  // ResNet's residual producers: the bottleneck's 1x1 expansion (ResNet-50), the basic block's
  // 3x3 (ResNet-18) at 56x56 and at 14x14.
  for (const ConvShape& s : {kShapes[0], kShapes[2], kShapes[7]}) {
    const std::string base = s.name;
    register_threads(
        base + "/residual_fused", [s](benchmark::State& st) { run_residual(st, s, true); }, true);
    register_threads(
        base + "/residual_unfused", [s](benchmark::State& st) { run_residual(st, s, false); },
        true);
  }
  return true;
}();

}  // namespace
