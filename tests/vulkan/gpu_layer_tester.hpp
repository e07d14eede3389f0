// A tester for layers' GPU forwards: the layer's own CPU forward (f32, pack 1) is the reference;
// its forward_vulkan runs on the device at each storage type (f32, f16) and pack (1, 4) that fits,
// out of place and, where the layer runs in place on the GPU, in place; its weights go through
// upload_vulkan as the executor uploads them; outputs are pre-filled with NaN, so a value the
// kernel does not write fails. A layer whose GPU kernels read and write f32 vectors beside f16
// storage (NodeDesc::vulkan_f32_vectors) also runs at f16 with its 1-D inputs and outputs in f32,
// and with its 1-D inputs alone in f32.
//   GpuLayerTester(layers::Softmax{0}, "Softmax axis 0").inputs({Shape::of(7, 5, 12)}).run();
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <infer/graph/desc.hpp>
#include <infer/net/gpu_executor.hpp>
#include <infer/runner.hpp>
#include <infer/vulkan/command.hpp>
#include <limits>
#include <string>
#include <vector>

#include "vulkan/support.hpp"

namespace infer::vk::test {

template <class L>
class GpuLayerTester {
 public:
  GpuLayerTester(L layer, std::string what) : layer_(std::move(layer)), what_(std::move(what)) {}

  /// The input shapes (one per input blob).
  GpuLayerTester& inputs(std::vector<Shape> s) {
    inputs_ = std::move(s);
    return *this;
  }
  /// How many output blobs (default 1).
  GpuLayerTester& outputs(int n) {
    outputs_ = n;
    return *this;
  }
  /// Tolerances relative to the reference's largest value.
  GpuLayerTester& tolerance(double f32, double f16) {
    tol_f32_ = f32;
    tol_f16_ = f16;
    return *this;
  }

  void run() {
    INFO(what_);
    static_assert(VulkanLayer<L>, "GpuLayerTester: the layer has no forward_vulkan");
    // The reference: the CPU forward at f32, pack 1.
    std::vector<infer::test::RefTensor> ref_in;
    std::vector<Mat> cpu_in;
    unsigned seed = 17;
    for (const Shape& s : inputs_) {
      ref_in.push_back(random_tensor(s, seed++, -2.f, 2.f));
      cpu_in.push_back(infer::test::to_mat(ref_in.back()));
    }
    std::vector<Mat> cpu_out(static_cast<std::size_t>(outputs_));
    const Status cs = run_layer<float>(layer_, std::span<const Mat>(cpu_in), cpu_out, 1,
                                       Placement::out_of_place, Option{});
    INFO((cs.ok() ? std::string() : cs.message()));
    REQUIRE(cs.ok());
    std::vector<Shape> out_shapes(static_cast<std::size_t>(outputs_));
    REQUIRE(layer_.infer_shapes(std::span<const Shape>(inputs_), out_shapes).ok());
    const graph::NodeDesc desc = graph::describe_layer(layer_);
    for (ElemType type : {ElemType::f32, ElemType::f16}) {
      if (type == ElemType::f16 && !g_ctx->info().fp16_storage) continue;
      for (int pack : {1, 4}) {
        bool fits = true;
        for (const Shape& s : inputs_) fits = fits && s.packed_extent() % pack == 0;
        if (!fits) continue;
        run_on_gpu(type, pack, false, ref_in, cpu_out, out_shapes, desc);
        if (type == ElemType::f16 && desc.vulkan_f32_vectors)
          for (VectorForm f : {VectorForm::f32_in_out, VectorForm::f32_in})
            run_on_gpu(type, pack, false, ref_in, cpu_out, out_shapes, desc, f);
        const bool inplace = desc.inplace && desc.vulkan_inplace && inputs_.size() == 1 &&
                             outputs_ == 1 && out_shapes[0] == inputs_[0];
        if (inplace) run_on_gpu(type, pack, true, ref_in, cpu_out, out_shapes, desc);
      }
    }
  }

 private:
  /// The storage of 1-D blobs: the step's type, or f32 (inputs and outputs, or inputs only).
  enum class VectorForm { storage, f32_in_out, f32_in };

