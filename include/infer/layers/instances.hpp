// Explicit instantiation lists of the fusing layers' forward_fused: every pack (1, 4, 8, 16) and
// every fused activation, for one layer and element type. A program with several files that run
// the same layers compiles each instantiation once, in a file of its own, and declares it in the
// others (instantiating Convolution at one type costs tens of seconds of compile time):
//
//   INFER_FUSED_INSTANCES(extern, Convolution, f32);  // in the header every such file includes
//   INFER_FUSED_INSTANCES(, Convolution, f32);        // in one source file
//
// Convolution and ConvolutionDepthWise also have forward_with<T, Pack, Algorithm>, which a static
// graph calls (only its layer's algorithm instantiated): INFER_ALGORITHM_INSTANCES lists those.
// infer::runtime does this for its own layer table (src/runtime/fused_f32.hpp), as do infer's
// tests. Static graphs do not need it: they stay header-only.
#pragma once

#include <infer/kernels/activation.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>

/// One forward_fused<T, Pack, act::Act> of layer L (Keyword: `extern` to declare, empty to
/// define).
#define INFER_FUSED_INSTANCE(Keyword, L, T, Pack, Act)                  \
  Keyword template ::infer::Status                                      \
  infer::layers::L::forward_fused<::infer::T, Pack, ::infer::act::Act>( \
      const ::infer::Mat&, ::infer::Mat&, const ::infer::Option&, const ::infer::act::Act&) const

/// Instance(Keyword, L, T, Pack, Act) for each epilogue graph::make_act gives (ncnn's activation
/// types 0..6 and Swish, 7).
#define INFER_EACH_EPILOGUE(Instance, Keyword, L, T, Pack) \
  Instance(Keyword, L, T, Pack, Identity);                 \
  Instance(Keyword, L, T, Pack, ReLU);                     \
  Instance(Keyword, L, T, Pack, Clip);                     \
  Instance(Keyword, L, T, Pack, Sigmoid);                  \
  Instance(Keyword, L, T, Pack, Mish);                     \
  Instance(Keyword, L, T, Pack, HardSwish);                \
  Instance(Keyword, L, T, Pack, Swish)

/// Instance of every pack (1, 4, 8, 16) and epilogue.
#define INFER_EACH_PACK_EPILOGUE(Instance, Keyword, L, T) \
  INFER_EACH_EPILOGUE(Instance, Keyword, L, T, 1);        \
  INFER_EACH_EPILOGUE(Instance, Keyword, L, T, 4);        \
  INFER_EACH_EPILOGUE(Instance, Keyword, L, T, 8);        \
  INFER_EACH_EPILOGUE(Instance, Keyword, L, T, 16)

/// forward_fused of layer L at element type T and pack Pack with each epilogue.
#define INFER_FUSED_INSTANCES_AT(Keyword, L, T, Pack) \
  INFER_EACH_EPILOGUE(INFER_FUSED_INSTANCE, Keyword, L, T, Pack)

/// forward_fused of layer L at element type T, every pack and epilogue.
#define INFER_FUSED_INSTANCES(Keyword, L, T) \
  INFER_EACH_PACK_EPILOGUE(INFER_FUSED_INSTANCE, Keyword, L, T)

/// One forward_residual<T, Pack, act::Act> of layer L (a layer with FusesResidual: Convolution).
#define INFER_RESIDUAL_INSTANCE(Keyword, L, T, Pack, Act)                              \
  Keyword template ::infer::Status                                                     \
  infer::layers::L::forward_residual<::infer::T, Pack, ::infer::act::Act>(             \
      const ::infer::Mat&, const ::infer::Mat&, ::infer::Mat&, const ::infer::Option&, \
      const ::infer::act::Act&) const

/// forward_residual of layer L at element type T, every pack and epilogue: wherever
/// INFER_FUSED_INSTANCES of Convolution goes (a Net's layer box calls both).
#define INFER_RESIDUAL_INSTANCES(Keyword, L, T) \
  INFER_EACH_PACK_EPILOGUE(INFER_RESIDUAL_INSTANCE, Keyword, L, T)

/// One forward_with<T, Pack, L::Algorithm::Algo, act::Act> of layer L.
#define INFER_WITH_INSTANCE(Keyword, L, T, Pack, Act, Algo)                      \
  Keyword template ::infer::Status infer::layers::L::forward_with<               \
      ::infer::T, Pack, ::infer::layers::L::Algorithm::Algo, ::infer::act::Act>( \
      const ::infer::Mat&, ::infer::Mat&, const ::infer::Option&, const ::infer::act::Act&) const

/// Convolution::forward_with at (T, Pack, Act), each algorithm.
#define INFER_WITH_INSTANCES_Convolution(Keyword, T, Pack, Act)      \
  INFER_WITH_INSTANCE(Keyword, Convolution, T, Pack, Act, winograd); \
  INFER_WITH_INSTANCE(Keyword, Convolution, T, Pack, Act, gemm);     \
  INFER_WITH_INSTANCE(Keyword, Convolution, T, Pack, Act, direct);   \
  INFER_WITH_INSTANCE(Keyword, Convolution, T, Pack, Act, int8)

/// ConvolutionDepthWise::forward_with at (T, Pack, Act), each algorithm.
#define INFER_WITH_INSTANCES_ConvolutionDepthWise(Keyword, T, Pack, Act)              \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, fast);             \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, direct);           \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, group_gemm);       \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, grouped);          \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, grouped_unpacked); \
  INFER_WITH_INSTANCE(Keyword, ConvolutionDepthWise, T, Pack, Act, int8)

/// forward_with of layer L (Convolution or ConvolutionDepthWise) at (T, Pack), every epilogue.
#define INFER_ALGORITHM_INSTANCES_AT(Keyword, L, T, Pack) \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, Identity);   \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, ReLU);       \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, Clip);       \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, Sigmoid);    \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, Mish);       \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, HardSwish);  \
  INFER_WITH_INSTANCES_##L(Keyword, T, Pack, Swish)

/// forward_with of layer L at element type T, every pack, epilogue and algorithm.
#define INFER_ALGORITHM_INSTANCES(Keyword, L, T)  \
  INFER_ALGORITHM_INSTANCES_AT(Keyword, L, T, 1); \
  INFER_ALGORITHM_INSTANCES_AT(Keyword, L, T, 4); \
  INFER_ALGORITHM_INSTANCES_AT(Keyword, L, T, 8); \
  INFER_ALGORITHM_INSTANCES_AT(Keyword, L, T, 16)
