// expect: LayerContract<ClaimsInplace>.*static assertion failed: infer layer contract: the layer
// claims support_inplace but has no member forward_inplace A layer whose claims are not backed by
// members must not compile; the one diagnostic names the layer (ClaimsInplace) and the missing
// member.
#include <concepts>
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
