// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of BinaryOp,
// Eltwise, ReLU, Swish, HardSwish, HardSigmoid, Clip, Sigmoid, TanH, Mish, ELU, GELU, BatchNorm,
// Scale, Bias.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/binary_op.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/swish.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/hardsigmoid.hpp>
#include <infer/layers/clip.hpp>
#include <infer/layers/sigmoid.hpp>
#include <infer/layers/tanh.hpp>
#include <infer/layers/mish.hpp>
#include <infer/layers/elu.hpp>
#include <infer/layers/gelu.hpp>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/scale.hpp>
#include <infer/layers/bias.hpp>

INFER_RUNTIME_BOX(BinaryOp);
INFER_RUNTIME_BOX(Eltwise);
INFER_RUNTIME_BOX(ReLU);
INFER_RUNTIME_BOX(Swish);
INFER_RUNTIME_BOX(HardSwish);
INFER_RUNTIME_BOX(HardSigmoid);
INFER_RUNTIME_BOX(Clip);
INFER_RUNTIME_BOX(Sigmoid);
INFER_RUNTIME_BOX(TanH);
INFER_RUNTIME_BOX(Mish);
INFER_RUNTIME_BOX(ELU);
INFER_RUNTIME_BOX(GELU);
INFER_RUNTIME_BOX(BatchNorm);
INFER_RUNTIME_BOX(Scale);
INFER_RUNTIME_BOX(Bias);
