// A command buffer being recorded: buffer copies, dispatches with their descriptor sets and push
// constants, and barriers between dependent steps; then one submit and one fence wait. Recorded
// once, it can be submitted again (a plan's forward replays it).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <infer/vulkan/buffer.hpp>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/pipeline.hpp>
#include <infer/vulkan/recorder.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace infer::vk {

class Command {
 public:
  /// A command buffer on ctx's queue; `max_sets` descriptor sets can be bound while recording.
  static Result<std::unique_ptr<Command>> create(const Context& ctx, std::uint32_t max_sets = 1024,
                                                 std::uint32_t max_buffers = 4096) {
    auto c = std::unique_ptr<Command>(new Command());
    c->ctx_ = &ctx;
    INFER_TRY(guard(fmt::format("creating a command buffer on {}", ctx.info().name), [&] {
      c->pool_ = std::make_unique<::vk::raii::CommandPool>(
          ctx.device(), ::vk::CommandPoolCreateInfo(
                            ::vk::CommandPoolCreateFlagBits::eResetCommandBuffer, ctx.queue_family()));
      ::vk::raii::CommandBuffers cbs(ctx.device(), ::vk::CommandBufferAllocateInfo(
                                                       **c->pool_, ::vk::CommandBufferLevel::ePrimary, 1));
      c->cmd_ = std::make_unique<::vk::raii::CommandBuffer>(std::move(cbs[0]));
      const ::vk::DescriptorPoolSize size(::vk::DescriptorType::eStorageBuffer, max_buffers);
      c->descriptors_ = std::make_unique<::vk::raii::DescriptorPool>(
          ctx.device(), ::vk::DescriptorPoolCreateInfo(
                            ::vk::DescriptorPoolCreateFlagBits::eFreeDescriptorSet, max_sets, size));
      c->fence_ = std::make_unique<::vk::raii::Fence>(ctx.device(), ::vk::FenceCreateInfo());
    }));
    return c;
  }

  const Context& context() const { return *ctx_; }

  /// Starts recording (dropping what was recorded before); with `timestamps` > 0, a query pool of
  /// that many timestamps is reset for timestamp() to write.
  Status begin(std::uint32_t timestamps = 0) {
    return guard("beginning a command buffer", [&] {
      sets_.clear();
      descriptors_->reset();
      cmd_->reset();
      cmd_->begin(::vk::CommandBufferBeginInfo());
      queries_ = timestamps;
      if (timestamps > 0) {
        pool_queries_ = std::make_unique<::vk::raii::QueryPool>(
            ctx_->device(),
            ::vk::QueryPoolCreateInfo({}, ::vk::QueryType::eTimestamp, timestamps));
        cmd_->resetQueryPool(**pool_queries_, 0, timestamps);
      }
    });
  }

  /// Writes timestamp `index` once everything recorded before it has run.
  Status timestamp(std::uint32_t index) {
    if (index >= queries_)
      return make_error("Vulkan: timestamp {} of a command begun with {}", index, queries_);
    return guard("recording a timestamp", [&] {
      cmd_->writeTimestamp(::vk::PipelineStageFlagBits::eBottomOfPipe, **pool_queries_, index);
    });
  }

  /// The timestamps of the last submit, in nanoseconds from the first.
  Result<std::vector<double>> timestamps_ns() const {
    std::vector<double> ns;
    if (queries_ == 0) return ns;
    Status s = guard("reading timestamps", [&] {
      const auto [r, ticks] = pool_queries_->getResults<std::uint64_t>(
          0, queries_, sizeof(std::uint64_t) * queries_, sizeof(std::uint64_t),
          ::vk::QueryResultFlagBits::e64 | ::vk::QueryResultFlagBits::eWait);
      if (r != ::vk::Result::eSuccess) throw std::runtime_error(::vk::to_string(r));
      for (std::uint64_t t : ticks)
        ns.push_back(double(t - ticks[0]) * double(ctx_->info().timestamp_period));
    });
    INFER_TRY(s);
    return ns;
  }
  Status end() {
    return guard("ending a command buffer", [&] { cmd_->end(); });
  }

