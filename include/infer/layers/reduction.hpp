// ncnn Reduction: sum, |sum|, sum of squares, mean, max, min, product, L1, L2, log-sum and
// log-sum-exp over all axes or the listed ones (ncnn's numbering, axis 0 outermost), keeping the
// reduced axes as extent 1 or dropping them, then times coeff. One blob, f32/f16/bf16 storage with
// f32 accumulators; pack 1 only (a packed blob interleaves the outermost axis, which any set of
// axes may cut across), so the graph unpacks its input.
#pragma once

#include <array>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/small_vector.hpp>
#include <infer/kernels/reduction.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>

namespace infer::layers {

struct Reduction {
  static constexpr std::string_view ncnn_type = "Reduction";  ///< its type in .param files
  /// ncnn 0=operation: 0 SUM, 1 ASUM, 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD, 7 L1 (= ASUM),
  /// 8 L2 (sqrt of SUMSQ), 9 LogSum (log of SUM), 10 LogSumExp (log of the sum of exp, as ncnn
  /// without subtracting the maximum first).
  int operation = 0;
  int reduce_all = 1;  ///< ncnn 1=reduce_all: every axis, ignoring `axes`
  float coeff = 1.f;   ///< ncnn 2=coeff: multiplies the result (after log/sqrt; MEAN divides too)
  /// ncnn 3=axes: the axes reduced when reduce_all is 0, axis 0 outermost (c of 3-D, h of 2-D),
  /// negative counted from the end. A 1-D input is always reduced whole, as in ncnn.
  SmallVector<int, 4> axes{};
  int keepdims = 0;  ///< ncnn 4=keepdims: reduced axes stay as extent 1 (1-D: always w = 1)
  /// ncnn 5=fixbug0: 1 marks axes written with the numbering above; ncnn rejects files with axes
  /// and fixbug0 = 0 (old converters counted a batch axis), and so does this layer.
  int fixbug0 = 0;

  using storage = float_storage;
  using packs = pack_list<1>;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    Plan p;
    if (const char* e = plan(in[0], p)) return shape_error(e);
    out[0] = p.out;
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    static_assert(Pack == 1, "Reduction declares pack 1 only");
    Plan p;
    if (const char* e = plan(bottom.shape(), p))
      return make_error("Reduction: {}; input {}, operation {}, reduce_all {}, {} axes", e,
                        bottom.describe(), operation, reduce_all, axes.size());
    INFER_TRY(top.create(p.out, elem_type_v<T>, 1, opt.blob_alloc()));
    switch (operation) {
      case 1:
      case 7:
        return run<kernels::ReduceAbsSum, T>(bottom, top, p, opt);
      case 2:
      case 8:
        return run<kernels::ReduceSumSq, T>(bottom, top, p, opt);
      case 4:
        return run<kernels::ReduceMax, T>(bottom, top, p, opt);
      case 5:
        return run<kernels::ReduceMin, T>(bottom, top, p, opt);
      case 6:
        return run<kernels::ReduceProd, T>(bottom, top, p, opt);
      case 10:
        return run<kernels::ReduceSumExp, T>(bottom, top, p, opt);
      default:  // 0 SUM, 3 MEAN, 9 LogSum
        return run<kernels::ReduceSum, T>(bottom, top, p, opt);
    }
  }

 private:
  /// The input as four axes c, d, h, w (missing ones of extent 1), which are reduced, and the
  /// output shape.
  struct Plan {
    std::array<int, 4> ext{1, 1, 1, 1};
    std::array<bool, 4> reduce{false, false, false, false};
    Shape out;
  };

