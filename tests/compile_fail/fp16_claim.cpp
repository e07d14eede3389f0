// expect: LayerContract<ClaimsFp16>.*static assertion failed: infer layer contract: the layer
// claims support_fp16_storage \(f16 in storage\) but has no member forward<f16, Pack> A layer whose
// claims are not backed by members must not compile; the one diagnostic names the layer
// (ClaimsFp16) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsFp16 {
  using storage = infer::storage_list<infer::f32, infer::f16>;
  template <infer::StorageElement T, int Pack>
  requires std::same_as<T, float> infer::Status forward(const infer::Mat&, infer::Mat&,
                                                        const infer::Option&)
  const { return {}; }
};

static_assert(infer::check_layer<ClaimsFp16>());
