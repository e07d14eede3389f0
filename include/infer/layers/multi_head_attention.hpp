// ncnn MultiHeadAttention (PyTorch's nn.MultiheadAttention without its batch axis): the query rows
// (2-D: qdim wide, one row per position), key and value rows (kdim, vdim wide, one row per source
// position) are projected to embed_dim values each (weights stored out x in, as ncnn stores them;
// the query's projection, bias included, times `scale`), split into num_heads heads; each head's
// scores Q K^T (plus the optional attention mask: 2-D, or 3-D one channel per head) go through a
// softmax over the source positions and weigh the value rows; the heads' results, side by side,
// are projected back to qdim values. Inputs as ncnn counts them: q (k = v = q), q and kv, or q, k
// and v, then the mask when attn_mask. Every product is a kernels/matmul.hpp GEMM on weights
// packed at prepare; the heads run in parallel. f32 storage, pack 1; ncnn's kv_cache and int8 forms
// are refused.
#pragma once

#include <fmt/core.h>

#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/detail/omp.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/io/param_dict.hpp>
#include <infer/kernels/matmul.hpp>
#include <infer/kernels/softmax.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#include <vector>

namespace infer::layers {

struct MultiHeadAttention {
  static constexpr std::string_view ncnn_type = "MultiHeadAttention";  ///< type in .param files
  int embed_dim = 0;                                                   ///< ncnn 0=embed_dim
  int num_heads = 1;                                                   ///< ncnn 1=num_heads
  int weight_data_size = 0;  ///< ncnn 2=weight_data_size: embed_dim x qdim
  int kdim = 0;              ///< ncnn 3=kdim (default embed_dim)
  int vdim = 0;              ///< ncnn 4=vdim (default embed_dim)
  int attn_mask = 0;         ///< ncnn 5=attn_mask: a last input added to the scores
  float scale = 0.f;         ///< ncnn 6=scale of the scores (default 1 / sqrt(embed_dim / heads))
  std::vector<float> q_weight_data{}, q_bias_data{};  ///< weights
  std::vector<float> k_weight_data{}, k_bias_data{};
  std::vector<float> v_weight_data{}, v_bias_data{};
  std::vector<float> out_weight_data{}, out_bias_data{};
  std::vector<float> q_packed{}, k_packed{}, v_packed{}, out_packed{};  ///< prepare

  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  constexpr int qdim() const { return embed_dim > 0 ? weight_data_size / embed_dim : 0; }
  constexpr int head_dim() const { return num_heads > 0 ? embed_dim / num_heads : 0; }

  Status load_param(io::ParamReader& r) {
    embed_dim = r.get(0, 0);
    num_heads = r.get(1, 1);
    weight_data_size = r.get(2, 0);
    kdim = r.get(3, embed_dim);
    vdim = r.get(4, embed_dim);
    attn_mask = r.get(5, 0);
    const int heads = num_heads > 0 ? num_heads : 1;
    scale = r.get(6, embed_dim > 0 ? 1.f / std::sqrt(float(embed_dim / heads)) : 1.f);
    if (r.get(7, 0) != 0) r.fail(7, "kv_cache is not supported");
    if (r.get(18, 0) != 0) r.fail(18, "quantize_term (int8 attention) is not supported");
    if (embed_dim < 1) r.fail(0, fmt::format("embed_dim must be >= 1, got {}", embed_dim));
    if (num_heads < 1 || (embed_dim > 0 && embed_dim % num_heads != 0))
      r.fail(1, fmt::format("num_heads must divide embed_dim {}, got {}", embed_dim, num_heads));
    if (embed_dim > 0 && (weight_data_size < embed_dim || weight_data_size % embed_dim != 0))
      r.fail(2, fmt::format("weight_data_size must be embed_dim ({}) x qdim, got {}", embed_dim,
                            weight_data_size));
    if (kdim < 1 || vdim < 1) r.fail(kdim < 1 ? 3 : 4, "kdim and vdim must be >= 1");
    if (attn_mask != 0 && attn_mask != 1)
      r.fail(5, fmt::format("attn_mask must be 0 or 1, got {}", attn_mask));
    return {};
  }