  /// Fills p; a static message when the parameters or the input do not fit.
  constexpr const char* plan(const Shape& s, Plan& p) const {
    if (operation < 0 || operation > 10)
      return "operation must be 0 to 10 (SUM, ASUM, SUMSQ, MEAN, MAX, MIN, PROD, L1, L2, LogSum, "
             "LogSumExp)";
    if (s.dims < 1 || s.dims > 4) return "input must have 1 to 4 dims";
    if (axes.overflowed()) return "at most 4 axes";
    if (!axes.empty() && fixbug0 == 0)
      return "axes with fixbug0 = 0 come from an old converter that counted a batch axis; "
             "regenerate the param file (or set fixbug0 = 1)";
    const int dims = s.dims;
    const int first = 4 - dims;  // position of ncnn axis 0 among c, d, h, w
    const std::array<int, 4> e = s.outer_first();
    if (dims == 3) {  // c, h, w: no depth
      p.ext = {e[0], 1, e[1], e[2]};
    } else {
      for (int i = 0; i < dims; ++i) p.ext[first + i] = e[i];
    }
    auto slot = [&](int axis) { return dims == 3 ? (axis == 0 ? 0 : axis + 1) : first + axis; };
    if (reduce_all || dims == 1) {
      for (int i = 0; i < dims; ++i) p.reduce[slot(i)] = true;
    } else {
      bool any = false;
      for (int a : axes) {
        if (a < -dims || a >= dims) return "an axis is out of range for the input";
        p.reduce[slot(a < 0 ? a + dims : a)] = true;
        any = true;
      }
      if (!any) return "reduce_all is 0 but axes lists no axis";
    }
    std::array<int, 4> kept{1, 1, 1, 1};
    int n = 0;
    for (int i = 0; i < dims; ++i) {
      const int k = slot(i);
      if (keepdims)
        kept[i] = p.reduce[k] ? 1 : p.ext[k];
      else if (!p.reduce[k])
        kept[n++] = p.ext[k];
    }
    if (dims == 1)
      p.out = Shape::of(1);
    else if (keepdims)
      p.out = Shape::from_outer_first(dims, kept);
    else
      p.out = n == 0 ? Shape::of(1) : Shape::from_outer_first(n, kept);
    return nullptr;
  }

  template <class Op, StorageElement T>
  Status run(const Mat& bottom, const Mat& top, const Plan& p, const Option& opt) const {
    const auto [C, D, H, W] = p.ext;
    const auto [rc, rd, rh, rw] = p.reduce;
    const int od = rd ? 1 : D, oh = rh ? 1 : H, ow = rw ? 1 : W;
    const std::size_t per_channel = std::size_t(od) * oh * ow;  // accumulators of one channel
    const std::size_t out_values = per_channel * (rc ? 1 : std::size_t(C));
    const std::size_t cstep = bottom.dims() >= 3 ? bottom.cstep() : 0;
    const T* src = bottom.data_as<T>();
    // Accumulators for each channel; with c reduced, one set per channel, combined afterwards.
    std::vector<float> acc(per_channel * std::size_t(C), Op::init);
    const std::size_t work = std::size_t(C) * D * H * W;
#pragma omp parallel for num_threads(opt.num_threads) if (C > 1 && work >= 4096)
    for (int c = 0; c < C; ++c) {
      float* a = acc.data() + per_channel * std::size_t(c);
      for (int z = 0; z < D; ++z) {
        for (int y = 0; y < H; ++y) {
          const T* row = src + cstep * std::size_t(c) + (std::size_t(z) * H + y) * W;
          float* o = a + (std::size_t(rd ? 0 : z) * oh + (rh ? 0 : y)) * ow;
          if (rw)
            kernels::reduce_run<Op>(row, std::size_t(W), *o);
          else
            kernels::reduce_elementwise<Op>(row, std::size_t(W), o);
        }
      }
    }
    if (rc) {
      for (int c = 1; c < C; ++c)
        kernels::reduce_combine<Op>(acc.data() + per_channel * std::size_t(c), per_channel,
                                    acc.data());
    }

    float scale = coeff;
    if (operation == 3) {
      std::size_t count = 1;
      for (int i = 0; i < 4; ++i)
        if (p.reduce[std::size_t(i)]) count *= std::size_t(p.ext[std::size_t(i)]);
      scale = coeff / float(count);
    }
    const Shape os = p.out;
    const std::size_t plane = os.dims >= 3 ? std::size_t(os.w) * os.h * os.d : out_values;
    for (std::size_t i = 0; i < out_values; ++i) {
      float v = acc[i];
      if (operation == 9 || operation == 10) v = std::log(v);
      // ncnn flushes a subnormal sum to 0 first (an rsqrt-based sqrt would give -inf).
      if (operation == 8) v = std::sqrt(v < FLT_MIN ? 0.f : v);
      if (scale != 1.f) v *= scale;
      top.data_as<T>()[(i / plane) * top.cstep() + i % plane] = from_f32<T>(v);
    }
    return {};
  }
};

}  // namespace infer::layers
