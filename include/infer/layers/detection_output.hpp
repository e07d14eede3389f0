// ncnn DetectionOutput (SSD's head): decodes each prior box by its predicted offsets (centre-size
// coding with the variances the priors carry), keeps, per class but the background (class 0),
// the boxes whose confidence is above the threshold, the nms_top_k best of them after a sort,
// suppresses overlaps per class, then keeps the keep_top_k best over all classes. Output: one row
// per detection (label, score, xmin, ymin, xmax, ymax), best first; no detection gives no rows.
// The row count depends on the data: the output is planned for the most rows the parameters
// allow and shrunk to the rows found (only the caller may read it). Inputs: the offsets (4 per
// prior), the class confidences (num_class per prior, caffe-ssd's order) and the priors (2-D:
// boxes then variances, 4 values per prior each, as PriorBox and Concat give them); with
// num_class = -233, mxnet-ssd's layout (confidences class-major, num_class from their rows,
// priors one row of boxes and this layer's variances). f32, pack 1; the arithmetic follows ncnn's.
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
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct DetectionOutput {
  static constexpr std::string_view ncnn_type = "DetectionOutput";  ///< its type in .param files
  /// One row per detection: the row count is known only when it runs.
  static constexpr bool variable_rows = true;
  int num_class = 0;            ///< ncnn 0=num_class, background included; -233: mxnet-ssd
  float nms_threshold = 0.05f;  ///< ncnn 1=nms_threshold (intersection over union)
  int nms_top_k = 300;          ///< ncnn 2=nms_top_k: boxes per class into suppression; < 0 all
  int keep_top_k = 100;         ///< ncnn 3=keep_top_k: detections kept over all classes; < 0 all
  float confidence_threshold = 0.5f;                       ///< ncnn 4=confidence_threshold
  std::array<float, 4> variances{0.1f, 0.1f, 0.2f, 0.2f};  ///< ncnn 5..8 (mxnet-ssd priors)

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  Status load_param(io::ParamReader& r) {
    num_class = r.get(0, 0);
    nms_threshold = r.get(1, 0.05f);
    nms_top_k = r.get(2, 300);
    keep_top_k = r.get(3, 100);
    confidence_threshold = r.get(4, 0.5f);
    for (int k = 0; k < 4; ++k) variances[std::size_t(k)] = r.get(5 + k, variances[std::size_t(k)]);
    if (num_class != -233 && num_class < 2)
      r.fail(0, fmt::format("num_class must be >= 2 (background and one class) or -233 "
                            "(mxnet-ssd), got {}",
                            num_class));
    return {};
  }

  constexpr bool mxnet() const { return num_class == -233; }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.size() != 3) return shape_error("takes 3 inputs: locations, confidences, priors");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (num_class != -233 && num_class < 2)
      return shape_error("num_class must be >= 2 or -233 (mxnet-ssd)");
    int priors = 0, classes = 0;
    if (ShapeCheck c = counts(in, priors, classes); !c.ok()) return c;
    out[0] = Shape::of(6, std::max(1, max_rows(priors, classes)));
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (bottoms.size() != 3 || tops.size() != 1)
      return make_error("DetectionOutput: takes 3 inputs and gives 1 output, got {} and {}",
                        bottoms.size(), tops.size());
    std::array<Shape, 3> shapes;
    for (std::size_t i = 0; i < 3; ++i) {
      if (!bottoms[i].is<f32, 1>() || (bottoms[i].dims() >= 3 && !bottoms[i].dense()))
        return make_error("DetectionOutput: input {} is {}, expected dense f32 pack 1", i,
                          bottoms[i].describe());
      shapes[i] = bottoms[i].shape();
    }
    int priors = 0, classes = 0;
    if (ShapeCheck c = counts(shapes, priors, classes); !c.ok())
      return make_error("DetectionOutput: {}", c.error);
    Mat& top = tops[0];
    INFER_TRY(top.create(Shape::of(6, std::max(1, max_rows(priors, classes))), ElemType::f32, 1,
                         opt.blob_alloc()));
    const float* loc = bottoms[0].data_as<const float>();
    const float* conf = bottoms[1].data_as<const float>();
    const float* prior = bottoms[2].data_as<const float>();
    const float* prior_var = mxnet() ? nullptr : prior + std::size_t(priors) * 4;

    // The boxes of the priors some class may keep (the others' background score leaves every
    // other class at or under the threshold).
    std::vector<std::array<float, 4>> boxes(static_cast<std::size_t>(priors));
    for (int i = 0; i < priors; ++i) {
      const float background = mxnet() ? conf[i] : conf[std::size_t(i) * std::size_t(classes)];
      if (background >= 1.0 - double(confidence_threshold)) continue;
      const float* l = loc + std::size_t(i) * 4;
      const float* pb = prior + std::size_t(i) * 4;
      const float* var = prior_var ? prior_var + std::size_t(i) * 4 : variances.data();
      const float pw = pb[2] - pb[0], ph = pb[3] - pb[1];
      const float pcx = (pb[0] + pb[2]) * 0.5f, pcy = (pb[1] + pb[3]) * 0.5f;
      const float cx = var[0] * l[0] * pw + pcx, cy = var[1] * l[1] * ph + pcy;
      const float w = float(std::exp(double(var[2] * l[2])) * pw);
      const float h = float(std::exp(double(var[3] * l[3])) * ph);
      boxes[std::size_t(i)] = {cx - w * 0.5f, cy - h * 0.5f, cx + w * 0.5f, cy + h * 0.5f};
    }

    // Per class: threshold, sort, the nms_top_k best, suppression.
    std::vector<std::vector<detail::Detection>> kept(static_cast<std::size_t>(classes));
