// Sliding-window geometry shared by the convolution family (and Pooling, Deconvolution): ncnn's
// parameters that default to another parameter, its SAME padding codes -233/-234, the padded
// extents and output sizes they give, and the constant-border copy of an input that a padded
// window reads.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <infer/element.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/shape.hpp>
#include <infer/status.hpp>
#include <string_view>
#include <type_traits>
#include <utility>

namespace infer::layers {

/// A parameter left at kSameAs takes ncnn's default for it, which is another parameter's value
/// (kernel_h = kernel_w, pad_bottom = pad_top, ...): a layer value that sets only the keys of a
/// .param line behaves as ncnn does with that line. INT_MIN means nothing to ncnn.
inline constexpr int kSameAs = INT_MIN;
/// ncnn's pad codes (on all four sides): pad so that an axis of n values gives ceil(n / stride)
/// outputs, the odd pad after (TensorFlow SAME, ONNX SAME_UPPER) or before (ONNX SAME_LOWER).
inline constexpr int kPadSameUpper = -233;
inline constexpr int kPadSameLower = -234;

}  // namespace infer::layers

namespace infer::layers::detail {

/// Whether a layer prepared for storage `type` with `opt` multiplies in bf16 (kernels/bf16.hpp):
/// bf16 storage, or f32 with Option::bf16_arithmetic, on a build with AVX512_BF16.
constexpr bool bf16_arithmetic(ElemType type, const Option& opt, bool available) {
  return available && (type == ElemType::bf16 || (type == ElemType::f32 && opt.bf16_arithmetic));
}

/// `v`, or `fallback` when v is kSameAs.
constexpr int resolve(int v, int fallback) { return v == kSameAs ? fallback : v; }

/// A 2-D window: kernel extents, dilation and stride, defaults resolved.
struct Window2D {
  int kernel_w = 1, kernel_h = 1;
  int dilation_w = 1, dilation_h = 1;
  int stride_w = 1, stride_h = 1;

  constexpr int maxk() const { return kernel_w * kernel_h; }
  /// Input values the window spans: dilation * (kernel - 1) + 1.
  constexpr int extent_w() const { return dilation_w * (kernel_w - 1) + 1; }
  constexpr int extent_h() const { return dilation_h * (kernel_h - 1) + 1; }
};

/// Pads on the four sides: ncnn's fields with defaults resolved (amounts, or all four SAME codes),
/// or, once planned for an input, the amounts applied.
struct Pads2D {
  int left = 0, right = 0, top = 0, bottom = 0;

