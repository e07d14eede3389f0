// infer::runtime: DeconvolutionDepthWise::forward_fused at f32 (fused_f32.hpp).
#define INFER_RUNTIME_SOURCE
#include "fused_f32.hpp"

INFER_FUSED_INSTANCES(, DeconvolutionDepthWise, f32);
