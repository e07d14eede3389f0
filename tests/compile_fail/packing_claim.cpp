// expect: LayerContract<ClaimsPacking>.*claims support_packing .* no member forward<T, Pack>
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsPacking) and the missing member.
#include <infer/concepts.hpp>
#include <span>

struct ClaimsPacking {
  using packs = infer::pack_list<1, 4>;
  template <infer::StorageElement T, int Pack>
  requires(Pack == 1) infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&)
  const { return {}; }
};

static_assert(infer::check_layer<ClaimsPacking>());
