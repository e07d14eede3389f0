// expect: LayerContract<ClaimsInplace>.*claims support_inplace but has no member forward_inplace
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsInplace) and the missing member.
#include <infer/concepts.hpp>
#include <span>

struct ClaimsInplace {
  static constexpr bool support_inplace = true;
  template <infer::StorageElement T, int Pack>
  infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<ClaimsInplace>());