  /// q, k, v weights (tagged) each followed by its bias (raw), then the output projection's.
  Status load(io::ModelBin& mb) {
    const std::size_t e = std::size_t(embed_dim);
    auto get = [&](std::size_t n, io::WeightType t, const char* what,
                   std::vector<float>& dst) -> Status {
      auto v = mb.load(n, t);
      if (!v.ok()) return make_error("MultiHeadAttention: {}: {}", what, v.message());
      dst = std::move(v).value();
      return {};
    };
    using io::WeightType;
    INFER_TRY(get(e * std::size_t(qdim()), WeightType::tagged, "q_weight_data", q_weight_data));
    INFER_TRY(get(e, WeightType::raw_f32, "q_bias_data", q_bias_data));
    INFER_TRY(get(e * std::size_t(kdim), WeightType::tagged, "k_weight_data", k_weight_data));
    INFER_TRY(get(e, WeightType::raw_f32, "k_bias_data", k_bias_data));
    INFER_TRY(get(e * std::size_t(vdim), WeightType::tagged, "v_weight_data", v_weight_data));
    INFER_TRY(get(e, WeightType::raw_f32, "v_bias_data", v_bias_data));
    INFER_TRY(get(std::size_t(qdim()) * e, WeightType::tagged, "out_weight_data", out_weight_data));
    INFER_TRY(get(std::size_t(qdim()), WeightType::raw_f32, "out_bias_data", out_bias_data));
    q_packed.clear();
    return {};
  }

