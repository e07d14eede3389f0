// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of
// Convolution.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/convolution.hpp>

INFER_RUNTIME_BOX(Convolution);
