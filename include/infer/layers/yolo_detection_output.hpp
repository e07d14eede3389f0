// ncnn YoloDetectionOutput (YOLOv2's region head): each input is a map of num_box anchors x (4 box
// values, objectness, num_class class logits) channels. The class logits of a position go through
// a softmax; its best class scores sigmoid(objectness) x that probability, and at or above the
// threshold its box is the anchor (biases, in map cells) scaled by exp of the predicted size,
// centred on the position's sigmoid offsets. All boxes are sorted once by score and suppressed
// together. Output: one row per detection (label + 1, score, xmin, ymin, xmax, ymax), best first,
// in units of the image; no detection gives no rows (ncnn then hands back its first input, with
// the softmax applied in place: infer leaves its inputs alone). The row count depends on the data:
// the output is planned for one row per anchor and position and shrunk to the rows found (only
// the caller may read it). f32, pack 1; the arithmetic follows ncnn's.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/layers/detail/detection.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct YoloDetectionOutput {
  static constexpr std::string_view ncnn_type = "YoloDetectionOutput";  ///< type in .param files
  /// One row per detection: the row count is known only when it runs.
  static constexpr bool variable_rows = true;
  int num_class = 20;                  ///< ncnn 0=num_class
  int num_box = 5;                     ///< ncnn 1=num_box: anchors per position
  float confidence_threshold = 0.01f;  ///< ncnn 2=confidence_threshold
  float nms_threshold = 0.45f;         ///< ncnn 3=nms_threshold
  SmallVector<float, 64> biases{};     ///< ncnn 4=biases: anchor (w, h) pairs, in map cells

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  Status load_param(io::ParamReader& r) {
    detail::read_yolo_keys(r, *this);
    if (num_box >= 1 && biases.size() < std::size_t(num_box) * 2)
      r.fail(4, fmt::format("biases must hold a (w, h) pair per box ({} values), got {}",
                            num_box * 2, biases.size()));
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.empty()) return shape_error("takes at least one input");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (num_box < 1) return shape_error("num_class and num_box must be >= 1");
    if (biases.size() < std::size_t(num_box) * 2)
      return shape_error("biases must hold a (w, h) pair per box");
    return detail::yolo_output_shape(*this, in, out);
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    return detail::yolo_forward(
        *this, bottoms, tops, opt, "YoloDetectionOutput",
        [this](const Mat& blob, int, int anchor, auto& out) { candidates(blob, anchor, out); });
  }

 private:
  void candidates(const Mat& blob, int pp, std::vector<detail::Detection>& out) const {
    const int w = blob.w(), h = blob.h();
    const int p = pp * (5 + num_class);
    const float bias_w = biases[std::size_t(pp) * 2], bias_h = biases[std::size_t(pp) * 2 + 1];
    const float* x = blob.channel(p).data_as<const float>();
    const float* y = blob.channel(p + 1).data_as<const float>();
    const float* bw = blob.channel(p + 2).data_as<const float>();
    const float* bh = blob.channel(p + 3).data_as<const float>();
    const float* obj = blob.channel(p + 4).data_as<const float>();
    const std::size_t cstep = blob.cstep();
    const float* cls = blob.channel(p + 5).data_as<const float>();
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j) {
        const std::size_t k = std::size_t(i) * std::size_t(w) + std::size_t(j);
        // The softmax over the classes: its largest probability is 1 / sum exp(l - max).
        float mx = cls[k];
        int best = 0;
        for (int q = 1; q < num_class; ++q)
          if (const float v = cls[std::size_t(q) * cstep + k]; v > mx) {
            mx = v;
            best = q;
          }
        float sum = 0.f;
        for (int q = 0; q < num_class; ++q) sum += std::exp(cls[std::size_t(q) * cstep + k] - mx);
        const float score = detail::sigmoid(obj[k]) * (1.f / sum);
        if (!(score >= confidence_threshold)) continue;
        const float cx = (float(j) + detail::sigmoid(x[k])) / float(w);
        const float cy = (float(i) + detail::sigmoid(y[k])) / float(h);
        const float ww = std::exp(bw[k]) * bias_w / float(w);
        const float hh = std::exp(bh[k]) * bias_h / float(h);
        out.push_back(
            {cx - ww * 0.5f, cy - hh * 0.5f, cx + ww * 0.5f, cy + hh * 0.5f, score, best});
      }
  }
};

}  // namespace infer::layers
