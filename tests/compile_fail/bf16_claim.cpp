// expect: LayerContract<ClaimsBf16>.*static assertion failed: infer layer contract: the layer
// claims support_bf16_storage \(bf16 in storage\) but has no member forward<bf16, Pack> A layer
// whose claims are not backed by members must not compile; the one diagnostic names the layer
// (ClaimsBf16) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsBf16 {
  using storage = infer::storage_list<infer::f32, infer::bf16>;
  template <infer::StorageElement T, int Pack>
  requires std::same_as<T, float> infer::Status forward(const infer::Mat&, infer::Mat&,
                                                        const infer::Option&)
  const { return {}; }
};

static_assert(infer::check_layer<ClaimsBf16>());
