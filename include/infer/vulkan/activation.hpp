// The activation kernel on the GPU (shaders/activation.comp): one dispatch over every stored value
// of a blob, in place, f32 or f16 storage. The standalone activation layers run it; a GPU
// convolution applies the same functions in its epilogue.
#pragma once

#include <algorithm>
#include <string_view>
#include <infer/vulkan/command.hpp>
#include <infer/vulkan/pipeline.hpp>
#include <infer_shaders/activation_f16.hpp>
#include <infer_shaders/activation_f32.hpp>

namespace infer::vk {

/// Activation kinds of shaders/activation.glsl: none, ncnn's 1..6, then Swish, TanH, HardSigmoid.
enum class Activation { none = 0, relu = 1, leaky_relu = 2, clip = 3, sigmoid = 4, mish = 5, hardswish = 6,
                        swish = 7, tanh = 8, hardsigmoid = 9 };

/// Whether the shaders can read and write `type` on ctx's device (f32; f16 with 16-bit storage).
inline Status check_storage(const Context& ctx, ElemType type, std::string_view what) {
  if (type != ElemType::f32 && type != ElemType::f16)
    return make_error("{}: storage {} is not f32 or f16", what, to_string(type));
  if (type == ElemType::f16 && !ctx.info().fp16_storage)
    return make_error("{}: {} has no 16-bit storage (storageBuffer16BitAccess) for an f16 blob",
                      what, ctx.info().name);
  return {};
}

/// Records `act` (parameters p0, p1 as the shader reads them) over `blob` in place.
inline Status record_activation(Command& cmd, PipelineCache& cache, const VkMat& blob,
                                Activation act, float p0 = 0.f, float p1 = 0.f) {
  INFER_TRY(check_storage(cmd.context(), blob.type(), "Vulkan activation"));
  const bool f16 = blob.type() == ElemType::f16;
  const ShaderCode code{f16 ? "activation.comp (f16)" : "activation.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::activation_f16)
                            : std::span<const std::uint32_t>(shaders::activation_f32),
                        1, 4};
  const SpecValue spec[] = {SpecValue::of(3, int(act)), SpecValue::of(4, p0),
                            SpecValue::of(5, p1)};
  constexpr std::uint32_t kLocal = 64;
  auto p = cache.get(code, {kLocal, 1, 1}, spec);
  INFER_TRY(p);
  const std::size_t n = blob.total() * std::size_t(blob.elempack());
  if (n > 0xFFFFFFFFu) return make_error("Vulkan activation: {} values is more than 2^32", n);
  const std::uint32_t count = std::uint32_t(n);
  const VkMat* blobs[] = {&blob};
  const std::uint32_t groups = std::uint32_t((n + kLocal - 1) / kLocal);
  const std::uint32_t gx = std::min<std::uint32_t>(groups, 65535), gy = (groups + gx - 1) / gx;
  return cmd.dispatch(**p, blobs, std::as_bytes(std::span(&count, 1)), {gx, gy, 1});
}

}  // namespace infer::vk
