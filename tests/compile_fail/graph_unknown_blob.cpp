// expect: infer graph: a node reads a blob that no node or input produces
// Node "b" reads "typo", which nothing writes.
#include <infer/graph.hpp>

#include "support/graph_layers.hpp"

using namespace infer;
static constexpr auto net =
    graph::make_graph(graph::input("in", Shape::of(4, 4, 8)), graph::node(test::Twice{}, "in", "a"),
                      graph::node(test::Twice{}, "typo", "b"), graph::output("b"));
graph::StaticGraph<net> g;
