// expect: LayerContract<ClaimsVulkan>.*static assertion failed: infer layer contract: the layer
// claims support_vulkan but has no member create_pipeline\(const vk::Context&\) and forward\(const
// VkMat&, VkMat&, Command&, const Option&\) A layer whose claims are not backed by members must not
// compile; the one diagnostic names the layer (ClaimsVulkan) and the missing member.
#include <concepts>
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
