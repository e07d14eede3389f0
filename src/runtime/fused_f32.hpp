// For infer::runtime's sources: the fusing layers' forward_fused at f32 (every pack and
// epilogue), the bulk of infer::Net's kernels, declared here and compiled once each in
// fused_<layer>.cpp, so that the boxes (and the depthwise layer's grouped path, which runs
// Convolution) do not instantiate them again.
#pragma once

#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/deconvolution.hpp>
#include <infer/layers/deconvolution_depthwise.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/instances.hpp>

INFER_FUSED_INSTANCES(extern, Convolution, f32);
INFER_RESIDUAL_INSTANCES(extern, Convolution, f32);
INFER_FUSED_INSTANCES(extern, ConvolutionDepthWise, f32);
INFER_FUSED_INSTANCES(extern, Deconvolution, f32);
INFER_FUSED_INSTANCES(extern, DeconvolutionDepthWise, f32);
INFER_FUSED_INSTANCES(extern, InnerProduct, f32);
INFER_ALGORITHM_INSTANCES(extern, Convolution, f32);
INFER_ALGORITHM_INSTANCES(extern, ConvolutionDepthWise, f32);
// The quantized layers' int8-input forms (fused_int8.cpp).
INFER_FUSED_INSTANCES(extern, Convolution, i8);
INFER_RESIDUAL_INSTANCES(extern, Convolution, i8);
INFER_FUSED_INSTANCES(extern, ConvolutionDepthWise, i8);
INFER_FUSED_INSTANCES(extern, InnerProduct, i8);
