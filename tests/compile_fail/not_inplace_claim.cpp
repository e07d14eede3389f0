// expect: LayerContract<ClaimsOutOfPlace>.*static assertion failed: infer layer contract: the layer
// claims support_inplace = false but has no member forward \(out of place\) A layer whose claims
// are not backed by members must not compile; the one diagnostic names the layer (ClaimsOutOfPlace)
// and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsOutOfPlace {
  static constexpr bool support_inplace = false;
  template <infer::StorageElement T, int Pack>
  infer::Status forward_inplace(infer::Mat&, const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<ClaimsOutOfPlace>());
