// ncnn Noop: passes its blobs through unchanged, in place. Every storage type and pack.
#pragma once

#include <infer/concepts.hpp>
#include <infer/shape.hpp>
#include <span>
#include <string_view>

namespace infer::layers {

struct Noop {
  static constexpr std::string_view ncnn_type = "Noop";  ///< its type in .param files
  using storage = all_storage;
  using packs = all_packs;

  /// The blobs pass through: output i is input i, for as many outputs as the node has.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.empty()) return shape_error("expects at least one input blob");
    if (out.size() > in.size()) return shape_error("gives at most as many outputs as inputs");
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (in[i].dims < 1 || in[i].dims > 4) return shape_error("input must have 1 to 4 dims");
      out[i] = in[i];
    }
    return {};
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(std::span<Mat>, const Option&) const {
    return {};
  }
};

}  // namespace infer::layers
