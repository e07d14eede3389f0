// The GPU convolution kernels, timed on the device with timestamp queries: TFLOP/s of the implicit
// GEMM on its cooperative-matrix path (where the device has one) and on its FMA path, and of the
// direct kernel, on convolutions of ResNet-50, VGG-16 and MobileNetV2 shapes plus odd forms
// (grouped, dilated, odd channels), f16 storage. Fractions are of the peaks measured by
// benchmarks/shaders/peak.comp in the same program: fp16 tensor-core products with f32
// accumulators, and fp32 FMAs.
//
//   bench_gpu_conv [device index] [repeats] [K steps, e.g. 32,64 (the default)] [layer filter]
//                  [quick | halo]
//
// The filter, substrings separated by '|', keeps the layers whose names hold one of them; `halo`
// times every halo tile at every split of a list (with their registers) instead of sweeping the
// im2col kernel's tiles; `quick` leaves out the FMA column and the sweep of tiles. The `sweep`
// layers are forms of no network here (odd channel counts and maps, dilation) for choosing rules
// that hold beyond the networks measured.
//
// Each figure: the minimum over 5 submits of `repeats` back-to-back dispatches (barriers between),
// divided by `repeats`. Every pipeline is built first (one pass over the layers, untimed); then
// the device is warmed up: an H100 idles at 345 MHz and reaches its boost clock only under
// sustained load, so a convolution is repeated for at least 5 s and until two consecutive timings
// agree within 3% (at most 90 s), and the time that took is printed.
//
// Below each layer, on a device with cooperative matrices: every tensor-core tile (sg_m x sg_n
// subgroups of 2x4, 1x4, 2x2 or 1x2 products, K step 32 and 64) with the automatic split of K,
// then the fastest of them over several splits.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/conv_gemm.hpp>
#include <infer/vulkan/convolution.hpp>
#include <infer_shaders/peak_coopmat.hpp>
#include <infer_shaders/peak_f32.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace ivk = infer::vk;
using infer::ElemType;
using infer::Shape;

struct Layer {
  const char* name;
  int c, outc, w, h, kernel, stride, pad, group = 1, dilation = 1;
};

