// ncnn's detection layers against scalar references written here in double: PriorBox (caffe and
// mxnet forms, swept by the layer tester on odd and non-square maps), DetectionOutput (caffe-ssd
// and mxnet-ssd layouts, nms_top_k and keep_top_k caps, no detections), Yolov3DetectionOutput and
// YoloDetectionOutput (several inputs of odd sizes, the mask's two spellings), at 1 and 2 threads.
// Then in graphs: PriorBox reads a packed input with no conversion, a layer reading a detection
// head's rows is refused (Net here, the static graph in compile_fail/), and a network whose head
// found no rows finds them on the next input (Net and static graph).
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/graph.hpp>
#include <infer/graph/print.hpp>
#include <infer/io/param.hpp>
#include <infer/layers/detection_output.hpp>
#include <infer/layers/prior_box.hpp>
#include <infer/layers/yolo_detection_output.hpp>
#include <infer/layers/yolov3_detection_output.hpp>
#include <infer/net.hpp>
#include <numeric>
#include <random>

#include "support/layer_tester.hpp"
#include "support/random_values.hpp"

using infer::Mat;
using infer::Shape;
using infer::test::LayerTester;
using infer::test::mat_of;
using infer::test::RefTensor;
using infer::test::uniform;

namespace {

// ---- PriorBox ----

RefTensor prior_box_ref(const infer::layers::PriorBox& l, const std::vector<RefTensor>& in) {
  const int w = in[0].shape.w, h = in[0].shape.h;
  std::vector<double> boxes;
  const bool mxnet =
      in.size() == 1 && l.image_width == -233 && l.image_height == -233 && l.max_sizes.empty();
  if (mxnet) {
    const double sw = l.step_width == -233.f ? 1.0 / w : l.step_width;
    const double sh = l.step_height == -233.f ? 1.0 / h : l.step_height;
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) {
        const double cx = (l.offset + j) * sw, cy = (l.offset + i) * sh;
        auto put = [&](double hw, double hh) {
          for (double v : {cx - hw, cy - hh, cx + hw, cy + hh}) boxes.push_back(v);
        };
        for (float s : l.min_sizes) put(s * double(h) / w / 2, s / 2.0);
        for (std::size_t p = 1; p < l.aspect_ratios.size(); ++p) {
          const double r = std::sqrt(double(l.aspect_ratios[p]));
          put(l.min_sizes[0] * double(h) / w * r / 2, l.min_sizes[0] / r / 2);
        }
      }
  } else {
    const double iw = l.image_width == -233 ? in[1].shape.w : l.image_width;
    const double ih = l.image_height == -233 ? in[1].shape.h : l.image_height;
    const double sw = l.step_width == -233.f ? iw / w : l.step_width;
    const double sh = l.step_height == -233.f ? ih / h : l.step_height;
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) {
        const double cx = (l.offset + j) * sw, cy = (l.offset + i) * sh;
        auto put = [&](double bw, double bh) {
          for (double v :
               {(cx - bw / 2) / iw, (cy - bh / 2) / ih, (cx + bw / 2) / iw, (cy + bh / 2) / ih})
            boxes.push_back(v);
        };
        for (std::size_t k = 0; k < l.min_sizes.size(); ++k) {
          const double s = l.min_sizes[k];
          put(s, s);
          if (!l.max_sizes.empty())
            put(std::sqrt(s * l.max_sizes[k]), std::sqrt(s * l.max_sizes[k]));
          for (float ar : l.aspect_ratios) {
            put(s * std::sqrt(double(ar)), s / std::sqrt(double(ar)));
            if (l.flip) put(s / std::sqrt(double(ar)), s * std::sqrt(double(ar)));
          }
        }
      }
  }
  if (l.clip)
    for (double& v : boxes) v = std::clamp(v, 0.0, 1.0);
  const int n = int(boxes.size());
  RefTensor out(mxnet ? Shape::of(n) : Shape::of(n, 2));
  for (int i = 0; i < n; ++i) out.v[std::size_t(i)] = float(boxes[std::size_t(i)]);
  if (!mxnet)
    for (int i = 0; i < n; ++i) out.v[std::size_t(n + i)] = l.variances[std::size_t(i % 4)];
  return out;
}

