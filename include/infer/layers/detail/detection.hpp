// What ncnn's detection heads share (DetectionOutput, YoloDetectionOutput, Yolov3DetectionOutput):
// candidate boxes with a label and score, one descending sort by score, greedy non-maximum
// suppression over the sorted list, and the result rows (label, score, xmin, ymin, xmax, ymax).
// The comparisons are ncnn's: boxes that only touch have no intersection, a box is dropped when
// its intersection over union with a kept one is above the threshold (a NaN ratio, of two empty
// boxes, drops nothing).
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <infer/io/param_dict.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <infer/status.hpp>
#include <numeric>
#include <span>
#include <vector>

namespace infer::layers::detail {

struct Detection {
  float xmin, ymin, xmax, ymax;
  float score;
  int label;
};

/// Sorts by descending score; equal scores keep their order (ncnn's quicksort leaves them in an
/// unspecified order: only exact ties can differ).
inline void sort_by_score(std::vector<Detection>& d) {
  std::stable_sort(d.begin(), d.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
}

/// Greedy suppression over `sorted` (descending scores): keeps a box unless its intersection over
/// union with an already kept one is above `threshold` (boxes apart intersect in 0). Appends the
/// kept boxes to `kept`. The kept boxes' corners and areas sit in one array each, so that a
/// candidate is tested against 32 of them at a time as vectors (one kept box a lane: two AVX-512
/// vectors, 12-15% faster than 16 on 1000-1500 boxes), chunk after chunk until one suppresses it.
inline void suppress(const std::vector<Detection>& sorted, float threshold,
                     std::vector<Detection>& kept) {
  constexpr std::size_t kChunk = 32;
  std::vector<float> x0, y0, x1, y1, area;
  for (std::vector<float>* v : {&x0, &y0, &x1, &y1, &area}) v->reserve(sorted.size());
  for (const Detection& a : sorted) {
    const float a_area = (a.xmax - a.xmin) * (a.ymax - a.ymin);
    bool keep = true;
    for (std::size_t j0 = 0; j0 < area.size() && keep; j0 += kChunk) {
      const std::size_t end = std::min(area.size(), j0 + kChunk);
      int hit = 0;
      for (std::size_t j = j0; j < end; ++j) {
        const bool apart =
            (a.xmin > x1[j]) | (a.xmax < x0[j]) | (a.ymin > y1[j]) | (a.ymax < y0[j]);
        const float inter = apart ? 0.f
                                  : (std::min(a.xmax, x1[j]) - std::max(a.xmin, x0[j])) *
                                        (std::min(a.ymax, y1[j]) - std::max(a.ymin, y0[j]));
        const float uni = a_area + area[j] - inter;
        hit |= int(inter / uni > threshold);
      }
      keep = hit == 0;
    }
    if (keep) {
      kept.push_back(a);
      x0.push_back(a.xmin);
      y0.push_back(a.ymin);
      x1.push_back(a.xmax);
      y1.push_back(a.ymax);
      area.push_back(a_area);
    }
  }
}

/// Writes `d` as rows (label + label_offset, score, xmin, ymin, xmax, ymax) into the first rows of
/// `top`, a 6-wide f32 Mat planned for at least d.size() rows, and shrinks `top` to them.
inline Status write_detections(const std::vector<Detection>& d, int label_offset, Mat& top,
                               const char* layer) {
  if (top.dims() != 2 || top.w() != 6 || top.type() != ElemType::f32 || top.elempack() != 1 ||
      std::size_t(top.h()) < d.size())
    return make_error("{}: the output is {}, expected f32 6 x at least {} rows", layer,
                      top.describe(), d.size());
  float* out = top.data_as<float>();
  for (std::size_t i = 0; i < d.size(); ++i) {
    float* row = out + i * 6;
    row[0] = float(d[i].label + label_offset);
    row[1] = d[i].score;
    row[2] = d[i].xmin;
    row[3] = d[i].ymin;
    row[4] = d[i].xmax;
    row[5] = d[i].ymax;
  }
  top = top.first_rows(int(d.size()));
  return {};
}

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

/// The YOLO heads' shared shape rule: num_class and num_box at least 1, every input 3-D with
/// num_box x (5 + num_class) channels; the output is planned for one row of 6 values per
/// (position, box) of every input, the most the heads can find.
template <class L>
constexpr ShapeCheck yolo_output_shape(const L& l, std::span<const Shape> in,
                                       std::span<Shape> out) {
  if (l.num_class < 1 || l.num_box < 1) return shape_error("num_class and num_box must be >= 1");
  long rows = 0;
  for (const Shape& s : in) {
    if (s.dims != 3) return shape_error("each input must be 3-D");
    if (s.c != l.num_box * (5 + l.num_class))
      return shape_error("each input needs num_box x (5 + num_class) channels");
    rows += long(s.w) * s.h * l.num_box;
  }
  out[0] = Shape::of(6, int(std::clamp<long>(rows, 1, 1L << 30)));
  return {};
}

/// Reads the keys the YOLO heads share, with ncnn's defaults: 0=num_class, 1=num_box,
/// 2=confidence_threshold, 3=nms_threshold, 4=biases (at most the field's capacity); checks the
/// counts.
template <class L>
void read_yolo_keys(io::ParamReader& r, L& l) {
  l.num_class = r.get(0, 20);
  l.num_box = r.get(1, 5);
  l.confidence_threshold = r.get(2, 0.01f);
  l.nms_threshold = r.get(3, 0.45f);
  const std::vector<float> b = r.get_floats(4);
  if (b.size() > l.biases.capacity())
    r.fail(4, fmt::format("biases holds {} values, at most {}", b.size(), l.biases.capacity()));
  else
    l.biases = b;
  if (l.num_class < 1) r.fail(0, fmt::format("num_class must be >= 1, got {}", l.num_class));
  if (l.num_box < 1) r.fail(1, fmt::format("num_box must be >= 1, got {}", l.num_box));
}

/// The forward of the YOLO heads (YoloDetectionOutput, Yolov3DetectionOutput): checks the f32
/// pack-1 inputs against the layer's infer_shapes, gathers each (input, anchor) pair's candidates
/// in parallel (`candidates(blob, input, anchor, out)`), sorts them all once by score, suppresses
/// overlaps above the layer's nms_threshold and writes the rows (label + 1) into tops[0].
template <class L, class Candidates>
Status yolo_forward(const L& layer, std::span<const Mat> bottoms, std::span<Mat> tops,
                    const Option& opt, const char* name, Candidates&& candidates) {
  if (tops.size() != 1) return make_error("{}: gives 1 output, got {}", name, tops.size());
  SmallVector<Shape, 16> shapes;
  for (const Mat& m : bottoms) {
    if (!m.is<f32, 1>())
      return make_error("{}: an input is {}, expected f32 pack 1", name, m.describe());
    shapes.push_back(m.shape());
  }
  if (shapes.overflowed()) return make_error("{}: at most 16 inputs", name);
  std::array<Shape, 1> out;
  if (ShapeCheck c = layer.infer_shapes(std::span<const Shape>(shapes.data(), shapes.size()), out);
      !c.ok())
    return make_error("{}: {}", name, c.error);
  Mat& top = tops[0];
  INFER_TRY(top.create(out[0], ElemType::f32, 1, opt.blob_alloc()));
  const int boxes = layer.num_box;
  std::vector<std::vector<Detection>> per_box(bottoms.size() * std::size_t(boxes));
#pragma omp parallel for num_threads(opt.num_threads) schedule(dynamic)
  for (int t = 0; t < int(per_box.size()); ++t)
    candidates(bottoms[std::size_t(t / boxes)], t / boxes, t % boxes, per_box[std::size_t(t)]);
  std::vector<Detection> all;
  for (const auto& v : per_box) all.insert(all.end(), v.begin(), v.end());
  sort_by_score(all);
  std::vector<Detection> kept;
  suppress(all, layer.nms_threshold, kept);
  return write_detections(kept, 1, top, name);
}

}  // namespace infer::layers::detail
