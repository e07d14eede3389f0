// Generated static graphs of the detection networks and the vision transformer against ncnn's own
// outputs (support/ncnn_nets.hpp, data/ncnn_nets): ncnn_weights' weights (regenerated bit for bit
// as .bin bytes by infer::Net) loaded into the static graph, ncnn_run's input. The `_low` models
// are the files with a lowered confidence threshold (tests/CMakeLists.txt writes them), so that
// random weights give detections.
#include <infer/net.hpp>
#include <memory>
#include <string>

#include "FastestDet.hpp"
#include "mobilenet_ssd_low.hpp"
#include "mobilenet_yolo_low.hpp"
#include "mobilenetv2_yolov3.hpp"
#include "models/check_model.hpp"
#include "nanodet_m.hpp"
#include "squeezenet_ssd_low.hpp"
#include "support/ncnn_nets.hpp"
#include "vision_transformer.hpp"
#include "yolo-fastest-1.1_low.hpp"
#include "yolov4-tiny.hpp"

namespace {

using infer::test::ncnn_nets::Case;

/// Runs static graph G on case k's weights and input; checks each of `cases` (one per output of
/// G, in order) against ncnn.
template <class G>
void check_static(std::initializer_list<Case> cases, double bound = 1e-4) {
  const Case& k = *cases.begin();
  INFO(k.name);
  infer::Net net;
  REQUIRE(net.load_param_text(infer::test::ncnn_nets::model_text(k), k.model).ok());
  std::vector<std::byte> bin;
  REQUIRE(net.load_ncnn_random_weights(1234, &bin).ok());
  infer::Option opt;
  opt.num_threads = 2;
  auto graph = std::make_unique<G>(opt);
  infer::io::ModelBinFromMemory mb(bin, std::string(k.name) + ".bin");
  const infer::Status loaded = graph->load(mb);
  INFO((loaded.ok() ? std::string() : loaded.message()));
  REQUIRE(loaded.ok());
  CHECK(mb.offset() == bin.size());
  const infer::Status ran = graph->forward(infer::test::ncnn_run_input(3, k.size, k.size));
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  std::size_t i = 0;
  for (const Case& c : cases) {
    CAPTURE(c.blob);
    infer::test::ncnn_nets::check_against_ncnn(c, graph->output(i++), bound);
  }
}

}  // namespace

TEST_CASE("generated static graph: nanodet_m against ncnn", "[models][detection]") {
  check_static<infer_models::nanodet_m::Network<>>(
      {{"nanodet_m", "nanodet_m", 320, "cls_pred_stride_8"},
       {"nanodet_m", "nanodet_m", 320, "cls_pred_stride_16"},
       {"nanodet_m", "nanodet_m", 320, "cls_pred_stride_32"},
       {"nanodet_m", "nanodet_m", 320, "dis_pred_stride_8"},
       {"nanodet_m", "nanodet_m", 320, "dis_pred_stride_16"},
       {"nanodet_m", "nanodet_m", 320, "dis_pred_stride_32"}});
}
TEST_CASE("generated static graph: FastestDet against ncnn", "[models][detection]") {
  check_static<infer_models::FastestDet::Network<>>({{"FastestDet", "FastestDet", 352, "out0"}});
}
TEST_CASE("generated static graph: mobilenet_ssd against ncnn", "[models][detection]") {
  check_static<infer_models::mobilenet_ssd_low::Network<>>(
      {{"mobilenet_ssd_low", "mobilenet_ssd", 300, "output", "4=2.500000e-01", "4=5.000000e-02"}});
}
TEST_CASE("generated static graph: squeezenet_ssd against ncnn", "[models][detection]") {
  check_static<infer_models::squeezenet_ssd_low::Network<>>(
      {{"squeezenet_ssd_low", "squeezenet_ssd", 300, "output", "4=2.500000e-01",
        "4=6.000000e-02"}});
}
TEST_CASE("generated static graph: mobilenet_yolo against ncnn", "[models][detection]") {
  check_static<infer_models::mobilenet_yolo_low::Network<>>(
      {{"mobilenet_yolo_low", "mobilenet_yolo", 416, "output", "2=4.000000e-01",
        "2=3.000000e-02"}});
}
TEST_CASE("generated static graph: mobilenetv2_yolov3 against ncnn", "[models][detection]") {
  check_static<infer_models::mobilenetv2_yolov3::Network<>>(
      {{"mobilenetv2_yolov3", "mobilenetv2_yolov3", 352, "output"}});
}
TEST_CASE("generated static graph: yolov4-tiny against ncnn", "[models][detection]") {
  check_static<infer_models::yolov4_tiny::Network<>>(
      {{"yolov4-tiny", "yolov4-tiny", 416, "output"}});
}
TEST_CASE("generated static graph: yolo-fastest-1.1 against ncnn", "[models][detection]") {
  check_static<infer_models::yolo_fastest_1_1_low::Network<>>(
      {{"yolo-fastest-1.1_low", "yolo-fastest-1.1", 320, "output", "2=5.500000e-01",
        "2=3.000000e-01"}});
}
TEST_CASE("generated static graph: vision_transformer against ncnn", "[models][transformer]") {
  check_static<infer_models::vision_transformer::Network<>>(
      {{"vision_transformer", "vision_transformer", 384, "cls_score"}}, 1e-3);
}