  void run_on_gpu(ElemType type, int pack, bool inplace,
                  const std::vector<infer::test::RefTensor>& in, const std::vector<Mat>& want,
                  const std::vector<Shape>& out_shapes, const graph::NodeDesc& desc,
                  VectorForm vectors = VectorForm::storage) {
    constexpr const char* kForm[] = {"", ", 1-D blobs in f32", ", 1-D inputs in f32"};
    INFO(fmt::format("{} pack {} {}{}", to_string(type), pack,
                     inplace ? "in place" : "out of place", kForm[int(vectors)]));
    Context& ctx = *g_ctx;
    // The type a blob of shape s is stored in.
    auto type_of = [&](const Shape& s, bool input) {
      const bool f32 = s.dims == 1 && (vectors == VectorForm::f32_in_out ||
                                       (vectors == VectorForm::f32_in && input));
      return f32 ? ElemType::f32 : type;
    };
    std::vector<Mat> host_in;
    for (const infer::test::RefTensor& t : in)
      host_in.push_back(host_mat(t, type_of(t.shape, true), pack));
    std::vector<Mat> host_out;  // NaN-filled, at the pack the plan would give each output
    for (const Shape& s : out_shapes) {
      infer::test::RefTensor nan(s, std::numeric_limits<float>::quiet_NaN());
      host_out.push_back(host_mat(nan, type_of(s, false), pack_for(s.packed_extent(), pack)));
    }
    // Weights as the executor uploads them.
    net::gpu::StagedUploader up(type);
    if constexpr (requires(vk::Uploader& u) { layer_.upload_vulkan(u); }) {
      const Status us = layer_.upload_vulkan(up);
      INFO((us.ok() ? std::string() : us.message()));
      REQUIRE(us.ok());
    }
    std::vector<VkMat> weights = up.take();
    // One device buffer: inputs, outputs, weights; one staging buffer for every transfer.
    auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
    std::size_t total = align(up.bytes().size()) + 256;
    for (const Mat& m : host_in) total += align(m.bytes());
    for (const Mat& m : host_out) total += align(m.bytes());
    auto dev = Buffer::create(ctx, total, MemoryKind::device);
    auto staging = Buffer::create(ctx, 2 * total, MemoryKind::staging);
    REQUIRE(dev.ok());
    REQUIRE(staging.ok());
    std::size_t at = 0, staged = 0;
    auto cmd = Command::create(ctx);
    REQUIRE(cmd.ok());
    REQUIRE((*cmd)->begin().ok());
    auto place = [&](const Mat& host) {
      const VkMat m(dev->get(), at, host.shape(), host.type(), host.elempack());
      at += align(host.bytes());
      REQUIRE(upload(**cmd, host, **staging, staged, m).ok());
      staged += align(host.bytes());
      return m;
    };
    std::vector<VkMat> d_in, d_out;
    for (const Mat& m : host_in) d_in.push_back(place(m));
    if (inplace) {
      d_out.push_back(d_in[0]);
    } else {
      for (const Mat& m : host_out) d_out.push_back(place(m));
    }
    if (!up.bytes().empty()) {
      const std::size_t base = at;
      std::memcpy(static_cast<char*>((*staging)->mapped()) + staged, up.bytes().data(),
                  up.bytes().size());
      REQUIRE((*cmd)->copy(**staging, staged, **dev, base, up.bytes().size()).ok());
      for (VkMat& w : weights)
        w = VkMat(dev->get(), base + w.offset(), w.shape(), w.type(), w.elempack());
      staged += align(up.bytes().size());
    }
    REQUIRE((*cmd)->barrier().ok());
    PipelineCache cache(ctx);
    CommandRecorder rec(**cmd, cache);
    GpuStep step;
    step.type = type;
    step.pack = pack;
    step.act = desc.fused;
    step.weights = weights;
    const Status fs = layer_.forward_vulkan(d_in, d_out, step, rec);
    INFO((fs.ok() ? std::string() : fs.message()));
    REQUIRE(fs.ok());
    REQUIRE((*cmd)->barrier().ok());
    std::vector<std::size_t> back;
    for (const VkMat& m : d_out) {
      back.push_back(staged);
      REQUIRE(download(**cmd, m, **staging, staged).ok());
      staged += align(m.bytes());
    }
    REQUIRE((*cmd)->end().ok());
    const Status ran = (*cmd)->submit_and_wait();
    INFO((ran.ok() ? std::string() : ran.message()));
    REQUIRE(ran.ok());
    for (std::size_t o = 0; o < d_out.size(); ++o) {
      Mat got;
      REQUIRE(read_back(**staging, back[o], d_out[o], got).ok());
      compare(infer::test::from_mat(got), infer::test::from_mat(want[o]), type, o);
    }
  }

  void compare(const infer::test::RefTensor& got, const infer::test::RefTensor& want, ElemType type,
               std::size_t o) {
    REQUIRE(got.v.size() == want.v.size());
    const auto [bad, first] =
        mismatches(got.v, want.v, type == ElemType::f32 ? tol_f32_ : tol_f16_);
    INFO(fmt::format("output {}: {} of {} values wrong; first at {}: got {} want {}", o, bad,
                     want.v.size(), first, got.v[first], want.v[first]));
    CHECK(bad == 0);
  }

  L layer_;
  std::string what_;
  std::vector<Shape> inputs_;
  int outputs_ = 1;
  double tol_f32_ = 1e-4, tol_f16_ = 1e-2;
};

}  // namespace infer::vk::test