void sweep_prior_box(const infer::layers::PriorBox& l, const std::string& what,
                     const std::vector<std::vector<Shape>>& cases) {
  LayerTester t(l, what);
  t.reference([&](const std::vector<RefTensor>& in) {
    return std::vector<RefTensor>{prior_box_ref(l, in)};
  });
  for (const auto& c : cases) t.inputs(c);
  t.tolerance(infer::ElemType::f32, 1e-5f, 1e-5f).run();
}

// ---- rows of detections ----

struct Det {
  double score;
  int label;
  double box[4];
};

double iou(const Det& a, const Det& b) {
  if (a.box[0] > b.box[2] || a.box[2] < b.box[0] || a.box[1] > b.box[3] || a.box[3] < b.box[1])
    return 0;
  const double inter = (std::min(a.box[2], b.box[2]) - std::max(a.box[0], b.box[0])) *
                       (std::min(a.box[3], b.box[3]) - std::max(a.box[1], b.box[1]));
  const double area_a = (a.box[2] - a.box[0]) * (a.box[3] - a.box[1]);
  const double area_b = (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]);
  return inter / (area_a + area_b - inter);
}

/// Descending by score (stable), then greedy suppression above `thr`.
std::vector<Det> sort_and_suppress(std::vector<Det> d, double thr) {
  std::stable_sort(d.begin(), d.end(),
                   [](const Det& a, const Det& b) { return a.score > b.score; });
  std::vector<Det> kept;
  for (const Det& x : d) {
    bool keep = true;
    for (const Det& k : kept) keep = keep && !(iou(x, k) > thr);
    if (keep) kept.push_back(x);
  }
  return kept;
}

/// The output rows against the reference's, in order (label + label_offset).
void check_rows(const Mat& top, const std::vector<Det>& want, int label_offset) {
  REQUIRE(top.dims() == 2);
  REQUIRE(top.w() == 6);
  INFO("rows " << top.h() << ", reference " << want.size());
  REQUIRE(std::size_t(top.h()) == want.size());
  const float* p = top.data_as<const float>();
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("row " << i);
    CHECK(p[6 * i] == float(want[i].label + label_offset));
    CHECK(std::fabs(p[6 * i + 1] - want[i].score) <= 1e-6);
    for (int k = 0; k < 4; ++k) CHECK(std::fabs(p[6 * i + 2 + k] - want[i].box[k]) <= 1e-5);
  }
}

template <class L>
Mat run_head(const L& l, const std::vector<Mat>& in, int threads) {
  infer::Option opt;
  opt.num_threads = threads;
  std::vector<Mat> tops(1);
  const infer::Status st = l.template forward<infer::f32, 1>(std::span<const Mat>(in), tops, opt);
  INFO((st.ok() ? std::string() : st.message()));
  REQUIRE(st.ok());
  return tops[0];
}

// ---- DetectionOutput ----

struct SsdInputs {
  int priors, classes;
  std::vector<float> loc, conf, prior;  // prior: boxes then variances (caffe) or boxes (mxnet)
};

/// Random priors inside the unit square, offsets, and per-prior softmax confidences (caffe
/// layout: prior-major) whose scale spreads the scores.
SsdInputs ssd_inputs(int priors, int classes, unsigned seed) {
  SsdInputs s{priors, classes, {}, {}, {}};
  s.loc = uniform(std::size_t(priors) * 4, -1.f, 1.f, seed);
  const std::vector<float> c = uniform(std::size_t(priors) * 2, 0.1f, 0.9f, seed + 1);
  const std::vector<float> e = uniform(std::size_t(priors) * 2, 0.05f, 0.3f, seed + 2);
  for (int i = 0; i < priors; ++i) {
    const float cx = c[2 * std::size_t(i)], cy = c[2 * std::size_t(i) + 1];
    const float hw = e[2 * std::size_t(i)], hh = e[2 * std::size_t(i) + 1];
    for (float v : {cx - hw, cy - hh, cx + hw, cy + hh}) s.prior.push_back(v);
  }
  const std::vector<float> logits = uniform(std::size_t(priors) * classes, -3.f, 3.f, seed + 3);
  s.conf.resize(logits.size());
  for (int i = 0; i < priors; ++i) {
    double sum = 0;
    for (int k = 0; k < classes; ++k) sum += std::exp(double(logits[std::size_t(i * classes + k)]));
    for (int k = 0; k < classes; ++k)
      s.conf[std::size_t(i * classes + k)] =
          float(std::exp(double(logits[std::size_t(i * classes + k)])) / sum);
  }
  return s;
}

