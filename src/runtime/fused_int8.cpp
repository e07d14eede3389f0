// infer::runtime: the quantized layers' forward_fused with int8 inputs (fused_f32.hpp).
#define INFER_RUNTIME_SOURCE
#include "fused_f32.hpp"

INFER_FUSED_INSTANCES(, Convolution, i8);
INFER_RESIDUAL_INSTANCES(, Convolution, i8);
INFER_FUSED_INSTANCES(, ConvolutionDepthWise, i8);
INFER_FUSED_INSTANCES(, InnerProduct, i8);
