// expect: LayerContract<ClaimsOneBlob>.*claims one_blob_only but has no member forward
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsOneBlob) and the missing member.
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
