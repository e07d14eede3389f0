// expect: LayerContract<ClaimsVulkan>.*claims support_vulkan but has no member forward_vulkan
// A layer whose claim is not backed by a member must not compile; the diagnostic names the
// layer (ClaimsVulkan) and the missing member.
#include <infer/concepts.hpp>
#include <span>

struct ClaimsVulkan {
  static constexpr bool support_vulkan = true;
  template <infer::StorageElement T, int Pack>
  infer::Status forward(const infer::Mat&, infer::Mat&, const infer::Option&) const {
    return {};
  }
};

static_assert(infer::check_layer<ClaimsVulkan>());