std::vector<Det> detection_output_ref(const infer::layers::DetectionOutput& l, const SsdInputs& s,
                                      bool mxnet, const std::array<float, 4>& var) {
  const int P = s.priors, C = s.classes;
  auto conf = [&](int prior, int cls) {
    return double(mxnet ? s.conf[std::size_t(cls * P + prior)]
                        : s.conf[std::size_t(prior * C + cls)]);
  };
  std::vector<Det> all;
  for (int c = 1; c < C; ++c) {
    std::vector<Det> cand;
    for (int j = 0; j < P; ++j) {
      if (!(conf(j, c) > l.confidence_threshold)) continue;
      const float* pb = &s.prior[std::size_t(j) * 4];
      const float* lc = &s.loc[std::size_t(j) * 4];
      const double pw = double(pb[2]) - pb[0], ph = double(pb[3]) - pb[1];
      const double cx = var[0] * lc[0] * pw + (double(pb[0]) + pb[2]) / 2;
      const double cy = var[1] * lc[1] * ph + (double(pb[1]) + pb[3]) / 2;
      const double w = std::exp(double(var[2]) * lc[2]) * pw,
                   h = std::exp(double(var[3]) * lc[3]) * ph;
      cand.push_back({conf(j, c), c, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2}});
    }
    std::stable_sort(cand.begin(), cand.end(),
                     [](const Det& a, const Det& b) { return a.score > b.score; });
    if (l.nms_top_k >= 0 && int(cand.size()) > l.nms_top_k) cand.resize(std::size_t(l.nms_top_k));
    for (const Det& d : sort_and_suppress(cand, l.nms_threshold)) all.push_back(d);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Det& a, const Det& b) { return a.score > b.score; });
  if (l.keep_top_k >= 0 && int(all.size()) > l.keep_top_k) all.resize(std::size_t(l.keep_top_k));
  return all;
}

void check_detection_output(const infer::layers::DetectionOutput& l, const SsdInputs& s,
                            bool mxnet) {
  std::vector<Mat> in;
  in.push_back(mat_of(Shape::of(s.priors * 4), s.loc));
  std::array<float, 4> var = l.variances;
  if (mxnet) {
    // Class-major confidences, one row of boxes per prior.
    std::vector<float> cm(s.conf.size());
    for (int j = 0; j < s.priors; ++j)
      for (int c = 0; c < s.classes; ++c)
        cm[std::size_t(c * s.priors + j)] = s.conf[std::size_t(j * s.classes + c)];
    SsdInputs t = s;
    t.conf = cm;
    in.push_back(mat_of(Shape::of(s.priors, s.classes), cm));
    in.push_back(mat_of(Shape::of(4, s.priors), s.prior));
    const std::vector<Det> want = detection_output_ref(l, t, true, var);
    for (int threads : {1, 2}) check_rows(run_head(l, in, threads), want, 0);
    return;
  }
  std::vector<float> pv = s.prior;
  var = {0.1f, 0.1f, 0.2f, 0.2f};
  for (int j = 0; j < s.priors; ++j) pv.insert(pv.end(), var.begin(), var.end());
  in.push_back(mat_of(Shape::of(s.priors * s.classes), s.conf));
  in.push_back(mat_of(Shape::of(s.priors * 4, 2), pv));
  const std::vector<Det> want = detection_output_ref(l, s, false, var);
  for (int threads : {1, 2}) check_rows(run_head(l, in, threads), want, 0);
}

// ---- YOLO heads ----

struct YoloMap {
  int w, h;
  std::vector<float> v;  // channel-major
};

