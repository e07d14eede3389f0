// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of
// ConvolutionDepthWise.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/convolution_depthwise.hpp>

INFER_RUNTIME_BOX(ConvolutionDepthWise);
