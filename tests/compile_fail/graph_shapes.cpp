// expect: infer graph: incompatible shapes
// Subtract needs two inputs of one shape; 4x4x8 and 4x4x16 differ.
#include <infer/graph.hpp>

#include "support/graph_layers.hpp"

using namespace infer;
static constexpr auto net = graph::make_graph(
    graph::input("x", Shape::of(4, 4, 8)), graph::input("y", Shape::of(4, 4, 16)),
    graph::node(test::Subtract{}, graph::from("x", "y"), "d"), graph::output("d"));
graph::StaticGraph<net> g;
