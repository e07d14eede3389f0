// ncnn MemoryData: a constant blob stored with the weights. No input, one output of shape
// w (1-D), w x h (2-D), w x h x c (3-D) or w x h x d x c (4-D), the first extents given deciding;
// f32/f16/bf16 storage, every pack (narrower where the packed axis does not divide).
#pragma once

#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct MemoryData {
  static constexpr std::string_view ncnn_type = "MemoryData";  ///< its type in .param files
  int w = 0;  ///< ncnn 0=w
  int h = 0;  ///< ncnn 1=h: 0 makes the blob 1-D
  int d = 0;  ///< ncnn 11=d: nonzero makes the blob 4-D
  int c = 0;  ///< ncnn 2=c: nonzero (d = 0) makes the blob 3-D
  /// ncnn 21=load_type: how the .bin stores the data, 1 raw f32 (no tag), 0 tagged (f32, f16 or
  /// a quantization table).
  int load_type = 1;
  /// The blob's values, w*h*d*c of them in (c, d, h, w) order, from load() or set by the user.
  /// With every extent 0 the blob is one value and nothing is loaded (ncnn leaves it
  /// uninitialized; here it is 0 unless data holds one value).
  std::vector<float> data{};

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (!in.empty()) return shape_error("takes no input blob");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    Shape s;
    if (const char* e = blob_shape(s)) return shape_error(e);
    if (!data.empty() && data.size() != s.total())
      return shape_error("data does not hold w*h*d*c values");
    out[0] = s;
    return {};
  }

  /// Reads the data (w*h*d*c values, raw f32 or tagged as load_type says) from the .bin.
  Status load(io::ModelBin& mb) {
    Shape s;
    if (const char* e = blob_shape(s)) return make_error("MemoryData: {}", e);
    if (load_type != 0 && load_type != 1)
      return make_error("MemoryData: load_type must be 0 (tagged) or 1 (raw f32), got {}",
                        load_type);
    if (w == 0) {  // ncnn reads nothing for the 0 x 0 x 0 blob
      data.clear();
      return {};
    }
    auto r = mb.load(s.total(), load_type == 0 ? io::WeightType::tagged : io::WeightType::raw_f32);
    if (!r.ok()) return make_error("MemoryData: data: {}", r.message());
    data = std::move(r).value();
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (!bottoms.empty())
      return make_error("MemoryData: takes no input blob, got {}", bottoms.size());
    if (tops.size() != 1) return make_error("MemoryData: gives 1 output, {} asked", tops.size());
    Shape s;
    if (const char* e = blob_shape(s)) return make_error("MemoryData: {}", e);
    const bool zero = w == 0 && data.empty();
    if (!zero && data.size() != s.total())
      return make_error("MemoryData: data holds {} values, w*h*d*c = {}x{}x{}x{} needs {}",
                        data.size(), s.w, s.h, s.d, s.c, s.total());
    const int pack = pack_for(s.packed_extent(), Pack);
    Mat& top = tops[0];
    INFER_TRY(top.create(s, elem_type_v<T>, pack, opt.blob_alloc()));
    T* out = top.data_as<T>();
    if (zero) {
      out[0] = from_f32<T>(0.f);
      return {};
    }
    // Logical (c, z, y, x) to the packed position: the packed axis is w (1-D), h (2-D) or c.
    std::size_t i = 0;
    for (int q = 0; q < s.c; ++q) {
      for (int z = 0; z < s.d; ++z) {
        for (int y = 0; y < s.h; ++y) {
          for (int x = 0; x < s.w; ++x, ++i) {
            std::size_t at = 0;
            if (s.dims >= 3)
              at = top.cstep() * pack * std::size_t(q / pack) +
                   ((std::size_t(z) * s.h + y) * s.w + x) * pack + std::size_t(q % pack);
            else if (s.dims == 2)
              at = (std::size_t(y / pack) * s.w + x) * pack + std::size_t(y % pack);
            else
              at = std::size_t(x);
            out[at] = from_f32<T>(data[i]);
          }
        }
      }
    }
    return {};
  }

 private:
  /// The blob's shape from w, h, d, c as ncnn reads them; a static message when they do not fit.
  constexpr const char* blob_shape(Shape& s) const {
    if (w < 0 || h < 0 || d < 0 || c < 0) return "w, h, d and c must not be negative";
    if (d != 0) {
      if (w == 0 || h == 0 || c == 0) return "a 4-D blob (d given) needs w, h and c too";
      s = Shape::of(w, h, d, c);
    } else if (c != 0) {
      if (w == 0 || h == 0) return "a 3-D blob (c given) needs w and h too";
      s = Shape::of(w, h, c);
    } else if (h != 0) {
      if (w == 0) return "a 2-D blob (h given) needs w too";
      s = Shape::of(w, h);
    } else {
      s = Shape::of(w == 0 ? 1 : w);
    }
    return nullptr;
  }
};

}  // namespace infer::layers
