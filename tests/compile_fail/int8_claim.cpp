// expect: LayerContract<ClaimsInt8>.*claims support_int8_storage .* no member forward<i8, Pack>
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsInt8) and the missing member.
#include <infer/concepts.hpp>
#include <span>

struct ClaimsInt8 {
  using storage = infer::storage_list<infer::f32, infer::i8>;
  template <infer::StorageElement T, int Pack>
  requires(!std::same_as<T, infer::i8>) infer::Status
      forward_inplace(infer::Mat&, const infer::Option&)
  const { return {}; }
};

static_assert(infer::check_layer<ClaimsInt8>());
