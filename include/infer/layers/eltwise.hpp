// ncnn Eltwise: one output from N >= 2 inputs of one shape, by product, (weighted) sum or maximum,
// accumulated in f32 and rounded once. f32/f16/bf16 storage; no i8: the inputs' int8 scales live
// outside the blobs in ncnn's scheme and would differ between inputs.
#pragma once

#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/binary.hpp>
#include <infer/layers/detail/parallel_values.hpp>
#include <infer/shape.hpp>
#include <infer/small_vector.hpp>
#include <span>
#include <string_view>
#include <vector>
#ifdef INFER_HAS_VULKAN
#include <infer/layers/detail/vulkan_forward.hpp>
#include <infer/vulkan/binary_op.hpp>
#endif

namespace infer::layers {

struct Eltwise {
  static constexpr std::string_view ncnn_type = "Eltwise";  ///< its type in .param files
  /// Element-wise: as fast at any pack, so the composer may run it at its inputs' pack.
  static constexpr bool elementwise = true;
  int op_type = 0;              ///< ncnn 0=op_type: 0 product, 1 sum, 2 max
  SmallVector<float, 64> coeffs{};  ///< ncnn 1=coeffs: sum weights, one per input; empty means all 1.
                                ///< Product and max ignore them, as in ncnn.

  using storage = float_storage;
  using packs = all_packs;
  /// Its GPU forward applies a following activation before the store (the composer fuses one
  /// into a node placed on the GPU).
  static constexpr bool vulkan_fuses_activation = true;

  /// A sum with unit weights (or none): a GPU convolution producing one input can take it in.
  constexpr bool is_plain_sum() const {
    if (op_type != 1) return false;
    for (float c : coeffs)
      if (c != 1.f) return false;
    return true;
  }

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (op_type < 0 || op_type > 2)
      return shape_error("op_type must be 0 (prod), 1 (sum) or 2 (max)");
    if (in.size() < 2) return shape_error("takes at least 2 inputs");
    if (out.size() != 1) return shape_error("gives exactly one output blob");
    if (coeffs.overflowed()) return shape_error("at most 64 coeffs");
    if (op_type == 1 && !coeffs.empty() && coeffs.size() != in.size())
      return shape_error("coeffs must hold one weight per input, or none");
    if (in[0].dims < 1 || in[0].dims > 4) return shape_error("input must have 1 to 4 dims");
    for (const Shape& s : in)
      if (s != in[0]) return shape_error("all inputs must have the same shape");
    out[0] = in[0];
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    if (op_type < 0 || op_type > 2)
      return make_error("Eltwise: op_type must be 0 (prod), 1 (sum) or 2 (max), got {}", op_type);
    if (bottoms.size() < 2)
      return make_error("Eltwise: takes at least 2 inputs, got {}", bottoms.size());
    if (tops.empty()) return make_error("Eltwise: no output Mat given (expected 1)");
    const bool weighted = op_type == 1 && !coeffs.empty();
    if (weighted && coeffs.size() != bottoms.size())
      return make_error("Eltwise: {} coeffs given for {} inputs (expected one per input, or none)",
                        coeffs.size(), bottoms.size());
    for (std::size_t i = 0; i < bottoms.size(); ++i) {
      if (bottoms[i].empty()) return make_error("Eltwise: input {} is empty", i);
      if (!bottoms[i].is<T, Pack>())
        return make_error("Eltwise: input {} is {}, expected {} pack {}", i, bottoms[i].describe(),
                          to_string(elem_type_v<T>), Pack);
      if (bottoms[i].shape() != bottoms[0].shape())
        return make_error("Eltwise: input {} is {} but input 0 is {}; all shapes must be equal", i,
                          bottoms[i].describe(), bottoms[0].describe());
    }
    Mat& top = tops[0];
    INFER_TRY(top.create(bottoms[0].shape(), elem_type_v<T>, Pack, opt.blob_alloc()));

    std::vector<MatView<T, Pack>> in;
    in.reserve(bottoms.size());
    for (const Mat& m : bottoms) in.push_back(m.view<T, Pack>());
    const MatView<T, Pack> out = top.view<T, Pack>();
    const float* w = weighted ? coeffs.data() : nullptr;
    const auto run = [&](const auto& op) {
      const auto piece = [&](int q, std::size_t begin, std::size_t n) {
        // Up to 16 inputs without touching the heap inside the parallel loop.
        const T* fixed[16];
        std::vector<const T*> many(in.size() > 16 ? in.size() : 0);
        const T** src = in.size() > 16 ? many.data() : fixed;
        for (std::size_t k = 0; k < in.size(); ++k) src[k] = in[k].channel(q) + begin;
        kernels::reduce_inputs(src, in.size(), w, out.channel(q) + begin, n, op);
      };
      detail::parallel_values(out.c, out.channel_values(), opt.num_threads, piece);
    };
    if (op_type == 0) run(binop::Mul{});
    if (op_type == 1) run(binop::Add{});
    if (op_type == 2) run(binop::Max{});
    return {};
  }

#ifdef INFER_HAS_VULKAN
  /// On the GPU: the element-wise kernel over the inputs in turn (product, weighted sum, max), the
  /// step's fused activation applied by the last.
  Status forward_vulkan(std::span<const vk::VkMat> in, std::span<const vk::VkMat> out,
                        const vk::GpuStep& step, vk::Recorder& rec) const {
    if (out.size() != 1) return make_error("Eltwise GPU forward: one output, got {}", out.size());
    SmallVector<const vk::VkMat*, 64> inputs;
    for (const vk::VkMat& m : in) inputs.push_back(&m);
    if (inputs.overflowed()) return make_error("Eltwise GPU forward: at most 64 inputs");
    return vk::record_eltwise(rec, std::span<const vk::VkMat* const>(inputs.data(), inputs.size()),
                              out[0], static_cast<vk::EltwiseKind>(op_type),
                              std::span<const float>(coeffs.data(), coeffs.size()),
                              vk::gpu_activation(step.act));
  }
#endif
};

}  // namespace infer::layers
