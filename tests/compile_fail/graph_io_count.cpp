// expect: infer graph: a one-blob layer is given other than one input and one output
// Twice is a one-blob layer, written here with two inputs.
#include <infer/graph.hpp>

#include "support/graph_layers.hpp"

using namespace infer;
static constexpr auto net = graph::make_graph(
    graph::input("in", Shape::of(4, 4, 8)), graph::input("in2", Shape::of(4, 4, 8)),
    graph::node(test::Twice{}, graph::from("in", "in2"), "a"), graph::output("a"));
graph::StaticGraph<net> g;
