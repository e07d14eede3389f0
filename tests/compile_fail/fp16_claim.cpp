// expect: LayerContract<ClaimsFp16>.*claims support_fp16_storage .* no member forward<f16, Pack>
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsFp16) and the missing member.
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