std::vector<Det> yolo_ref(const std::vector<YoloMap>& maps, int num_box, int num_class, bool v3,
                          double thr, double nms, const std::vector<float>& biases,
                          const std::vector<int>& mask, const std::vector<float>& scale) {
  std::vector<Det> all;
  for (std::size_t b = 0; b < maps.size(); ++b) {
    const YoloMap& m = maps[b];
    const std::size_t plane = std::size_t(m.w) * m.h;
    auto at = [&](int ch, int i, int j) {
      return double(m.v[ch * plane + std::size_t(i * m.w + j)]);
    };
    for (int pp = 0; pp < num_box; ++pp) {
      const int p = pp * (5 + num_class);
      const int anchor = v3 ? mask[b * std::size_t(num_box) + std::size_t(pp)] : pp;
      const double bw = biases[std::size_t(anchor) * 2], bh = biases[std::size_t(anchor) * 2 + 1];
      const double nw = v3 ? int(scale[b] * m.w) : m.w, nh = v3 ? int(scale[b] * m.h) : m.h;
      for (int i = 0; i < m.h; ++i)
        for (int j = 0; j < m.w; ++j) {
          int best = 0;
          for (int q = 1; q < num_class; ++q)
            if (at(p + 5 + q, i, j) > at(p + 5 + best, i, j)) best = q;
          const double o = at(p + 4, i, j), top = at(p + 5 + best, i, j);
          double score;
          if (v3) {
            score = 1 / (1 + std::exp(-o) * (1 + std::exp(-top)));
          } else {
            double sum = 0;
            for (int q = 0; q < num_class; ++q) sum += std::exp(at(p + 5 + q, i, j) - top);
            score = 1 / (1 + std::exp(-o)) / sum;
          }
          if (!(score >= thr)) continue;
          const double cx = (j + 1 / (1 + std::exp(-at(p, i, j)))) / m.w;
          const double cy = (i + 1 / (1 + std::exp(-at(p + 1, i, j)))) / m.h;
          const double w = std::exp(at(p + 2, i, j)) * bw / nw,
                       h = std::exp(at(p + 3, i, j)) * bh / nh;
          all.push_back({score, best, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2}});
        }
    }
  }
  return sort_and_suppress(all, nms);
}

/// A .param line's layer, read as infer::Net reads it (load_param with ncnn's keys).
template <class L>
L layer_from_text(const std::string& keys) {
  const std::string text = "7767517\n2 2\nInput in 0 1 data 0=4 1=4 2=4\n" +
                           std::string(L::ncnn_type) + " l 1 1 data out " + keys + "\n";
  auto file = infer::io::parse_param_text(text, "t.param");
  REQUIRE(file.ok());
  L l;
  infer::io::ParamReader r(*file, file->layers[1]);
  REQUIRE(l.load_param(r).ok());
  const infer::Status st = r.finish();
  INFO((st.ok() ? std::string() : st.message()));
  REQUIRE(st.ok());
  return l;
}

std::string load_error(const std::string& type, const std::string& keys) {
  const std::string text =
      "7767517\n2 2\nInput in 0 1 data 0=4 1=4 2=4\n" + type + " l 1 1 data out " + keys + "\n";
  infer::Net net;
  const infer::Status st = net.load_param_text(text, "t.param");
  REQUIRE_FALSE(st.ok());
  return st.message();
}

}  // namespace

TEST_CASE("PriorBox: caffe and mxnet forms against the scalar reference", "[detection]") {
  using infer::layers::PriorBox;
  PriorBox a;  // mobilenet_ssd's form: image and step from the inputs
  a.min_sizes = {60.f};
  a.max_sizes = {105.f};
  a.aspect_ratios = {2.f, 3.f};
  a.image_width = a.image_height = -233;
  a.offset = 0.5f;
  sweep_prior_box(a, "PriorBox min/max/ar flip",
                  {{Shape::of(19, 19, 5), Shape::of(300, 300, 3)},
                   {Shape::of(5, 3, 2), Shape::of(97, 61, 3)},
                   {Shape::of(1, 1, 1), Shape::of(8, 8, 3)}});
  PriorBox b;  // two sizes, no flip, clip, a fixed image size and step, one input
  b.min_sizes = {21.f, 45.f};
  b.max_sizes = {45.f, 99.f};
  b.aspect_ratios = {2.f};
  b.flip = 0;
  b.clip = 1;
  b.image_width = 300;
  b.image_height = 200;
  b.step_width = 16.f;
  b.step_height = 12.f;
  b.variances = {0.1f, 0.2f, 0.3f, 0.4f};
  sweep_prior_box(
      b, "PriorBox two sizes clip fixed image",
      {{Shape::of(19, 17, 3)}, {Shape::of(7, 2, 16)}, {Shape::of(3, 5, 8), Shape::of(9, 9, 3)}});
  PriorBox c;  // mxnet: one input, image -233, no max sizes
  c.min_sizes = {0.2f, 0.272f};
  c.aspect_ratios = {1.f, 2.f, 0.5f};
  c.image_width = c.image_height = -233;
  c.clip = 1;
  c.offset = 0.5f;
  sweep_prior_box(c, "PriorBox mxnet", {{Shape::of(10, 10, 4)}, {Shape::of(7, 3, 5)}});
}

