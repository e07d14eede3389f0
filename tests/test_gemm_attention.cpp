// Gemm and MultiHeadAttention against scalar references written here in double, on sizes that
// are not multiples of the kernel's tile (rows, panel columns, k blocks): every operand constant or
// a blob, transposes, the six broadcast forms of C, alpha and beta, output_transpose and
// output_N1M; attention with one, two and three inputs, kdim / vdim / qdim other than embed_dim,
// 2-D and per-head masks; at 1 and 2 threads. Then their keys as ncnn writes them and what is
// refused.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/allocator.hpp>
#include <infer/io/param.hpp>
#include <infer/layers/gemm.hpp>
#include <infer/layers/multi_head_attention.hpp>
#include <infer/net.hpp>
#include <random>
#include <vector>

#include "support/heap_count.hpp"
#include "support/random_values.hpp"
#include "support/ref_tensor.hpp"

using infer::Mat;
using infer::Shape;
using infer::layers::Gemm;
using infer::layers::MultiHeadAttention;
using infer::test::mat_of;
using infer::test::RefTensor;
using infer::test::uniform;

namespace {

/// Runs `l` (prepared) on `in` at 1 and 2 threads; checks each result against `want` (logical
/// values, row-major) within 1e-5 of its largest magnitude, and that a second forward takes its
/// output and temporaries from the allocators the first filled: no heap allocation.
template <class L>
void check(L l, const std::vector<Mat>& in, const Shape& shape, const std::vector<double>& want) {
  for (int threads : {1, 2}) {
    infer::PoolAllocator blobs, workspace;
    infer::Option opt;
    opt.num_threads = threads;
    opt.blob_allocator = &blobs;
    opt.workspace_allocator = &workspace;
    REQUIRE(l.prepare(infer::ElemType::f32, 1, opt).ok());
    std::vector<Mat> tops(1);
    const infer::Status st = l.template forward<infer::f32, 1>(std::span<const Mat>(in), tops, opt);
    INFO("threads " << threads << ": " << (st.ok() ? std::string("ok") : st.message()));
    REQUIRE(st.ok());
    const std::size_t heap = infer::test::heap_allocations();
    REQUIRE(l.template forward<infer::f32, 1>(std::span<const Mat>(in), tops, opt).ok());
    CHECK(infer::test::heap_allocations() == heap);
    const RefTensor got = infer::test::from_mat(tops[0]);
    REQUIRE(got.shape == shape);
    REQUIRE(got.v.size() == want.size());
    double peak = 0, diff = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      peak = std::max(peak, std::fabs(want[i]));
      diff = std::max(diff, std::fabs(got.v[i] - want[i]));
    }
    INFO("largest difference " << diff << " of " << peak);
    CHECK(diff <= 1e-5 * std::max(peak, 1.0));
  }
}

// ---- Gemm ----

/// ncnn's Gemm in double: op(A) is M x K, op(B) K x N, C by broadcast type (or none: -1).
std::vector<double> gemm_ref(const std::vector<float>& a, bool ta, const std::vector<float>& b,
                             bool tb, int m, int n, int k, const std::vector<float>& c, int ctype,
                             double alpha, double beta, bool out_t) {
  std::vector<double> y(std::size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double av = ta ? a[std::size_t(kk) * m + i] : a[std::size_t(i) * k + kk];
        const double bv = tb ? b[std::size_t(j) * k + kk] : b[std::size_t(kk) * n + j];
        s += av * bv;
      }
      double cv = 0;
      if (ctype == 0) cv = c[0];
      if (ctype == 1 || ctype == 2) cv = c[std::size_t(i)];
      if (ctype == 3) cv = c[std::size_t(i) * n + j];
      if (ctype == 4) cv = c[std::size_t(j)];
      const double v = alpha * (s + beta * cv);
      if (out_t)
        y[std::size_t(j) * m + i] = v;
      else
        y[std::size_t(i) * n + j] = v;
    }
  return y;
}

std::size_t c_count(int ctype, int m, int n) {
  return ctype == 0                 ? 1
         : ctype == 1 || ctype == 2 ? std::size_t(m)
         : ctype == 3               ? std::size_t(m) * n
                                    : std::size_t(n);
}

