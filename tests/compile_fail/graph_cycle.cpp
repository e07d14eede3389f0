// expect: infer graph: the nodes form a cycle
// "a" needs "c", which needs "a".
#include <infer/graph.hpp>

#include "support/graph_layers.hpp"

using namespace infer;
static constexpr auto net =
    graph::make_graph(graph::input("in", Shape::of(4, 4, 8)),
                      graph::node(test::Subtract{}, graph::from("in", "c"), "a"),
                      graph::node(test::Twice{}, "a", "c"), graph::output("c"));
graph::StaticGraph<net> g;
