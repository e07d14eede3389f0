// Fully-connected kernels (ncnn InnerProduct): a matrix-vector product vectorized across output
// channels, and the batch-of-rows form vectorized across the rows a packed 2-D blob interleaves.
// Direct loops; blocked GEMM versions come later.
#pragma once

#include <cstddef>
#include <infer/element.hpp>
#include <infer/simd.hpp>

namespace infer::kernels {

namespace innerproduct_detail {

/// W lanes of float: a batch, or a plain float for W = 1, with the few operations the kernels use.
template <int W>
struct Lanes {
  using V = simd::fbatch<W>;
  static V splat(float v) { return simd::broadcast<W>(v); }
  template <StorageElement T>
  static V load(const T* p) {
    return simd::load<W>(p);
  }
  template <StorageElement T>
  static void store(T* p, V v) {
    simd::store<W>(p, v);
  }
  static V madd(V a, V b, V c) { return xsimd::fma(a, b, c); }
};
template <>
struct Lanes<1> {
  using V = float;
  static V splat(float v) { return v; }
  template <StorageElement T>
  static V load(const T* p) {
    return to_f32(*p);
  }
  template <StorageElement T>
  static void store(T* p, V v) {
    *p = from_f32<T>(v);
  }
  static V madd(V a, V b, V c) { return a * b + c; }
};

/// The register width that serves Pack lanes: Pack itself, or the widest native batch below it.
template <int Pack>
inline constexpr int lane_width = Pack < simd::max_width ? Pack : simd::max_width;

/// Multiply-adds below which a call stays on one thread (thread start-up would cost more).
inline constexpr std::size_t kParallelWork = std::size_t(1) << 15;

}  // namespace innerproduct_detail

/// out[o] = act(bias[o] + sum_k x[k] * w[o][k]) for num_output outputs (a multiple of OutPack),
/// written as 1-D packed output (which is the plain layout). `weights` are laid out as
/// [o / OutPack][k][o % OutPack]; `bias` may be null.
template <StorageElement T,  ///< storage type of the output; arithmetic is f32
          int OutPack,       ///< output channels computed together
          class Act>         ///< act:: functor applied to the accumulators before the store
void innerproduct(const float* x, int num_input, const float* weights, const float* bias, T* out,
                  int num_output, const Act& act, int num_threads) {
  constexpr int W = innerproduct_detail::lane_width<OutPack>;
  constexpr int kParts = OutPack / W;
  using L = innerproduct_detail::Lanes<W>;
  using V = typename L::V;
  const int blocks = num_output / OutPack;
  const std::size_t work = std::size_t(num_output) * num_input;
#pragma omp parallel for num_threads(num_threads) if (work > innerproduct_detail::kParallelWork)
  for (int b = 0; b < blocks; ++b) {
    const float* wb = weights + std::size_t(b) * num_input * OutPack;
    V acc[kParts];
    for (int p = 0; p < kParts; ++p)
      acc[p] = bias ? L::load(bias + b * OutPack + p * W) : L::splat(0.f);
    for (int k = 0; k < num_input; ++k) {
      const V v = L::splat(x[k]);
      for (int p = 0; p < kParts; ++p)
        acc[p] = L::madd(v, L::load(wb + std::size_t(k) * OutPack + p * W), acc[p]);
    }
    for (int p = 0; p < kParts; ++p) L::store(out + b * OutPack + p * W, act(acc[p]));
  }
}

/// ncnn's batch-of-rows form: out[r][o] = act(bias[o] + sum_k in[r][k] * w[o][k]) for a 2-D input
/// of num_input columns whose rows are packed by Pack (row group j, column k, lane l holds row
/// j * Pack + l), giving a 2-D output of num_output columns packed the same way. `weights` are
/// ncnn's [o][k]; `bias` may be null.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< rows interleaved in each packed element, in and out
          class Act>         ///< act:: functor applied to the accumulators before the store
void innerproduct_rows(const T* in, int num_input, int row_groups, const float* weights,
                       const float* bias, T* out, int num_output, const Act& act, int num_threads) {
  constexpr int W = innerproduct_detail::lane_width<Pack>;
  constexpr int kParts = Pack / W;
  using L = innerproduct_detail::Lanes<W>;
  using V = typename L::V;
  const std::size_t work = std::size_t(row_groups) * Pack * num_output * num_input;
#pragma omp parallel for num_threads(num_threads) if (work > innerproduct_detail::kParallelWork)
  for (int j = 0; j < row_groups; ++j) {
    const T* src = in + std::size_t(j) * num_input * Pack;
    T* dst = out + std::size_t(j) * num_output * Pack;
    for (int o = 0; o < num_output; ++o) {
      const float* wo = weights + std::size_t(o) * num_input;
      V acc[kParts];
      for (int p = 0; p < kParts; ++p) acc[p] = L::splat(bias ? bias[o] : 0.f);
      for (int k = 0; k < num_input; ++k) {
        const V wv = L::splat(wo[k]);
        for (int p = 0; p < kParts; ++p)
          acc[p] = L::madd(L::load(src + std::size_t(k) * Pack + p * W), wv, acc[p]);
      }
      for (int p = 0; p < kParts; ++p) L::store(dst + o * Pack + p * W, act(acc[p]));
    }
  }
}

}  // namespace infer::kernels