/// The C blob of broadcast type `ctype` as ncnn recognizes it (1-D for 0, 1 and one form of 4).
Shape c_shape(int ctype, int m, int n, bool one_d_n) {
  switch (ctype) {
    case 0:
      return Shape::of(1);
    case 1:
      return Shape::of(m);
    case 2:
      return Shape::of(1, m);
    case 3:
      return Shape::of(n, m);
    default:
      return one_d_n ? Shape::of(n) : Shape::of(n, 1);
  }
}

}  // namespace

TEST_CASE("Gemm: constant B and C (the transformer's form) against the reference", "[gemm]") {
  // The last K spans two of the kernel's k blocks (kernels::matmul::kKC).
  const std::array<std::array<int, 3>, 5> sizes{
      {{37, 45, 70}, {1, 1, 1}, {13, 33, 300}, {145, 100, 257}, {14, 35, 2100}}};
  for (auto [m, n, k] : sizes) {
    CAPTURE(m, n, k);
    Gemm l;
    l.transB = 1;
    l.constantB = 1;
    l.constantC = 1;
    l.constantN = n;
    l.constantK = k;
    l.constant_broadcast_type_C = 4;
    l.B_data = uniform(std::size_t(n) * k, -1.f, 1.f, 1);
    l.C_data = uniform(std::size_t(n), -1.f, 1.f, 2);
    const std::vector<float> a = uniform(std::size_t(m) * k, -1.f, 1.f, 3);
    check(l, {mat_of(Shape::of(k, m), a)}, Shape::of(n, m),
          gemm_ref(a, false, l.B_data, true, m, n, k, l.C_data, 4, 1, 1, false));
  }
}

TEST_CASE("Gemm: blob operands, transposes, every broadcast of C, alpha and beta", "[gemm]") {
  const int m = 11, n = 35, k = 19;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (int ctype : {-1, 0, 1, 2, 3, 4}) {
        CAPTURE(ta, tb, ctype);
        Gemm l;
        l.transA = ta;
        l.transB = tb;
        l.alpha = 0.75f;
        l.beta = -1.5f;
        const std::vector<float> a = uniform(std::size_t(m) * k, -1.f, 1.f, 4);
        const std::vector<float> b = uniform(std::size_t(k) * n, -1.f, 1.f, 5);
        const std::vector<float> c = uniform(c_count(ctype < 0 ? 0 : ctype, m, n), -1.f, 1.f, 6);
        std::vector<Mat> in{mat_of(ta ? Shape::of(m, k) : Shape::of(k, m), a),
                            mat_of(tb ? Shape::of(k, n) : Shape::of(n, k), b)};
        if (ctype >= 0) in.push_back(mat_of(c_shape(ctype, m, n, tb == 1), c));
        check(l, in, Shape::of(n, m), gemm_ref(a, ta, b, tb, m, n, k, c, ctype, 0.75, -1.5, false));
      }
}

TEST_CASE("Gemm: constant A, output_transpose and output_N1M", "[gemm]") {
  const int m = 9, n = 21, k = 17;
  Gemm l;
  l.constantA = 1;
  l.constantM = m;
  l.constantK = k;
  l.A_data = uniform(std::size_t(m) * k, -1.f, 1.f, 7);
  const std::vector<float> b = uniform(std::size_t(k) * n, -1.f, 1.f, 8);
  const std::vector<Mat> in{mat_of(Shape::of(n, k), b)};
  check(l, in, Shape::of(n, m), gemm_ref(l.A_data, false, b, false, m, n, k, {}, -1, 1, 1, false));
  l.output_transpose = 1;
  check(l, in, Shape::of(m, n), gemm_ref(l.A_data, false, b, false, m, n, k, {}, -1, 1, 1, true));
  l.output_transpose = 0;
  l.output_N1M = 1;
  check(l, in, Shape::of(n, 1, m),
        gemm_ref(l.A_data, false, b, false, m, n, k, {}, -1, 1, 1, false));
  // A 3-D blob of one row per channel is an M x K matrix too.
  Gemm d;
  const std::vector<float> a = uniform(std::size_t(m) * k, -1.f, 1.f, 9);
  check(d, {mat_of(Shape::of(k, 1, m), a), mat_of(Shape::of(n, k), b)}, Shape::of(n, m),
        gemm_ref(a, false, b, false, m, n, k, {}, -1, 1, 1, false));
}