int out_extent(int in, int k, int s, int p, int d) {
  return (in + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

void die(const infer::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "bench_gpu_conv: %s: %s\n", what, s.message().c_str());
    std::exit(1);
  }
}
template <class T>
T take(infer::Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "bench_gpu_conv: %s: %s\n", what, r.message().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

/// Whether `name` holds one of the '|'-separated substrings of `filter`.
bool matches(const std::string& name, const std::string& filter) {
  for (std::size_t at = 0; at <= filter.size();) {
    const std::size_t end = std::min(filter.find('|', at), filter.size());
    if (end > at && name.find(filter.substr(at, end - at)) != std::string::npos) return true;
    at = end + 1;
  }
  return false;
}

/// Seconds per repetition of what `record` records (min over 5 submits).
template <class F>
double time_it(ivk::Context& ctx, ivk::PipelineCache& cache, int repeats, F&& record) {
  auto cmd = take(ivk::Command::create(ctx), "command");
  double best = std::numeric_limits<double>::infinity();
  die(cmd->begin(2), "begin");
  ivk::CommandRecorder rec(*cmd, cache);
  die(cmd->timestamp(0), "timestamp");
  for (int r = 0; r < repeats; ++r) {
    die(record(rec), "record");
    die(cmd->barrier(), "barrier");
  }
  die(cmd->timestamp(1), "timestamp");
  die(cmd->end(), "end");
  for (int i = 0; i < 6; ++i) {  // the first submit warms up
    die(cmd->submit_and_wait(), "submit");
    const auto ns = take(cmd->timestamps_ns(), "timestamps");
    if (i > 0) best = std::min(best, ns[1] * 1e-9 / repeats);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  ivk::DeviceChoice choice;
  choice.pipeline_statistics = true;  // the tensor-core tiles' registers, printed below
  if (argc > 1) choice.index = std::uint32_t(std::atoi(argv[1]));
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  const bool quick = argc > 5 && std::string(argv[5]) == "quick";
  const bool halo_sweep = argc > 5 && std::string(argv[5]) == "halo";
  std::vector<int> steps;
  for (const char* at = argc > 3 ? argv[3] : "32,64"; *at;) {
    char* end = nullptr;
    steps.push_back(int(std::strtol(at, &end, 10)));
    if (end == at) break;
    at = *end ? end + 1 : end;
  }
  auto ctx = take(ivk::Context::create(choice), "device");
  const ivk::DeviceInfo& info = ctx->info();
  std::printf("device: %s\n", info.describe().c_str());
  if (info.timestamp_period <= 0) {
    std::fprintf(stderr, "bench_gpu_conv: the device has no compute timestamps\n");
    return 1;
  }
  if (!info.fp16_storage) {
    std::fprintf(stderr, "bench_gpu_conv: the device has no 16-bit storage\n");
    return 1;
  }
  ivk::PipelineCache cache(*ctx);

  auto scratch = take(ivk::Buffer::create(*ctx, 64 << 20, ivk::MemoryKind::device), "buffer");
  auto warm_up = [&] {
    // A 3x3 convolution of 256 channels at 56x56, direct kernel, until steady.
    const ivk::VkMat in(scratch.get(), 0, Shape::of(56, 56, 256), ElemType::f16, 4);
    const ivk::VkMat out(scratch.get(), 8 << 20, Shape::of(56, 56, 256), ElemType::f16, 4);
    const ivk::VkMat w(scratch.get(), 16 << 20, Shape::of(256 * 256 * 9), ElemType::f16, 1);
    ivk::ConvolutionParams p;
    p.kernel_w = p.kernel_h = 3;
    p.pad_left = p.pad_top = 1;
    const auto start = std::chrono::steady_clock::now();
    double last = 0;
    for (;;) {
      const double s = time_it(*ctx, cache, 4, [&](ivk::Recorder& r) {
        return ivk::record_convolution(r, in, out, w, nullptr, p);
      });
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // At least 5 s of back-to-back work: an H100 idles at 345 MHz and boosts only under
      // sustained load, so a steady time alone can be a steady low clock.
      if ((waited > 5 && last > 0 && std::abs(s - last) <= 0.03 * last) || waited > 90) {
        std::printf("warm-up: %.0f s until a convolution's time held within 3%% (%.1f us)\n",
                    waited, s * 1e6);
        break;
      }
      last = s;
    }
  };

  const Layer layers[] = {
      {"resnet50 conv1 7x7 s2", 3, 64, 224, 224, 7, 2, 3},
      {"resnet50 1x1 64->256 56x56", 64, 256, 56, 56, 1, 1, 0},
      {"resnet50 3x3 64 56x56", 64, 64, 56, 56, 3, 1, 1},
      {"resnet50 1x1 256->64 56x56", 256, 64, 56, 56, 1, 1, 0},
      {"resnet50 3x3 128 28x28", 128, 128, 28, 28, 3, 1, 1},
      {"resnet50 3x3 256 14x14", 256, 256, 14, 14, 3, 1, 1},
      {"resnet50 1x1 1024->256 14x14", 1024, 256, 14, 14, 1, 1, 0},
      {"resnet50 3x3 512 7x7", 512, 512, 7, 7, 3, 1, 1},
      {"resnet50 1x1 512->2048 7x7", 512, 2048, 7, 7, 1, 1, 0},
      {"vgg16 conv1_1 3x3 3->64 224x224", 3, 64, 224, 224, 3, 1, 1},
      {"vgg16 3x3 64 224x224", 64, 64, 224, 224, 3, 1, 1},
      {"vgg16 3x3 128 112x112", 128, 128, 112, 112, 3, 1, 1},
      {"vgg16 3x3 256 56x56", 256, 256, 56, 56, 3, 1, 1},
      {"vgg16 3x3 512 28x28", 512, 512, 28, 28, 3, 1, 1},
      {"vgg16 3x3 512 14x14", 512, 512, 14, 14, 3, 1, 1},
      {"sweep 3x3 32 112x112", 32, 32, 112, 112, 3, 1, 1},
      {"sweep 3x3 96->128 35x35", 96, 128, 35, 35, 3, 1, 1},
      {"sweep 3x3 192 28x28", 192, 192, 28, 28, 3, 1, 1},
      {"sweep 3x3 320 17x17 dil 2", 320, 320, 17, 17, 3, 1, 2, 1, 2},
      {"sweep 3x3 64->256 56x56", 64, 256, 56, 56, 3, 1, 1},
      {"sweep 3x3 256->64 112x112", 256, 64, 112, 112, 3, 1, 1},
      {"alexnet 5x5 64->192 27x27", 64, 192, 27, 27, 5, 1, 2},
      {"mobilenet 1x1 512->512 14x14", 512, 512, 14, 14, 1, 1, 0},
      {"mobilenet 1x1 1024->1024 7x7", 1024, 1024, 7, 7, 1, 1, 0},
      {"mobilenet_v2 1x1 32->192 56x56", 32, 192, 56, 56, 1, 1, 0},
      {"mobilenet conv1 3x3 s2 3->32 224x224", 3, 32, 224, 224, 3, 2, 1},
      {"mnasnet 1x1 72->24 56x56", 72, 24, 56, 56, 1, 1, 0},
      {"mnasnet 1x1 40->120 28x28", 40, 120, 28, 28, 1, 1, 0},
      {"mnasnet 1x1 120->40 28x28", 120, 40, 28, 28, 1, 1, 0},
      {"mnasnet 1x1 480->80 14x14", 480, 80, 14, 14, 1, 1, 0},
      {"mnasnet 1x1 192->1152 7x7", 192, 1152, 7, 7, 1, 1, 0},
      {"mnasnet 1x1 1152->192 7x7", 1152, 192, 7, 7, 1, 1, 0},
      {"grouped 1x1 240->240 g3 28x28", 240, 240, 28, 28, 1, 1, 0, 3},
      {"grouped 3x3 g8 (8 per group) 28x28", 64, 64, 28, 28, 3, 1, 1, 8},
      {"odd 3x3 37->53 dil 2 31x29", 37, 53, 31, 29, 3, 1, 2, 1, 2},
      // Depthwise (one channel per group): the direct kernel alone, bandwidth-bound.
      {"dw mnasnet 3x3 32 112x112", 32, 32, 112, 112, 3, 1, 1, 32},
      {"dw mnasnet 3x3 s2 48 112x112", 48, 48, 112, 112, 3, 2, 1, 48},
      {"dw mobilenet_v2 3x3 144 56x56", 144, 144, 56, 56, 3, 1, 1, 144},
      {"dw mnasnet 5x5 120 28x28", 120, 120, 28, 28, 5, 1, 2, 120},
      {"dw mnasnet 5x5 480 14x14", 480, 480, 14, 14, 5, 1, 2, 480},
      {"dw mnasnet 5x5 1152 7x7", 1152, 1152, 7, 7, 5, 1, 2, 1152},
      {"dw mnasnet 3x3 1152 7x7", 1152, 1152, 7, 7, 3, 1, 1, 1152},
      {"dw odd 3x3 s2 dil 2 36 33x31", 36, 36, 33, 31, 3, 2, 2, 36, 2},
  };
  double fma_peak = 0, coop_peak = 0;  // measured after the warm-up, below
  // One pass over the layers: `print` false builds every pipeline (one repetition each, nothing
  // printed), true measures.
  auto pass = [&](bool print) {
    const int reps = print ? repeats : 1;
    if (print)
      std::printf("%-36s %8s | %22s | %22s | %22s | %10s\n", "layer", "GFLOP",
                  "GEMM coopmat us TF/s %", "halo coopmat us TF/s %", "GEMM FMA us TF/s %",
                  "direct us");
    for (const Layer& l : layers) {
      if (argc > 4 && !matches(l.name, argv[4])) continue;
      const int ow = out_extent(l.w, l.kernel, l.stride, l.pad, l.dilation);
      const int oh = out_extent(l.h, l.kernel, l.stride, l.pad, l.dilation);
      const int in_pack = l.c % 4 == 0 ? 4 : 1, out_pack = l.outc % 4 == 0 ? 4 : 1;
      const int per_in = l.c / l.group;
      const int K = per_in * l.kernel * l.kernel;
      const double flops = 2.0 * double(ow) * oh * l.outc * K;
      const ivk::VkMat in(scratch.get(), 0, Shape::of(l.w, l.h, l.c), ElemType::f16, in_pack);
      const std::size_t at_out = (in.bytes() + 255) / 256 * 256;
      const ivk::VkMat out(scratch.get(), at_out, Shape::of(ow, oh, l.outc), ElemType::f16,
                           out_pack);
      const std::size_t at_w = at_out + (out.bytes() + 255) / 256 * 256;
      const ivk::VkMat w_gemm(scratch.get(), at_w, Shape::of(l.outc * ivk::conv_gemm_k_pad(K)),
                              ElemType::f16, 1);
      const ivk::VkMat w_direct(scratch.get(), at_w, Shape::of(l.outc * K), ElemType::f16, 1);
      const std::size_t at_b = at_w + (w_gemm.bytes() + 255) / 256 * 256;
      const ivk::VkMat bias(scratch.get(), at_b, Shape::of(l.outc), ElemType::f16, 1);
      if (at_b + bias.bytes() > scratch->bytes()) die(infer::make_error("too large"), l.name);
      ivk::ConvolutionParams p;
      p.kernel_w = p.kernel_h = l.kernel;
      p.stride_w = p.stride_h = l.stride;
      p.pad_left = p.pad_top = l.pad;
      p.dilation_w = p.dilation_h = l.dilation;
      p.group = l.group;
      p.act = {ivk::Activation::relu, 0.f, 0.f};
      auto gemm = [&](ivk::GemmPath path) {
        return time_it(*ctx, cache, reps, [&](ivk::Recorder& r) {
          return ivk::record_conv_gemm(r, in, out, w_gemm, &bias, p, path);
        });
      };
      auto cell = [&](double s, double peak) {
        return fmt::format("{:8.1f} {:6.1f} {:5.1f}", s * 1e6, flops / s * 1e-12,
                           peak > 0 ? 100 * flops / s / peak : 0.0);
      };
      // A depthwise layer (K = its window) runs on the direct kernel only.
      const bool depthwise = l.group == l.c && l.c == l.outc;
      const std::string coop = info.cooperative_matrix && !depthwise
                                   ? cell(gemm(ivk::GemmPath::cooperative_matrix), coop_peak)
                                   : fmt::format("{:>22}", "n/a");
      // The halo kernel where it takes the layer (strides 1, 2-9 taps, pack-4 input of a
      // multiple of 8 channels a group), whatever the map's width.
      const std::string halo =
          info.cooperative_matrix && !depthwise && ivk::conv_halo_fits(p, per_in, in_pack)
              ? cell(gemm(ivk::GemmPath::cooperative_matrix_halo), coop_peak)
              : fmt::format("{:>22}", "n/a");
      const std::string fma = quick || halo_sweep || depthwise
                                  ? fmt::format("{:>22}", depthwise ? "n/a" : "")
                                  : cell(gemm(ivk::GemmPath::fma), fma_peak);
      const double direct =
          time_it(*ctx, cache, std::max(1, depthwise ? reps : reps / 4), [&](ivk::Recorder& r) {
            return ivk::record_convolution(r, in, out, w_direct, &bias, p);
          });
      if (print)
        std::printf("%-36s %8.3f | %s | %s | %s | %10.1f%s\n", l.name, flops * 1e-9, coop.c_str(),
                    halo.c_str(), fma.c_str(), direct * 1e6,
                    depthwise ? fmt::format("  ({:.0f} GB/s in + out)",
                                            double(in.bytes() + out.bytes()) / direct * 1e-9)
                                    .c_str()
                              : "");
      // One tensor-core kernel (im2col or halo) at tile t and `splits` parts of K (0: the
      // automatic split), timed; the compiler's statistics of each pipeline (registers decide how
      // many workgroups share a unit) printed where the driver gives them, once per pipeline
      // (layers of one form share theirs: shapes are push constants).
      auto tiled = [&](ivk::GemmPath path, ivk::TcTile t, int splits) {
        const bool halo_path = path == ivk::GemmPath::cooperative_matrix_halo;
        if (!print) {  // where a pipeline fails, the last line names it
          std::fprintf(stderr, "building: %s, %s tile %dx%d of %dx%d step %d, %d splits\n",
                       l.name, halo_path ? "halo" : "im2col", t.sg_m, t.sg_n, t.wt_m, t.wt_n, t.bk,
                       splits);
          std::fflush(stderr);
        }
        const std::size_t pipelines = cache.size();
        const double s = time_it(*ctx, cache, reps, [&](ivk::Recorder& r) {
          return ivk::record_conv_gemm(r, in, out, w_gemm, &bias, p, path, splits, t);
        });
        const ivk::Pipeline* made = cache.last_made(halo_path ? "conv_halo_tc" : "conv_gemm_tc");
        if (!print && splits == 0 && cache.size() > pipelines && made &&
            !made->statistics().empty())
          std::printf("pipeline %s, %s tile %dx%d of %dx%d step %d: %s\n", l.name,
                      halo_path ? "halo" : "im2col", t.sg_m, t.sg_n, t.wt_m, t.wt_n, t.bk,
                      made->statistics().c_str());
        return s;
      };
      if (info.cooperative_matrix && halo_sweep && ivk::conv_halo_fits(p, per_in, in_pack)) {
        // Every halo tile over several splits (0: the automatic split), the automatic choice
        // named.
        const ivk::TcTile chosen =
            ivk::conv_halo_tile(l.outc / l.group, oh, p, info.max_shared_memory);
        if (print) std::printf("  halo (us, auto %dx%d):\n", chosen.sg_m, chosen.sg_n);
        for (int sg_m : {1, 2})
          for (int sg_n : {1, 2, 4}) {
            const ivk::TcTile t{sg_m, sg_n, 16};
            if (ivk::conv_halo_shared_bytes(t, p) > info.max_shared_memory) continue;
            std::string row = fmt::format("    {}x{} splits:", sg_m, sg_n);
            for (int splits : {0, 1, 2, 3, 4, 6, 8, 12, 16}) {
              const double s = tiled(ivk::GemmPath::cooperative_matrix_halo, t, splits);
              row += splits == 0 ? fmt::format(" auto {:.1f}", s * 1e6)
                                 : fmt::format(" {} {:.1f}", splits, s * 1e6);
            }
            if (print) std::printf("%s\n", row.c_str());
          }
      }
      if (info.cooperative_matrix && !quick && !halo_sweep && !depthwise) {
        // Every tensor-core tile (subgroups, their products) and K step with the automatic split,
        // beside the automatic choice; then the fastest over several splits.
        const ivk::TcTile chosen = ivk::conv_gemm_tc_tile(
            l.outc / l.group, std::size_t(ow) * oh, ivk::conv_gemm_k_pad(K), l.group,
            info.compute_units, info.max_shared_memory, ivk::conv_gemm_tc_small_rule());
        auto tc = [&](ivk::TcTile t, int splits) {
          return tiled(ivk::GemmPath::cooperative_matrix, t, splits);
        };
        ivk::TcTile best_tile;
        double best = std::numeric_limits<double>::infinity();
        const std::pair<int, int> products[] = {{2, 4}, {1, 4}, {2, 2}, {1, 2}};
        for (int bk : steps)
          for (const auto& [wt_m, wt_n] : products) {
            std::string row =
                fmt::format("  k step {}, {}x{} products (us, auto {}x{} of {}x{} step {}):", bk,
                            wt_m, wt_n, chosen.sg_m, chosen.sg_n, chosen.wt_m, chosen.wt_n,
                            chosen.bk);
            for (int sg_m : {1, 2, 4})
              for (int sg_n : {1, 2, 4}) {
                const ivk::TcTile t{sg_m, sg_n, bk, wt_m, wt_n};
                if (!ivk::conv_gemm_tc_tile_valid(t)) continue;
                if (ivk::conv_gemm_tc_shared_bytes(t) > info.max_shared_memory) {
                  row += fmt::format(" {}x{} -", sg_m, sg_n);  // does not fit
                  continue;
                }
                const double s = tc(t, 0);
                if (s < best) best = s, best_tile = t;
                row += fmt::format(" {}x{} {:.1f}", sg_m, sg_n, s * 1e6);
              }
            if (print) std::printf("%s\n", row.c_str());
          }
        std::string row = fmt::format("  splits of {}x{} of {}x{} step {} (us):", best_tile.sg_m,
                                      best_tile.sg_n, best_tile.wt_m, best_tile.wt_n,
                                      best_tile.bk);
        for (int splits : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48})
          row += fmt::format(" {} {:.1f}", splits, tc(best_tile, splits) * 1e6);
        if (print) std::printf("%s\n", row.c_str());
      }
    }
  };
  pass(false);
  warm_up();
  // Peaks.
  const ivk::VkMat whole(scratch.get(), 0, Shape::of(16 << 20), ElemType::f32, 1);
  const ivk::VkMat* peak_blobs[] = {&whole};
  const int iterations = 4096;
  {
    const std::uint32_t groups = 4096, local = 256;
    const ivk::SpecValue spec[] = {ivk::SpecValue::of(3, iterations)};
    const ivk::ShaderCode code{"peak.comp (f32)", infer::shaders::peak_f32, 1, 0};
    const double s = time_it(*ctx, cache, 3, [&](ivk::Recorder& r) {
      return r.dispatch(code, {local, 1, 1}, spec, peak_blobs, {}, {groups, 1, 1});
    });
    fma_peak = double(groups) * local * iterations * 8 * 4 * 2 / s;
  }
  if (info.cooperative_matrix) {
    const std::uint32_t groups = 1024, local = 128;
    const ivk::SpecValue spec[] = {ivk::SpecValue::of(3, iterations)};
    const ivk::ShaderCode code{"peak.comp (cooperative matrix)", infer::shaders::peak_coopmat, 1,
                               0};
    const double s = time_it(*ctx, cache, 3, [&](ivk::Recorder& r) {
      return r.dispatch(code, {local, 1, 1}, spec, peak_blobs, {}, {groups, 1, 1});
    });
    coop_peak = double(groups) * (local / 32) * iterations * 4 * 2.0 * 16 * 16 * 16 / s;
  }
  {
    // The floor of one step: a dispatch of one workgroup that does next to nothing, barriers
    // between, as a network's steps are recorded.
    const ivk::SpecValue spec[] = {ivk::SpecValue::of(3, 1)};
    const ivk::ShaderCode code{"peak.comp (f32)", infer::shaders::peak_f32, 1, 0};
    const double s = time_it(*ctx, cache, 100, [&](ivk::Recorder& r) {
      return r.dispatch(code, {64, 1, 1}, spec, peak_blobs, {}, {1, 1, 1});
    });
    std::printf("dispatch floor: %.2f us a step (one workgroup, barriers between)\n", s * 1e6);
    // The same with as many workgroups as a small layer's (each invocation one load and one
    // store), and the tensor-core kernel with one step: what a step costs before its work.
    for (const std::uint32_t groups : {16u, 128u}) {
      const double t = time_it(*ctx, cache, 100, [&](ivk::Recorder& r) {
        return r.dispatch(code, {128, 1, 1}, spec, peak_blobs, {}, {groups, 1, 1});
      });
      std::printf(
          "dispatch floor: %.2f us a step (%u workgroups of 128, a load and a store each)\n",
          t * 1e6, groups);
      if (!info.cooperative_matrix) continue;
      const ivk::ShaderCode tc{"peak.comp (cooperative matrix)", infer::shaders::peak_coopmat, 1,
                               0};
      const double u = time_it(*ctx, cache, 100, [&](ivk::Recorder& r) {
        return r.dispatch(tc, {128, 1, 1}, spec, peak_blobs, {}, {groups, 1, 1});
      });
      std::printf(
          "dispatch floor: %.2f us a step (%u workgroups of 128, two matrix loads, four "
          "products, four matrix stores)\n",
          u * 1e6, groups);
    }
  }
  std::printf("peak: fp32 FMA %.1f TFLOP/s", fma_peak * 1e-12);
  if (coop_peak > 0)
    std::printf(", fp16 cooperative matrix (f32 accumulators) %.1f TFLOP/s", coop_peak * 1e-12);
  std::printf("\n\n");

  pass(true);
  return 0;
}
