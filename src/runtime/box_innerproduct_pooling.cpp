// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of
// InnerProduct, Pooling.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/pooling.hpp>

INFER_RUNTIME_BOX(InnerProduct);
INFER_RUNTIME_BOX(Pooling);
