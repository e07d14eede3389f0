// ncnn Interp: resizes w and h of a 3-D blob (w only of a 2-D blob; a 1-D blob of n values becomes
// n constant channels of the output size) by nearest, bilinear or bicubic interpolation, to a fixed
// size or by scale factors. One blob, f32/f16/bf16 storage with f32 arithmetic, every pack: the
// lanes of a packed element share the spatial weights.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/interp.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/interp.hpp>
#endif

namespace infer::layers {

struct Interp {
  static constexpr std::string_view ncnn_type = "Interp";  ///< its type in .param files
  /// ncnn 0=resize_type: 1 nearest, 2 bilinear, 3 bicubic (Keys, a = -0.75, edges replicated);
  /// ncnn's default 0 selects none and is rejected.
  int resize_type = 0;
  float height_scale = 1.f;  ///< ncnn 1=height_scale, used when output_height or output_width is 0
  float width_scale = 1.f;   ///< ncnn 2=width_scale, used when output_height or output_width is 0
  int output_height = 0;     ///< ncnn 3=output_height
  int output_width = 0;      ///< ncnn 4=output_width
  /// ncnn 5=dynamic_target_size: 1 takes the size from a second blob; only 0 is supported.
  int dynamic_target_size = 0;
  /// ncnn 6=align_corner: bilinear/bicubic map the corner pixels onto each other,
  /// x_in = x_out * (in - 1) / (out - 1), instead of the half-pixel (x_out + 0.5) * in / out - 0.5.
  int align_corner = 0;

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    if (resize_type < 1 || resize_type > 3)
      return shape_error("resize_type must be 1 (nearest), 2 (bilinear) or 3 (bicubic)");
    if (dynamic_target_size != 0)
      return shape_error("dynamic_target_size (size from a second blob) is not supported");
    const Shape& s = in[0];
    if (s.dims > 3) return shape_error("input must have 1 to 3 dims");
    const Size o = output_size(s);
    if (o.w < 1 || (s.dims != 2 && o.h < 1))
      return shape_error("output size is not positive (check the scales and output sizes)");
    out[0] = s.dims == 1   ? Shape::of(o.w, o.h, s.w)
             : s.dims == 2 ? Shape::of(o.w, s.h)
                           : Shape::of(o.w, o.h, s.c);
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    const Shape in_shape = bottom.shape();
    Shape out_shape;
    if (const ShapeCheck c =
            infer_shapes(std::span<const Shape>(&in_shape, 1), std::span<Shape>(&out_shape, 1));
        !c.ok())
      return make_error("Interp: {}; input {}, resize_type {}, output {}x{}, scales {}x{}", c.error,
                        bottom.describe(), resize_type, output_width, output_height, width_scale,
                        height_scale);
    const int out_pack = pack_for(out_shape.packed_extent(), Pack);
    if (out_pack != Pack)  // the packed axis keeps its extent (1-D: w becomes c)
      return make_error("Interp: output pack {} differs from the input's {}", out_pack, Pack);
    INFER_TRY(top.create(out_shape, elem_type_v<T>, Pack, opt.blob_alloc()));
    const MatView<T, Pack> in = bottom.view<T, Pack>(), out = top.view<T, Pack>();

    if (in_shape.dims == 1) {  // value q fills output channel q
      const std::size_t plane = std::size_t(out.w) * out.h;
#pragma omp parallel for num_threads(opt.num_threads) if (out.c > 1 && plane * Pack >= 4096)
      for (int q = 0; q < out.c; ++q) {
        T* d = out.channel(q);
        const T* v = in.data + std::size_t(q) * Pack;
        for (std::size_t i = 0; i < plane; ++i)
          for (int l = 0; l < Pack; ++l) d[i * Pack + l] = v[l];
      }
      return {};
    }
    switch (resize_type) {
      case 1:
        return run<1, T, Pack>(in, out, opt);
      case 2:
        return run<2, T, Pack>(in, out, opt);
      default:
        return run<4, T, Pack>(in, out, opt);
    }
  }


#ifdef INFER_HAS_VULKAN
  /// On the GPU: the resampling kernel (nearest, bilinear, bicubic) into the planned shape.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Interp GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_interp(rec, in[0], out[0], resize_type, align_corner != 0,
                             output_width != 0 ? 0.f : width_scale,
                             output_height != 0 ? 0.f : height_scale);
  }