TEST_CASE("Gemm: shapes that do not fit and forms that are not supported", "[gemm]") {
  Gemm l;
  std::vector<Shape> in{Shape::of(5, 3), Shape::of(4, 6)}, out(1);
  CHECK_THAT(l.infer_shapes(in, out).error, Catch::Contains("A's K and B's K differ"));
  in = {Shape::of(5, 3), Shape::of(4, 5), Shape::of(7)};
  CHECK_THAT(l.infer_shapes(in, out).error, Catch::Contains("C must be a scalar"));
  infer::Net net;
  const infer::Status st = net.load_param_text(
      "7767517\n2 2\nInput in 0 1 data 0=4 1=4\nGemm g 1 1 data out 3=1 5=1 8=4 9=4 18=2\n",
      "g.param");
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("quantize_term (int8 Gemm) is not supported"));
}

namespace {

// ---- MultiHeadAttention ----

struct Attention {
  int embed, heads, qdim, kdim, vdim;
};

MultiHeadAttention attention(const Attention& a, unsigned seed) {
  MultiHeadAttention l;
  l.embed_dim = a.embed;
  l.num_heads = a.heads;
  l.weight_data_size = a.embed * a.qdim;
  l.kdim = a.kdim;
  l.vdim = a.vdim;
  l.scale = 1.f / std::sqrt(float(a.embed / a.heads));
  const std::size_t e = std::size_t(a.embed);
  l.q_weight_data = uniform(e * a.qdim, -0.5f, 0.5f, seed);
  l.q_bias_data = uniform(e, -0.1f, 0.1f, seed + 1);
  l.k_weight_data = uniform(e * a.kdim, -0.5f, 0.5f, seed + 2);
  l.k_bias_data = uniform(e, -0.1f, 0.1f, seed + 3);
  l.v_weight_data = uniform(e * a.vdim, -0.5f, 0.5f, seed + 4);
  l.v_bias_data = uniform(e, -0.1f, 0.1f, seed + 5);
  l.out_weight_data = uniform(std::size_t(a.qdim) * e, -0.5f, 0.5f, seed + 6);
  l.out_bias_data = uniform(std::size_t(a.qdim), -0.1f, 0.1f, seed + 7);
  return l;
}

/// y = x W^T + b for x of n rows of `in` values, W of `out` rows.
std::vector<double> project(const std::vector<float>& x, int n, int in, const std::vector<float>& w,
                            const std::vector<float>& b, int out) {
  std::vector<double> y(std::size_t(n) * out);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < out; ++j) {
      double s = b[std::size_t(j)];
      for (int k = 0; k < in; ++k)
        s += double(x[std::size_t(i) * in + k]) * w[std::size_t(j) * in + k];
      y[std::size_t(i) * out + j] = s;
    }
  return y;
}

std::vector<double> attention_ref(const MultiHeadAttention& l, const std::vector<float>& q, int src,
                                  const std::vector<float>& k, const std::vector<float>& v, int dst,
                                  const std::vector<float>* mask, bool mask_per_head) {
  const int e = l.embed_dim, d = e / l.num_heads, qd = l.qdim();
  std::vector<double> qa = project(q, src, qd, l.q_weight_data, l.q_bias_data, e);
  for (double& x : qa) x *= l.scale;
  const std::vector<double> ka = project(k, dst, l.kdim, l.k_weight_data, l.k_bias_data, e);
  const std::vector<double> va = project(v, dst, l.vdim, l.v_weight_data, l.v_bias_data, e);
  std::vector<float> o(std::size_t(src) * e);
  for (int h = 0; h < l.num_heads; ++h)
    for (int i = 0; i < src; ++i) {
      std::vector<double> s(static_cast<std::size_t>(dst));
      double mx = -1e300;
      for (int j = 0; j < dst; ++j) {
        double t = 0;
        for (int c = 0; c < d; ++c)
          t += qa[std::size_t(i) * e + h * d + c] * ka[std::size_t(j) * e + h * d + c];
        if (mask)
          t += (*mask)[(mask_per_head ? std::size_t(h) * src * dst : 0) + std::size_t(i) * dst + j];
        s[std::size_t(j)] = t;
        mx = std::max(mx, t);
      }
      double sum = 0;
      for (double& t : s) sum += (t = std::exp(t - mx));
      for (int c = 0; c < d; ++c) {
        double acc = 0;
        for (int j = 0; j < dst; ++j)
          acc += s[std::size_t(j)] / sum * va[std::size_t(j) * e + h * d + c];
        o[std::size_t(i) * e + h * d + c] = float(acc);
      }
    }
  // The output projection in double from o rounded to float: o's rounding is far below 1e-5.
  return project(o, src, e, l.out_weight_data, l.out_bias_data, qd);
}

}  // namespace

