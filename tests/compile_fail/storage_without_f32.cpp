// expect: LayerContract<NoF32>.*storage list must contain f32
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (NoF32) and the missing member.
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