#endif

 private:
  struct Size {
    int w = 0, h = 0;
  };

  /// ncnn's output size: output_width x output_height when both are given, else the input's
  /// w and h (1 x 1 for a 1-D input) times the scales, truncated.
  constexpr Size output_size(const Shape& s) const {
    const int w = s.dims == 1 ? 1 : s.w, h = s.dims == 1 ? 1 : s.h;
    if (output_width != 0 && output_height != 0) return {output_width, output_height};
    return {static_cast<int>(float(w) * width_scale), static_cast<int>(float(h) * height_scale)};
  }

  /// Input positions and weights of each output position along one axis (`in` -> `out`
  /// positions; `size_given`: the output extent came from output_width/height, `scale` is that
  /// axis's scale parameter), in ncnn's arithmetic; indices are clamped into the input.
  void axis_taps(int in, int out, bool size_given, float scale, std::vector<int>& index,
                 std::vector<float>& weight) const {
    const int taps = resize_type == 1 ? 1 : resize_type == 2 ? 2 : 4;
    index.assign(std::size_t(out) * taps, 0);
    weight.assign(std::size_t(out) * taps, 0.f);
    auto clamp = [in](int i) { return std::min(std::max(i, 0), in - 1); };
    if (resize_type == 1) {
      const float ratio = size_given ? float(in) / float(out) : 1.f / scale;
      for (int o = 0; o < out; ++o) {
        index[std::size_t(o)] = std::min(static_cast<int>(float(o) * ratio), in - 1);
        weight[std::size_t(o)] = 1.f;
      }
      return;
    }
    // One output maps onto the first input when corners align (ncnn divides 0 by 0 there).
    const double step = align_corner ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                                     : double(in) / double(out);
    for (int o = 0; o < out; ++o) {
      float f = align_corner ? float(o * step) : float((o + 0.5) * step - 0.5);
      int i0 = static_cast<int>(std::floor(f));
      f -= float(i0);
      int* ix = index.data() + std::size_t(o) * taps;
      float* wx = weight.data() + std::size_t(o) * taps;
      if (resize_type == 2) {
        if (i0 < 0) {
          i0 = 0;
          f = 0.f;
        }
        if (i0 >= in - 1) {
          i0 = in - 2;
          f = 1.f;
        }
        ix[0] = clamp(i0);
        ix[1] = clamp(i0 + 1);
        wx[0] = 1.f - f;
        wx[1] = f;
        continue;
      }
      // Keys' cubic convolution weights of positions i0 - 1 .. i0 + 2, a = -0.75.
      constexpr float a = -0.75f;
      const float f0 = f + 1.f, f1 = f, f2 = 1.f - f;
      wx[0] = a * f0 * f0 * f0 - 5 * a * f0 * f0 + 8 * a * f0 - 4 * a;
      wx[1] = (a + 2) * f1 * f1 * f1 - (a + 3) * f1 * f1 + 1;
      wx[2] = (a + 2) * f2 * f2 * f2 - (a + 3) * f2 * f2 + 1;
      wx[3] = 1.f - wx[0] - wx[1] - wx[2];
      for (int t = 0; t < 4; ++t) ix[t] = clamp(i0 - 1 + t);
    }
  }

  template <int Taps, StorageElement T, int Pack>
  Status run(const MatView<T, Pack>& in, const MatView<T, Pack>& out, const Option& opt) const {
    std::vector<int> xi, yi;
    std::vector<float> xw, yw;
    axis_taps(in.w, out.w, output_width != 0, width_scale, xi, xw);
    const kernels::ResampleAxis x{xi.data(), xw.data()};
    const std::size_t in_row = std::size_t(in.w) * Pack, out_row = std::size_t(out.w) * Pack;
    if (in.dims == 2) {  // rows are independent (the packed axis h keeps its extent)
#pragma omp parallel for num_threads(opt.num_threads) if (in.h > 1 && out_row * in.h >= 4096)
      for (int y = 0; y < in.h; ++y)
        kernels::resample_row<Taps, Pack>(in.data + std::size_t(y) * in_row,
                                          out.data + std::size_t(y) * out_row, x, out.w);
      return {};
    }
    axis_taps(in.h, out.h, output_height != 0, height_scale, yi, yw);
    const kernels::ResampleAxis y{yi.data(), yw.data()};
#pragma omp parallel for num_threads(opt.num_threads) if (in.c > 1)
    for (int q = 0; q < in.c; ++q) {
      std::vector<float> cache(static_cast<std::size_t>(Taps) * out_row);
      kernels::resample_plane<Taps, Pack>(in.channel(q), in_row, out.channel(q), x, y, out.w, out.h,
                                          cache.data());
    }
    return {};
  }
};

}  // namespace infer::layers
