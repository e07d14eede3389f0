// expect: LayerContract<NoForward>.*has no member forward or forward_inplace
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (NoForward) and the missing member.
#include <infer/concepts.hpp>
#include <span>

struct NoForward {
  float slope = 0.f;
};

static_assert(infer::check_layer<NoForward>());
