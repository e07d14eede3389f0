// expect: LayerContract<NoForward>.*static assertion failed: infer layer contract: the layer has no
// member forward or forward_inplace A layer whose claims are not backed by members must not
// compile; the one diagnostic names the layer (NoForward) and the missing member.
#include <concepts>
#include <infer/concepts.hpp>
#include <span>

struct NoForward {
  float slope = 0.f;
};

static_assert(infer::check_layer<NoForward>());
