// Static graphs on a Vulkan target: include this header (it includes static_graph.hpp) and give
// the graph a target with device = Device::vulkan. The plan is the same compile-time plan; its GPU
// steps run through infer::Net's executor (net/gpu_executor.hpp): weights uploaded once at
// finalize(), each run of GPU steps recorded once per context into one command buffer and
// replayed, one submit and one wait per run. A CPU graph does not include this, so it compiles
// none of Vulkan.
#pragma once

#include <infer/graph/static_graph.hpp>
#include <infer/net/gpu_executor.hpp>
#include <memory>
#include <span>
#include <vector>

namespace infer::graph::detail {

template <>
struct GpuOps<Device::vulkan> {
  /// One node's layer as the executor calls it (upload_vulkan, forward_vulkan).
  struct LayerRef {
    const void* layer = nullptr;
    Status (*upload)(const void*, vk::Uploader&) = nullptr;
    Status (*forward)(const void*, std::span<const vk::VkMat>, std::span<const vk::VkMat>,
                      const vk::GpuStep&, vk::Recorder&) = nullptr;
    std::string_view type;

    Status upload_vulkan(vk::Uploader& up) const { return upload(layer, up); }
    Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                          const vk::GpuStep& step, vk::Recorder& rec) const {
      return forward(layer, in, out, step, rec);
    }
  };

  template <class L>
  static LayerRef ref(const L& l) {
    LayerRef r;
    r.layer = &l;
    r.type = type_name<L>();
    r.upload = [](const void* p, vk::Uploader& up) -> Status {
      if constexpr (requires(const L& x) { x.upload_vulkan(up); })
        return static_cast<const L*>(p)->upload_vulkan(up);
      return {};
    };
    r.forward = [](const void* p, std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                   const vk::GpuStep& step, vk::Recorder& rec) -> Status {
      if constexpr (VulkanLayer<L>) {
        return static_cast<const L*>(p)->forward_vulkan(in, out, step, rec);
      } else {
        return make_error("{} has no GPU forward", type_name<L>());
      }
    };
    return r;
  }

  /// The graph's GPU state: its device, plan, layers and uploaded weights.
  struct Graph {
    std::shared_ptr<net::gpu::Device> device;
    Plan plan;
    std::vector<LayerRef> layers;
    std::unique_ptr<net::gpu::PlanWeights> weights;
  };
  using Run = net::gpu::Run;

  static Status prepare(Graph& g, Plan plan, std::vector<LayerRef> layers, const Option& opt) {
    if (!g.device) {
      auto dev = net::gpu::open_device(opt.vulkan_device);
      if (!dev.ok())
        return make_error("StaticGraph: the target places layers on the GPU: {}", dev.message());
      g.device = std::move(*dev);
    }
    if (plan.target.gpu_storage == ElemType::f16 && !g.device->ctx->info().fp16_storage)
      return make_error("StaticGraph: {} has no 16-bit storage for the target's f16 GPU storage",
                        g.device->ctx->info().name);
    g.plan = std::move(plan);
    g.layers = std::move(layers);
    auto w = net::gpu::upload_weights(g.device, g.plan,
                                      [&](int node) { return &g.layers[std::size_t(node)]; });
    if (!w.ok()) return make_error("StaticGraph: uploading the weights: {}", w.message());
    g.weights = std::move(*w);
    return {};
  }

  static Result<std::unique_ptr<Run>> record(const Graph& g) {
    if (!g.weights) return make_error("StaticGraph: call load() or finalize() first");
    return Run::record(
        g.plan, *g.weights, [&](int node) { return &g.layers[std::size_t(node)]; },
        [&](std::size_t k) {
          const StepDesc& s = g.plan.steps[k];
          return s.kind == StepDesc::layer
                     ? fmt::format("{} '{}'", g.plan.desc.nodes[std::size_t(s.node)].type,
                                   g.plan.desc.nodes[std::size_t(s.node)].name)
                     : std::string("transfer");
        });
  }

  static Status run_segment(Run& run, std::size_t step, std::span<Mat> bufs, int spin_us) {
    const int seg = run.segment_at(step);
    if (seg < 0) return make_error("no GPU segment starts at step {}", step);
    return run.run_segment(seg, bufs, spin_us);
  }
};

}  // namespace infer::graph::detail
