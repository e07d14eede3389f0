// ncnn Softmax along one axis of a 1-D to 4-D blob; one blob, in place or not, every pack.
// f32/f16/bf16 storage with f32 arithmetic; no i8: exp does not commute with an int8 tensor's
// quantization scale, which ncnn keeps outside the blob.
#pragma once

#include <array>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/softmax.hpp>
#include <infer/shape.hpp>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/softmax.hpp>
#endif

namespace infer::layers {

struct Softmax {
  static constexpr std::string_view ncnn_type = "Softmax";  ///< its type in .param files
  int axis = 0;  ///< ncnn 0=axis, counted outermost first (c, d, h, w); negative from the end
  // ncnn 1=fixbug0 is not a member: it told old files (wrong 3-D axis numbering) from fixed ones,
  // ncnn now rejects the old ones, so the fixed numbering above is the only one.

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (axis < -in[0].dims || axis >= in[0].dims) return shape_error("axis is out of range");
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return run<T, Pack>(blob, blob, opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    return run<T, Pack>(bottom, top, opt);
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the softmax kernel along axis (in place when the plan says so).
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("Softmax GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_softmax(rec, in[0], out[0], axis);
  }
#endif

 private:
  template <StorageElement T, int Pack>
  Status run(const Mat& bottom, const Mat& top, const Option& opt) const {
    const int dims = bottom.dims();
    const int a = axis < 0 ? axis + dims : axis;
    if (a < 0 || a >= dims)
      return make_error("Softmax: axis {} is out of range for a {}-D input (expected {} to {})",
                        axis, dims, -dims, dims - 1);
    const MatView<T, Pack> in = bottom.view<T, Pack>(), out = top.view<T, Pack>();
    const int threads = opt.num_threads;
    if (dims == 1) {  // the packed layout of 1-D is the plain one
      kernels::softmax_contiguous(in.data, out.data, std::size_t(in.w) * Pack);
      return {};
    }
    // Packed extents outer first; axis 0 is the packing axis (groups `group` values apart), the
    // inner axes are dense inside a group with the Pack lanes innermost.
    const std::array<std::size_t, 4> e =
        dims == 2 ? std::array<std::size_t, 4>{std::size_t(in.h), std::size_t(in.w), 1, 1}
        : dims == 3
            ? std::array<std::size_t, 4>{std::size_t(in.c), std::size_t(in.h), std::size_t(in.w), 1}
            : std::array<std::size_t, 4>{std::size_t(in.c), std::size_t(in.d), std::size_t(in.h),
                                         std::size_t(in.w)};
    const std::size_t group = dims == 2 ? e[1] * Pack : in.cstep * Pack;
    std::size_t inner = Pack;  // values of one step along the axis: the extents inside it, x Pack
    for (int k = a + 1; k < dims; ++k) inner *= e[k];
    constexpr std::size_t kTile = kernels::kSoftmaxTile;
    const std::size_t tiles = (inner + kTile - 1) / kTile;

    if (a == 0) {  // along the packing axis: a group's lanes are steps of the same softmax
      const std::ptrdiff_t n = std::ptrdiff_t(tiles);
#pragma omp parallel for num_threads(threads)
      for (std::ptrdiff_t t = 0; t < n; ++t) {
        const std::size_t o = std::size_t(t) * kTile;
        kernels::softmax_strided(in.data + o, out.data + o, e[0], group, std::min(kTile, inner - o),
                                 Pack);
      }
      return {};
    }
    // Along an inner axis: every position of the other axes, lanes included, is independent.
    std::size_t mid = 1;  // rows per group: the extents between axis 0 and the softmax axis
    for (int k = 1; k < a; ++k) mid *= e[k];
    const std::size_t len = e[a], rows = e[0] * mid;
    auto row_start = [&](std::size_t r) { return (r / mid) * group + (r % mid) * len * inner; };
    if (inner == 1) {  // Pack 1 along w: each row is contiguous
      const std::ptrdiff_t n = std::ptrdiff_t(rows);
#pragma omp parallel for num_threads(threads)
      for (std::ptrdiff_t r = 0; r < n; ++r) {
        const std::size_t o = row_start(std::size_t(r));
        kernels::softmax_contiguous(in.data + o, out.data + o, len);
      }
      return {};
    }
    const std::ptrdiff_t n = std::ptrdiff_t(rows * tiles);
#pragma omp parallel for num_threads(threads)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const std::size_t t = std::size_t(i) % tiles;
      const std::size_t o = row_start(std::size_t(i) / tiles) + t * kTile;
      kernels::softmax_strided(in.data + o, out.data + o, len, inner,
                               std::min(kTile, inner - t * kTile), 1);
    }
    return {};
  }

};

}  // namespace infer::layers
