// The compile-time graph composer: write a graph of layer values (graph/desc.hpp), compose it
// into a plan (graph/compose.hpp), run it (graph/static_graph.hpp), print it (graph/print.hpp).
#pragma once

#include <infer/graph/compose.hpp>
#include <infer/graph/desc.hpp>
#include <infer/graph/print.hpp>
#include <infer/graph/static_graph.hpp>
