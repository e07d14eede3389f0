// expect: infer graph: a blob is produced twice
// Two nodes write blob "a".
#include <infer/graph.hpp>

#include "support/graph_layers.hpp"

using namespace infer;
static constexpr auto net =
    graph::make_graph(graph::input("in", Shape::of(4, 4, 8)), graph::node(test::Twice{}, "in", "a"),
                      graph::node(test::AddOne{}, "in", "a"), graph::output("a"));
graph::StaticGraph<net> g;
