// ncnn PriorBox (SSD's anchors): for every position of a feature map, boxes of each min size (and
// the geometric mean with its max size, and each aspect ratio, flipped too) centred on the position
// scaled to the image, normalized by the image size. Output, caffe style: 2-D, row 0 the boxes
// (xmin, ymin, xmax, ymax per prior), row 1 the four variances repeated. mxnet style (one input,
// image size and step -233, no max sizes): 1-D boxes of each size then each aspect ratio past the
// first, in units of the map. The values depend only on the inputs' shapes, never their values: the
// composer gives the inputs as they are (any type, pack or device layout on the CPU), with no
// conversion. f32 output; the arithmetic follows ncnn's, value for value.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct PriorBox {
  static constexpr std::string_view ncnn_type = "PriorBox";  ///< its type in .param files
  /// Reads its inputs' shapes only: the composer converts none of them.
  static constexpr bool reads_shapes_only = true;
  SmallVector<float, 16> min_sizes{};      ///< ncnn 0=min_sizes (pixels)
  SmallVector<float, 16> max_sizes{};      ///< ncnn 1=max_sizes: none, or one per min size
  SmallVector<float, 16> aspect_ratios{};  ///< ncnn 2=aspect_ratios (besides 1)
  std::array<float, 4> variances{0.1f, 0.1f, 0.2f, 0.2f};  ///< ncnn 3..6
  int flip = 1;                ///< ncnn 7=flip: each aspect ratio's box also transposed
  int clip = 0;                ///< ncnn 8=clip: boxes clamped to [0, 1]
  int image_width = 0;         ///< ncnn 9=image_width; -233: input 1's w
  int image_height = 0;        ///< ncnn 10=image_height; -233: input 1's h
  float step_width = -233.f;   ///< ncnn 11=step_width; -233: image width / map width
  float step_height = -233.f;  ///< ncnn 12=step_height; -233: image height / map height
  float offset = 0.f;          ///< ncnn 13=offset of the centre within a step

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  Status load_param(io::ParamReader& r) {
    read_list(r, 0, "min_sizes", min_sizes);
    read_list(r, 1, "max_sizes", max_sizes);
    read_list(r, 2, "aspect_ratios", aspect_ratios);
    for (int k = 0; k < 4; ++k) variances[std::size_t(k)] = r.get(3 + k, variances[std::size_t(k)]);
    flip = r.get(7, 1);
    clip = r.get(8, 0);
    image_width = r.get(9, 0);
    image_height = r.get(10, 0);
    step_width = r.get(11, -233.f);
    step_height = r.get(12, -233.f);
    offset = r.get(13, 0.f);
    if (min_sizes.empty()) r.fail(0, "min_sizes must hold at least one size");
    if (!mxnet_style() && !max_sizes.empty() && max_sizes.size() != min_sizes.size())
      r.fail(1, fmt::format("max_sizes must hold one size per min size ({}) or none, got {}",
                            min_sizes.size(), max_sizes.size()));
    if (image_width == 0 || image_height == 0)
      r.fail(image_width == 0 ? 9 : 10,
             "image_width and image_height must be the image's size in pixels, or -233 to take "
             "it from input 1 (0, ncnn's default, divides every box by zero)");
    return {};
  }

  /// mxnet's _contrib_MultiBoxPrior form (decided by the parameters and the input count).
  constexpr bool mxnet_style(std::size_t inputs = 1) const {
    return inputs == 1 && image_width == -233 && image_height == -233 && max_sizes.empty();
  }

  /// Priors per map position.
  constexpr int priors_per_position(bool mxnet) const {
    const int sizes = int(min_sizes.size()), ratios = int(aspect_ratios.size());
    if (mxnet) return sizes - 1 + ratios;
    return sizes * ratios * (flip ? 2 : 1) + sizes + int(max_sizes.size());
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.empty() || in.size() > 2) return shape_error("takes 1 or 2 inputs (map, image)");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (min_sizes.empty() || min_sizes.overflowed() || max_sizes.overflowed() ||
        aspect_ratios.overflowed())
      return shape_error(
          "min_sizes must hold 1 to 16 sizes, max_sizes and aspect_ratios at most 16");
    if (in[0].dims < 2) return shape_error("input 0 (the feature map) must have 2 or more dims");
    const bool mx = mxnet_style(in.size());
    if (mx) {
      if (aspect_ratios.empty())
        return shape_error("the mxnet form needs at least one aspect ratio (the first is 1)");
      out[0] = Shape::of(4 * in[0].w * in[0].h * priors_per_position(true));
      return {};
    }
    if (!max_sizes.empty() && max_sizes.size() != min_sizes.size())
      return shape_error("max_sizes must hold one size per min size, or none");
    if (image_width == 0 || image_height == 0)
      return shape_error("image_width and image_height must be set (or -233: input 1's size)");
    if ((image_width == -233 || image_height == -233) && in.size() < 2)
      return shape_error("image size -233 takes it from input 1, which is missing");
    out[0] = Shape::of(4 * in[0].w * in[0].h * priors_per_position(false), 2);
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (tops.size() != 1) return make_error("PriorBox: gives 1 output, got {}", tops.size());
    std::array<Shape, 2> in{};
    for (std::size_t i = 0; i < bottoms.size() && i < 2; ++i) in[i] = bottoms[i].shape();
    std::array<Shape, 1> out;
    const std::span<const Shape> shapes(in.data(), std::min<std::size_t>(bottoms.size(), 2));
    if (bottoms.size() > 2)
      return make_error("PriorBox: takes 1 or 2 inputs, got {}", bottoms.size());
    if (ShapeCheck c = infer_shapes(shapes, out); !c.ok())
      return make_error("PriorBox: {}", c.error);
    Mat& top = tops[0];
    INFER_TRY(top.create(out[0], ElemType::f32, 1, opt.blob_alloc()));
    float* box = top.data_as<float>();
    const int w = in[0].w, h = in[0].h;
    if (mxnet_style(bottoms.size())) {
      fill_mxnet(box, w, h);
    } else {
      const int image_w = image_width == -233 ? in[1].w : image_width;
      const int image_h = image_height == -233 ? in[1].h : image_height;
      fill_caffe(box, w, h, image_w, image_h);
      float* var = box + out[0].w;
      for (int i = 0; i < out[0].w / 4; ++i)
        for (int k = 0; k < 4; ++k) var[4 * i + k] = variances[std::size_t(k)];
    }
    if (clip)
      for (int i = 0; i < out[0].w; ++i) box[i] = std::min(std::max(box[i], 0.f), 1.f);
    return {};
  }

 private:
  template <std::size_t N>
  static void read_list(io::ParamReader& r, int key, const char* name, SmallVector<float, N>& v) {
    const std::vector<float> values = r.get_floats(key);
    if (values.size() > N)
      r.fail(key,
             fmt::format("{} holds {} values, at most {} are supported", name, values.size(), N));
    else
      v = values;
  }

  void fill_caffe(float* box, int w, int h, int image_w, int image_h) const {
    const float step_w = step_width == -233.f ? float(image_w) / float(w) : step_width;
    const float step_h = step_height == -233.f ? float(image_h) / float(h) : step_height;
    const float iw = float(image_w), ih = float(image_h);
    const auto put = [&](float cx, float cy, float bw, float bh) {
      box[0] = (cx - bw * 0.5f) / iw;
      box[1] = (cy - bh * 0.5f) / ih;
      box[2] = (cx + bw * 0.5f) / iw;
      box[3] = (cy + bh * 0.5f) / ih;
      box += 4;
    };
    for (int i = 0; i < h; ++i) {
      // ncnn steps the centre by repeated addition along a row: the same sums here.
      float cx = offset * step_w;
      const float cy = offset * step_h + float(i) * step_h;
      for (int j = 0; j < w; ++j) {
        for (std::size_t k = 0; k < min_sizes.size(); ++k) {
          const float mn = min_sizes[k];
          put(cx, cy, mn, mn);
          if (!max_sizes.empty()) {
            const float s = std::sqrt(mn * max_sizes[k]);
            put(cx, cy, s, s);
          }
          for (float ar : aspect_ratios) {
            const float bw = mn * std::sqrt(ar), bh = mn / std::sqrt(ar);
            put(cx, cy, bw, bh);
            if (flip) put(cx, cy, bh, bw);
          }
        }
        cx += step_w;
      }
    }
  }

  void fill_mxnet(float* box, int w, int h) const {
    const float step_w = step_width == -233.f ? 1.f / float(w) : step_width;
    const float step_h = step_height == -233.f ? 1.f / float(h) : step_height;
    const auto put = [&](float cx, float cy, float hw, float hh) {
      box[0] = cx - hw;
      box[1] = cy - hh;
      box[2] = cx + hw;
      box[3] = cy + hh;
      box += 4;
    };
    for (int i = 0; i < h; ++i) {
      float cx = offset * step_w;
      const float cy = offset * step_h + float(i) * step_h;
      for (int j = 0; j < w; ++j) {
        for (float size : min_sizes) put(cx, cy, size * float(h) / float(w) / 2, size / 2);
        const float size = min_sizes[0];
        for (std::size_t p = 1; p < aspect_ratios.size(); ++p) {
          const float ratio = std::sqrt(aspect_ratios[p]);
          put(cx, cy, size * float(h) / float(w) * ratio / 2, size / ratio / 2);
        }
        cx += step_w;
      }
    }
  }
};

}  // namespace infer::layers
