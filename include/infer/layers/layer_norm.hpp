// ncnn LayerNorm: each run of affine_size values is normalized to zero mean and unit variance,
// then scaled and shifted per position (gamma, beta) when affine. The runs are the whole blob
// (1-D), each row (2-D, and 3-D with affine_size = w) or each channel (3-D with affine_size =
// w * h). Packed lanes are separate runs (rows or channels), so every pack works; f32/f16/bf16
// storage with f32 arithmetic. This layer is one file: its type name, keys and weights are its own.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <fmt/core.h>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct LayerNorm {
  static constexpr std::string_view ncnn_type = "LayerNorm";  ///< its type in .param files
  int affine_size = 0;               ///< ncnn 0=affine_size: values per normalized run
  float eps = 0.001f;                ///< ncnn 1=eps, added to the variance
  bool affine = true;                ///< ncnn 2=affine: apply gamma and beta
  std::vector<float> gamma_data{};   ///< weights, affine_size values when affine
  std::vector<float> beta_data{};    ///< weights, affine_size values when affine

  using storage = float_storage;
  using packs = all_packs;

  /// Reads 0=affine_size, 1=eps, 2=affine with ncnn's defaults.
  Status load_param(io::ParamReader& r) {
    affine_size = r.get(0, 0);
    eps = r.get(1, 0.001f);
    const int a = r.get(2, 1);
    if (affine_size < 1) r.fail(0, fmt::format("affine_size must be >= 1, got {}", affine_size));
    if (eps < 0.f) r.fail(1, fmt::format("eps must be >= 0, got {}", eps));
    if (a != 0 && a != 1) r.fail(2, fmt::format("affine must be 0 or 1, got {}", a));
    affine = a == 1;
    return {};
  }

  /// Reads gamma_data then beta_data (raw f32, affine_size each) when affine.
  Status load(io::ModelBin& mb) {
    if (!affine) return {};
    if (affine_size < 1)
      return make_error("LayerNorm: affine_size must be >= 1, got {}", affine_size);
    auto g = mb.load(std::size_t(affine_size), io::WeightType::raw_f32);
    if (!g.ok()) return make_error("LayerNorm: gamma_data: {}", g.message());
    auto b = mb.load(std::size_t(affine_size), io::WeightType::raw_f32);
    if (!b.ok()) return make_error("LayerNorm: beta_data: {}", b.message());
    gamma_data = std::move(g).value();
    beta_data = std::move(b).value();
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    const Shape& s = in[0];
    if (s.dims < 1 || s.dims > 3) return shape_error("input must have 1 to 3 dims");
    if (affine_size != s.w && !(s.dims == 3 && affine_size == s.w * s.h))
      return shape_error(s.dims == 3 ? "affine_size must be the input's w or w * h"
                                     : "affine_size must be the input's w");
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return run<T, Pack>(blob, blob, opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    return run<T, Pack>(bottom, top, opt);
  }

 private:
  template <StorageElement T, int Pack>
  Status run(const Mat& bottom, const Mat& top, const Option& opt) const {
    const std::array<Shape, 1> in_shape{bottom.shape()};
    std::array<Shape, 1> out;
    if (ShapeCheck c = infer_shapes(in_shape, out); !c.ok())
      return make_error("LayerNorm: {} (affine_size {}, input {}x{}x{}, {} dims)", c.error,
                        affine_size, in_shape[0].w, in_shape[0].h, in_shape[0].c,
                        in_shape[0].dims);
    // Checked here, not in infer_shapes: a static graph plans before its weights are loaded.
    if (affine && (gamma_data.size() != std::size_t(affine_size) ||
                   beta_data.size() != std::size_t(affine_size)))
      return make_error("LayerNorm: gamma_data and beta_data must hold affine_size ({}) values "
                        "each, got {} and {}",
                        affine_size, gamma_data.size(), beta_data.size());
    const MatView<T, Pack> in = bottom.view<T, Pack>(), o = top.view<T, Pack>();
    if (in.dims == 1) {  // one run over the whole blob; 1-D packing is the plain layout
      normalize<T, 1>(in.data, o.data, std::size_t(in.w) * Pack);
      return {};
    }
    // Runs of `len` packed elements, Pack runs side by side in their lanes.
    const std::size_t len = std::size_t(affine_size);
    const int per_group = in.dims == 2 ? in.h : in.c;
    const std::size_t group_step = in.dims == 2 ? std::size_t(in.w) * Pack : in.cstep * Pack;
    const int runs_per_group = in.dims == 3 && affine_size == in.w ? in.h : 1;
    const int n = per_group * runs_per_group;
#pragma omp parallel for num_threads(opt.num_threads)
    for (int i = 0; i < n; ++i) {
      const std::size_t off =
          std::size_t(i / runs_per_group) * group_step + std::size_t(i % runs_per_group) * len * Pack;
      normalize<T, Pack>(in.data + off, o.data + off, len);
    }
    return {};
  }

  /// Normalizes `len` packed elements at x into y, each of the Pack lanes on its own. The sums
  /// run over R = 16 / Pack consecutive elements side by side (16 partial sums a lane group), so
  /// that the compiler keeps them in one vector instead of one serial chain of additions per lane
  /// (a pack-1 run of 768 took 4 cycles an element).
  template <StorageElement T, int Pack>
  void normalize(const T* x, T* y, std::size_t len) const {
    constexpr int R = Pack >= 16 ? 1 : 16 / Pack;
    auto lane_sums = [&](auto&& term) {
      float part[R][Pack] = {};
      std::size_t k = 0;
      for (; k + R <= len; k += R)
        for (int r = 0; r < R; ++r)
          for (int l = 0; l < Pack; ++l) part[r][l] += term((k + std::size_t(r)) * Pack + l, l);
      for (; k < len; ++k)
        for (int l = 0; l < Pack; ++l) part[0][l] += term(k * Pack + l, l);
      std::array<float, Pack> sum{};
      for (int r = 0; r < R; ++r)
        for (int l = 0; l < Pack; ++l) sum[l] += part[r][l];
      return sum;
    };
    std::array<float, Pack> mean = lane_sums([&](std::size_t i, int) { return to_f32(x[i]); });
    for (int l = 0; l < Pack; ++l) mean[l] /= float(len);
    const std::array<float, Pack> var = lane_sums([&](std::size_t i, int l) {
      const float d = to_f32(x[i]) - mean[l];
      return d * d;
    });
    float a[Pack];
    for (int l = 0; l < Pack; ++l) a[l] = 1.f / std::sqrt(var[l] / float(len) + eps);
    // The affine test outside the loop and the weights as plain pointers: with the test inside,
    // GCC kept this pass scalar (a 145 x 768 run: 67 us, 27 us as written here).
    const float* gamma = gamma_data.data();
    const float* beta = beta_data.data();
    if (affine) {
      for (std::size_t k = 0; k < len; ++k)
        for (int l = 0; l < Pack; ++l)
          y[k * Pack + l] =
              from_f32<T>((to_f32(x[k * Pack + l]) - mean[l]) * a[l] * gamma[k] + beta[k]);
    } else {
      for (std::size_t k = 0; k < len; ++k)
        for (int l = 0; l < Pack; ++l)
          y[k * Pack + l] = from_f32<T>((to_f32(x[k * Pack + l]) - mean[l]) * a[l]);
    }
  }
};

}  // namespace infer::layers
