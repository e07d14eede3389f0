// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of
// Deconvolution, DeconvolutionDepthWise.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/deconvolution.hpp>
#include <infer/layers/deconvolution_depthwise.hpp>

INFER_RUNTIME_BOX(Deconvolution);
INFER_RUNTIME_BOX(DeconvolutionDepthWise);
