// Compute pipelines from embedded SPIR-V. A layer's parameters reach its shader as specialization
// constants (window, stride, activation, pack), shapes as push constants, so one module per shader
// and storage type serves every layer instance; the context's cache (PipelineCache) keeps one
// pipeline per (module, constants), since layers are plain constexpr structs that hold no GPU
// objects of their own.
#pragma once

#include <cstdint>
#include <cstring>
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/shader.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infer::vk {

/// A compute pipeline and the layouts its dispatches need.
class Pipeline {
 public:
  /// Builds `code` with `local` workgroup size (spec constants 0, 1, 2) and `spec` (ids from 3).
  static Result<std::unique_ptr<Pipeline>> create(const Context& ctx, const ShaderCode& code,
                                                  std::array<std::uint32_t, 3> local,
                                                  std::span<const SpecValue> spec) {
    // SPIR-V starts with its magic number; anything else is not handed to the driver.
    if (code.spirv.size() < 5 || code.spirv[0] != 0x07230203u)
      return make_error("Vulkan: shader {} is not SPIR-V ({} words, first {:#010x})", code.name,
                        code.spirv.size(), code.spirv.empty() ? 0u : code.spirv[0]);
    auto p = std::unique_ptr<Pipeline>(new Pipeline());
    p->code_ = code;
    p->local_ = local;
    Status s = guard(fmt::format("building the pipeline of shader {} on {}", code.name,
                                 ctx.info().name),
                     [&] {
                       const ::vk::ShaderModuleCreateInfo smci({}, code.spirv.size_bytes(),
                                                               code.spirv.data());
                       p->module_ = std::make_unique<::vk::raii::ShaderModule>(ctx.device(), smci);
                       std::vector<::vk::DescriptorSetLayoutBinding> b;
                       for (std::uint32_t i = 0; i < code.bindings; ++i)
                         b.emplace_back(i, ::vk::DescriptorType::eStorageBuffer, 1,
                                        ::vk::ShaderStageFlagBits::eCompute);
                       p->set_layout_ = std::make_unique<::vk::raii::DescriptorSetLayout>(
                           ctx.device(), ::vk::DescriptorSetLayoutCreateInfo({}, b));
                       const ::vk::PushConstantRange range(::vk::ShaderStageFlagBits::eCompute, 0,
                                                           code.push_bytes);
                       const ::vk::DescriptorSetLayout layouts[] = {**p->set_layout_};
                       ::vk::PipelineLayoutCreateInfo plci({}, layouts);
                       if (code.push_bytes) plci.setPushConstantRanges(range);
                       p->layout_ = std::make_unique<::vk::raii::PipelineLayout>(ctx.device(), plci);
                       std::vector<::vk::SpecializationMapEntry> entries;
                       std::vector<std::uint32_t> data;
                       for (std::uint32_t i = 0; i < 3; ++i) {
                         entries.emplace_back(i, std::uint32_t(4 * data.size()), 4);
                         data.push_back(local[i]);
                       }
                       for (const SpecValue& v : spec) {
                         entries.emplace_back(v.id, std::uint32_t(4 * data.size()), 4);
                         data.push_back(v.bits);
                       }
                       const ::vk::SpecializationInfo si(
                           std::uint32_t(entries.size()), entries.data(), 4 * data.size(),
                           data.data());
                       const ::vk::PipelineShaderStageCreateInfo stage(
                           {}, ::vk::ShaderStageFlagBits::eCompute, **p->module_, "main", &si);
                       const ::vk::ComputePipelineCreateInfo cpci(
                           ctx.info().pipeline_statistics
                               ? ::vk::PipelineCreateFlagBits::eCaptureStatisticsKHR
                               : ::vk::PipelineCreateFlags{},
                           stage, **p->layout_);
                       p->pipeline_ = std::make_unique<::vk::raii::Pipeline>(ctx.device(), nullptr,
                                                                             cpci);
                       if (ctx.info().pipeline_statistics) p->statistics_ = p->read_statistics(ctx);
                     });
    INFER_TRY(s);
    return p;
  }

  /// The compiler's statistics of the pipeline's (first) executable as the driver names them,
  /// "name value, ..." (NVIDIA's: registers, shared memory, ...); empty unless the context was
  /// opened with DeviceChoice::pipeline_statistics on a device that has them.
  const std::string& statistics() const { return statistics_; }

  const ShaderCode& code() const { return code_; }
  std::array<std::uint32_t, 3> local_size() const { return local_; }
  ::vk::Pipeline handle() const { return **pipeline_; }
  ::vk::PipelineLayout layout() const { return **layout_; }
  ::vk::DescriptorSetLayout set_layout() const { return **set_layout_; }

 private:
  Pipeline() = default;
  ShaderCode code_;
  std::array<std::uint32_t, 3> local_{};
  std::unique_ptr<::vk::raii::ShaderModule> module_;
  std::unique_ptr<::vk::raii::DescriptorSetLayout> set_layout_;
  std::unique_ptr<::vk::raii::PipelineLayout> layout_;
  std::unique_ptr<::vk::raii::Pipeline> pipeline_;
  std::string statistics_;

  std::string read_statistics(const Context& ctx) const {
    std::string out;
    const auto executables =
        ctx.device().getPipelineExecutablePropertiesKHR(::vk::PipelineInfoKHR(**pipeline_));
    if (executables.empty()) return out;
    for (const auto& st : ctx.device().getPipelineExecutableStatisticsKHR(
             ::vk::PipelineExecutableInfoKHR(**pipeline_, 0))) {
      std::string value;
      switch (st.format) {
        case ::vk::PipelineExecutableStatisticFormatKHR::eBool32:
          value = st.value.b32 ? "yes" : "no";
          break;
        case ::vk::PipelineExecutableStatisticFormatKHR::eInt64:
          value = fmt::format("{}", st.value.i64);
          break;
        case ::vk::PipelineExecutableStatisticFormatKHR::eUint64:
          value = fmt::format("{}", st.value.u64);
          break;
        case ::vk::PipelineExecutableStatisticFormatKHR::eFloat64:
          value = fmt::format("{:g}", st.value.f64);
          break;
      }
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", st.name.data(), value);
    }
    return out;
  }
};

/// Pipelines of one device by (shader, workgroup size, constants), made once and kept; safe from
/// several threads.
class PipelineCache {
 public:
  explicit PipelineCache(const Context& ctx) : ctx_(&ctx) {}

  Result<const Pipeline*> get(const ShaderCode& code, std::array<std::uint32_t, 3> local,
                              std::span<const SpecValue> spec) {
    std::vector<std::uint32_t> key = {std::uint32_t(reinterpret_cast<std::uintptr_t>(code.spirv.data())),
                                      std::uint32_t(reinterpret_cast<std::uintptr_t>(code.spirv.data()) >> 32),
                                      local[0], local[1], local[2]};
    for (const SpecValue& v : spec) key.insert(key.end(), {v.id, v.bits});
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second.get();
    auto p = Pipeline::create(*ctx_, code, local, spec);
    INFER_TRY(p);
    const Pipeline* raw = p->get();
    cache_.emplace(std::move(key), std::move(*p));
    made_.push_back(raw);
    return raw;
  }
  /// The last pipeline made whose shader's name holds `shader` (nullptr if none): a benchmark
  /// reads its statistics.
  const Pipeline* last_made(std::string_view shader) const {
    std::lock_guard lock(mutex_);
    for (auto it = made_.rbegin(); it != made_.rend(); ++it)
      if (std::string_view((*it)->code().name).find(shader) != std::string_view::npos) return *it;
    return nullptr;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return cache_.size();
  }

 private:
  const Context* ctx_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::uint32_t>, std::unique_ptr<Pipeline>> cache_;
  std::vector<const Pipeline*> made_;  ///< in the order they were made
};

}  // namespace infer::vk
