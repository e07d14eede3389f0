// ncnn LRN (local response normalization) of a 3-D blob: y = x * (bias + alpha / n * sum)^-beta,
// the sum of squares taken across neighbouring channels or over a square window of the channel.
// One blob, in place or not, f32/f16/bf16 storage with f32 arithmetic, every pack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/lrn.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/lrn.hpp>
#endif

namespace infer::layers {

struct LRN {
  static constexpr std::string_view ncnn_type = "LRN";  ///< its type in .param files
  /// ncnn 0=region_type: 0 ACROSS_CHANNELS (channels c - local_size/2 .. c + local_size/2, a
  /// window of 2 * (local_size / 2) + 1 channels, n = local_size), 1 WITHIN_CHANNEL (a
  /// local_size x local_size window starting local_size/2 before the pixel, n = local_size^2);
  /// squares outside the blob count as 0.
  int region_type = 0;
  int local_size = 5;  ///< ncnn 1=local_size
  float alpha = 1.f;   ///< ncnn 2=alpha
  float beta = 0.75f;  ///< ncnn 3=beta
  float bias = 1.f;    ///< ncnn 4=bias

  /// Pixels the across-channel pass takes at once: their squares of every channel (a table of
  /// 32 x (channels + 4) floats, 33 KB at 256 channels) stay in L1 while each group reads them.
  static constexpr std::size_t kAcrossTile = 32;

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (in[0].dims != 3) return shape_error("input must be 3-D (w, h, c)");
    if (region_type != 0 && region_type != 1)
      return shape_error("region_type must be 0 (across channels) or 1 (within channel)");
    if (local_size < 1) return shape_error("local_size must be positive");
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return run<T, Pack>(blob, blob, opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(check(bottom));
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    return run<T, Pack>(bottom, top, opt);
  }

  /// Within a channel the GPU kernel reads neighbours other invocations write: not in place.
  constexpr bool vulkan_inplace() const { return region_type == 0; }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the LRN kernel (across channels runs in place; within a channel reads its
  /// neighbours, so the plan must give it its own output).
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("LRN GPU forward: one input and one output, got {} and {}", in.size(),
                        out.size());
    return vk::record_lrn(rec, in[0], out[0], region_type, local_size, alpha, beta, bias);
  }
#endif

 private:
  Status check(const Mat& m) const {
    if (region_type != 0 && region_type != 1)
      return make_error(
          "LRN: region_type must be 0 (across channels) or 1 (within channel), got {}",
          region_type);
    if (local_size < 1) return make_error("LRN: local_size must be positive, got {}", local_size);
    if (m.dims() != 3) return make_error("LRN: input must be 3-D (w, h, c), got {}", m.describe());
    return {};
  }

  template <StorageElement T, int Pack>
  Status run(const Mat& bottom, const Mat& top, const Option& opt) const {
    INFER_TRY(check(bottom));
    const MatView<T, Pack> in = bottom.view<T, Pack>(), out = top.view<T, Pack>();
    const int groups = in.c;
    const std::size_t pixels = std::size_t(in.w) * in.h;
    const std::size_t values = pixels * Pack;  // of one channel group
    const int threads = groups > 1 && values * std::size_t(groups) >= 4096 ? opt.num_threads : 1;

    if (region_type == 0) {
      // Across channels, a tile of kAcrossTile pixels at a time (threads take tiles): the squares
      // of every channel of the tile's pixels go into a pixel-major table with zeros around (each
      // window one contiguous run; it stays in L1), then each channel group's window sums and
      // scaling. In place is safe: a tile reads all of its values before it writes any.
      const int r = local_size / 2;
      const std::size_t channels = std::size_t(groups) * Pack;
      const std::size_t row = channels + 2 * std::size_t(r);
      const std::size_t tiles = (pixels + kAcrossTile - 1) / kAcrossTile;
      const float k = alpha / float(local_size);
#pragma omp parallel num_threads(threads) if (threads > 1 && tiles > 1)
      {
        std::vector<float> table(kAcrossTile * row, 0.f), sums(kAcrossTile * Pack);
#pragma omp for schedule(static)
        for (std::size_t t = 0; t < tiles; ++t) {
          const std::size_t p0 = t * kAcrossTile, n = std::min(kAcrossTile, pixels - p0);
          for (int q = 0; q < groups; ++q)
            kernels::lrn_squares_by_pixel<T, Pack>(in.channel(q) + p0 * Pack, n, table.data(), row,
                                                   std::size_t(r) + std::size_t(q) * Pack);
          for (int q = 0; q < groups; ++q) {
            kernels::lrn_across_sums<Pack>(table.data(), n, row, std::size_t(q) * Pack, 2 * r + 1,
                                           sums.data());
            kernels::lrn_scale(in.channel(q) + p0 * Pack, out.channel(q) + p0 * Pack, sums.data(),
                               n * Pack, k, bias, beta);
          }
        }
      }
      return {};
    }

    // One f32 window sum per value, in the group's packed order.
    std::vector<float> sums(values * std::size_t(groups));
    const int pad = local_size / 2;
    const float k = alpha / float(local_size * local_size);
#pragma omp parallel for num_threads(threads)
    for (int q = 0; q < groups; ++q) {
      std::vector<float> line(std::size_t(in.w + local_size - 1) * Pack), rows(values);
      float* s = sums.data() + values * std::size_t(q);
      kernels::lrn_within_sums<T, Pack>(in.channel(q), in.w, in.h, local_size, pad, line.data(),
                                        rows.data(), s);
      kernels::lrn_scale(in.channel(q), out.channel(q), s, values, k, bias, beta);
    }
    return {};
  }
};

}  // namespace infer::layers
