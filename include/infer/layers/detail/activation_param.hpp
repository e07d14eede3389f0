// ncnn's fused activation parameters (9=activation_type, 10=activation_params) of Convolution,
// ConvolutionDepthWise, Deconvolution(DepthWise) and InnerProduct, and the one place that turns the
// run-time number into a compile-time functor: the kernels take the functor as a template
// parameter, so the branch happens once per forward call, never per element.
#pragma once

#include <array>
#include <infer/kernels/activation.hpp>
#include <infer/status.hpp>

namespace infer::layers {

/// ncnn activation_type numbering.
enum class ActivationType : int {
  none = 0,
  relu = 1,        ///< plain ReLU; the parameters are ignored
  leaky_relu = 2,  ///< params[0] = slope
  clip = 3,        ///< params = {min, max}
  sigmoid = 4,
  mish = 5,
  hardswish = 6,  ///< params = {alpha, beta}
  // Not ncnn's: activations the composer takes in from a standalone layer (graph/fuse.hpp),
  // numbered as the shaders number them (vk::Activation); no file sets them. Swish fuses into CPU
  // and GPU producers alike (ncnn runs it as a layer of its own: one more pass over the blob);
  // the rest only into GPU ones.
  swish = 7,
  tanh = 8,
  hardsigmoid = 9,  ///< params = {alpha, beta}
  elu = 11,         ///< params[0] = alpha
  gelu = 12,        ///< params[0] = 1: the tanh approximation, else erf
};

/// Whether `type` is one of the activations only the GPU kernels apply (tanh .. gelu above).
constexpr bool gpu_only_activation(int type) {
  return type == 8 || type == 9 || type == 11 || type == 12;
}

/// The activation a fusing layer applies to its accumulators before the store.
struct ActivationParam {
  int type = 0;                   ///< ncnn 9=activation_type (0..6; 7..12 fusion only)
  std::array<float, 2> params{};  ///< ncnn 10=activation_params

  /// A type a file may give (ncnn's 0..6).
  constexpr bool valid() const { return type >= 0 && type <= 6; }
};

/// Calls f(functor) with the act:: functor for `a` and returns its result; an error for an
/// unknown type. `f` is instantiated once per activation kind.
template <class F>
auto with_activation(const ActivationParam& a, F&& f) -> decltype(f(act::Identity{})) {
  switch (a.type) {
    case 0:
      return f(act::Identity{});
    case 1:  // ncnn ignores the parameters of type 1
      return f(act::ReLU{});
    case 2:
      return f(act::ReLU{a.params[0]});
    case 3:
      return f(act::Clip{a.params[0], a.params[1]});
    case 4:
      return f(act::Sigmoid{});
    case 5:
      return f(act::Mish{});
    case 6:
      return f(act::HardSwish{a.params[0], a.params[1]});
    default:
      if (gpu_only_activation(a.type))
        return make_error("activation_type {} is fused only into GPU kernels, not CPU ones",
                          a.type);
      return make_error("activation_type {} is not one of ncnn's 0..6", a.type);
  }
}

}  // namespace infer::layers
