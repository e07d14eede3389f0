// The tools' --device option: cpu (the default), vulkan[:N] (device N of the loader's list;
// without N the best one), or any (the GPU when one opens, else the CPU), and --gpu-storage
// f16|f32 for the GPU's storage type.
#pragma once

#include <charconv>
#include <infer/graph/plan.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>
#include <string_view>

namespace infer::tools {

inline Status parse_device(std::string_view v, graph::Target& target, Option& opt) {
  if (v == "cpu") {
    target.device = graph::Device::cpu;
    return {};
  }
  if (v == "any") {  // the GPU when a Vulkan device opens, else the CPU
    target.device = graph::Device::any;
    return {};
  }
  if (v == "vulkan" || v.starts_with("vulkan:")) {
    target.device = graph::Device::vulkan;
    opt.vulkan_device = -1;
    if (v.size() > 7) {
      const std::string_view n = v.substr(7);
      int index = -1;
      const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
      if (ec != std::errc() || p != n.data() + n.size() || index < 0)
        return make_error("--device: '{}' is not vulkan:N with N a device index", v);
      opt.vulkan_device = index;
    }
    return {};
  }
  return make_error("--device: expected cpu, vulkan, vulkan:N or any, got '{}'", v);
}

inline Status parse_gpu_storage(std::string_view v, graph::Target& target) {
  if (v == "f16") {
    target.gpu_storage = ElemType::f16;
  } else if (v == "f32") {
    target.gpu_storage = ElemType::f32;
  } else {
    return make_error("--gpu-storage: expected f16 or f32, got '{}'", v);
  }
  return {};
}

}  // namespace infer::tools