#pragma omp parallel for num_threads(opt.num_threads) schedule(dynamic)
    for (int c = 1; c < classes; ++c) {
      std::vector<detail::Detection> cand;
      for (int j = 0; j < priors; ++j) {
        const float score = mxnet() ? conf[std::size_t(c) * std::size_t(priors) + std::size_t(j)]
                                    : conf[std::size_t(j) * std::size_t(classes) + std::size_t(c)];
        if (score > confidence_threshold) {
          const std::array<float, 4>& b = boxes[std::size_t(j)];
          cand.push_back({b[0], b[1], b[2], b[3], score, c});
        }
      }
      detail::sort_by_score(cand);
      if (nms_top_k >= 0 && cand.size() > std::size_t(nms_top_k))
        cand.resize(std::size_t(nms_top_k));
      detail::suppress(cand, nms_threshold, kept[std::size_t(c)]);
    }
    std::vector<detail::Detection> all;
    for (int c = 1; c < classes; ++c)
      all.insert(all.end(), kept[std::size_t(c)].begin(), kept[std::size_t(c)].end());
    detail::sort_by_score(all);
    if (keep_top_k >= 0 && all.size() > std::size_t(keep_top_k))
      all.resize(std::size_t(keep_top_k));
    return detail::write_detections(all, 0, top, "DetectionOutput");
  }

 private:
  /// The priors and classes the inputs hold, checked against each other.
  constexpr ShapeCheck counts(std::span<const Shape> in, int& priors, int& classes) const {
    const Shape &loc = in[0], &conf = in[1], &prior = in[2];
    if (mxnet()) {
      if (prior.dims != 2 || prior.w != 4)
        return shape_error("mxnet-ssd priors must be 2-D, 4 values per row");
      priors = prior.h;
      if (conf.dims != 2 || conf.w != priors)
        return shape_error("mxnet-ssd confidences must be 2-D, one column per prior");
      classes = conf.h;
    } else {
      if (prior.dims != 2 || prior.h != 2 || prior.w % 4 != 0)
        return shape_error("priors must be 2-D: 2 rows (boxes, variances) of 4 values per prior");
      priors = prior.w / 4;
      classes = num_class;
      if (conf.total() != std::size_t(priors) * std::size_t(classes))
        return shape_error("confidences must hold num_class values per prior");
    }
    if (classes < 2) return shape_error("needs at least 2 classes (background and one)");
    if (loc.total() != std::size_t(priors) * 4)
      return shape_error("locations must hold 4 values per prior");
    return {};
  }

  /// The most rows the output can have.
  constexpr int max_rows(int priors, int classes) const {
    const long per_class = nms_top_k >= 0 ? std::min<long>(nms_top_k, priors) : priors;
    long rows = per_class * (classes - 1);
    if (keep_top_k >= 0) rows = std::min<long>(rows, keep_top_k);
    return int(std::min<long>(rows, 1L << 30));
  }
};

}  // namespace infer::layers
