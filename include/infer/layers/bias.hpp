// ncnn Bias: y = x + bias[q] for channel q of a 3-D/4-D blob. As in ncnn, a 1-D or 2-D blob is one
// channel (it takes bias[0]). f32/f16/bf16 storage, every pack, one blob, in place.
#pragma once

#include <infer/concepts.hpp>
#include <infer/layers/detail/affine.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <vector>

namespace infer::layers {

struct Bias {
  static constexpr std::string_view ncnn_type = "Bias";  ///< its type in .param files
  int bias_data_size = 0;          ///< ncnn 0=bias_data_size
  std::vector<float> bias_data{};  ///< weights, bias_data_size values

  using storage = float_storage;
  using packs = all_packs;

  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (ShapeCheck c = same_shape(in, out); !c.ok()) return c;
    if (bias_data_size != (in[0].dims >= 3 ? in[0].c : 1))
      return shape_error("bias_data_size differs from the input's channel count");
    if (!bias_data.empty() && bias_data.size() != std::size_t(bias_data_size))
      return shape_error("bias_data does not hold bias_data_size values");
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option& opt) const {
    return apply<T, Pack>(blob, blob, opt);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    return apply<T, Pack>(bottom, top, opt);
  }

 private:
  template <StorageElement T, int Pack>
  Status apply(const Mat& bottom, const Mat& top, const Option& opt) const {
    const int channels = bottom.dims() >= 3 ? bottom.shape().c : 1;
    if (bias_data_size != channels || bias_data.size() != std::size_t(channels))
      return make_error("Bias: input {} has {} channels; bias_data_size {}, {} bias values",
                        bottom.describe(), channels, bias_data_size, bias_data.size());
    if (bottom.dims() >= 3) {
      detail::per_axis_affine<T, Pack>(bottom, top, nullptr, bias_data.data(), opt);
    } else {
      const MatView<T, Pack> in = bottom.view<T, Pack>(), out = top.view<T, Pack>();
      kernels::channel_affine<T, 1>(in.data, out.data, in.channel_values(), nullptr,
                                    bias_data.data(), act::Identity{});
    }
    return {};
  }
};

}  // namespace infer::layers