  Status prepare(ElemType, int, const Option&) {
    const std::size_t e = std::size_t(embed_dim);
    if (q_weight_data.size() != e * std::size_t(qdim()) ||
        k_weight_data.size() != e * std::size_t(kdim) ||
        v_weight_data.size() != e * std::size_t(vdim) ||
        out_weight_data.size() != std::size_t(qdim()) * e || q_bias_data.size() != e ||
        k_bias_data.size() != e || v_bias_data.size() != e ||
        out_bias_data.size() != std::size_t(qdim()))
      return make_error("MultiHeadAttention: weights are missing or of the wrong size");
    auto pack = [](const std::vector<float>& w, int out, int in, std::vector<float>& dst) {
      dst.resize(kernels::matmul::packed_size(out, in));
      kernels::matmul::pack_b(w.data(), std::size_t(in), true, out, in, dst.data());
    };
    pack(q_weight_data, embed_dim, qdim(), q_packed);
    pack(k_weight_data, embed_dim, kdim, k_packed);
    pack(v_weight_data, embed_dim, vdim, v_packed);
    pack(out_weight_data, qdim(), embed_dim, out_packed);
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (embed_dim < 1 || num_heads < 1 || embed_dim % num_heads != 0 || qdim() < 1)
      return shape_error("embed_dim, num_heads and weight_data_size do not fit together");
    Blobs b;
    if (ShapeCheck c = blobs(in.size(), b); !c.ok()) return c;
    const Shape &q = in[b.q], &k = in[b.k], &v = in[b.v];
    if (q.dims != 2 || k.dims != 2 || v.dims != 2)
      return shape_error("q, k and v must be 2-D: one row per position");
    if (q.w != qdim())
      return shape_error("q rows must be qdim (weight_data_size / embed_dim) wide");
    if (k.w != kdim || v.w != vdim) return shape_error("k and v rows must be kdim and vdim wide");
    if (k.h != v.h) return shape_error("k and v must have the same number of rows");
    if (attn_mask) {
      const Shape& m = in[b.mask];
      const bool fits = (m.dims == 2 && m.w == k.h && m.h == q.h) ||
                        (m.dims == 3 && m.w == k.h && m.h == q.h && m.c == num_heads);
      if (!fits)
        return shape_error("the mask must be source x target (2-D) or that per head (3-D)");
    }
    out[0] = Shape::of(qdim(), q.h);
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (tops.size() != 1)
      return make_error("MultiHeadAttention: gives 1 output, got {}", tops.size());
    std::array<Shape, 4> shapes{};
    if (bottoms.size() > 4)
      return make_error("MultiHeadAttention: takes at most 4 inputs, got {}", bottoms.size());
    for (std::size_t i = 0; i < bottoms.size(); ++i) {
      if (!bottoms[i].is<f32, 1>())
        return make_error("MultiHeadAttention: input {} is {}, expected f32 pack 1", i,
                          bottoms[i].describe());
      shapes[i] = bottoms[i].shape();
    }
    std::array<Shape, 1> out_shape;
    if (ShapeCheck c =
            infer_shapes(std::span<const Shape>(shapes.data(), bottoms.size()), out_shape);
        !c.ok())
      return make_error("MultiHeadAttention: {}", c.error);
    if (out_packed.empty()) return make_error("MultiHeadAttention: call prepare() after load()");
    Blobs b;
    (void)blobs(bottoms.size(), b);
    Mat& top = tops[0];
    INFER_TRY(top.create(out_shape[0], ElemType::f32, 1, opt.blob_alloc()));

    namespace mm = kernels::matmul;
    const int src = shapes[b.q].h, dst = shapes[b.k].h, e = embed_dim, d = head_dim();
    const int threads = opt.num_threads;
    const auto rows = [](const Mat& m) { return m.data_as<const float>(); };
    // The temporaries, one workspace block: q, o (src rows of embed_dim), k, v (dst rows) and, per
    // thread, one head's packed k and v and its src x dst scores. Each part starts on a 64-byte
    // boundary.
    const auto round16 = [](std::size_t n) { return (n + 15) / 16 * 16; };
    const std::size_t q_n = round16(std::size_t(src) * std::size_t(e));
    const std::size_t kv_n = round16(std::size_t(dst) * std::size_t(e));
    const std::size_t kp_n = round16(mm::packed_size(dst, d));
    const std::size_t vp_n = round16(mm::packed_size(d, dst));
    const std::size_t s_n = round16(std::size_t(src) * std::size_t(dst));
    const std::size_t per_thread = kp_n + vp_n + s_n;
    const std::size_t floats = 2 * q_n + 2 * kv_n + per_thread * std::size_t(threads);
    if (floats > std::size_t(INT_MAX))
      return make_error(
          "MultiHeadAttention: {} queries and {} keys need a workspace of {} floats, "
          "past 2^31",
          src, dst, floats);
    Mat workspace;
    INFER_TRY(workspace.create(Shape::of(int(floats)), ElemType::f32, 1, opt.workspace_alloc()));
    float* const q = workspace.data_as<float>();
    float* const o = q + q_n;
    float* const k = o + q_n;
    float* const v = k + kv_n;
    float* const heads = v + kv_n;

    // Projections: q (scaled, bias included, as ncnn), k, v; src or dst rows of embed_dim.
    const auto per_col = [](const std::vector<float>& bias) {
      mm::Addend a;
      a.kind = mm::Addend::per_col;
      a.c = bias.data();
      return a;
    };
    mm::gemm(rows(bottoms[b.q]), std::size_t(qdim()), src, qdim(), q_packed.data(), e, q,
             std::size_t(e), per_col(q_bias_data), scale, threads);
    mm::gemm(rows(bottoms[b.k]), std::size_t(kdim), dst, kdim, k_packed.data(), e, k,
             std::size_t(e), per_col(k_bias_data), 1.f, threads);
    mm::gemm(rows(bottoms[b.v]), std::size_t(vdim), dst, vdim, v_packed.data(), e, v,
             std::size_t(e), per_col(v_bias_data), 1.f, threads);

    // Heads: scores, mask, softmax over the sources, the weighted values into o's columns.
    const Mat* mask = attn_mask ? &bottoms[b.mask] : nullptr;
#pragma omp parallel for num_threads(threads) schedule(dynamic)
    for (int h = 0; h < num_heads; ++h) {
      float* const kp = heads + std::size_t(omp_get_thread_num()) * per_thread;
      float* const vp = kp + kp_n;
      float* const s = vp + vp_n;
      const std::size_t scores = std::size_t(src) * std::size_t(dst);
      mm::pack_b(k + std::size_t(h) * d, std::size_t(e), true, dst, d, kp);
      mm::gemm(q + std::size_t(h) * d, std::size_t(e), src, d, kp, dst, s, std::size_t(dst),
               mm::Addend{}, 1.f, 1);
      if (mask) {
        const Mat m = mask->dims() == 3 ? mask->channel(h) : *mask;
        const float* mp = m.data_as<const float>();
        for (std::size_t i = 0; i < scores; ++i) s[i] += mp[i];
      }
      for (int i = 0; i < src; ++i) {
        float* row = s + std::size_t(i) * std::size_t(dst);
        kernels::softmax_contiguous<f32>(row, row, std::size_t(dst));
      }
      mm::pack_b(v + std::size_t(h) * d, std::size_t(e), false, d, dst, vp);
      mm::gemm(s, std::size_t(dst), src, dst, vp, d, o + std::size_t(h) * d, std::size_t(e),
               mm::Addend{}, 1.f, 1);
    }
    // Output projection.
    mm::gemm(o, std::size_t(e), src, e, out_packed.data(), qdim(), top.data_as<float>(),
             std::size_t(qdim()), per_col(out_bias_data), 1.f, threads);
    return {};
  }

 private:
  struct Blobs {
    std::size_t q = 0, k = 0, v = 0, mask = 0;
  };
  /// Which input is which, as ncnn resolves them from their count.
  constexpr ShapeCheck blobs(std::size_t n, Blobs& b) const {
    const std::size_t data = n - std::size_t(attn_mask);
    if (n < std::size_t(1 + attn_mask) || data > 3)
      return shape_error(attn_mask ? "takes q (, k (, v)) and the mask: 2 to 4 inputs"
                                   : "takes q (, k (, v)): 1 to 3 inputs");
    b.q = 0;
    b.k = data >= 2 ? 1 : 0;
    b.v = data == 3 ? 2 : b.k;
    b.mask = data;
    return {};
  }
};

}  // namespace infer::layers
