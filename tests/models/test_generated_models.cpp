// The generated static graph of every model in models/ (infer-gen through infer_add_model) against
// the reference plan of infer::Net (pack 1, nothing fused, folded or in place) on the same random
// weights (.bin bytes) and input.
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/net.hpp>
#include <memory>
#include <string>

#include "support/fused_instances.hpp"  // first: the graphs below then use its instances
#include "alexnet.hpp"
#include "efficientnet_b0.hpp"
#include "mnasnet.hpp"
#include "mobilenet.hpp"
#include "mobilenet_v2.hpp"
#include "mobilenet_v3.hpp"
#include "resnet18.hpp"
#include "resnet50.hpp"
#include "shufflenet_v2.hpp"
#include "squeezenet.hpp"
#include "support/model_compare.hpp"
#include "vgg16.hpp"

namespace {

using infer::test::relative_error;
infer::Mat make_input(infer::Shape shape) { return infer::test::make_model_input(shape); }

/// Runs model `name` as generated static graph G and as the reference Net.
template <class G>
void check_model(const std::string& name) {
  INFO(name);
  constexpr infer::graph::Target kReference{infer::ElemType::f32, 1, false, false};
  infer::Option opt;
  opt.num_threads = 2;
  infer::Net ref(kReference, opt);
  const std::filesystem::path param = std::filesystem::path(INFER_MODELS_DIR) / (name + ".param");
  REQUIRE(ref.load_param(param).ok());
  std::vector<std::byte> bin;
  REQUIRE(ref.load_random_weights(13, &bin).ok());

  auto graph = std::make_unique<G>(opt);
  infer::io::ModelBinFromMemory mb(bin, name + ".bin");
  const infer::Status loaded = graph->load(mb);
  INFO((loaded.ok() ? std::string() : loaded.message()));
  REQUIRE(loaded.ok());
  CHECK(mb.offset() == bin.size());

  const infer::Mat in = make_input(ref.input_shape());
  const infer::Status ran = graph->forward(in);
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  auto expected = ref.run(in);
  REQUIRE(expected.ok());
  CHECK(relative_error(graph->output(), *expected) < 1e-3);
  // The arena is what the plan says, planned at compile time.
  CHECK(G::arena_bytes >= G::lower_bound);
}

}  // namespace

TEST_CASE("generated static graph: squeezenet", "[models]") {
  check_model<infer_models::squeezenet::Network<>>("squeezenet");
}
TEST_CASE("generated static graph: mobilenet", "[models]") {
  check_model<infer_models::mobilenet::Network<>>("mobilenet");
}
TEST_CASE("generated static graph: mobilenet_v2", "[models]") {
  check_model<infer_models::mobilenet_v2::Network<>>("mobilenet_v2");
}
TEST_CASE("generated static graph: mobilenet_v3", "[models]") {
  check_model<infer_models::mobilenet_v3::Network<>>("mobilenet_v3");
}
TEST_CASE("generated static graph: shufflenet_v2", "[models]") {
  check_model<infer_models::shufflenet_v2::Network<>>("shufflenet_v2");
}
TEST_CASE("generated static graph: mnasnet", "[models]") {
  check_model<infer_models::mnasnet::Network<>>("mnasnet");
}
TEST_CASE("generated static graph: efficientnet_b0", "[models]") {
  check_model<infer_models::efficientnet_b0::Network<>>("efficientnet_b0");
}
TEST_CASE("generated static graph: resnet18", "[models]") {
  check_model<infer_models::resnet18::Network<>>("resnet18");
}
TEST_CASE("generated static graph: resnet50", "[models]") {
  check_model<infer_models::resnet50::Network<>>("resnet50");
}
TEST_CASE("generated static graph: alexnet", "[models]") {
  check_model<infer_models::alexnet::Network<>>("alexnet");
}
TEST_CASE("generated static graph: vgg16", "[models]") {
  check_model<infer_models::vgg16::Network<>>("vgg16");
}