  constexpr bool any() const { return left != 0 || right != 0 || top != 0 || bottom != 0; }
};

/// The window of a layer with ncnn's kernel_w/_h, dilation_w/_h, stride_w/_h fields.
template <class L>
constexpr Window2D conv_window(const L& l) {
  return {l.kernel_w,   resolve(l.kernel_h, l.kernel_w),
          l.dilation_w, resolve(l.dilation_h, l.dilation_w),
          l.stride_w,   resolve(l.stride_h, l.stride_w)};
}

/// The pad fields of a layer with ncnn's pad_left/right/top/bottom (right and top default to
/// left, bottom to top).
template <class L>
constexpr Pads2D conv_pads(const L& l) {
  const int top = resolve(l.pad_top, l.pad_left);
  return {l.pad_left, resolve(l.pad_right, l.pad_left), top, resolve(l.pad_bottom, top)};
}

/// Checks that kernel, dilation and stride are positive and the window's extent fits an int.
constexpr ShapeCheck check_window(const Window2D& w) {
  if (w.kernel_w <= 0 || w.kernel_h <= 0) return shape_error("kernel_w and kernel_h must be > 0");
  if (w.dilation_w <= 0 || w.dilation_h <= 0)
    return shape_error("dilation_w and dilation_h must be > 0");
  if (w.stride_w <= 0 || w.stride_h <= 0) return shape_error("stride_w and stride_h must be > 0");
  if (std::int64_t(w.dilation_w) * (w.kernel_w - 1) + 1 > INT_MAX ||
      std::int64_t(w.dilation_h) * (w.kernel_h - 1) + 1 > INT_MAX ||
      std::int64_t(w.kernel_w) * w.kernel_h > INT_MAX)
    return shape_error("the kernel is too large");
  return {};
}

/// Total SAME padding of one axis: the least that gives ceil(in / stride) outputs (ncnn's
/// `extent + (in - 1) / stride * stride - in`, never negative).
constexpr int same_pad_total(int in, int extent, int stride) {
  const std::int64_t p = std::int64_t(extent) + std::int64_t(in - 1) / stride * stride - in;
  return p > 0 ? int(p) : 0;
}

/// Outputs of a window of `extent` values sliding by `stride` over `padded` values; 0 when it
/// does not fit once.
constexpr int window_outputs(std::int64_t padded, int extent, int stride) {
  return padded < extent ? 0 : int((padded - extent) / stride + 1);
}

/// Where a window slides over one input: the pads applied and the output extents.
struct WindowPlan {
  Pads2D pads;
  int w = 0;  ///< padded input extents
  int h = 0;
  int outw = 0;
  int outh = 0;
};

/// Plans `win` over a w x h input with the pad fields `fields`: explicit pads (all >= 0) as they
/// are, all four kPadSameUpper / kPadSameLower computed as ncnn does; then the output extents
/// (padded - extent) / stride + 1. Fails, with a static message, where nothing fits.
constexpr ShapeCheck plan_window(const Window2D& win, const Pads2D& fields, int w, int h,
                                 WindowPlan& plan) {
  if (ShapeCheck c = check_window(win); !c.ok()) return c;
  const int ew = win.extent_w(), eh = win.extent_h();
  const auto all = [&](int code) {
    return fields.left == code && fields.right == code && fields.top == code &&
           fields.bottom == code;
  };
  if (all(kPadSameUpper) || all(kPadSameLower)) {
    const int wpad = same_pad_total(w, ew, win.stride_w);
    const int hpad = same_pad_total(h, eh, win.stride_h);
    const bool upper = all(kPadSameUpper);  // the odd pad goes after (upper) or before (lower)
    plan.pads.left = upper ? wpad / 2 : wpad - wpad / 2;
    plan.pads.right = wpad - plan.pads.left;
    plan.pads.top = upper ? hpad / 2 : hpad - hpad / 2;
    plan.pads.bottom = hpad - plan.pads.top;
  } else if (fields.left < 0 || fields.right < 0 || fields.top < 0 || fields.bottom < 0) {
    return shape_error("pads must be >= 0, or -233 (SAME_UPPER) / -234 (SAME_LOWER) on all sides");
  } else {
    plan.pads = fields;
  }
  const std::int64_t pw = std::int64_t(w) + plan.pads.left + plan.pads.right;
  const std::int64_t ph = std::int64_t(h) + plan.pads.top + plan.pads.bottom;
  if (pw > INT_MAX || ph > INT_MAX) return shape_error("the padded input is too large");
  plan.w = int(pw);
  plan.h = int(ph);
  plan.outw = window_outputs(pw, ew, win.stride_w);
  plan.outh = window_outputs(ph, eh, win.stride_h);
  if (plan.outw <= 0 || plan.outh <= 0)
    return shape_error("the kernel (with dilation) is larger than the padded input");
  return {};
}

/// Calls f(std::integral_constant<int, P>{}) for the runtime pack `pack`, one of 1, 4, 8, 16 no
/// wider than MaxPack: how a layer turns the output pack pack_for(...) into a kernel parameter,
/// instantiating only the packs that input pack MaxPack can lead to.
template <int MaxPack, class F>
decltype(auto) with_pack(int pack, F&& f) {
  if constexpr (MaxPack >= 16)
    if (pack == 16) return f(std::integral_constant<int, 16>{});
  if constexpr (MaxPack >= 8)
    if (pack == 8) return f(std::integral_constant<int, 8>{});
  if constexpr (MaxPack >= 4)
    if (pack == 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, 1>{});
}

/// Checks that `residual` (a fused sum's other input, may be null) matches the output `top`:
/// same shape, storage and pack, as the kernels read it in the output's layout.
inline Status check_residual(const Mat* residual, const Mat& top, std::string_view layer) {
  if (!residual) return {};
  if (residual->shape() != top.shape() || residual->type() != top.type() ||
      residual->elempack() != top.elempack())
    return make_error("{}: residual {} does not match the output {} (shape, storage and pack)",
                      layer, residual->describe(), top.describe());
  return {};
}

/// The kernels' view of a residual (empty where there is none).
template <StorageElement T, int Pack>
MatView<T, Pack> residual_view(const Mat* residual) {
  return residual ? residual->view<T, Pack>() : MatView<T, Pack>{};
}

/// `bottom` (storage T) with `pads` of constant `value` around each channel's w x h plane, in a
/// new Mat from the workspace allocator, stored as TO (T itself, or a wider type the kernel reads:
/// the int8 stem's f32); `bottom` itself (shared) when there is nothing to pad or convert. The
/// value is stored as TO holds it (rounded to f16/bf16), as ncnn's copy_make_border does.
template <StorageElement T, int Pack, StorageElement TO = T>
Result<Mat> pad_input(const Mat& bottom, const Pads2D& pads, float value, const Option& opt) {
  constexpr bool kSame = std::is_same_v<T, TO>;
  if (kSame && !pads.any()) return bottom;
  const Shape s = bottom.shape();
  const int w = s.w, h = s.h;
  const int ow = w + pads.left + pads.right, oh = h + pads.top + pads.bottom;
  Mat padded;
  INFER_TRY(padded.create(Shape::of(ow, oh, s.c), elem_type_v<TO>, Pack, opt.workspace_alloc()));
  const MatView<T, Pack> in = bottom.view<T, Pack>();
  const MatView<TO, Pack> out = padded.view<TO, Pack>();
  const TO v = from_f32<TO>(value);
  const std::size_t row = std::size_t(ow) * Pack;
  const int groups = in.c;
#pragma omp parallel for num_threads(opt.num_threads) if (groups > 1 && row * oh * groups > 65536)
  for (int q = 0; q < groups; ++q) {
    for (int y = 0; y < oh; ++y) {
      TO* dst = out.row(q, y);
      const int sy = y - pads.top;
      if (sy < 0 || sy >= h) {
        std::fill_n(dst, row, v);
        continue;
      }
      std::fill_n(dst, std::size_t(pads.left) * Pack, v);
      if constexpr (kSame) {
        std::memcpy(dst + std::size_t(pads.left) * Pack, in.row(q, sy),
                    std::size_t(w) * Pack * sizeof(T));
      } else {
        const T* src = in.row(q, sy);
        TO* to = dst + std::size_t(pads.left) * Pack;
        for (std::size_t i = 0; i < std::size_t(w) * Pack; ++i)
          to[i] = from_f32<TO>(to_f32(src[i]));
      }
      std::fill_n(dst + std::size_t(pads.left + w) * Pack, std::size_t(pads.right) * Pack, v);
    }
  }
  return padded;
}

}  // namespace infer::layers::detail
