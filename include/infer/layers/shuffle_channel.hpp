// ncnn ShuffleChannel (ShuffleNet): channels seen as a group x (channels / group) matrix are
// transposed. Pure data movement: every storage type and pack; one blob, out of place.
#pragma once

#include <infer/concepts.hpp>
#include <infer/kernels/pack.hpp>
#include <infer/layers/detail/relayout.hpp>
#include <infer/shape.hpp>
#include <string_view>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/relayout.hpp>
#endif

namespace infer::layers {

struct ShuffleChannel {
  static constexpr std::string_view ncnn_type = "ShuffleChannel";  ///< its type in .param files
  int group = 1;    ///< ncnn 0=group; must divide the channel count
  int reverse = 0;  ///< ncnn 1=reverse; nonzero undoes the shuffle of the same group

  using storage = all_storage;
  using packs = all_packs;
  /// Only moves values: a graph runs it at the pack its inputs arrive in, not converting them.
  static constexpr bool moves_data = true;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (group < 1) return shape_error("group must be at least 1");
    if ((in[0].dims >= 3 ? in[0].c : 1) % group != 0)
      return shape_error("group must divide the channel count");
    return {};
  }

  /// A 3-D or 4-D blob's channels are shuffled (a 4-D channel moves with all its d*h*w values;
  /// ncnn's reference handles 3-D only). A 1-D or 2-D blob counts as one channel, as in ncnn, so
  /// only group 1 (a copy) is valid for it.
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    const Shape s = bottom.shape();
    const int channels = s.dims >= 3 ? s.c : 1;
    if (group < 1) return make_error("ShuffleChannel: group must be at least 1, got {}", group);
    if (channels % group != 0)
      return make_error(
          "ShuffleChannel: group {} does not divide the {} channels of the {}-D input", group,
          channels, s.dims);
    INFER_TRY(top.create(s, elem_type_v<T>, Pack, opt.blob_alloc()));
    using V = detail::bits_t<T>;
    // Reversing the transpose of a g x (C/g) matrix is the transpose of a (C/g) x g one.
    const int rows = reverse ? channels / group : group;
    const int cols = channels / rows;
    if (rows == 1 || cols == 1) {  // the identity
      detail::copy_flat<V>(bottom, top, opt.num_threads);
      return {};
    }
    const detail::Layout a = detail::Layout::of(bottom), b = detail::Layout::of(top);
    const std::size_t plane = a.plane();
    const V* src = static_cast<const V*>(bottom.data());
    V* dst = static_cast<V*>(top.data());
    const int groups = channels / Pack;
    if constexpr (Pack > 1 && kernels::detail::kTileTranspose<Pack, sizeof(V)>) {
      if (s.dims >= 3) {
        // Each output lane's values lie Pack apart and come from another input group: one value
        // at a time, the shuffles of a NanoDet forward took 3.5% of it. Instead each input group
        // is transposed (Pack x Pack in registers) into the pack-1 planes of its lanes' output
        // channels, in workspace memory, and those planes are packed again by the same transposes.
        Mat planes;
        INFER_TRY(planes.create(s, elem_type_v<T>, 1, opt.workspace_alloc()));
        V* pd = static_cast<V*>(planes.data());
        const std::size_t pstep = planes.cstep();
#pragma omp parallel for num_threads(opt.num_threads) if (channels * plane >= (1u << 15))
        for (int g = 0; g < groups; ++g) {
          V* to[Pack];
          for (int l = 0; l < Pack; ++l) {
            const int from = g * Pack + l;  // row from / cols, column from % cols of the matrix
            to[l] = pd + std::size_t((from % cols) * rows + from / cols) * pstep;
          }
          kernels::unpack_group<Pack, V>(src + std::size_t(g) * a.stride[0], plane, to);
        }
        kernels::repack<V, 1, Pack>(pd, pstep, dst, top.cstep(), channels, plane, opt.num_threads);
        return {};
      }
    }
#pragma omp parallel for num_threads(opt.num_threads)
    for (int g = 0; g < groups; ++g) {
      for (int l = 0; l < Pack; ++l) {
        const int q = g * Pack + l;  // output channel: row q % rows, column q / rows
        const int from = (q % rows) * cols + q / rows;  // of the input's rows x cols matrix
        detail::copy_run(src + a.offset(0, from), Pack, dst + b.offset(0, q), Pack, plane);
      }
    }
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the channel permutation as one gather (relayout kernel).
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep&, vk::Recorder& rec) const {
    if (in.size() != 1 || out.size() != 1)
      return make_error("ShuffleChannel GPU forward: one input and one output, got {} and {}",
                        in.size(), out.size());
    return vk::record_shuffle_channel(rec, in[0], out[0], group, reverse != 0);
  }
#endif
};

}  // namespace infer::layers
