// Generated static graphs of models/ against infer::Net: resnet18, resnet50, vgg16.
#include "models/check_model.hpp"
#include "resnet18.hpp"
#include "resnet50.hpp"
#include "vgg16.hpp"

TEST_CASE("generated static graph: resnet18", "[models]") {
  CHECK(infer::test::check_model<infer_models::resnet18::Network<>>("resnet18") < 1e-3);
}
TEST_CASE("generated static graph: resnet50", "[models]") {
  CHECK(infer::test::check_model<infer_models::resnet50::Network<>>("resnet50") < 1e-3);
}
TEST_CASE("generated static graph: vgg16", "[models]") {
  CHECK(infer::test::check_model<infer_models::vgg16::Network<>>("vgg16") < 1e-3);
}
