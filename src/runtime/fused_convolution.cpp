// infer::runtime: Convolution::forward_fused and forward_with at f32 (fused_f32.hpp).
#define INFER_RUNTIME_SOURCE
#include "fused_f32.hpp"

INFER_FUSED_INSTANCES(, Convolution, f32);
INFER_RESIDUAL_INSTANCES(, Convolution, f32);
INFER_ALGORITHM_INSTANCES(, Convolution, f32);
