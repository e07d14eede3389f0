// The activation kernel on the GPU (shaders/activation.comp): one dispatch over every stored value
// of a blob, in place, f32 or f16 storage. The standalone activation layers run it; the GPU
// convolution applies the same functions (shaders/activation.glsl) in its epilogue.
#pragma once

#include <algorithm>
#include <infer/kernels/activation.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/activation_f16.hpp>
#include <infer_shaders/activation_f32.hpp>

namespace infer::vk {

/// Activation kinds of shaders/activation.glsl: none, ncnn's 1..6, then Swish, TanH, HardSigmoid,
/// a scale.
enum class Activation {
  none = 0,
  relu = 1,
  leaky_relu = 2,
  clip = 3,
  sigmoid = 4,
  mish = 5,
  hardswish = 6,
  swish = 7,
  tanh = 8,
  hardsigmoid = 9,
  scale = 10,  ///< x * p0 (Dropout)
  elu = 11,
  gelu = 12  ///< p0 = 1: the tanh approximation (fast_gelu), else erf
};

/// An activation as the shaders take it: the kind and its two parameters.
struct GpuActivation {
  Activation kind = Activation::none;
  float p0 = 0.f, p1 = 0.f;
};

/// The shaders' form of a fused activation: ncnn's (9=activation_type, 10=activation_params) or
/// one of the GPU-only kinds the composer fuses (layers::gpu_only_activation).
inline GpuActivation gpu_activation(const layers::ActivationParam& a) {
  switch (a.type) {
    case 1:  // ncnn ignores the parameters of type 1
      return {Activation::relu, 0.f, 0.f};
    case 2:
      return {Activation::leaky_relu, a.params[0], 0.f};
    case 3:
      return {Activation::clip, a.params[0], a.params[1]};
    case 4:
      return {Activation::sigmoid, 0.f, 0.f};
    case 5:
      return {Activation::mish, 0.f, 0.f};
    case 6:
      return {Activation::hardswish, a.params[0], a.params[1]};
    case 7:  // infer's own, taken in only by GPU producers (layers::ActivationType)
      return {Activation::swish, 0.f, 0.f};
    case 8:
      return {Activation::tanh, 0.f, 0.f};
    case 9:
      return {Activation::hardsigmoid, a.params[0], a.params[1]};
    case 11:
      return {Activation::elu, a.params[0], 0.f};
    case 12:
      return {Activation::gelu, a.params[0], 0.f};
    default:
      return {};
  }
}

/// The shaders' form of an activation functor (what the standalone activation layers apply).
inline GpuActivation gpu_activation(act::ReLU f) { return {Activation::relu, f.slope, 0.f}; }
inline GpuActivation gpu_activation(act::Clip f) { return {Activation::clip, f.min, f.max}; }
inline GpuActivation gpu_activation(act::Sigmoid) { return {Activation::sigmoid}; }
inline GpuActivation gpu_activation(act::Mish) { return {Activation::mish}; }
inline GpuActivation gpu_activation(act::HardSwish f) {
  return {Activation::hardswish, f.alpha, f.beta};
}
inline GpuActivation gpu_activation(act::Swish) { return {Activation::swish}; }
inline GpuActivation gpu_activation(act::TanH) { return {Activation::tanh}; }
inline GpuActivation gpu_activation(act::HardSigmoid f) {
  return {Activation::hardsigmoid, f.alpha, f.beta};
}
inline GpuActivation gpu_activation(act::ScaleBy f) { return {Activation::scale, f.scale, 0.f}; }
inline GpuActivation gpu_activation(act::ELU f) { return {Activation::elu, f.alpha, 0.f}; }
inline GpuActivation gpu_activation(act::GELU f) {
  return {Activation::gelu, f.fast ? 1.f : 0.f, 0.f};
}

/// Records `act` (parameters p0, p1 as the shader reads them) over `blob` in place.
inline Status record_activation(Recorder& rec, const VkMat& blob, Activation act, float p0 = 0.f,
                                float p1 = 0.f) {
  INFER_TRY(check_storage(rec, blob.type(), "Vulkan activation"));
  const bool f16 = blob.type() == ElemType::f16;
  const ShaderCode code{f16 ? "activation.comp (f16)" : "activation.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::activation_f16)
                            : std::span<const std::uint32_t>(shaders::activation_f32),
                        1, 4};
  const SpecValue spec[] = {SpecValue::of(3, int(act)), SpecValue::of(4, p0),
                            SpecValue::of(5, p1)};
  constexpr std::uint32_t kLocal = 64;
  const std::size_t n = blob.total() * std::size_t(blob.elempack());
  if (n > 0xFFFFFFFFu) return make_error("Vulkan activation: {} values is more than 2^32", n);
  const std::uint32_t count = std::uint32_t(n);
  const VkMat* blobs[] = {&blob};
  return rec.dispatch(code, {kLocal, 1, 1}, spec, blobs, std::as_bytes(std::span(&count, 1)),
                      groups_1d(std::size_t(n), kLocal));
}

inline Status record_activation(Recorder& rec, const VkMat& blob, const GpuActivation& a) {
  return record_activation(rec, blob, a.kind, a.p0, a.p1);
}

}  // namespace infer::vk