  /// Copies `bytes` from src at src_offset to dst at dst_offset.
  Status copy(const Buffer& src, std::size_t src_offset, const Buffer& dst, std::size_t dst_offset,
              std::size_t bytes) {
    if (src_offset + bytes > src.bytes() || dst_offset + bytes > dst.bytes())
      return make_error("Vulkan: copy of {} bytes at {} -> {} outside the buffers ({} and {} bytes)",
                        bytes, src_offset, dst_offset, src.bytes(), dst.bytes());
    return guard("recording a copy", [&] {
      cmd_->copyBuffer(src.handle(), dst.handle(), ::vk::BufferCopy(src_offset, dst_offset, bytes));
    });
  }

  /// Records a dispatch of `groups` workgroups of pipeline `p` over `blobs` (binding i = blobs[i])
  /// with `push` as its push constants.
  Status dispatch(const Pipeline& p, std::span<const VkMat* const> blobs,
                  std::span<const std::byte> push, std::array<std::uint32_t, 3> groups) {
    if (blobs.size() != p.code().bindings)
      return make_error("Vulkan: shader {} binds {} buffers, {} given", p.code().name,
                        p.code().bindings, blobs.size());
    if (push.size() != p.code().push_bytes)
      return make_error("Vulkan: shader {} takes {} bytes of push constants, {} given",
                        p.code().name, p.code().push_bytes, push.size());
    for (const VkMat* m : blobs)
      if (!m || m->empty()) return make_error("Vulkan: shader {}: an unbound blob", p.code().name);
    return guard(fmt::format("recording a dispatch of {}", p.code().name), [&] {
      const ::vk::DescriptorSetLayout layout = p.set_layout();
      ::vk::raii::DescriptorSets sets(ctx_->device(),
                                      ::vk::DescriptorSetAllocateInfo(**descriptors_, layout));
      std::vector<::vk::DescriptorBufferInfo> infos;
      infos.reserve(blobs.size());
      for (const VkMat* m : blobs) infos.emplace_back(m->buffer()->handle(), m->offset(), m->bytes());
      std::vector<::vk::WriteDescriptorSet> writes;
      for (std::uint32_t i = 0; i < infos.size(); ++i)
        writes.emplace_back(*sets[0], i, 0, 1, ::vk::DescriptorType::eStorageBuffer, nullptr,
                            &infos[i]);
      ctx_->device().updateDescriptorSets(writes, nullptr);
      cmd_->bindPipeline(::vk::PipelineBindPoint::eCompute, p.handle());
      cmd_->bindDescriptorSets(::vk::PipelineBindPoint::eCompute, p.layout(), 0, *sets[0], nullptr);
      if (!push.empty())
        cmd_->pushConstants<std::byte>(p.layout(), ::vk::ShaderStageFlagBits::eCompute, 0, push);
      cmd_->dispatch(groups[0], groups[1], groups[2]);
      sets_.push_back(std::move(sets[0]));
    });
  }

  /// Makes every earlier write (shader or copy) visible to every later read or write.
  Status barrier() {
    return guard("recording a barrier", [&] {
      const ::vk::MemoryBarrier mb(
          ::vk::AccessFlagBits::eShaderWrite | ::vk::AccessFlagBits::eTransferWrite,
          ::vk::AccessFlagBits::eShaderRead | ::vk::AccessFlagBits::eShaderWrite |
              ::vk::AccessFlagBits::eTransferRead | ::vk::AccessFlagBits::eTransferWrite);
      cmd_->pipelineBarrier(
          ::vk::PipelineStageFlagBits::eComputeShader | ::vk::PipelineStageFlagBits::eTransfer,
          ::vk::PipelineStageFlagBits::eComputeShader | ::vk::PipelineStageFlagBits::eTransfer, {},
          mb, nullptr, nullptr);
    });
  }

  /// Device memory of at least `bytes` for kernels' intermediate values, kept as long as the
  /// command (a larger request makes a new buffer; the earlier ones stay for what was recorded).
  Result<VkMat> scratch(std::size_t bytes) {
    bytes = std::max<std::size_t>((bytes + 255) / 256 * 256, 256);
    if (scratch_.empty() || scratch_.back()->bytes() < bytes) {
      auto b = Buffer::create(*ctx_, bytes, MemoryKind::device);
      INFER_TRY(b);
      scratch_.push_back(std::move(*b));
    }
    const Buffer* b = scratch_.back().get();
    return VkMat(b, 0, Shape::of(int(b->bytes() / 4)), ElemType::f32, 1);
  }

