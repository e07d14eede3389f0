// infer::runtime: ConvolutionDepthWise::forward_fused and forward_with at f32 (fused_f32.hpp).
#define INFER_RUNTIME_SOURCE
#include "fused_f32.hpp"

INFER_FUSED_INSTANCES(, ConvolutionDepthWise, f32);
INFER_ALGORITHM_INSTANCES(, ConvolutionDepthWise, f32);
