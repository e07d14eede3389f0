// Fully-connected kernels (ncnn InnerProduct): a matrix-vector product vectorized across output
// channels on weights repacked into blocks of the vector width, and the batch-of-rows form
// vectorized across the rows a packed 2-D blob interleaves (a direct loop; a blocked GEMM comes
// later).
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

/// Multiply-adds below which a call stays on one thread (thread start-up would cost more).
inline constexpr std::size_t kParallelWork = std::size_t(1) << 15;

}  // namespace innerproduct_detail

/// Output channels per weight block of the matrix-vector kernel: the widest native batch, whatever
/// the blob pack (the 1-D output's packed layout is the plain one, so the pack does not matter).
inline constexpr int gemv_block = simd::max_width;

/// Weight blocks the GEMM tile spans: two where the registers hold two blocks of accumulators
/// (32 of AVX-512), else one.
inline constexpr int gemm_blocks = gemv_block >= 16 ? 2 : 1;

/// Blocks of the repacked weights: enough for num_output, rounded up to whole GEMM tiles.
constexpr std::size_t gemv_blocks(int num_output) {
  const std::size_t blocks = std::size_t((num_output + gemv_block - 1) / gemv_block);
  return (blocks + gemm_blocks - 1) / gemm_blocks * gemm_blocks;
}

/// Size of the repacked weights (gemv_pack_weights) of num_input x num_output; with num_input 1,
/// the size of the padded bias.
constexpr std::size_t gemv_packed_size(int num_input, int num_output) {
  return gemv_blocks(num_output) * gemv_block * std::size_t(num_input);
}

/// Repacks ncnn's [o][k] weights to innerproduct_gemv's [o / B][k][o % B] (B = gemv_block), padded
/// with zeros to gemv_blocks(num_output) blocks: each block is one unit-stride stream of B-wide
/// rows.
inline void gemv_pack_weights(const float* w, int num_input, int num_output, float* packed) {
  constexpr std::size_t B = gemv_block;
  const std::size_t n = std::size_t(num_input), m = std::size_t(num_output);
  const std::size_t blocks = gemv_blocks(num_output);
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t l = 0; l < B; ++l) {
        const std::size_t o = b * B + l;
        packed[(b * n + k) * B + l] = o < m ? w[o * n + k] : 0.f;
      }
}

/// out[o] = act(bias[o] + sum_k x[k] * w[o][k]) for o < num_output: the matrix-vector product of
/// a batch of one, which streams every weight once and so is bound by memory bandwidth. Each block
/// of gemv_block outputs reads its weights (from gemv_pack_weights) as one unit-stride stream, k
/// split over independent accumulators so FMA latency never stalls the loads; bias and activation
/// are applied in registers before the store. `bias` is null or holds num_output values padded
/// with zeros to a whole block. Weights f32, or f16 (converted as they load: half the bytes).
template <StorageElement T,   ///< storage type of the output; arithmetic is f32
          class Act,          ///< act:: functor applied to the accumulators before the store
          StorageElement Wt>  ///< the weights' element type: f32 or f16
void innerproduct_gemv(const float* x, int num_input, const Wt* weights, const float* bias,
                       T* out, int num_output, const Act& act, int num_threads) {
  constexpr int B = gemv_block;
  /// Independent FMA chains over k: enough to cover FMA latency at one weight load per FMA.
  constexpr int kChains = 4;
  using L = innerproduct_detail::Lanes<B>;
  using V = typename L::V;
  const int blocks = (num_output + B - 1) / B;
  const std::size_t work = std::size_t(num_output) * num_input;
#pragma omp parallel for num_threads(num_threads) if (work > innerproduct_detail::kParallelWork)
  for (int b = 0; b < blocks; ++b) {
    const Wt* w = weights + std::size_t(b) * num_input * B;
    V acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = L::splat(0.f);
    int k = 0;
    for (; k + kChains <= num_input; k += kChains, w += kChains * B)
      for (int c = 0; c < kChains; ++c)
        acc[c] = L::madd(L::splat(x[k + c]), L::load(w + c * B), acc[c]);
    for (; k < num_input; ++k, w += B) acc[0] = L::madd(L::splat(x[k]), L::load(w), acc[0]);
    V sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if (bias) sum = sum + L::load(bias + std::size_t(b) * B);
    sum = act(sum);
    if ((b + 1) * B <= num_output) {
      L::store(out + std::size_t(b) * B, sum);
    } else {  // the last, partial block
      alignas(64) float tail[B];
      L::store(tail, sum);
      for (int l = 0; b * B + l < num_output; ++l) out[b * B + l] = from_f32<T>(tail[l]);
    }
  }
}

