// Generated static graphs of models/ against infer::Net: shufflenet_v2, mnasnet, efficientnet_b0, alexnet.
#include "models/check_model.hpp"
#include "shufflenet_v2.hpp"
#include "mnasnet.hpp"
#include "efficientnet_b0.hpp"
#include "alexnet.hpp"

TEST_CASE("generated static graph: shufflenet_v2", "[models]") {
  CHECK(infer::test::check_model<infer_models::shufflenet_v2::Network<>>("shufflenet_v2") < 1e-3);
}
TEST_CASE("generated static graph: mnasnet", "[models]") {
  CHECK(infer::test::check_model<infer_models::mnasnet::Network<>>("mnasnet") < 1e-3);
}
TEST_CASE("generated static graph: efficientnet_b0", "[models]") {
  CHECK(infer::test::check_model<infer_models::efficientnet_b0::Network<>>("efficientnet_b0") < 1e-3);
}
TEST_CASE("generated static graph: alexnet", "[models]") {
  CHECK(infer::test::check_model<infer_models::alexnet::Network<>>("alexnet") < 1e-3);
}
