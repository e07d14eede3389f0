// ncnn Noop: passes its blobs through unchanged, in place. Every storage type and pack.
#pragma once

#include <infer/concepts.hpp>
#include <span>

namespace infer::layers {

struct Noop {
  using storage = all_storage;
  using packs = all_packs;

  template <StorageElement T, int Pack>
  Status forward_inplace(std::span<Mat>, const Option&) const {
    return {};
  }
};

}  // namespace infer::layers
