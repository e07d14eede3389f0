// infer::runtime: infer::Net's layer boxes (every element type, pack and epilogue) of Split,
// Concat, Slice, ShuffleChannel, Reshape, Flatten, Permute, Padding, Pooling, Crop, Dropout, Noop,
// MemoryData, Softmax, Interp, LRN, Reduction.
#define INFER_RUNTIME_SOURCE
#include "box.hpp"
#include <infer/layers/split.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/slice.hpp>
#include <infer/layers/shuffle_channel.hpp>
#include <infer/layers/reshape.hpp>
#include <infer/layers/flatten.hpp>
#include <infer/layers/permute.hpp>
#include <infer/layers/padding.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/crop.hpp>
#include <infer/layers/dropout.hpp>
#include <infer/layers/noop.hpp>
#include <infer/layers/memory_data.hpp>
#include <infer/layers/softmax.hpp>
#include <infer/layers/interp.hpp>
#include <infer/layers/lrn.hpp>
#include <infer/layers/reduction.hpp>

INFER_RUNTIME_BOX(Split);
INFER_RUNTIME_BOX(Concat);
INFER_RUNTIME_BOX(Slice);
INFER_RUNTIME_BOX(ShuffleChannel);
INFER_RUNTIME_BOX(Reshape);
INFER_RUNTIME_BOX(Flatten);
INFER_RUNTIME_BOX(Permute);
INFER_RUNTIME_BOX(Padding);
INFER_RUNTIME_BOX(Pooling);
INFER_RUNTIME_BOX(Crop);
INFER_RUNTIME_BOX(Dropout);
INFER_RUNTIME_BOX(Noop);
INFER_RUNTIME_BOX(MemoryData);
INFER_RUNTIME_BOX(Softmax);
INFER_RUNTIME_BOX(Interp);
INFER_RUNTIME_BOX(LRN);
INFER_RUNTIME_BOX(Reduction);
