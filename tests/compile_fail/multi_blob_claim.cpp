// expect: LayerContract<ClaimsMultiBlob>.*claims one_blob_only = false but has no member forward
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsMultiBlob) and the missing member.
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