/// ncnn's batch-of-rows form as a GEMM: out[r][o] = act(bias[o] + sum_k in[r][k] * w[o][k]) for
/// `rows` rows of a 2-D input of num_input columns whose rows are packed by Pack (row group j,
/// column k, lane l holds row j * Pack + l), giving a 2-D output of num_output columns packed the
/// same way. `weights` and `bias` are innerproduct_gemv's (gemv_pack_weights; bias null or padded).
/// A tile of kRows rows times gemm_blocks blocks of gemv_block outputs is held in registers: each
/// input value loaded serves gemm_blocks FMAs and each weight row kRows, and the blocks' weights
/// stay in cache while every row tile of the batch passes by. The tile's results leave through a
/// small buffer, since an output row's channels lie Pack apart.
template <StorageElement T,  ///< storage type of input and output; arithmetic is f32
          int Pack,          ///< rows interleaved in each packed element, in and out
          class Act>         ///< act:: functor applied to the accumulators before the store
void innerproduct_gemm(const T* in, int num_input, int rows, const float* weights,
                       const float* bias, T* out, int num_output, const Act& act, int num_threads) {
  constexpr int B = gemv_block;
  constexpr int kCols = gemm_blocks;
  /// Rows per register tile: kRows x kCols accumulators of B lanes, with room for the weights.
  constexpr int kRows = 8;
  using L = innerproduct_detail::Lanes<B>;
  using V = typename L::V;
  const int panels = int(gemv_blocks(num_output)) / kCols;
  const int tiles = (rows + kRows - 1) / kRows;
  const std::size_t n = std::size_t(num_input), m = std::size_t(num_output);
  const std::size_t work = std::size_t(rows) * m * n;
  // Element (row r, column k) of the packed input, and (r, o) of the output, lie at
  // row_offset(r, n) + k * Pack and row_offset(r, m) + o * Pack.
  auto row_offset = [](std::size_t r, std::size_t cols) {
    return (r / Pack) * cols * Pack + r % Pack;
  };
#pragma omp parallel for collapse(2) \
    num_threads(num_threads) if (work > innerproduct_detail::kParallelWork)
  for (int p = 0; p < panels; ++p) {
    for (int t = 0; t < tiles; ++t) {
      const float* w = weights + std::size_t(p) * kCols * n * B;
      const int r0 = t * kRows;
      const int live = rows - r0 < kRows ? rows - r0 : kRows;
      const T* src[kRows];
      // Rows past the end repeat the last row: computed, never stored.
      for (int i = 0; i < kRows; ++i)
        src[i] = in + row_offset(std::size_t(r0 + (i < live ? i : live - 1)), n);
      V acc[kRows][kCols];
      for (int i = 0; i < kRows; ++i)
        for (int c = 0; c < kCols; ++c) acc[i][c] = L::splat(0.f);
      for (std::size_t k = 0; k < n; ++k, w += B) {
        V wk[kCols];
        for (int c = 0; c < kCols; ++c) wk[c] = L::load(w + c * n * B);
        for (int i = 0; i < kRows; ++i) {
          const V xi = L::splat(to_f32(src[i][k * Pack]));
          for (int c = 0; c < kCols; ++c) acc[i][c] = L::madd(xi, wk[c], acc[i][c]);
        }
      }
      for (int c = 0; c < kCols; ++c) {
        const int o0 = (p * kCols + c) * B;
        const int outs = num_output - o0 < B ? num_output - o0 : B;
        if (outs <= 0) break;  // a padding block
        const V bv = bias ? L::load(bias + o0) : L::splat(0.f);
        for (int i = 0; i < live; ++i) {
          alignas(64) float tile[B];
          L::store(tile, act(acc[i][c] + bv));
          T* dst = out + row_offset(std::size_t(r0 + i), m) + std::size_t(o0) * Pack;
          for (int l = 0; l < outs; ++l) dst[std::size_t(l) * Pack] = from_f32<T>(tile[l]);
        }
      }
    }
  }
}

}  // namespace infer::kernels
