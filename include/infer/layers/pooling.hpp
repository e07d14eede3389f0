// ncnn Pooling: max or average over 2-D windows of each channel of a 3-D blob, with ncnn's four
// padding modes, global pooling (to a 1-D blob of one value per channel) and adaptive pooling (to
// a fixed output size); global pooling and 2x2 / 3x3 stride-2 windows take unrolled kernels.
// Every storage type with f32 arithmetic, every pack, one blob. On i8 values, max pooling gives
// exactly the int8 values of the pooled float values (quantizing is monotonic), so the composer
// keeps quantized blobs int8 through it (passes_int8()); an average of int8 values is rounded to
// the nearest integer, which is not the quantized average of the values they stand for, so
// quantized blobs go through average pooling as f32.
#pragma once

#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/pooling.hpp>
#include <infer/layers/detail/conv_common.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/pooling.hpp>
#endif

namespace infer::layers {

/// Parameters default as in ncnn; those ncnn defaults to another parameter hold kSameAs, so
/// `Pooling{.kernel_w = 3, .stride_w = 2, .pad_left = 1}` pools 3x3 windows with stride 2 and
/// 1 pad on every side, as the .param keys 1=3 2=2 3=1 do.
struct Pooling {
  static constexpr std::string_view ncnn_type = "Pooling";  ///< its type in .param files
  int pooling_type = 0;    ///< ncnn 0=pooling_type: 0 max, 1 average
  int kernel_w = 0;        ///< ncnn 1=kernel_w
  int stride_w = 1;        ///< ncnn 2=stride_w
  int pad_left = 0;        ///< ncnn 3=pad_left
  int global_pooling = 0;  ///< ncnn 4=global_pooling: 1 gives a 1-D blob of c values
  /// ncnn 5=pad_mode: 0 full (the end is padded further so the last stride gets a window, a
  /// ceil-mode output), 1 valid (the pads as given, floor), 2 SAME_UPPER and 3 SAME_LOWER
  /// (ceil(in / stride) outputs, the pads computed, the extra one after / before; the pad
  /// parameters are ignored, and a negative computed pad, kernel < stride, is taken as 0).
  int pad_mode = 0;
  /// ncnn 6=avgpool_count_include_pad: 1 divides every average by kernel_w * kernel_h; 0 by the
  /// positions inside the input. As in ncnn, modes 2 and 3 only leave out the pad parameters'
  /// positions there (usually none), not the padding they compute.
  int avgpool_count_include_pad = 0;
  int adaptive_pooling = 0;  ///< ncnn 7=adaptive_pooling: out_w x out_h outputs, even windows
  int out_w = 0;             ///< ncnn 8=out_w (adaptive); -233: the input's w
  int kernel_h = kSameAs;    ///< ncnn 11=kernel_h; kSameAs: kernel_w
  int stride_h = kSameAs;    ///< ncnn 12=stride_h; kSameAs: stride_w
  int pad_top = kSameAs;     ///< ncnn 13=pad_top; kSameAs: pad_left
  int pad_right = kSameAs;   ///< ncnn 14=pad_right; kSameAs: pad_left
  int pad_bottom = kSameAs;  ///< ncnn 15=pad_bottom; kSameAs: pad_top
  int out_h = kSameAs;       ///< ncnn 18=out_h (adaptive); kSameAs: out_w; -233: the input's h

  using storage = all_storage;
  using packs = all_packs;

  /// Max pooling passes int8 blobs: pooling their values gives the int8 values of the pooled
  /// float values (NodeDesc::passes_int8).
  constexpr bool passes_int8() const { return pooling_type == 0; }

  /// Global pooling on the GPU with f16 storage can write its vector in f32, for readers that
  /// take one (InnerProduct: a squeeze-excitation block).
  constexpr bool vulkan_f32_vectors() const { return global_pooling != 0; }

  /// The windows of every output position of an input of some shape.
  struct Plan {
    Shape out;               ///< the output's logical shape
    kernels::PoolAxis x, y;  ///< the windows along w and h
    int out_w = 1, out_h = 1;
  };

