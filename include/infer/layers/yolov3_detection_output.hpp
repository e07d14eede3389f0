// ncnn Yolov3DetectionOutput (YOLOv3 / v4 heads): each input is one scale's map of num_box anchors
// x (4 box values, objectness, num_class class logits) channels. A position's best class scores
// 1 / (1 + e^-objectness (1 + e^-logit)), as ncnn computes it (near, not equal to, the product of
// the two sigmoids); at or above the threshold, its box is the anchor
// (biases[mask[...]]) scaled by exp of the predicted size over the network size (anchors_scale x
// map size), centred on the position's sigmoid offsets. All scales' boxes are sorted once by score
// and suppressed together. Output: one row per detection (label + 1, score, xmin, ymin, xmax,
// ymax), best first, in units of the image; no detection gives no rows. The row count depends on
// the data: the output is planned for one row per anchor and position and shrunk to the rows
// found (only the caller may read it). f32, pack 1; the arithmetic follows ncnn's.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/layers/detail/detection.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct Yolov3DetectionOutput {
  static constexpr std::string_view ncnn_type = "Yolov3DetectionOutput";  ///< type in .param files
  /// One row per detection: the row count is known only when it runs.
  static constexpr bool variable_rows = true;
  int num_class = 20;                  ///< ncnn 0=num_class
  int num_box = 5;                     ///< ncnn 1=num_box: anchors per position of each input
  float confidence_threshold = 0.01f;  ///< ncnn 2=confidence_threshold
  float nms_threshold = 0.45f;         ///< ncnn 3=nms_threshold
  SmallVector<float, 64> biases{};     ///< ncnn 4=biases: anchor (w, h) pairs, in pixels
  /// ncnn 5=mask: the anchor of each input's each box, num_box per input. ncnn's converters write
  /// the indices as float bit patterns in an int array (3.0 as 1077936128), which is read as such;
  /// small ints (below 2^23, which as bits would be tiny denormals) are read as the indices they
  /// plainly are.
  SmallVector<int, 64> mask{};
  SmallVector<float, 16> anchors_scale{};  ///< ncnn 6=anchors_scale: network size / map size

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  Status load_param(io::ParamReader& r) {
    detail::read_yolo_keys(r, *this);
    const std::vector<io::ParamValue> m = r.get_values(5);
    if (m.size() > mask.capacity())
      r.fail(5, fmt::format("mask holds {} values, at most {}", m.size(), mask.capacity()));
    mask.clear();
    for (std::size_t i = 0; i < m.size() && i < mask.capacity(); ++i) {
      const io::ParamValue& v = m[i];
      float f = v.f;
      if (v.kind == io::ParamValue::int_value)
        f = (v.i >= 0 && v.i < (1 << 23)) ? float(v.i) : std::bit_cast<float>(v.i);
      if (!(f >= 0.f && f < 1e6f) || f != std::floor(f)) {
        r.fail(5, fmt::format("mask value {} is not an anchor index", i));
        break;
      }
      mask.push_back(int(f));
    }
    const std::vector<float> a = r.get_floats(6);
    if (a.size() > anchors_scale.capacity())
      r.fail(6, fmt::format("anchors_scale holds {} values, at most {}", a.size(),
                            anchors_scale.capacity()));
    else
      anchors_scale = a;
    for (int k : mask)
      if (std::size_t(k) * 2 + 1 >= biases.size()) {
        r.fail(5, fmt::format("mask names anchor {}, biases hold {}", k, biases.size() / 2));
        break;
      }
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.empty()) return shape_error("takes at least one input (a map per scale)");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (num_box < 1) return shape_error("num_class and num_box must be >= 1");
    if (mask.size() < in.size() * std::size_t(num_box))
      return shape_error("mask must name num_box anchors for each input");
    if (anchors_scale.size() < in.size()) return shape_error("anchors_scale needs one per input");
    for (int k : mask)
      if (k < 0 || std::size_t(k) * 2 + 1 >= biases.size())
        return shape_error("mask names an anchor beyond biases");
    return detail::yolo_output_shape(*this, in, out);
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    return detail::yolo_forward(*this, bottoms, tops, opt, "Yolov3DetectionOutput",
                                [this](const Mat& blob, int input, int anchor, auto& out) {
                                  candidates(blob, input, anchor, out);
                                });
  }

 private:
  /// The boxes of anchor `pp` of input `b` at or above the threshold, positions row by row.
  void candidates(const Mat& blob, int b, int pp, std::vector<detail::Detection>& out) const {
    const int w = blob.w(), h = blob.h();
    const int p = pp * (5 + num_class);
    const int anchor = mask[std::size_t(b * num_box + pp)];
    const float bias_w = biases[std::size_t(anchor) * 2],
                bias_h = biases[std::size_t(anchor) * 2 + 1];
    const int net_w = int(anchors_scale[std::size_t(b)] * float(w));
    const int net_h = int(anchors_scale[std::size_t(b)] * float(h));
    const float* x = blob.channel(p).data_as<const float>();
    const float* y = blob.channel(p + 1).data_as<const float>();
    const float* bw = blob.channel(p + 2).data_as<const float>();
    const float* bh = blob.channel(p + 3).data_as<const float>();
    const float* obj = blob.channel(p + 4).data_as<const float>();
    const std::size_t cstep = blob.cstep();
    const float* cls = blob.channel(p + 5).data_as<const float>();
    // Each row's best class, a class plane at a time (runs along the rows, which the compiler
    // vectorizes; the first of equal logits wins, as a scan over the classes per position gives):
    // one position's classes lie a plane apart, a stride that took a YOLO-Fastest forward's
    // detection step to 7% of its time.
    std::vector<float> row_logit(static_cast<std::size_t>(w));
    std::vector<int> row_best(static_cast<std::size_t>(w));
    for (int i = 0; i < h; ++i) {
      const std::size_t k0 = std::size_t(i) * std::size_t(w);
      std::fill(row_logit.begin(), row_logit.end(), -std::numeric_limits<float>::max());
      std::fill(row_best.begin(), row_best.end(), 0);
      for (int q = 0; q < num_class; ++q) {
        const float* plane = cls + std::size_t(q) * cstep + k0;
        for (int j = 0; j < w; ++j) {
          const bool more = plane[j] > row_logit[std::size_t(j)];
          row_logit[std::size_t(j)] = more ? plane[j] : row_logit[std::size_t(j)];
          row_best[std::size_t(j)] = more ? q : row_best[std::size_t(j)];
        }
      }
      for (int j = 0; j < w; ++j) {
        const std::size_t k = k0 + std::size_t(j);
        const int best = row_best[std::size_t(j)];
        const float best_logit = row_logit[std::size_t(j)];
        // ncnn's score (at the commit the peers are built from): 1 / (1 + e^-obj (1 + e^-cls)),
        // which is not sigmoid(obj) x sigmoid(cls) (1/3, not 1/4, at zero logits). Measured on
        // ncnn_run with crafted inputs; kept so that the same network gives the same detections.
        const float score = 1.f / (1.f + std::exp(-obj[k]) * (1.f + std::exp(-best_logit)));
        if (!(score >= confidence_threshold)) continue;
        const float cx = (float(j) + detail::sigmoid(x[k])) / float(w);
        const float cy = (float(i) + detail::sigmoid(y[k])) / float(h);
        const float ww = std::exp(bw[k]) * bias_w / float(net_w);
        const float hh = std::exp(bh[k]) * bias_h / float(net_h);
        out.push_back(
            {cx - ww * 0.5f, cy - hh * 0.5f, cx + ww * 0.5f, cy + hh * 0.5f, score, best});
      }
    }
  }
};

}  // namespace infer::layers
