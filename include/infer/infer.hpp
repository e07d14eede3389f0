// infer in one include: the core (Mat, element types, options), every layer, the compile-time
// graph composer and static graphs, ncnn model files and the run-time network (infer::Net).
// Including less (e.g. <infer/graph.hpp> and the layers a graph uses) builds faster.
#pragma once

#include <infer/allocator.hpp>
#include <infer/concepts.hpp>
#include <infer/convert.hpp>
#include <infer/element.hpp>
#include <infer/graph.hpp>
#include <infer/layers.hpp>
#include <infer/mat.hpp>
#include <infer/net.hpp>
#include <infer/option.hpp>
#include <infer/runner.hpp>
#include <infer/status.hpp>
