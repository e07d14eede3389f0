// A shader as the backend records it: its embedded SPIR-V with its interface (bindings, push
// constant bytes) and the values of its specialization constants. Light: no Vulkan headers.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace infer::vk {

/// A shader module's SPIR-V and its interface.
struct ShaderCode {
  std::string_view name;               ///< for errors: the shader file and variant
  std::span<const std::uint32_t> spirv;
  std::uint32_t bindings = 1;          ///< storage buffers 0..bindings-1
  std::uint32_t push_bytes = 0;        ///< size of the push-constant block
};

/// A specialization constant's value (bit pattern of an int, uint or float).
struct SpecValue {
  std::uint32_t id = 0;
  std::uint32_t bits = 0;
  static SpecValue of(std::uint32_t id, int v) { return {id, std::uint32_t(v)}; }
  static SpecValue of(std::uint32_t id, float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return {id, b};
  }
};

}  // namespace infer::vk
