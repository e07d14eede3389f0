// The forward bodies shared by the one-blob element-wise layers (activations, Dropout): apply a
// functor to every value of every channel, in place or into a new blob.
#pragma once

#include <infer/kernels/elementwise.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>

namespace infer::layers::detail {

template <StorageElement T, int Pack, class Op>
Status unary_inplace(Mat& blob, const Op& op, const Option& opt) {
  const MatView<T, Pack> v = blob.view<T, Pack>();
  const std::size_t n = v.channel_values();
#pragma omp parallel for num_threads(opt.num_threads)
  for (int q = 0; q < v.c; ++q) kernels::unary(v.channel(q), v.channel(q), n, op);
  return {};
}

template <StorageElement T, int Pack, class Op>
Status unary_forward(const Mat& bottom, Mat& top, const Op& op, const Option& opt) {
  INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
  const MatView<T, Pack> in = bottom.view<T, Pack>();
  const MatView<T, Pack> out = top.view<T, Pack>();
  const std::size_t n = in.channel_values();
#pragma omp parallel for num_threads(opt.num_threads)
  for (int q = 0; q < in.c; ++q) kernels::unary(in.channel(q), out.channel(q), n, op);
  return {};
}

}  // namespace infer::layers::detail
