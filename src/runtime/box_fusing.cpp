// infer::runtime: infer::Net's layer boxes of the fusing layers (Convolution,
// ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise, InnerProduct): the dispatch over
// packs and epilogues; their kernels are compiled in fused_*.cpp.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include "fused_f32.hpp"

INFER_RUNTIME_BOX(Convolution);
INFER_RUNTIME_BOX(ConvolutionDepthWise);
INFER_RUNTIME_BOX(Deconvolution);
INFER_RUNTIME_BOX(DeconvolutionDepthWise);
INFER_RUNTIME_BOX(InnerProduct);