TEST_CASE("PriorBox: keys read as ncnn writes them, and what cannot work refused", "[detection]") {
  const auto l = layer_from_text<infer::layers::PriorBox>(
      "-23300=1,6.000000e+01 -23301=1,105.0 -23302=2,2.0,3.0 9=-233 10=-233 13=0.5");
  CHECK(l.min_sizes.size() == 1);
  CHECK(l.max_sizes[0] == 105.f);
  CHECK(l.aspect_ratios.size() == 2);
  CHECK(l.priors_per_position(false) == 6);
  CHECK_THAT(load_error("PriorBox", "-23300=1,60.0"),
             Catch::Contains("image_width and image_height must be the image's size"));
  CHECK_THAT(load_error("PriorBox", "-23300=2,60.0,80.0 -23301=1,90.0 9=300 10=300"),
             Catch::Contains("max_sizes must hold one size per min size (2) or none, got 1"));
  CHECK_THAT(load_error("PriorBox", "9=300 10=300"),
             Catch::Contains("min_sizes must hold at least one size"));
}

TEST_CASE("DetectionOutput against the scalar reference", "[detection]") {
  infer::layers::DetectionOutput l;
  l.num_class = 5;
  l.nms_threshold = 0.45f;
  l.confidence_threshold = 0.3f;
  SECTION("caffe-ssd, no cap reached") {
    l.nms_top_k = 400;
    l.keep_top_k = 400;
    check_detection_output(l, ssd_inputs(203, 5, 11), false);
  }
  SECTION("nms_top_k and keep_top_k cut") {
    l.nms_top_k = 7;
    l.keep_top_k = 11;
    check_detection_output(l, ssd_inputs(203, 5, 12), false);
  }
  SECTION("keep_top_k -1 keeps all, few classes") {
    l.num_class = 2;
    l.keep_top_k = -1;
    l.confidence_threshold = 0.5f;
    check_detection_output(l, ssd_inputs(97, 2, 13), false);
  }
  SECTION("mxnet-ssd layout") {
    l.num_class = -233;
    l.variances = {0.1f, 0.1f, 0.2f, 0.2f};
    check_detection_output(l, ssd_inputs(61, 4, 14), true);
  }
  SECTION("no detections: no rows") {
    l.confidence_threshold = 0.999f;
    const SsdInputs s = ssd_inputs(50, 5, 15);
    check_detection_output(l, s, false);
  }
  SECTION("shapes that do not fit are refused") {
    std::vector<Shape> in{Shape::of(40), Shape::of(45), Shape::of(40, 2)}, out(1);
    CHECK_THAT(l.infer_shapes(in, out).error, Catch::Contains("confidences must hold num_class"));
  }
}

