// The comparison behind tests/test_ncnn_nets.cpp and the detection networks' static graphs
// (models/test_models_d.cpp): ncnn's outputs of a network (tests/data/ncnn_nets, make.sh there)
// against infer's. Dense outputs (every k-th value kept) within `bound` of ncnn's largest value.
// Detections compare as sets, since random weights put many scores near the thresholds: a row
// matches a row of the other side with the same label, a score within 2e-3 and an intersection
// over union of at least 0.9, and at least 95% of each side's rows match; no rows on one side
// means none on the other.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <infer/mat.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/ncnn_reference.hpp"

namespace infer::test::ncnn_nets {

inline const std::filesystem::path kData = std::filesystem::path(INFER_TEST_DATA_DIR) / "ncnn_nets";

struct Case {
  const char* name;   ///< the reference files' prefix
  const char* model;  ///< models/<model>.param
  int size;           ///< input 3 x size x size
  const char* blob;
  const char* from = nullptr;  ///< a key edited in the model's text (a threshold), or none
  const char* to = nullptr;
};

struct Reference {
  int w = 0, h = 0, d = 0, c = 0, stride = 1;
  std::vector<float> values;
};

inline Reference reference(const Case& k) {
  Reference r;
  const std::string base = std::string(k.name) + "." + k.blob;
  std::ifstream shape(kData / (base + ".shape"));
  REQUIRE(shape.good());
  shape >> r.w >> r.h >> r.d >> r.c >> r.stride;
  REQUIRE(shape);
  r.values = infer::test::read_f32(kData / (base + ".f32"));
  return r;
}

inline std::string model_text(const Case& k) {
  std::ifstream f(std::filesystem::path(INFER_MODELS_DIR) / (std::string(k.model) + ".param"));
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (k.from) {
    const std::size_t at = text.find(k.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string(k.from).size(), k.to);
  }
  return text;
}

struct Row {
  float label, score, x0, y0, x1, y1;
};

inline std::vector<Row> rows_of(const float* p, std::size_t n) {
  std::vector<Row> r(n);
  for (std::size_t i = 0; i < n; ++i)
    r[i] = {p[6 * i], p[6 * i + 1], p[6 * i + 2], p[6 * i + 3], p[6 * i + 4], p[6 * i + 5]};
  return r;
}

inline double iou(const Row& a, const Row& b) {
  const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  return inter /
         (double(a.x1 - a.x0) * (a.y1 - a.y0) + double(b.x1 - b.x0) * (b.y1 - b.y0) - inter);
}

/// Rows of `a` with a partner in `b` (each row of `b` partners one row at most).
inline std::size_t matched(const std::vector<Row>& a, const std::vector<Row>& b) {
  std::vector<bool> used(b.size(), false);
  std::size_t n = 0;
  for (const Row& x : a)
    for (std::size_t j = 0; j < b.size(); ++j)
      if (!used[j] && x.label == b[j].label && std::fabs(x.score - b[j].score) <= 2e-3f &&
          iou(x, b[j]) >= 0.9) {
        used[j] = true;
        ++n;
        break;
      }
  return n;
}

/// Checks `out` (f32, pack 1), infer's blob k.blob of case k, against ncnn's.
inline void check_against_ncnn(const Case& k, const Mat& out, double bound = 1e-4) {
  REQUIRE(out.type() == ElemType::f32);
  REQUIRE(out.elempack() == 1);
  const Reference want = reference(k);
  const Shape s = out.shape();
  if (want.stride == 1 && (want.w == 6 || want.w == 0) && want.d <= 1 && want.c <= 1) {
    // Detections: ncnn gives an empty Mat for none, infer 6 x 0 rows.
    REQUIRE(s.dims == 2);
    REQUIRE(s.w == 6);
    const std::vector<Row> got = rows_of(out.data_as<const float>(), std::size_t(s.h));
    const std::vector<Row> ref = rows_of(want.values.data(), want.values.size() / 6);
    const std::size_t a = matched(got, ref), b = matched(ref, got);
    fmt::print("{}: {} detections, ncnn {}; matched {} / {}\n", k.name, got.size(), ref.size(), a,
               b);
    if (ref.empty()) {
      CHECK(got.empty());
    } else {
      CHECK(double(a) >= 0.95 * double(got.size()));
      CHECK(double(b) >= 0.95 * double(ref.size()));
    }
    return;
  }
  // A dense blob: every stride-th value of ncnn's, channel-major.
  REQUIRE(s.w == want.w);
  REQUIRE(s.h == want.h);
  REQUIRE(s.c == want.c);
  std::vector<float> all;
  const std::size_t plane = std::size_t(s.w) * s.h * s.d;
  for (int q = 0; q < s.c; ++q) {
    const float* p = out.channel(q).data_as<const float>();
    all.insert(all.end(), p, p + plane);
  }
  double diff = 0, peak = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < all.size(); i += std::size_t(want.stride), ++n) {
    REQUIRE(n < want.values.size());
    REQUIRE(std::isfinite(all[i]));
    diff = std::max(diff, double(std::fabs(all[i] - want.values[n])));
    peak = std::max(peak, double(std::fabs(want.values[n])));
  }
  CHECK(n == want.values.size());
  const double rel = diff / std::max(peak, 1e-6);
  fmt::print("{} {}: within {:.3g} of ncnn's largest ({:.4g})\n", k.name, k.blob, rel, peak);
  CHECK(rel <= bound);
}

}  // namespace infer::test::ncnn_nets