  /// The windows for an input of shape `in`, or why there are none.
  constexpr ShapeCheck plan(const Shape& in, Plan& p) const {
    if (in.dims != 3) return shape_error("takes a 3-D input (w, h, c)");
    if (pooling_type != 0 && pooling_type != 1)
      return shape_error("pooling_type must be 0 (max) or 1 (average)");
    if (in.w > kMaxExtent || in.h > kMaxExtent) return shape_error("input extent is too large");
    if (global_pooling) {
      p.x = {.in = in.w, .adaptive_out = 1};
      p.y = {.in = in.h, .adaptive_out = 1};
      p.out_w = p.out_h = 1;
      p.out = Shape::of(in.c);
      return {};
    }
    if (adaptive_pooling) {
      p.out_w = out_w == -233 ? in.w : out_w;
      const int oh = detail::resolve(out_h, out_w);
      p.out_h = oh == -233 ? in.h : oh;
      if (p.out_w < 1 || p.out_h < 1 || p.out_w > kMaxExtent || p.out_h > kMaxExtent)
        return shape_error("adaptive out_w and out_h must be positive (or -233)");
      p.x = {.in = in.w, .adaptive_out = p.out_w};
      p.y = {.in = in.h, .adaptive_out = p.out_h};
      p.out = Shape::of(p.out_w, p.out_h, in.c);
      return {};
    }
    if (pad_mode < 0 || pad_mode > 3)
      return shape_error("pad_mode must be 0 (full), 1 (valid), 2 (SAME_UPPER) or 3 (SAME_LOWER)");
    const int pt = detail::resolve(pad_top, pad_left);
    if (ShapeCheck c = sliding(in.w, kernel_w, stride_w, pad_left,
                               detail::resolve(pad_right, pad_left), p.x, p.out_w);
        !c.ok())
      return c;
    if (ShapeCheck c =
            sliding(in.h, detail::resolve(kernel_h, kernel_w), detail::resolve(stride_h, stride_w),
                    pt, detail::resolve(pad_bottom, pt), p.y, p.out_h);
        !c.ok())
      return c;
    p.out = Shape::of(p.out_w, p.out_h, in.c);
    return {};
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
    Plan p;
    if (ShapeCheck c = plan(in[0], p); !c.ok()) return c;
    out[0] = p.out;
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the pooling kernel (shaders/pooling.comp) over the windows plan() computes.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Pooling GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    Plan p;
    if (ShapeCheck c = plan(in[0].shape(), p); !c.ok())
      return make_error("Pooling GPU forward: {}", c.error);
    return vk::record_pooling(rec, in[0], out[0],
                              pooling_type == 0 ? vk::PoolType::max : vk::PoolType::average, p.x,
                              p.y);
  }
#endif

  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    Plan p;
    if (ShapeCheck c = plan(bottom.shape(), p); !c.ok())
      return make_error(
          "Pooling: {} (input {}, kernel {}x{}, stride {}x{}, pads l{} r{} t{} b{}, pad_mode {})",
          c.error, bottom.describe(), kernel_w, detail::resolve(kernel_h, kernel_w), stride_w,
          detail::resolve(stride_h, stride_w), pad_left, detail::resolve(pad_right, pad_left),
          detail::resolve(pad_top, pad_left),
          detail::resolve(pad_bottom, detail::resolve(pad_top, pad_left)), pad_mode);
    // The output's packing axis (c, or w of the 1-D global output) is the input's c, so Pack fits.
    INFER_TRY(top.create(p.out, elem_type_v<T>, Pack, opt.blob_alloc()));
    const MatView<T, Pack> src = bottom.view<T, Pack>(), dst = top.view<T, Pack>();
    // Below ~256k values (ResNet-50's 7x7x2048 global pooling, VGG-16's 14x14x512) a second
    // thread costs more than it saves (measured: 2.5 us on one thread, 5 us on two).
    const bool parallel = opt.num_threads > 1 && src.c > 1 &&
                          bottom.shape().total() + top.shape().total() > (1u << 18);
    const int groups = src.c;
    // The fast paths: global pooling, and square 2x2 / 3x3 windows of stride 2 (any padding).
    const int kernel = !global_pooling && !adaptive_pooling && p.x.kernel == p.y.kernel &&
                               p.x.stride == 2 && p.y.stride == 2
                           ? p.x.kernel
                           : 0;
    const auto run = [&](const auto& op) {
      const auto group = [&](int q) {
        if (global_pooling) {  // the 1-D output's groups are consecutive packed elements
          kernels::pool_global<T, Pack>(src.channel(q), src.w * src.h,
                                        dst.data + std::size_t(q) * Pack, op);
        } else if (kernel == 2) {
          kernels::pool_kxk<T, Pack, 2, 2>(src.channel(q), src.w, dst.channel(q), p.x, p.y, p.out_w,
                                           p.out_h, op);
        } else if (kernel == 3) {
          kernels::pool_kxk<T, Pack, 3, 2>(src.channel(q), src.w, dst.channel(q), p.x, p.y, p.out_w,
                                           p.out_h, op);
        } else {
          kernels::pool<T, Pack>(src.channel(q), src.w, dst.channel(q), p.x, p.y, p.out_w, p.out_h,
                                 op);
        }
      };
      // No parallel region at all for small work: even a one-thread region costs about a
      // microsecond, a third of a 7x7x2048 global pooling.
      if (!parallel) {
        for (int q = 0; q < groups; ++q) group(q);
        return;
      }
#pragma omp parallel for num_threads(opt.num_threads)
      for (int q = 0; q < groups; ++q) group(q);
    };
    if (pooling_type == 0) {
      run(kernels::PoolMax{});
    } else {
      run(kernels::PoolAvg{});
    }
    return {};
  }

