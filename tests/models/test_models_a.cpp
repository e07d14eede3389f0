// Generated static graphs of models/ against infer::Net: squeezenet, mobilenet, mobilenet_v2, mobilenet_v3.
#include "models/check_model.hpp"
#include "squeezenet.hpp"
#include "mobilenet.hpp"
#include "mobilenet_v2.hpp"
#include "mobilenet_v3.hpp"

TEST_CASE("generated static graph: squeezenet", "[models]") {
  CHECK(infer::test::check_model<infer_models::squeezenet::Network<>>("squeezenet") < 1e-3);
}
TEST_CASE("generated static graph: mobilenet", "[models]") {
  CHECK(infer::test::check_model<infer_models::mobilenet::Network<>>("mobilenet") < 1e-3);
}
TEST_CASE("generated static graph: mobilenet_v2", "[models]") {
  CHECK(infer::test::check_model<infer_models::mobilenet_v2::Network<>>("mobilenet_v2") < 1e-3);
}
TEST_CASE("generated static graph: mobilenet_v3", "[models]") {
  CHECK(infer::test::check_model<infer_models::mobilenet_v3::Network<>>("mobilenet_v3") < 1e-3);
}