TEST_CASE("Yolov3DetectionOutput against the scalar reference", "[detection]") {
  const int num_box = 2, num_class = 3;
  const std::vector<float> biases{10, 14, 23, 27, 37, 58, 81, 82};
  // The mask as ncnn's converters write it (float bits as ints) and as plain indices.
  const auto by_bits = layer_from_text<infer::layers::Yolov3DetectionOutput>(
      "0=3 1=2 2=0.6 3=0.45 -23304=8,10.0,14.0,23.0,27.0,37.0,58.0,81.0,82.0 "
      "-23305=4,1073741824,1077936128,0,1065353216 -23306=2,32.0,16.0");
  const auto plain = layer_from_text<infer::layers::Yolov3DetectionOutput>(
      "0=3 1=2 2=0.6 3=0.45 -23304=8,10.0,14.0,23.0,27.0,37.0,58.0,81.0,82.0 "
      "-23305=4,2,3,0,1 -23306=2,32.0,16.0");
  REQUIRE(by_bits.mask.size() == 4);
  CHECK(by_bits.mask == plain.mask);
  CHECK(by_bits.mask[0] == 2);
  CHECK(by_bits.mask[3] == 1);
  const std::vector<Shape> shapes{Shape::of(7, 5, num_box * (5 + num_class)),
                                  Shape::of(13, 11, num_box * (5 + num_class))};
  std::vector<YoloMap> maps;
  std::vector<Mat> in;
  for (std::size_t b = 0; b < shapes.size(); ++b) {
    maps.push_back(
        {shapes[b].w, shapes[b].h, uniform(shapes[b].total(), -3.f, 3.f, 40 + unsigned(b))});
    in.push_back(mat_of(shapes[b], maps.back().v));
  }
  const std::vector<Det> want =
      yolo_ref(maps, num_box, num_class, true, 0.6, 0.45, biases, {2, 3, 0, 1}, {32.f, 16.f});
  REQUIRE(want.size() > 10);
  for (int threads : {1, 2}) check_rows(run_head(by_bits, in, threads), want, 1);
  // Nothing above the threshold: no rows.
  infer::layers::Yolov3DetectionOutput none = by_bits;
  none.confidence_threshold = 1.5f;
  check_rows(run_head(none, in, 1), {}, 1);
  CHECK_THAT(
      load_error("Yolov3DetectionOutput", "0=3 1=2 -23304=2,10.0,14.0 -23305=2,0,5 -23306=1,32.0"),
      Catch::Contains("mask names anchor 5, biases hold 1"));
}

TEST_CASE("YoloDetectionOutput against the scalar reference", "[detection]") {
  const int num_box = 3, num_class = 4;
  infer::layers::YoloDetectionOutput l;
  l.num_class = num_class;
  l.num_box = num_box;
  l.confidence_threshold = 0.2f;
  l.nms_threshold = 0.3f;
  l.biases = {1.08f, 1.19f, 3.42f, 4.41f, 6.63f, 11.38f};
  const Shape s = Shape::of(9, 6, num_box * (5 + num_class));
  const YoloMap m{s.w, s.h, uniform(s.total(), -3.f, 3.f, 77)};
  const std::vector<Det> want = yolo_ref({m}, num_box, num_class, false, 0.2, 0.3,
                                         {1.08f, 1.19f, 3.42f, 4.41f, 6.63f, 11.38f}, {}, {});
  REQUIRE(want.size() > 5);
  const std::vector<Mat> in{mat_of(s, m.v)};
  for (int threads : {1, 2}) check_rows(run_head(l, in, threads), want, 1);
  // The input is left as it was (ncnn applies its softmax in place).
  CHECK(infer::test::from_mat(in[0]).v == m.v);
}

