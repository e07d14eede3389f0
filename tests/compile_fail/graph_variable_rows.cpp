// expect: infer graph: a node reads the output of a layer whose row count is known only at run time
// A YOLO head writes one row per detection, known only when it runs: a layer reading its output
// would be planned for rows it does not get, so the graph must not compile.
#include <infer/graph.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/yolov3_detection_output.hpp>

using namespace infer;
static constexpr auto head = [] {
  layers::Yolov3DetectionOutput y;
  y.num_class = 2;
  y.num_box = 1;
  y.biases = {10.f, 14.f};
  y.mask = {0};
  y.anchors_scale = {32.f};
  return y;
}();
static constexpr auto net = graph::make_graph(
    graph::input("in", Shape::of(4, 4, 7)), graph::node(head, "in", "det"),
    graph::node(layers::ReLU{}, "det", "r"), graph::output("r"));
graph::StaticGraph<net> g;
