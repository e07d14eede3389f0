// Compile-cost probe: a user of one generated static graph (infer-gen output), with load and
// forward called. scripts/compile-cost.sh generates the header and compiles this file with
// -DINFER_COST_MODEL=<name> (resnet50, mobilenet_v2).
#include <fmt/core.h>

#include <infer/io/random_weights.hpp>
#include <memory>

#define INFER_COST_STR2(x) #x
#define INFER_COST_STR(x) INFER_COST_STR2(x)
#include INFER_COST_STR(INFER_COST_MODEL.hpp)

int main() {
  using Network = infer_models::INFER_COST_MODEL::Network<>;
  auto net = std::make_unique<Network>();
  infer::io::RandomWeights weights(1);
  infer::Status st = net->load(weights);
  if (st.ok()) {
    infer::Mat input(infer_models::INFER_COST_MODEL::graph.inputs[0].shape, infer::ElemType::f32);
    input.fill(0.5f);
    st = net->forward(input);
  }
  if (!st.ok()) fmt::print(stderr, "{}\n", st.message());
  return st.ok() ? 0 : 1;
}