  /// Submits what was recorded and waits for it (one submit, one fence wait): polls the fence
  /// for up to `spin_us` microseconds, then blocks.
  Status submit_and_wait(int spin_us = 0) {
    return guard(fmt::format("running a command buffer on {}", ctx_->info().name), [&] {
      const ::vk::CommandBuffer cb = **cmd_;
      {
        std::lock_guard lock(ctx_->queue_mutex());
        if (testing::device_lost())
          throw ::vk::DeviceLostError("vkQueueSubmit (injected by a test)");
        ctx_->queue().submit(::vk::SubmitInfo({}, {}, cb), **fence_);
      }
      if (spin_us > 0) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
        while (fence_->getStatus() == ::vk::Result::eNotReady &&
               std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
      const auto r = ctx_->device().waitForFences(**fence_, VK_TRUE, UINT64_MAX);
      if (r != ::vk::Result::eSuccess) throw std::runtime_error(::vk::to_string(r));
      ctx_->device().resetFences(**fence_);
    });
  }

 private:
  Command() = default;
  const Context* ctx_ = nullptr;
  std::unique_ptr<::vk::raii::CommandPool> pool_;
  std::unique_ptr<::vk::raii::CommandBuffer> cmd_;
  std::unique_ptr<::vk::raii::DescriptorPool> descriptors_;
  std::unique_ptr<::vk::raii::Fence> fence_;
  std::vector<::vk::raii::DescriptorSet> sets_;
  std::unique_ptr<::vk::raii::QueryPool> pool_queries_;
  std::uint32_t queries_ = 0;
  std::vector<std::unique_ptr<Buffer>> scratch_;
};

/// A Recorder over a Command being recorded, with pipelines from a cache.
class CommandRecorder final : public Recorder {
 public:
  CommandRecorder(Command& cmd, PipelineCache& cache) : cmd_(&cmd), cache_(&cache) {}
  std::string_view device_name() const override { return cmd_->context().info().name; }
  bool fp16_storage() const override { return cmd_->context().info().fp16_storage; }
  bool cooperative_matrix() const override { return cmd_->context().info().cooperative_matrix; }
  std::uint32_t compute_units() const override { return cmd_->context().info().compute_units; }
  std::uint32_t max_shared_memory() const override {
    return cmd_->context().info().max_shared_memory;
  }
  std::uint32_t max_workgroup_invocations() const override {
    return cmd_->context().info().max_workgroup_invocations;
  }
  Status dispatch(const ShaderCode& code, std::array<std::uint32_t, 3> local,
                  std::span<const SpecValue> spec, std::span<const VkMat* const> blobs,
                  std::span<const std::byte> push, std::array<std::uint32_t, 3> groups) override {
    auto p = cache_->get(code, local, spec);
    INFER_TRY(p);
    return cmd_->dispatch(**p, blobs, push, groups);
  }
  Status copy(const VkMat& src, std::size_t src_offset, const VkMat& dst, std::size_t dst_offset,
              std::size_t bytes) override {
    if (src.empty() || dst.empty()) return make_error("Vulkan: copy of an unbound blob");
    if (src_offset + bytes > src.bytes() || dst_offset + bytes > dst.bytes())
      return make_error("Vulkan: copy of {} bytes at {} -> {} outside the blobs ({} and {} bytes)",
                        bytes, src_offset, dst_offset, src.bytes(), dst.bytes());
    return cmd_->copy(*src.buffer(), src.offset() + src_offset, *dst.buffer(),
                      dst.offset() + dst_offset, bytes);
  }
  Status barrier() override { return cmd_->barrier(); }
  Result<VkMat> scratch(std::size_t bytes) override { return cmd_->scratch(bytes); }

 private:
  Command* cmd_;
  PipelineCache* cache_;
};

}  // namespace infer::vk
