// ncnn's layer contract as C++20 concepts. A layer shows a capability by what it provides: a
// single-blob forward makes it one-blob-only, forward_inplace makes it in-place, the element types
// and pack widths it lists make it support fp16/bf16/int8 storage and packing. A layer may also
// claim a capability with ncnn's flag names; LayerContract<L> then proves each claim, with one
// static_assert per requirement naming the missing member.
#pragma once

#include <algorithm>
#include <concepts>
#include <infer/element.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>
#include <span>
#include <tuple>
#include <type_traits>

namespace infer {

/// The storage element types a layer accepts (ncnn's support_{fp16,bf16,int8}_storage).
template <StorageElement... Ts>
struct storage_list {
  template <class T>
  static constexpr bool contains = (std::is_same_v<T, Ts> || ...);
  using first = std::tuple_element_t<0, std::tuple<Ts...>>;
};
/// The pack widths a layer accepts (ncnn's support_packing when any is above 1).
template <int... Ps>
struct pack_list {
  static constexpr bool contains(int p) { return ((p == Ps) || ...); }
  static constexpr int max = std::max({Ps...});
  static constexpr bool valid = ((Ps == 1 || Ps == 4 || Ps == 8 || Ps == 16) && ...);
};

using all_storage = storage_list<f32, f16, bf16, i8>;
using float_storage = storage_list<f32, f16, bf16>;
using all_packs = pack_list<1, 4, 8, 16>;

/// How a data-movement layer's blobs relate along its `axis`, for the memory planner: Concat's
/// inputs are consecutive ranges of its output, Slice's outputs consecutive ranges of its input.
/// Where the ranges are whole channel groups, the graph places them in one buffer and the layer
/// finds nothing to copy.
enum class AxisRanges { none, inputs_of_output, outputs_of_input };

namespace vk {
// The Vulkan backend's types; declared here so a layer's GPU members can be checked without
// pulling in Vulkan.
class Context;
class VkMat;
class Command;
class Recorder;
class Uploader;
struct GpuStep;
}  // namespace vk

namespace detail {
template <class L>
struct storage_of {
  using type = storage_list<f32>;
};
template <class L>
requires requires { typename L::storage; }
struct storage_of<L> {
  using type = typename L::storage;
};
template <class L>
struct packs_of {
  using type = pack_list<1>;
};
template <class L>
requires requires { typename L::packs; }
struct packs_of<L> {
  using type = typename L::packs;
};
}  // namespace detail

/// Storage types a layer declares (f32 only when it declares none, as in ncnn).
template <class L>
using layer_storage = typename detail::storage_of<L>::type;
/// Pack widths a layer declares (1 only when it declares none).
template <class L>
using layer_packs = typename detail::packs_of<L>::type;

// ---- the four forward forms, for one (element type, pack) ----

template <class L, class T, int Pack>
concept HasSingleForward = requires(const L& l, const Mat& bottom, Mat& top, const Option& opt) {
  { l.template forward<T, Pack>(bottom, top, opt) } -> std::same_as<Status>;
};
template <class L, class T, int Pack>
concept HasSingleInplace = requires(const L& l, Mat& blob, const Option& opt) {
  { l.template forward_inplace<T, Pack>(blob, opt) } -> std::same_as<Status>;
};
template <class L, class T, int Pack>
concept HasMultiForward = requires(const L& l, std::span<const Mat> bottoms, std::span<Mat> tops,
                                   const Option& opt) {
  { l.template forward<T, Pack>(bottoms, tops, opt) } -> std::same_as<Status>;
};
template <class L, class T, int Pack>
concept HasMultiInplace = requires(const L& l, std::span<Mat> blobs, const Option& opt) {
  { l.template forward_inplace<T, Pack>(blobs, opt) } -> std::same_as<Status>;
};
template <class L, class T, int Pack>
concept HasAnyForward = HasSingleForward<L, T, Pack> || HasSingleInplace<L, T, Pack> ||
    HasMultiForward<L, T, Pack> || HasMultiInplace<L, T, Pack>;

namespace detail {
template <class L>
using first_storage = typename layer_storage<L>::first;
}

// ---- capabilities (ncnn's flags), detected from what the layer provides ----
// clang-format 14 misreads `<` and `>` in concept definitions; these lines are formatted by hand.
// clang-format off

/// one_blob_only: a single input and output blob.
template <class L>
concept OneBlobLayer = HasSingleForward<L, detail::first_storage<L>, 1> ||
                       HasSingleInplace<L, detail::first_storage<L>, 1>;
/// support_inplace: the output may reuse the input's memory.
template <class L>
concept InplaceLayer = HasSingleInplace<L, detail::first_storage<L>, 1> ||
                       HasMultiInplace<L, detail::first_storage<L>, 1>;
/// support_packing: accepts elempack > 1.
template <class L>
concept PackingLayer = (layer_packs<L>::max > 1);
/// support_fp16_storage / support_bf16_storage / support_int8_storage.
template <class L>
concept Fp16StorageLayer = layer_storage<L>::template contains<f16> && HasAnyForward<L, f16, 1>;
template <class L>
concept Bf16StorageLayer = layer_storage<L>::template contains<bf16> && HasAnyForward<L, bf16, 1>;
template <class L>
concept Int8StorageLayer = layer_storage<L>::template contains<i8> && HasAnyForward<L, i8, 1>;
// clang-format on
/// support_vulkan: a GPU forward that records its kernels (infer/vulkan/recorder.hpp). The layer
/// holds no GPU objects: pipelines live in the executor's cache, weights in what it uploaded.
template <class L>
concept VulkanLayer = requires(const L& l, std::span<const vk::VkMat> in,
                               std::span<const vk::VkMat> out, const vk::GpuStep& step,
                               vk::Recorder& rec) {
  { l.forward_vulkan(in, out, step, rec) } -> std::same_as<Status>;
};

namespace detail {
template <class L>
concept ClaimsOneBlob = requires {
  requires bool(L::one_blob_only);
};
template <class L>
concept ClaimsMultiBlob = requires {
  requires !bool(L::one_blob_only);
};
template <class L>
concept ClaimsInplace = requires {
  requires bool(L::support_inplace);
};
template <class L>
concept ClaimsNotInplace = requires {
  requires !bool(L::support_inplace);
};
template <class L>
concept ClaimsVulkan = requires {
  requires bool(L::support_vulkan);
};

template <class L, class T, int... Ps>
constexpr bool all_packs_have_forward(pack_list<Ps...>) {
  return (HasAnyForward<L, T, Ps> && ...);
}
template <class L, class... Ts>
constexpr bool all_storage_have_forward(storage_list<Ts...>) {
  return (HasAnyForward<L, Ts, 1> && ...);
}
template <class L, class T>
constexpr bool storage_ok() {
  return !layer_storage<L>::template contains<T> || HasAnyForward<L, T, 1>;
}
template <class L>
constexpr bool any_forward = HasAnyForward<L, first_storage<L>, 1>;
}  // namespace detail

/// Proves every claim a layer makes; instantiate it (check_layer<L>()) wherever a layer is used.
/// Each static_assert is one requirement and names the member that is missing; the compiler's
/// "In instantiation of LayerContract<YourLayer>" line names the layer.
template <class L>
struct LayerContract {
  static_assert(detail::any_forward<L>,
                "infer layer contract: the layer has no member forward or forward_inplace");
  static_assert(layer_storage<L>::template contains<f32>,
                "infer layer contract: the layer's storage list must contain f32");
  static_assert(layer_packs<L>::valid,
                "infer layer contract: the layer's packs must be among 1, 4, 8 and 16");
  static_assert(!detail::ClaimsOneBlob<L> || !detail::any_forward<L> || OneBlobLayer<L>,
                "infer layer contract: the layer claims one_blob_only but has no member "
                "forward(const Mat&, Mat&, const Option&) or forward_inplace(Mat&, const Option&)");
  static_assert(!detail::ClaimsMultiBlob<L> || !detail::any_forward<L> ||
                    HasMultiForward<L, detail::first_storage<L>, 1> ||
                    HasMultiInplace<L, detail::first_storage<L>, 1>,
                "infer layer contract: the layer claims one_blob_only = false but has no member "
                "forward(span<const Mat>, span<Mat>, const Option&) or "
                "forward_inplace(span<Mat>, const Option&)");
  static_assert(!detail::ClaimsInplace<L> || !detail::any_forward<L> || InplaceLayer<L>,
                "infer layer contract: the layer claims support_inplace but has no member "
                "forward_inplace");
  static_assert(!detail::ClaimsNotInplace<L> || !detail::any_forward<L> ||
                    HasSingleForward<L, detail::first_storage<L>, 1> ||
                    HasMultiForward<L, detail::first_storage<L>, 1>,
                "infer layer contract: the layer claims support_inplace = false but has no member "
                "forward (out of place)");
  static_assert(!detail::any_forward<L> || detail::storage_ok<L, f16>(),
                "infer layer contract: the layer claims support_fp16_storage (f16 in storage) but "
                "has no member forward<f16, Pack>");
  static_assert(!detail::any_forward<L> || detail::storage_ok<L, bf16>(),
                "infer layer contract: the layer claims support_bf16_storage (bf16 in storage) but "
                "has no member forward<bf16, Pack>");
  static_assert(!detail::any_forward<L> || detail::storage_ok<L, i8>(),
                "infer layer contract: the layer claims support_int8_storage (i8 in storage) but "
                "has no member forward<i8, Pack>");
  static_assert(!detail::any_forward<L> ||
                    detail::all_packs_have_forward<L, detail::first_storage<L>>(layer_packs<L>{}),
                "infer layer contract: the layer claims support_packing (a pack above 1 in packs) "
                "but has no member forward<T, Pack> for that pack");
  static_assert(!detail::ClaimsVulkan<L> || VulkanLayer<L>,
                "infer layer contract: the layer claims support_vulkan but has no member "
                "forward_vulkan(std::span<const vk::VkMat>, std::span<const vk::VkMat>, "
                "const vk::GpuStep&, vk::Recorder&) const");
  static constexpr bool ok = true;
};

/// Instantiates the contract checks for L; true when they pass (a failure is a compile error).
template <class L>
consteval bool check_layer() {
  return LayerContract<L>::ok;
}

/// A layer that transforms its weights once for the element type and pack it will run at (for
/// example into the layout its kernel reads), before any forward. The graph calls it at load time
/// and the runner before it runs the layer, so forward itself allocates nothing for weights.
template <class L>
concept PreparedLayer = requires(L& l, ElemType type, int pack, const Option& opt) {
  { l.prepare(type, pack, opt) } -> std::same_as<Status>;
};

/// A PreparedLayer whose layout also follows the input's shape (Convolution: Winograd's tile by
/// the output map's size): `prepare(type, pack, opt, in)`, and `layout(pack, in)` naming the
/// layout it makes beyond the pack, so that a caller with several input shapes knows when one
/// prepared copy serves them (equal values). Callers that know the shape (the graphs, the runner)
/// pass it; the three-argument prepare chooses without it.
template <class L>
concept ShapePreparedLayer = PreparedLayer<L> &&
    requires(L& l, const L& cl, ElemType type, int pack, const Option& opt, const Shape& in) {
  { l.prepare(type, pack, opt, in) } -> std::same_as<Status>;
  { cl.layout(pack, in) } -> std::convertible_to<int>;
};

/// A layer that applies an activation functor to its accumulators before the store (ncnn's
/// 9=activation_type): `forward_fused<T, Pack>(bottom, top, opt, act)` with the functor a template
/// parameter of the kernel. The composer fuses a following activation layer into it.
template <class L, class T, int Pack, class Act>
concept FusesActivation = requires(const L& l, const Mat& bottom, Mat& top, const Option& opt,
                                   const Act& act) {
  { l.template forward_fused<T, Pack>(bottom, top, opt, act) } -> std::same_as<Status>;
};

/// A fusing layer that also takes in a residual sum: forward_residual(bottom, residual, top, opt,
/// act) computes act(layer(bottom) + residual), the residual of the output's shape (Convolution).
template <class L, class T, int Pack, class Act>
concept FusesResidual = requires(const L& l, const Mat& bottom, const Mat& residual, Mat& top,
                                 const Option& opt, const Act& act) {
  { l.template forward_residual<T, Pack>(bottom, residual, top, opt, act) } -> std::same_as<Status>;
};

/// A layer that folds a following per-channel affine map y = x * a + b (BatchNorm, Scale) into its
/// weights and bias.
template <class L>
concept FoldsAffine = requires(L& l, std::span<const float> a, std::span<const float> b) {
  { l.fold_affine(a, b) } -> std::same_as<Status>;
};

/// A type that satisfies the layer contract: some forward form for its first storage type.
template <class L>
concept Layer = std::is_class_v<L> && detail::any_forward<L>;

}  // namespace infer
