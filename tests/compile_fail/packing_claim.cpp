// expect: LayerContract<ClaimsPacking>.*static assertion failed: infer layer contract: the layer
// claims support_packing \(a pack above 1 in packs\) but has no member forward<T, Pack> for that
// pack A layer whose claims are not backed by members must not compile; the one diagnostic names
// the layer (ClaimsPacking) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct ClaimsPacking {
  using packs = infer::pack_list<1, 4>;
  template <infer::StorageElement T, int Pack>
  requires(Pack == 1) infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&)
  const { return {}; }
};

static_assert(infer::check_layer<ClaimsPacking>());
