// expect: LayerContract<ClaimsOneBlob>.*static assertion failed: infer layer contract: the layer
// claims one_blob_only but has no member forward\(const Mat&, Mat&, const Option&\) or
// forward_inplace\(Mat&, const Option&\) A layer whose claims are not backed by members must not
// compile; the one diagnostic names the layer (ClaimsOneBlob) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsOneBlob {
  static constexpr bool one_blob_only = true;
  template <infer::StorageElement T, int Pack>
  infer::Status forward(std::span<const infer::Mat>, std::span<infer::Mat>,
                        const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<ClaimsOneBlob>());
