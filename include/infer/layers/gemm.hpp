// ncnn Gemm: Y = alpha (op(A) op(B) + beta C), op a transpose or not, each of A, B and C a blob or
// a constant stored with the weights. A is M x K (2-D, w = K; or 3-D of one row per channel), B is
// K x N (N x K with transB), C broadcasts as a scalar, a value per row (M or M x 1), per column
// (N or 1 x N) or a whole M x N matrix (ncnn's broadcast types 0..4, found from a blob's shape
// the way ncnn finds it). Y is N wide and M high (M wide and N high with output_transpose; 3-D
// with one row per channel with output_N1M). Computed by kernels/matmul.hpp, constant B packed
// into its panels at prepare. f32 storage, pack 1; ncnn's int8 forms (18=quantize_term) are
// refused.
#pragma once

#include <fmt/core.h>

#include <array>
#include <climits>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/kernels/matmul.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct Gemm {
  static constexpr std::string_view ncnn_type = "Gemm";  ///< its type in .param files
  float alpha = 1.f;                                     ///< ncnn 0=alpha
  float beta = 1.f;                                      ///< ncnn 1=beta
  int transA = 0;                                        ///< ncnn 2=transA
  int transB = 0;                                        ///< ncnn 3=transB
  int constantA = 0;  ///< ncnn 4=constantA: A stored with the weights
  int constantB = 0;  ///< ncnn 5=constantB
  int constantC = 0;  ///< ncnn 6=constantC
  int constantM = 0;  ///< ncnn 7=constantM
  int constantN = 0;  ///< ncnn 8=constantN
  int constantK = 0;  ///< ncnn 9=constantK
  int constant_broadcast_type_C =
      0;                          ///< ncnn 10: -1 none, 0 scalar, 1 M, 2 M x 1, 3 M x N, 4 1 x N
  int output_N1M = 0;             ///< ncnn 11=output_N1M: a 3-D output, one row per channel
  int output_transpose = 0;       ///< ncnn 14=output_transpose: Y transposed (M wide, N high)
  std::vector<float> A_data{};    ///< weights: M x K (K x M with transA) when constantA
  std::vector<float> B_data{};    ///< weights: K x N (N x K with transB) when constantB
  std::vector<float> C_data{};    ///< weights: by the broadcast type when constantC
  std::vector<float> packed_b{};  ///< B in kernels::matmul's panels (prepare)

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  Status load_param(io::ParamReader& r) {
    alpha = r.get(0, 1.f);
    beta = r.get(1, 1.f);
    transA = r.get(2, 0);
    transB = r.get(3, 0);
    constantA = r.get(4, 0);
    constantB = r.get(5, 0);
    constantC = r.get(6, 0);
    constantM = r.get(7, 0);
    constantN = r.get(8, 0);
    constantK = r.get(9, 0);
    constant_broadcast_type_C = r.get(10, 0);
    output_N1M = r.get(11, 0);
    (void)r.get(12, 0);  // output_elempack, output_elemtype: ncnn's storage hints, nothing to
    (void)r.get(13, 0);  // compute differently
    output_transpose = r.get(14, 0);
    if (r.get(18, 0) != 0) r.fail(18, "quantize_term (int8 Gemm) is not supported");
    for (int key : {20, 21, 22}) (void)r.get(key, 0);  // ncnn's tile sizes: hints
    const auto flag = [&](int key, int v, const char* name) {
      if (v != 0 && v != 1) r.fail(key, fmt::format("{} must be 0 or 1, got {}", name, v));
    };
    flag(2, transA, "transA");
    flag(3, transB, "transB");
    flag(4, constantA, "constantA");
    flag(5, constantB, "constantB");
    flag(6, constantC, "constantC");
    flag(11, output_N1M, "output_N1M");
    flag(14, output_transpose, "output_transpose");
    if (constantA && (constantM < 1 || constantK < 1))
      r.fail(4, "constantA needs constantM (7=) and constantK (9=) >= 1");
    if (constantB && (constantN < 1 || constantK < 1))
      r.fail(5, "constantB needs constantN (8=) and constantK (9=) >= 1");
    if (constantC && (constant_broadcast_type_C < -1 || constant_broadcast_type_C > 4))
      r.fail(10, fmt::format("constant_broadcast_type_C must be -1..4, got {}",
                             constant_broadcast_type_C));
    if (constantC &&
        (constant_broadcast_type_C == 1 || constant_broadcast_type_C == 2 ||
         constant_broadcast_type_C == 3) &&
        constantM < 1)
      r.fail(7, "a constant C of M rows needs constantM (7=) >= 1");
    if (constantC && (constant_broadcast_type_C == 3 || constant_broadcast_type_C == 4) &&
        constantN < 1)
      r.fail(8, "a constant C of N columns needs constantN (8=) >= 1");
    return {};
  }

  /// A (tagged), B (tagged), C (tagged), each when constant, in that order.
  Status load(io::ModelBin& mb) {
    auto get = [&](std::size_t n, const char* what, std::vector<float>& dst) -> Status {
      auto v = mb.load(n, io::WeightType::tagged);
      if (!v.ok()) return make_error("Gemm: {}: {}", what, v.message());
      dst = std::move(v).value();
      return {};
    };
    if (constantA)
      INFER_TRY(get(std::size_t(constantM) * std::size_t(constantK), "A_data", A_data));
    if (constantB)
      INFER_TRY(get(std::size_t(constantN) * std::size_t(constantK), "B_data", B_data));
    if (constantC && constant_broadcast_type_C != -1)
      INFER_TRY(get(c_count(constant_broadcast_type_C), "C_data", C_data));
    packed_b.clear();
    return {};
  }

  Status prepare(ElemType, int, const Option&) {
    if (!constantB) return {};
    if (B_data.size() != std::size_t(constantN) * std::size_t(constantK))
      return make_error("Gemm: B_data holds {} values, constantN x constantK is {}", B_data.size(),
                        std::size_t(constantN) * std::size_t(constantK));
    packed_b.resize(kernels::matmul::packed_size(constantN, constantK));
    kernels::matmul::pack_b(B_data.data(), std::size_t(transB ? constantK : constantN), transB == 1,
                            constantN, constantK, packed_b.data());
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    Dims d;
    if (ShapeCheck c = dims(in, d); !c.ok()) return c;
    const int w = output_transpose ? d.m : d.n, h = output_transpose ? d.n : d.m;
    out[0] = output_N1M ? Shape::of(w, 1, h) : Shape::of(w, h);
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (tops.size() != 1) return make_error("Gemm: gives 1 output, got {}", tops.size());
    SmallVector<Shape, 3> shapes;
    for (const Mat& m : bottoms) {
      if (!m.is<f32, 1>())
        return make_error("Gemm: an input is {}, expected f32 pack 1", m.describe());
      shapes.push_back(m.shape());
    }
    if (shapes.overflowed())
      return make_error("Gemm: takes at most 3 inputs, got {}", bottoms.size());
    const std::span<const Shape> in(shapes.data(), shapes.size());
    Dims d;
    if (ShapeCheck c = dims(in, d); !c.ok()) return make_error("Gemm: {}", c.error);
    std::array<Shape, 1> out_shape;
    (void)infer_shapes(in, out_shape);
    Mat& top = tops[0];
    INFER_TRY(top.create(out_shape[0], ElemType::f32, 1, opt.blob_alloc()));

    // Temporaries (a transposed A, B's panels, C times beta, a transposed output) come from the
    // workspace allocator.
    const auto scratch = [&](Mat& m, std::size_t floats) -> Status {
      if (floats > std::size_t(INT_MAX))
        return make_error("Gemm: a temporary of {} floats, past 2^31", floats);
      return m.create(Shape::of(int(floats)), ElemType::f32, 1, opt.workspace_alloc());
    };
    // A as M rows of K values.
    std::size_t input = 0;
    const float* a = nullptr;
    std::size_t lda = 0;
    Mat a_rows;
    if (constantA) {
      if (A_data.size() != std::size_t(d.m) * std::size_t(d.k))
        return make_error("Gemm: A_data holds {} values, expected {}", A_data.size(),
                          std::size_t(d.m) * std::size_t(d.k));
      a = A_data.data();
      lda = std::size_t(transA ? d.m : d.k);
    } else {
      const Mat& m = bottoms[input++];
      a = m.data_as<const float>();
      lda = m.dims() == 3 ? m.cstep() : std::size_t(m.w());
    }
    if (transA) {  // given K x M: rows of A are its columns
      INFER_TRY(scratch(a_rows, std::size_t(d.m) * std::size_t(d.k)));
      float* rows = a_rows.data_as<float>();
      for (int kk = 0; kk < d.k; ++kk)
        for (int i = 0; i < d.m; ++i)
          rows[std::size_t(i) * std::size_t(d.k) + std::size_t(kk)] =
              a[std::size_t(kk) * lda + std::size_t(i)];
      a = rows;
      lda = std::size_t(d.k);
    }
    // B in panels.
    Mat b_panels;
    const float* bp = packed_b.data();
    if (constantB) {
      if (packed_b.size() != kernels::matmul::packed_size(d.n, d.k))
        return make_error("Gemm: constant B is not prepared (call prepare() after load())");
    } else {
      const Mat& m = bottoms[input++];
      const std::size_t ldb = m.dims() == 3 ? m.cstep() : std::size_t(m.w());
      INFER_TRY(scratch(b_panels, kernels::matmul::packed_size(d.n, d.k)));
      kernels::matmul::pack_b(m.data_as<const float>(), ldb, transB == 1, d.n, d.k,
                              b_panels.data_as<float>());
      bp = b_panels.data_as<const float>();
    }
    // C, times beta.
    kernels::matmul::Addend add;
    Mat c_scaled;
    int type = -1;
    const float* c = nullptr;
    std::size_t ldc_c = std::size_t(d.n);
    if (constantC) {
      type = constant_broadcast_type_C;
      c = C_data.data();
      if (type != -1 && C_data.size() != c_count(type, d.m, d.n))
        return make_error("Gemm: C_data holds {} values, broadcast type {} needs {}", C_data.size(),
                          type, c_count(type, d.m, d.n));
    } else if (input < bottoms.size()) {
      const Mat& m = bottoms[input];
      type = d.c_type;
      c = m.data_as<const float>();
      if (m.dims() == 2) ldc_c = std::size_t(m.w());
    }
    if (type != -1 && c) {
      const std::size_t n = type == 3 ? std::size_t(d.m) * ldc_c : c_count(type, d.m, d.n);
      if (beta != 1.f) {
        INFER_TRY(scratch(c_scaled, n));
        float* scaled = c_scaled.data_as<float>();
        for (std::size_t i = 0; i < n; ++i) scaled[i] = c[i] * beta;
        c = scaled;
      }
      add.c = c;
      add.ldc = ldc_c;
      add.kind = type == 0   ? kernels::matmul::Addend::scalar
                 : type <= 2 ? kernels::matmul::Addend::per_row
                 : type == 3 ? kernels::matmul::Addend::full
                             : kernels::matmul::Addend::per_col;
    }
    const int threads = opt.num_threads;
    float* y = top.data_as<float>();
    const std::size_t ldy = top.dims() == 3 ? top.cstep() : std::size_t(top.w());
    if (!output_transpose) {
      kernels::matmul::gemm(a, lda, d.m, d.k, bp, d.n, y, ldy, add, alpha, threads);
      return {};
    }
    Mat transposed;
    INFER_TRY(scratch(transposed, std::size_t(d.m) * std::size_t(d.n)));
    const float* t = transposed.data_as<const float>();
    kernels::matmul::gemm(a, lda, d.m, d.k, bp, d.n, transposed.data_as<float>(), std::size_t(d.n),
                          add, alpha, threads);
    for (int i = 0; i < d.m; ++i)
      for (int j = 0; j < d.n; ++j)
        y[std::size_t(j) * ldy + std::size_t(i)] =
            t[std::size_t(i) * std::size_t(d.n) + std::size_t(j)];
    return {};
  }

 private:
  struct Dims {
    int m = 0, n = 0, k = 0;
    int c_type = -1;  ///< a C blob's broadcast type, -1 without one
  };

  static constexpr std::size_t c_count(int type, int m, int n) {
    return type == 0                ? 1
           : type == 1 || type == 2 ? std::size_t(m)
           : type == 3              ? std::size_t(m) * n
                                    : std::size_t(n);
  }
  constexpr std::size_t c_count(int type) const { return c_count(type, constantM, constantN); }

  /// Rows and columns of a 2-D blob, or of a 3-D blob of one row per channel (ncnn's forms).
  static constexpr bool matrix(const Shape& s, int& rows, int& cols) {
    if (s.dims == 2) {
      rows = s.h;
      cols = s.w;
      return true;
    }
    if (s.dims == 3 && s.h == 1) {
      rows = s.c;
      cols = s.w;
      return true;
    }
    return false;
  }

  /// M, N, K from the inputs and constants, checked against each other.
  constexpr ShapeCheck dims(std::span<const Shape> in, Dims& d) const {
    const std::size_t need = std::size_t(!constantA) + std::size_t(!constantB);
    if (in.size() < need || in.size() > need + (constantC ? 0 : 1))
      return shape_error("takes one input per operand that is not constant (A, B, then C)");
    std::size_t i = 0;
    int ka = 0;
    if (constantA) {
      d.m = constantM;
      ka = constantK;
    } else {
      int rows = 0, cols = 0;
      if (!matrix(in[i++], rows, cols))
        return shape_error("A must be 2-D (or 3-D of one row per channel)");
      d.m = transA ? cols : rows;
      ka = transA ? rows : cols;
    }
    int kb = 0;
    if (constantB) {
      d.n = constantN;
      kb = constantK;
    } else {
      int rows = 0, cols = 0;
      if (!matrix(in[i++], rows, cols))
        return shape_error("B must be 2-D (or 3-D of one row per channel)");
      d.n = transB ? rows : cols;
      kb = transB ? cols : rows;
    }
    if (ka != kb) return shape_error("A's K and B's K differ");
    d.k = ka;
    if (constantA && constantB && (constantM < 1 || constantN < 1))
      return shape_error("constant A and B need constantM and constantN");
    if (!constantC && i < in.size()) {
      const Shape& c = in[i];
      // ncnn's order of tests: a later match wins.
      int t = -1;
      if (c.dims == 1 && c.w == 1) t = 0;
      if (c.dims == 1 && c.w == d.m) t = 1;
      if (c.dims == 1 && c.w == d.n) t = 4;
      if (c.dims == 2 && c.w == 1 && c.h == d.m) t = 2;
      if (c.dims == 2 && c.w == d.n && c.h == d.m) t = 3;
      if (c.dims == 2 && c.w == d.n && c.h == 1) t = 4;
      if (t < 0) return shape_error("C must be a scalar, M, M x 1, 1 x N, N or M x N");
      d.c_type = t;
    }
    if (constantC && constant_broadcast_type_C != -1) {
      if (constant_broadcast_type_C >= 1 && constant_broadcast_type_C <= 3 && constantM != d.m)
        return shape_error("a constant C of constantM rows needs A of constantM rows");
      if ((constant_broadcast_type_C == 3 || constant_broadcast_type_C == 4) && constantN != d.n)
        return shape_error("a constant C of constantN columns needs B of constantN columns");
    }
    if (d.m < 1 || d.n < 1) return shape_error("M and N must be >= 1");
    return {};
  }
};

}  // namespace infer::layers