TEST_CASE("MultiHeadAttention against the reference", "[attention]") {
  SECTION("self-attention, one input") {
    const Attention a{48, 4, 48, 48, 48};
    const MultiHeadAttention l = attention(a, 10);
    const int src = 23;
    const std::vector<float> x = uniform(std::size_t(src) * 48, -1.f, 1.f, 20);
    check(l, {mat_of(Shape::of(48, src), x)}, Shape::of(48, src),
          attention_ref(l, x, src, x, x, src, nullptr, false));
  }
  SECTION("query and key-value inputs, kdim = vdim != embed_dim, qdim != embed_dim") {
    const Attention a{24, 3, 20, 12, 12};
    const MultiHeadAttention l = attention(a, 30);
    const int src = 5, dst = 37;
    const std::vector<float> q = uniform(std::size_t(src) * 20, -1.f, 1.f, 21);
    const std::vector<float> kv = uniform(std::size_t(dst) * 12, -1.f, 1.f, 22);
    check(l, {mat_of(Shape::of(20, src), q), mat_of(Shape::of(12, dst), kv)}, Shape::of(20, src),
          attention_ref(l, q, src, kv, kv, dst, nullptr, false));
  }
  SECTION("three inputs and a 2-D mask") {
    const Attention a{32, 2, 32, 16, 40};
    MultiHeadAttention l = attention(a, 40);
    l.attn_mask = 1;
    const int src = 9, dst = 14;
    const std::vector<float> q = uniform(std::size_t(src) * 32, -1.f, 1.f, 23);
    const std::vector<float> k = uniform(std::size_t(dst) * 16, -1.f, 1.f, 24);
    const std::vector<float> v = uniform(std::size_t(dst) * 40, -1.f, 1.f, 25);
    const std::vector<float> mask = uniform(std::size_t(src) * dst, -3.f, 0.f, 26);
    check(l,
          {mat_of(Shape::of(32, src), q), mat_of(Shape::of(16, dst), k),
           mat_of(Shape::of(40, dst), v), mat_of(Shape::of(dst, src), mask)},
          Shape::of(32, src), attention_ref(l, q, src, k, v, dst, &mask, false));
  }
  SECTION("self-attention with a mask per head") {
    const Attention a{30, 5, 30, 30, 30};
    MultiHeadAttention l = attention(a, 50);
    l.attn_mask = 1;
    const int src = 17;
    const std::vector<float> x = uniform(std::size_t(src) * 30, -1.f, 1.f, 27);
    const std::vector<float> mask = uniform(std::size_t(5) * src * src, -2.f, 0.f, 28);
    check(l, {mat_of(Shape::of(30, src), x), mat_of(Shape::of(src, src, 5), mask)},
          Shape::of(30, src), attention_ref(l, x, src, x, x, src, &mask, true));
  }
}

TEST_CASE("MultiHeadAttention: keys as ncnn writes them, and what is refused", "[attention]") {
  auto error = [](const std::string& keys) {
    infer::Net net;
    const infer::Status st = net.load_param_text(
        "7767517\n2 2\nInput in 0 1 data 0=8 1=3\nMultiHeadAttention a 1 1 data out " + keys + "\n",
        "a.param");
    REQUIRE_FALSE(st.ok());
    return st.message();
  };
  CHECK_THAT(error("0=8 1=3 2=64"), Catch::Contains("num_heads must divide embed_dim 8, got 3"));
  CHECK_THAT(error("0=8 1=2 2=60"),
             Catch::Contains("weight_data_size must be embed_dim (8) x qdim"));
  CHECK_THAT(error("0=8 1=2 2=64 7=1"), Catch::Contains("kv_cache is not supported"));
  MultiHeadAttention l;
  l.embed_dim = 8;
  l.num_heads = 2;
  l.weight_data_size = 64;
  l.kdim = l.vdim = 8;
  std::vector<Shape> in{Shape::of(8, 3), Shape::of(8, 4), Shape::of(8, 5)}, out(1);
  CHECK_THAT(l.infer_shapes(in, out).error, Catch::Contains("k and v must have the same number"));
}
