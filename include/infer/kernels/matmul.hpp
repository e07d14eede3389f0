// Row-major f32 matrix products for ncnn's Gemm and MultiHeadAttention: C = alpha (A B + c) with
// A an M x K matrix read row by row (any row stride), B either K x N or given transposed (N x K,
// a weight matrix as ncnn stores it), c nothing, a scalar, a value per row or column, or a whole
// M x N matrix. B is packed once into panels of kNR columns, k-major (constant weights at
// prepare, a dynamic operand per call); the register tile is kMR rows x two float batches of
// columns, FMAs over blocks of kKC values of k, a panel's block staying in L2 while the tiles
// run down A's rows. Panels spread over OpenMP threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <infer/simd.hpp>
#include <utility>
#include <vector>
#ifdef _OPENMP
#include <infer/detail/omp.hpp>
#endif

namespace infer::kernels::matmul {

/// Lanes of one accumulator: the widest native float batch (1: scalar code).
inline constexpr int kWidth = simd::max_width;
/// Columns of a B panel: two batches.
inline constexpr int kNR = 2 * kWidth;
/// Rows of a register tile: 2 x kMR accumulators, two B batches and a broadcast fit the register
/// file (16 ymm: 12 + 3; 32 zmm: 24 + 3).
inline constexpr int kMR = kWidth >= 16 ? 12 : kWidth >= 8 ? 6 : 4;
/// Values of k per block. Each block reloads and stores the C tile, and the hardware prefetchers
/// keep A's rows and the panel streaming from L2 even where a block of A outgrows it, so blocks
/// are long: on a Zen 4 core (one thread, best of 30) a 145 x 768 by 768 x 3072 product ran at
/// 99-104 GFLOP/s with blocks of 256, 109-112 with 768 and up; 145 x 3072 by 3072 x 768 at 83-95
/// and 101-103 with 1536 to 4096 (577 rows: 98-99 and 102-104). 2048 keeps a panel's block (256
/// KB) within L2.
inline constexpr int kKC = 2048;

/// Floats of B packed for N columns and K rows.
inline std::size_t packed_size(int n, int k) {
  return std::size_t((n + kNR - 1) / kNR) * std::size_t(k) * kNR;
}

/// Packs B into panels of kNR columns, each k-major (kNR values per k, zero past column N).
/// `transposed`: B is given as N x K (value (k, n) at b[n * ldb + k]); else K x N (b[k * ldb + n]).
inline void pack_b(const float* b, std::size_t ldb, bool transposed, int n, int k, float* dst) {
  const int panels = (n + kNR - 1) / kNR;
  for (int p = 0; p < panels; ++p) {
    float* d = dst + std::size_t(p) * std::size_t(k) * kNR;
    const int j0 = p * kNR, cols = std::min(kNR, n - j0);
    if (transposed) {
      for (int kk = 0; kk < k; ++kk) {
        float* row = d + std::size_t(kk) * kNR;
        for (int j = 0; j < cols; ++j) row[j] = b[std::size_t(j0 + j) * ldb + std::size_t(kk)];
        for (int j = cols; j < kNR; ++j) row[j] = 0.f;
      }
    } else {
      for (int kk = 0; kk < k; ++kk) {
        float* row = d + std::size_t(kk) * kNR;
        const float* src = b + std::size_t(kk) * ldb + std::size_t(j0);
        std::memcpy(row, src, std::size_t(cols) * sizeof(float));
        for (int j = cols; j < kNR; ++j) row[j] = 0.f;
      }
    }
  }
}

/// What is added to A B before the product with alpha (ncnn's broadcast types of C, beta
/// applied by the caller).
struct Addend {
  enum Kind { none, scalar, per_row, per_col, full };
  Kind kind = none;
  const float* c = nullptr;
  std::size_t ldc = 0;  ///< full: row stride
};

/// C (M x N, row stride ldc) = alpha (A B + addend) for B packed by pack_b. Runs on `threads`
/// OpenMP threads (1: the calling thread, for callers that are already parallel).
inline void gemm(const float* a, std::size_t lda, int m, int k, const float* bp, int n, float* c,
                 std::size_t ldc, const Addend& add, float alpha, int threads);

namespace detail {

/// One tile: rows [i0, i0 + R) x columns [j0, j0 + cols) over k in [k0, k0 + kc). The first
/// block starts from zero, later ones from C; the last adds the addend and scales.
template <int R>
inline void tile(const float* a, std::size_t lda, const float* bp, int kc, float* c,
                 std::size_t ldc, int i0, int j0, int cols, bool first, bool last,
                 const Addend& add, float alpha) {
  if constexpr (kWidth > 1) {
    using V = simd::fbatch<kWidth>;
    V acc[R][2];
    alignas(64) float tmp[kNR];
    for (int r = 0; r < R; ++r) {
      float* crow = c + std::size_t(i0 + r) * ldc + std::size_t(j0);
      if (first) {
        acc[r][0] = acc[r][1] = V(0.f);
      } else if (cols == kNR) {
        acc[r][0] = V::load_unaligned(crow);
        acc[r][1] = V::load_unaligned(crow + kWidth);
      } else {
        std::memcpy(tmp, crow, std::size_t(cols) * sizeof(float));
        acc[r][0] = V::load_aligned(tmp);
        acc[r][1] = V::load_aligned(tmp + kWidth);
      }
    }
    const float* arow = a + std::size_t(i0) * lda;
    for (int kk = 0; kk < kc; ++kk) {
      const V b0 = V::load_unaligned(bp + std::size_t(kk) * kNR);
      const V b1 = V::load_unaligned(bp + std::size_t(kk) * kNR + kWidth);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const V x(arow[std::size_t(r) * lda + std::size_t(kk)]);
        acc[r][0] = xsimd::fma(x, b0, acc[r][0]);
        acc[r][1] = xsimd::fma(x, b1, acc[r][1]);
      }
    }
    for (int r = 0; r < R; ++r) {
      const int i = i0 + r;
      V v0 = acc[r][0], v1 = acc[r][1];
      if (last) {
        switch (add.kind) {
          case Addend::none:
            break;
          case Addend::scalar:
            v0 += V(add.c[0]);
            v1 += V(add.c[0]);
            break;
          case Addend::per_row:
            v0 += V(add.c[i]);
            v1 += V(add.c[i]);
            break;
          case Addend::per_col:
          case Addend::full: {
            const float* src = add.kind == Addend::per_col
                                   ? add.c + j0
                                   : add.c + std::size_t(i) * add.ldc + std::size_t(j0);
            std::memcpy(tmp, src, std::size_t(cols) * sizeof(float));
            for (int j = cols; j < kNR; ++j) tmp[j] = 0.f;
            v0 += V::load_aligned(tmp);
            v1 += V::load_aligned(tmp + kWidth);
            break;
          }
        }
        if (alpha != 1.f) {
          v0 *= V(alpha);
          v1 *= V(alpha);
        }
      }
      float* crow = c + std::size_t(i) * ldc + std::size_t(j0);
      if (cols == kNR) {
        v0.store_unaligned(crow);
        v1.store_unaligned(crow + kWidth);
      } else {
        v0.store_aligned(tmp);
        v1.store_aligned(tmp + kWidth);
        std::memcpy(crow, tmp, std::size_t(cols) * sizeof(float));
      }
    }
  } else {
    for (int r = 0; r < R; ++r) {
      const int i = i0 + r;
      for (int j = 0; j < cols; ++j) {
        float s = first ? 0.f : c[std::size_t(i) * ldc + std::size_t(j0 + j)];
        for (int kk = 0; kk < kc; ++kk)
          s += a[std::size_t(i) * lda + std::size_t(kk)] *
               bp[std::size_t(kk) * kNR + std::size_t(j)];
        if (last) {
          if (add.kind == Addend::scalar) s += add.c[0];
          if (add.kind == Addend::per_row) s += add.c[i];
          if (add.kind == Addend::per_col) s += add.c[j0 + j];
          if (add.kind == Addend::full) s += add.c[std::size_t(i) * add.ldc + std::size_t(j0 + j)];
          s *= alpha;
        }
        c[std::size_t(i) * ldc + std::size_t(j0 + j)] = s;
      }
    }
  }
}

template <int... R>
inline void tile_rows(std::integer_sequence<int, R...>, int rows, const float* a, std::size_t lda,
                      const float* bp, int kc, float* c, std::size_t ldc, int i0, int j0, int cols,
                      bool first, bool last, const Addend& add, float alpha) {
  ((rows == R + 1 ? tile<R + 1>(a, lda, bp, kc, c, ldc, i0, j0, cols, first, last, add, alpha)
                  : void()),
   ...);
}

/// Panel p of B over every row of A, for k in [k0, k0 + kc).
inline void panel(const float* a, std::size_t lda, int m, int k, int k0, int kc, const float* bp,
                  int n, int p, float* c, std::size_t ldc, const Addend& add, float alpha) {
  const int j0 = p * kNR, cols = std::min(kNR, n - j0);
  const float* b = bp + (std::size_t(p) * std::size_t(k) + std::size_t(k0)) * kNR;
  const bool first = k0 == 0, last = k0 + kc >= k;
  for (int i0 = 0; i0 < m; i0 += kMR) {
    const int rows = std::min(kMR, m - i0);
    tile_rows(std::make_integer_sequence<int, kMR>{}, rows, a + k0, lda, b, kc, c, ldc, i0, j0,
              cols, first, last, add, alpha);
  }
}

}  // namespace detail

inline void gemm(const float* a, std::size_t lda, int m, int k, const float* bp, int n, float* c,
                 std::size_t ldc, const Addend& add, float alpha, int threads) {
  if (m <= 0 || n <= 0) return;
  const int panels = (n + kNR - 1) / kNR;
  if (k <= 0) {  // an empty sum: only the addend
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float s = 0.f;
        if (add.kind == Addend::scalar) s = add.c[0];
        if (add.kind == Addend::per_row) s = add.c[i];
        if (add.kind == Addend::per_col) s = add.c[j];
        if (add.kind == Addend::full) s = add.c[std::size_t(i) * add.ldc + std::size_t(j)];
        c[std::size_t(i) * ldc + std::size_t(j)] = s * alpha;
      }
    return;
  }
  for (int k0 = 0; k0 < k; k0 += kKC) {
    const int kc = std::min(kKC, k - k0);
    if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int p = 0; p < panels; ++p)
        detail::panel(a, lda, m, k, k0, kc, bp, n, p, c, ldc, add, alpha);
    } else {
      for (int p = 0; p < panels; ++p)
        detail::panel(a, lda, m, k, k0, kc, bp, n, p, c, ldc, add, alpha);
    }
  }
}

}  // namespace infer::kernels::matmul
