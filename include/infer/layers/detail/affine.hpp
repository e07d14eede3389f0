// The forward body shared by BatchNorm, Scale and Bias: y = x * a[i] + b[i], where i indexes the
// packing axis (w for 1-D, h for 2-D, c for 3-D/4-D), as ncnn applies per-"channel" parameters.
#pragma once

#include <infer/kernels/activation.hpp>
#include <infer/kernels/elementwise.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>

namespace infer::layers::detail {

/// Writes bottom * a + b into top (top may be bottom). a and b hold one value per index of the
/// packing axis, or are nullptr (1 and 0).
template <StorageElement T, int Pack>
void per_axis_affine(const Mat& bottom, const Mat& top, const float* a, const float* b,
                     const Option& opt) {
  const MatView<T, Pack> in = bottom.view<T, Pack>();
  const MatView<T, Pack> out = top.view<T, Pack>();
  int groups = in.c;
  std::size_t n = std::size_t(in.w) * in.h * in.d, gstep = in.cstep * Pack;
  if (in.dims == 1) {
    groups = in.w;
    n = 1;
    gstep = Pack;
  } else if (in.dims == 2) {
    groups = in.h;
    n = in.w;
    gstep = std::size_t(in.w) * Pack;
  }
#pragma omp parallel for num_threads(opt.num_threads)
  for (int g = 0; g < groups; ++g) {
    const std::size_t o = std::size_t(g) * gstep;
    kernels::channel_affine<T, Pack>(in.data + o, out.data + o, n, a ? a + g * Pack : nullptr,
                                     b ? b + g * Pack : nullptr, act::Identity{});
  }
}

}  // namespace infer::layers::detail
