// The fusing layers' forward_fused and forward_with (every pack, epilogue, algorithm) declared
// extern, so that the test files that run these layers do not each instantiate them again: f32
// comes from infer::runtime, f16 and bf16 from the instance files tests/CMakeLists.txt generates
// (one per layer and type, built in parallel). The AVX2 and sanitizer builds define
// INFER_TEST_OWN_INSTANCES: there each file instantiates what it runs at f16/bf16 (their kernels
// are built with other flags); the sanitizer build's f32 still comes from its infer::runtime, built
// with the same sanitizers (INFER_TEST_RUNTIME_F32), the AVX2 build's not (infer::runtime is built
// for this machine).
#pragma once

#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/deconvolution.hpp>
#include <infer/layers/deconvolution_depthwise.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/instances.hpp>

#define INFER_TEST_FUSED_INSTANCES(Keyword, T)               \
  INFER_FUSED_INSTANCES(Keyword, Convolution, T);            \
  INFER_RESIDUAL_INSTANCES(Keyword, Convolution, T);         \
  INFER_FUSED_INSTANCES(Keyword, ConvolutionDepthWise, T);   \
  INFER_FUSED_INSTANCES(Keyword, Deconvolution, T);          \
  INFER_FUSED_INSTANCES(Keyword, DeconvolutionDepthWise, T); \
  INFER_FUSED_INSTANCES(Keyword, InnerProduct, T);           \
  INFER_ALGORITHM_INSTANCES(Keyword, Convolution, T);        \
  INFER_ALGORITHM_INSTANCES(Keyword, ConvolutionDepthWise, T)
#if !defined(INFER_TEST_OWN_INSTANCES)
INFER_TEST_FUSED_INSTANCES(extern, f32);
// The quantized layers' int8-input forms, from infer::runtime too.
INFER_FUSED_INSTANCES(extern, Convolution, i8);
INFER_RESIDUAL_INSTANCES(extern, Convolution, i8);
INFER_FUSED_INSTANCES(extern, ConvolutionDepthWise, i8);
INFER_FUSED_INSTANCES(extern, InnerProduct, i8);
INFER_TEST_FUSED_INSTANCES(extern, f16);
INFER_TEST_FUSED_INSTANCES(extern, bf16);
#elif defined(INFER_TEST_RUNTIME_F32)
INFER_TEST_FUSED_INSTANCES(extern, f32);
INFER_FUSED_INSTANCES(extern, Convolution, i8);
INFER_RESIDUAL_INSTANCES(extern, Convolution, i8);
INFER_FUSED_INSTANCES(extern, ConvolutionDepthWise, i8);
INFER_FUSED_INSTANCES(extern, InnerProduct, i8);
#endif
