// expect: LayerContract<NoF32>.*static assertion failed: infer layer contract: the layer's storage
// list must contain f32 A layer whose claims are not backed by members must not compile; the one
// diagnostic names the layer (NoF32) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct NoF32 {
  using storage = infer::storage_list<infer::f16>;
  template <infer::StorageElement T, int Pack>
  infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<NoF32>());
