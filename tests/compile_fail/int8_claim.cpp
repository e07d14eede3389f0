// expect: LayerContract<ClaimsInt8>.*static assertion failed: infer layer contract: the layer
// claims support_int8_storage \(i8 in storage\) but has no member forward<i8, Pack> A layer whose
// claims are not backed by members must not compile; the one diagnostic names the layer
// (ClaimsInt8) and the missing member.
#include <concepts>
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
