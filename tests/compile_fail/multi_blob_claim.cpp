// expect: LayerContract<ClaimsMultiBlob>.*static assertion failed: infer layer contract: the layer
// claims one_blob_only = false but has no member forward\(span<const Mat>, span<Mat>, const
// Option&\) A layer whose claims are not backed by members must not compile; the one diagnostic
// names the layer (ClaimsMultiBlob) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsMultiBlob {
  static constexpr bool one_blob_only = false;
  template <infer::StorageElement T, int Pack>
  infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<ClaimsMultiBlob>());