 private:
  /// Extents, kernels, strides and pads above this are refused, so window arithmetic fits int.
  static constexpr int kMaxExtent = 1 << 26;

  /// The windows along one axis of extent n padded as pad_mode says (ncnn's make_padding).
  constexpr ShapeCheck sliding(int n, int kernel, int stride, int before, int after,
                               kernels::PoolAxis& axis, int& out) const {
    if (kernel < 1) return shape_error("kernel_w and kernel_h must be at least 1");
    if (stride < 1) return shape_error("stride_w and stride_h must be at least 1");
    if (before < 0 || after < 0) return shape_error("pads must not be negative");
    if (kernel > kMaxExtent || stride > kMaxExtent || before > kMaxExtent || after > kMaxExtent)
      return shape_error("kernel, stride or pad is too large");
    int pad_before = before, pad_after = after, counted_after = after;
    if (pad_mode == 0) {
      // C++'s remainder, as ncnn computes it: with a kernel above the padded input the tail
      // pad can still make room for windows, some of them wholly in the padding.
      const int tail = (n + before + after - kernel) % stride;
      if (tail != 0) pad_after += stride - tail;
      counted_after = pad_after;
    } else if (pad_mode >= 2) {
      int total = kernel + (n - 1) / stride * stride - n;
      if (total < 0) total = 0;
      pad_before = pad_mode == 2 ? total / 2 : total - total / 2;
      pad_after = total - pad_before;
    }
    const int padded = n + pad_before + pad_after;
    if (padded < kernel) return shape_error("the kernel is larger than the padded input");
    out = (padded - kernel) / stride + 1;
    axis = {.in = n, .kernel = kernel, .stride = stride, .pad = pad_before};
    if (pooling_type == 1 && !avgpool_count_include_pad) {
      // ncnn counts the padded input's positions inside [pad_left, w - pad_right - tail pad).
      axis.count_begin = before - pad_before;
      axis.count_end = n + pad_after - counted_after;
    }
    return {};
  }
};

}  // namespace infer::layers