TEST_CASE(
    "detection layers in a Net: PriorBox reads a packed blob as it is, a head's rows "
    "are for the caller only, and rows follow each input",
    "[detection][net]") {
  SECTION("PriorBox after a convolution: no repack for it") {
    const std::string text =
        "7767517\n4 5\nInput data 0 1 data 0=19 1=19 2=3\nSplit sp 1 2 data d0 d1\n"
        "Convolution conv 1 1 d0 c 0=32 1=3 4=1 5=1 6=864\n"
        "PriorBox pb 2 1 c d1 out -23300=1,30.0 -23302=1,2.0 9=-233 10=-233 13=0.5\n";
    infer::Net net;
    REQUIRE(net.load_param_text(text, "pb.param").ok());
    REQUIRE(net.load_random_weights(3).ok());
    const Mat in = infer::test::to_mat(RefTensor(Shape::of(19, 19, 3), 0.5f));
    const infer::NamedMat named[] = {{"data", in}};
    const std::string_view outs[] = {"out"};
    auto plan = net.plan(named, outs);
    REQUIRE(plan.ok());
    INFO(infer::graph::format_plan(**plan));
    int repacks = 0;
    for (const auto& s : (*plan)->steps) repacks += s.kind == infer::graph::StepDesc::repack;
    CHECK(repacks == 0);
    auto out = net.run(in, "out");
    REQUIRE(out.ok());
    infer::layers::PriorBox l;
    l.min_sizes = {30.f};
    l.aspect_ratios = {2.f};
    l.image_width = l.image_height = -233;
    l.offset = 0.5f;
    const RefTensor want =
        prior_box_ref(l, {RefTensor(Shape::of(19, 19, 32)), RefTensor(Shape::of(19, 19, 3))});
    const RefTensor got = infer::test::from_mat(*out);
    REQUIRE(got.shape == want.shape);
    for (std::size_t i = 0; i < want.v.size(); ++i)
      REQUIRE(std::fabs(got.v[i] - want.v[i]) <= 1e-5f);
  }
  const std::string head =
      "Yolov3DetectionOutput det 1 1 data rows 0=2 1=1 2=0.5 -23304=2,10.0,14.0 -23305=1,0 "
      "-23306=1,32.0\n";
  SECTION("a layer reading the rows is refused") {
    infer::Net net;
    REQUIRE(net.load_param_text(
                   "7767517\n3 3\nInput in 0 1 data 0=4 1=3 2=7\n" + head + "ReLU r 1 1 rows out\n",
                   "rows.param")
                .ok());
    REQUIRE(net.load_random_weights(1).ok());
    auto out = net.run(infer::test::to_mat(RefTensor(Shape::of(4, 3, 7))), "out");
    REQUIRE_FALSE(out.ok());
    CHECK_THAT(out.message(), Catch::Contains("reads blob 'rows', whose number of rows its "
                                              "producer knows only when it runs"));
  }
  SECTION("none, then some, then none again") {
    infer::Net net;
    REQUIRE(
        net.load_param_text("7767517\n2 2\nInput in 0 1 data 0=4 1=3 2=7\n" + head, "rows.param")
            .ok());
    REQUIRE(net.load_random_weights(1).ok());
    const Mat quiet = infer::test::to_mat(RefTensor(Shape::of(4, 3, 7), -8.f));
    const Mat busy = mat_of(Shape::of(4, 3, 7), uniform(84, -1.f, 3.f, 5));
    infer::NetContext ctx = net.context();
    int rows[3] = {};
    const Mat* inputs[3] = {&quiet, &busy, &quiet};
    for (int k = 0; k < 3; ++k) {
      REQUIRE(ctx.run(*inputs[k], "rows").ok());
      rows[k] = ctx.output(0).h();
      CHECK(ctx.output(0).w() == 6);
    }
    CHECK(rows[0] == 0);
    CHECK(rows[1] > 0);
    CHECK(rows[2] == 0);
  }
}

namespace {
constexpr infer::layers::Yolov3DetectionOutput kHead = [] {
  infer::layers::Yolov3DetectionOutput y;
  y.num_class = 2;
  y.num_box = 1;
  y.confidence_threshold = 0.5f;
  y.biases = {10.f, 14.f};
  y.mask = {0};
  y.anchors_scale = {32.f};
  return y;
}();
static constexpr auto head_net =
    infer::graph::make_graph(infer::graph::input("in", Shape::of(4, 3, 7)),
                             infer::graph::node(kHead, "in", "rows"), infer::graph::output("rows"));
}  // namespace

TEST_CASE("a static graph's detection rows follow each input", "[detection][graph]") {
  infer::graph::StaticGraph<head_net> g;
  REQUIRE(g.finalize().ok());
  const Mat quiet = infer::test::to_mat(RefTensor(Shape::of(4, 3, 7), -8.f));
  const Mat busy = mat_of(Shape::of(4, 3, 7), uniform(84, -1.f, 3.f, 5));
  REQUIRE(g.forward(quiet).ok());
  CHECK(g.output().h() == 0);
  REQUIRE(g.forward(busy).ok());
  const int rows = g.output().h();
  CHECK(rows > 0);
  CHECK(rows == run_head(kHead, {busy}, 1).h());
  REQUIRE(g.forward(quiet).ok());
  CHECK(g.output().h() == 0);
}
