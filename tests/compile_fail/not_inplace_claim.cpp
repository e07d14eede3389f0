// expect: LayerContract<ClaimsOutOfPlace>.*claims support_inplace = false but has no member forward
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsOutOfPlace) and the missing member.
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
