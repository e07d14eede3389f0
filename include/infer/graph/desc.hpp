// How a graph is written and what the passes see of it. A user writes layer values with named
// input and output blobs (node(), input(), output(), chain()); the passes work on a plain
// description (GraphDesc: nodes with blob ids and the capabilities of their layers), which a
// network read from a file can fill in at load time just as well.
#pragma once

#include <array>
#include <cstddef>
#include <infer/concepts.hpp>
#include <infer/kernels/activation.hpp>
#include <infer/layers/detail/activation_param.hpp>
#include <infer/shape.hpp>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace infer::graph {

// ---- writing a graph ------------------------------------------------------------------------

/// Blob names of a node's inputs or outputs.
template <std::size_t N>
using Blobs = std::array<std::string_view, N>;

/// Several blob names: node(Concat{}, from("a", "b"), "cat").
template <class... S>
constexpr Blobs<sizeof...(S)> from(S... names) {
  return {std::string_view(names)...};
}
/// Several output names: node(Split{}, "x", to("a", "b")).
template <class... S>
constexpr Blobs<sizeof...(S)> to(S... names) {
  return {std::string_view(names)...};
}

/// A layer value and the blobs it reads and writes.
template <class L,           ///< the layer type
          std::size_t NIn,   ///< number of input blobs
          std::size_t NOut>  ///< number of output blobs
struct Node {
  L layer;
  Blobs<NIn> in;
  Blobs<NOut> out;
  std::string_view name;  ///< for printing; defaults to the first output blob's name
};

template <class L>
constexpr Node<L, 1, 1> node(L layer, std::string_view in, std::string_view out,
                             std::string_view name = {}) {
  return {std::move(layer), {in}, {out}, name.empty() ? out : name};
}
template <class L, std::size_t I>
constexpr Node<L, I, 1> node(L layer, Blobs<I> in, std::string_view out,
                             std::string_view name = {}) {
  return {std::move(layer), in, {out}, name.empty() ? out : name};
}
template <class L, std::size_t O>
constexpr Node<L, 1, O> node(L layer, std::string_view in, Blobs<O> out,
                             std::string_view name = {}) {
  return {std::move(layer), {in}, out, name.empty() ? out[0] : name};
}
template <class L, std::size_t I, std::size_t O>
constexpr Node<L, I, O> node(L layer, Blobs<I> in, Blobs<O> out, std::string_view name = {}) {
  return {std::move(layer), in, out, name.empty() ? out[0] : name};
}

/// A graph input: its blob name and shape (the arena is planned for this shape).
struct Input {
  std::string_view blob;
  Shape shape;
};
constexpr Input input(std::string_view blob, Shape shape) { return {blob, shape}; }

/// A graph output: a blob the caller reads after forward.
struct Output {
  std::string_view blob;
};
constexpr Output output(std::string_view blob) { return {blob}; }

template <class T>
struct is_node : std::false_type {};
template <class L, std::size_t I, std::size_t O>
struct is_node<Node<L, I, O>> : std::true_type {};

namespace detail {
/// Whether storage mask `mask` (bit 1 << ElemType per type) holds type t.
constexpr bool has_type(unsigned mask, ElemType t) { return (mask >> unsigned(t)) & 1u; }

/// Element I of a flat list (a base of Slots).
template <std::size_t I, class T>
struct Slot {
  T value;
};
/// Values of several types in one flat object: each is a base, found by its index in one step
/// (slot_get deduces the type from the base). Not a std::tuple, whose recursive _Tuple_impl (and
/// std::tuple_cat's intermediate tuples) cost a few hundred nodes' graph minutes of compile time:
/// instantiations quadratic in the node count.
template <class Seq, class... Ts>
struct Slots;
template <std::size_t... I, class... Ts>
struct Slots<std::index_sequence<I...>, Ts...> : Slot<I, Ts>... {};
template <std::size_t I, class T>
constexpr const T& slot_get(const Slot<I, T>& s) {
  return s.value;
}
template <std::size_t I, class T>
constexpr T& slot_get(Slot<I, T>& s) {
  return s.value;
}

/// Where each node is among make_graph's arguments.
template <class... Parts>
constexpr auto node_positions() {
  constexpr std::array<bool, sizeof...(Parts)> node_part{is_node<Parts>::value...};
  std::array<std::size_t, (std::size_t(is_node<Parts>::value) + ...)> at{};
  std::size_t k = 0;
  for (std::size_t p = 0; p < node_part.size(); ++p)
    if (node_part[p]) at[k++] = p;
  return at;
}
}  // namespace detail

/// A graph's nodes, in the written order: get<I>(list) is node I.
template <class... Nodes>
struct NodeList {
  detail::Slots<std::index_sequence_for<Nodes...>, Nodes...> slots;
  static constexpr std::size_t size = sizeof...(Nodes);
};
template <std::size_t I, class... Nodes>
constexpr const auto& get(const NodeList<Nodes...>& list) {
  return detail::slot_get<I>(list.slots);
}

/// A whole graph: inputs, nodes (in any order; the passes sort them) and outputs.
template <std::size_t NInputs, std::size_t NOutputs, class... Nodes>
struct Graph {
  std::array<Input, NInputs> inputs;
  NodeList<Nodes...> nodes;
  std::array<Output, NOutputs> outputs;

  static constexpr std::size_t node_count = sizeof...(Nodes);
};

/// Builds a Graph from input(...), node(...) and output(...) values in any order of kinds (inputs
/// first and outputs last read best).
template <class... Parts>
constexpr auto make_graph(Parts... parts) {
  constexpr std::size_t kInputs = (std::size_t(std::is_same_v<Parts, Input>) + ...);
  constexpr std::size_t kOutputs = (std::size_t(std::is_same_v<Parts, Output>) + ...);
  constexpr std::size_t kNodes = (std::size_t(is_node<Parts>::value) + ...);
  static_assert(
      ((std::is_same_v<Parts, Input> || std::is_same_v<Parts, Output> || is_node<Parts>::value) &&
       ...),
      "make_graph: every argument must be an input(), node() or output()");
  std::array<Input, kInputs> ins{};
  std::array<Output, kOutputs> outs{};
  std::size_t i = 0, o = 0;
  auto collect = [&](const auto& p) {
    using P = std::decay_t<decltype(p)>;
    if constexpr (std::is_same_v<P, Input>) ins[i++] = p;
    if constexpr (std::is_same_v<P, Output>) outs[o++] = p;
  };
  (collect(parts), ...);
  const detail::Slots<std::index_sequence_for<Parts...>, Parts...> all{{parts}...};
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    constexpr std::array<std::size_t, kNodes> at = detail::node_positions<Parts...>();
    using G = Graph<kInputs, kOutputs,
                    std::remove_cvref_t<decltype(detail::slot_get<at[K]>(all))>...>;
    return G{ins, {{{detail::slot_get<at[K]>(all)}...}}, outs};
  }(std::make_index_sequence<kNodes>{});
}

namespace detail {
/// Blob names for chain(): "chain:1", "chain:2", ... in static storage, so string_views into them
/// are constant expressions.
inline constexpr std::size_t kChainMax = 256;
struct ChainNames {
  std::array<std::array<char, 12>, kChainMax> text{};
  constexpr ChainNames() {
    for (std::size_t i = 0; i < kChainMax; ++i) {
      const char prefix[] = "chain:";
      std::size_t k = 0;
      for (; prefix[k]; ++k) text[i][k] = prefix[k];
      char digits[4]{};
      std::size_t n = 0, v = i + 1;
      do {
        digits[n++] = char('0' + v % 10);
        v /= 10;
      } while (v);
      while (n) text[i][k++] = digits[--n];
    }
  }
  constexpr std::string_view operator[](std::size_t i) const {
    std::size_t n = 0;
    while (text[i][n]) ++n;
    return {text[i].data(), n};
  }
};
inline constexpr ChainNames kChainNames{};
}  // namespace detail

/// A plain chain: one input, then each layer reads the previous one's output; the last output is
/// the graph output, named "output".
template <class... L>
constexpr auto chain(Input in, L... layers) {
  static_assert(sizeof...(L) >= 1, "chain: give at least one layer");
  static_assert(sizeof...(L) <= detail::kChainMax, "chain: at most 256 layers");
  std::size_t k = 0;
  constexpr std::size_t n = sizeof...(L);
  auto make = [&](auto layer) {
    const std::string_view src = k == 0 ? in.blob : detail::kChainNames[k - 1];
    const std::string_view dst = k + 1 == n ? std::string_view("output") : detail::kChainNames[k];
    ++k;
    return node(std::move(layer), src, dst);
  };
  // Braced initialization evaluates left to right, so blob k feeds layer k + 1.
  return std::apply([&](auto... nodes) { return make_graph(in, nodes..., output("output")); },
                    std::tuple{make(std::move(layers))...});
}

// ---- what the passes see ------------------------------------------------------------------------

namespace detail {
template <class L>
constexpr std::string_view raw_type_name() {
  std::string_view f = __PRETTY_FUNCTION__;  // "... [with L = infer::layers::ReLU; ...]"
  const std::size_t start = f.find("L = ") + 4;
  const std::size_t end = f.find_first_of(";]", start);
  std::string_view full = f.substr(start, end - start);
  const std::size_t colon = full.substr(0, full.find('<')).rfind("::");
  return colon == std::string_view::npos ? full : full.substr(colon + 2);
}
/// The name copied into static storage of its own, so views of it are constant expressions.
template <class L>
struct TypeNameText {
  static constexpr std::size_t size = raw_type_name<L>().size();
  static constexpr std::array<char, size + 1> text = [] {
    std::array<char, size + 1> a{};
    const std::string_view n = raw_type_name<L>();
    for (std::size_t i = 0; i < size; ++i) a[i] = n[i];
    return a;
  }();
};
}  // namespace detail

/// The layer's type name: L::type_name when it has one, else the C++ name without namespaces
/// ("Convolution", "MyLayer").
template <class L>
constexpr std::string_view type_name() {
  if constexpr (requires { L::type_name; }) {
    return L::type_name;
  } else {
    return {detail::TypeNameText<L>::text.data(), detail::TypeNameText<L>::size};
  }
}

/// Bit masks of what a layer declares.
template <class... Ts>
constexpr unsigned storage_mask(storage_list<Ts...>) {
  return ((1u << unsigned(elem_type_v<Ts>)) | ... | 0u);
}
template <int... Ps>
constexpr unsigned pack_mask(pack_list<Ps...>) {
  return ((unsigned(Ps)) | ... | 0u);
}

/// Which activation a standalone activation layer is, for fusion into a CPU or GPU producer:
/// ncnn's 1..6, or 7 for Swish (layers::ActivationType); 0 if none.
template <class L>
constexpr int fusable_activation_type(const L& l) {
  using namespace std::string_view_literals;
  constexpr std::string_view n = type_name<L>();
  if constexpr (n == "ReLU"sv) return l.slope == 0.f ? 1 : 2;
  if constexpr (n == "Clip"sv) return 3;
  if constexpr (n == "Sigmoid"sv) return 4;
  if constexpr (n == "Mish"sv) return 5;
  if constexpr (n == "HardSwish"sv) return 6;
  if constexpr (n == "Swish"sv) return int(layers::ActivationType::swish);
  return 0;
}

/// The ncnn activation parameters of a standalone activation layer (see fusable_activation_type).
template <class L>
constexpr layers::ActivationParam activation_of(const L& l) {
  using namespace std::string_view_literals;
  constexpr std::string_view n = type_name<L>();
  layers::ActivationParam a;
  a.type = fusable_activation_type(l);
  if constexpr (n == "ReLU"sv) a.params = {l.slope, 0.f};
  if constexpr (n == "Clip"sv) a.params = {l.min, l.max};
  if constexpr (n == "HardSwish"sv) a.params = {l.alpha, l.beta};
  return a;
}

/// The activation a standalone activation layer becomes when a GPU producer takes it in: one of
/// the GPU-only kinds (layers::gpu_only_activation: TanH, HardSigmoid, ELU, GELU), whose
/// function the shaders' epilogue applies; type 0 for any other layer.
template <class L>
constexpr layers::ActivationParam gpu_activation_of(const L& l) {
  using namespace std::string_view_literals;
  using T = layers::ActivationType;
  constexpr std::string_view n = type_name<L>();
  layers::ActivationParam a;
  if constexpr (n == "TanH"sv) a.type = int(T::tanh);
  if constexpr (n == "HardSigmoid"sv) a = {int(T::hardsigmoid), {l.alpha, l.beta}};
  if constexpr (n == "ELU"sv) a = {int(T::elu), {l.alpha, 0.f}};
  if constexpr (n == "GELU"sv) a = {int(T::gelu), {l.fast_gelu ? 1.f : 0.f, 0.f}};
  return a;
}

/// A node as the passes see it.
struct NodeDesc {
  std::string_view type;  ///< layer type name
  std::string_view name;
  std::vector<int> in, out;       ///< blob ids
  unsigned storage = 0;           ///< bit (1 << ElemType) per declared storage type
  unsigned packs = 0;             ///< bit-or of declared packs
  bool inplace = false;           ///< has the one-blob in-place form
  bool one_blob = false;          ///< has only one-blob forms
  bool fuses_activation = false;  ///< forward_fused with an act:: functor (Convolution, ...)
  bool folds_affine = false;      ///< fold_affine (Convolution, InnerProduct, ...)
  /// forward_residual (FusesResidual: Convolution): on the CPU, it takes in a following two-input
  /// sum of its output and another blob of that shape, as vulkan_fuses_residual on the GPU.
  bool fuses_residual = false;
  bool is_affine = false;     ///< a per-channel affine map that can be folded (BatchNorm, Scale)
  bool shares_input = false;  ///< every output is the input (Split): no copy, no call
  bool moves_data = false;    ///< only moves values: runs at its inputs' pack (Concat, Slice)
  /// Its result on int8 values is exactly the quantized result on the values they stand for
  /// (l.passes_int8(): max Pooling, as quantizing is monotonic), so int8 blobs of one scale go
  /// through it as int8, like a layer that only moves values.
  bool passes_int8 = false;
  /// Element-wise (L::elementwise: activations, Eltwise, BinaryOp, BatchNorm, Scale, Bias): as
  /// fast at any pack, it runs at the narrowest pack among its inputs of the first input's shape
  /// where its readers run at that pack too, else at a pack its readers take, else at its own
  /// (graph/placement.hpp).
  bool elementwise = false;
  /// Its output's row count is known only when it runs (L::variable_rows: DetectionOutput and
  /// the YOLO heads, one row per detection): it writes the first rows of a buffer planned for the
  /// most, and only the caller may read that blob.
  bool variable_rows = false;
  /// Reads only its inputs' shapes, never their values (L::reads_shapes_only: PriorBox): an
  /// input on the CPU is given as it is, in any type and pack, with no conversion step.
  bool reads_shapes_only = false;
  /// On the CPU at f32, the input packs (a bit-or of 1, 4, 8, 16) at which it writes its output
  /// at whatever pack the plan gives it (l.cpu_wide_out_packs(): Convolution, whose GEMM gathers
  /// a pack-1 input anyway and stores either pack).
  unsigned cpu_wide_out_packs = 0;
  bool vulkan = false;        ///< has a GPU forward (VulkanLayer): a Vulkan target runs it there
  bool vulkan_inplace = true;  ///< its GPU forward can run in place (where `inplace` says so)
  /// Its GPU forward applies step.act (L::vulkan_fuses_activation): placed on the GPU, it takes
  /// in a following activation as a producer with forward_fused does on the CPU.
  bool vulkan_fuses_activation = false;
  /// Its GPU forward adds a second input of the output's shape before the activation
  /// (L::vulkan_fuses_residual: Convolution, ConvolutionDepthWise): placed on the GPU, it takes in
  /// a following two-input sum (ResNet's shortcut) as that input.
  bool vulkan_fuses_residual = false;
  /// Its GPU forward writes the output at any pack, whatever the input's (L::vulkan_any_out_pack:
  /// Convolution): placed on the GPU, its output takes the widest pack its channels allow, where
  /// the input's channels keep the step at a narrower one (a first convolution of 3 channels
  /// writes pack 4 rather than pack 1 and a repack after it).
  bool vulkan_any_out_pack = false;
  /// Its GPU kernels read and write vectors (1-D blobs) in f32 beside f16 storage
  /// (l.vulkan_f32_vectors(): global Pooling, InnerProduct): with f16 GPU storage, a vector it
  /// makes for readers that all do the same stays f32 (graph/placement.hpp).
  bool vulkan_f32_vectors = false;
  /// Its GPU forward scales its input's channels by a vector before its products, where the input
  /// has at least this many channels (L::vulkan_gate_min_channels: Convolution, whose GEMM kernels
  /// do; a smaller input takes a kernel that does not): placed on the GPU, it takes in the
  /// squeeze-excitation multiply it alone reads (channel_mul). 0: it takes none.
  int vulkan_gate_min_channels = 0;
  /// Two blobs multiplied, nothing else (L::is_channel_mul(): BinaryOp mul of two blobs): with a
  /// 3-D map and a 1-D vector of a value per channel, a squeeze-excitation block's gate.
  bool channel_mul = false;
  /// Two inputs of one shape summed, nothing else (L::is_plain_sum(): Eltwise sum without
  /// weights, BinaryOp add of two blobs): what a producer with vulkan_fuses_residual takes in.
  bool plain_sum = false;
  /// Channel groups of a grouped convolution whose fast kernel needs every group's input and
  /// output channels in whole packs (L::packs_fill_groups: ConvolutionDepthWise); 0 otherwise.
  int channel_groups = 0;
  /// The narrowest group (channels in and out) of such a layer that runs at a pack it fills;
  /// narrower groups run unpacked inside the layer (L::packed_group_min()).
  int packed_group_min = 2;
  /// Whose memory can hold the others' as consecutive ranges along `range_axis` (Concat: the
  /// output holds the inputs; Slice: the input holds the outputs), so no copy is needed.
  AxisRanges ranges = AxisRanges::none;
  int range_axis = 0;  ///< ncnn's axis numbering (0 outermost, negative from the end)
  layers::ActivationParam as_activation;  ///< type 1..7: an activation a producer can fuse
  /// An activation only a GPU producer can fuse (gpu_activation_of), when both run on the GPU.
  layers::ActivationParam as_gpu_activation;
  layers::ActivationParam fused;  ///< the activation the node applies itself (9=, or after fusion)
  std::vector<int> folded;        ///< affine nodes folded into this one's weights
  int merged_into = -1;           ///< the node this one was fused or folded into, or -1
  int residual = -1;  ///< the sum node merged into this one (its last input is the residual)
  /// The channel multiply merged into this one (its input 1 is the gate vector, input 0 the map
  /// the multiply scaled), or -1; gate_act the multiply's own activation, applied after it.
  int gate = -1;
  layers::ActivationParam gate_act;
  /// A quantized layer (L::quantized(): ncnn's int8_scale_term): it reads its input as int8
  /// quantized by int8_in_scale and writes int8_out_type (i8 quantized by int8_out_scale, or f32);
  /// it runs on the CPU only and folds no affine map.
  bool int8 = false;
  float int8_in_scale = 0.f;
  ElemType int8_out_type = ElemType::f32;
  float int8_out_scale = 0.f;
  /// A quantized layer with a float output that can requantize it instead (l.requantize_output:
  /// Convolution, ConvolutionDepthWise).
  bool int8_requantizable = false;
  /// Set by the composer (graph/requantize.hpp): the node's float output reaches only quantized
  /// nodes of one input scale (directly or through layers that pass int8 values), and it writes
  /// that output requantized by their scale (int8_out_type i8, int8_out_scale that scale).
  bool int8_requantized = false;
  /// Set by the composer: a quantized node that reads a requantized output (the scale it was
  /// requantized by is this node's int8_in_scale; a static graph checks it again after loading).
  bool int8_reads_requantized = false;

  /// The scale a requantized node writes its output by (int8_requantized), else 0.
  constexpr float requant_scale() const { return int8_requantized ? int8_out_scale : 0.f; }
  /// Whether the node can take int8 values of one scale and give the int8 values of its float
  /// result at that scale: it declares i8 storage, fuses no activation (which computes in float)
  /// and moves values, shares its input or passes int8 (max Pooling); with `elementwise_too`,
  /// element-wise layers (ReLU) as well, whose int8 result is not always the quantized float one
  /// (a leaky slope), which the placement allows where the blob stays int8 anyway.
  constexpr bool keeps_int8(bool elementwise_too) const {
    return detail::has_type(storage, ElemType::i8) && fused.type == 0 &&
           (moves_data || shares_input || passes_int8 || (elementwise_too && elementwise));
  }
};

/// The whole graph as the passes see it; blob ids index `blobs`.
struct GraphDesc {
  std::vector<NodeDesc> nodes;
  std::vector<std::string_view> blobs;
  std::vector<int> inputs;  ///< blob ids of the graph inputs
  std::vector<Shape> input_shapes;
  std::vector<int> outputs;  ///< blob ids of the graph outputs

  /// The id of blob `name`, added when new.
  constexpr int blob_id(std::string_view name) {
    // Newest first: a blob is mostly read soon after it is written.
    for (std::size_t i = blobs.size(); i-- > 0;)
      if (blobs[i] == name) return int(i);
    blobs.push_back(name);
    return int(blobs.size()) - 1;
  }
};

/// Whether layer L is a per-channel affine map a producer can fold: BatchNorm, or Scale in its
/// weights form.
template <class L>
constexpr bool foldable_affine(const L& l) {
  using namespace std::string_view_literals;
  constexpr std::string_view n = type_name<L>();
  if constexpr (n == "BatchNorm"sv) return true;
  if constexpr (n == "Scale"sv) return l.scale_data_size != -233;
  return false;
}

/// What the passes need to know of layer `l` (everything but its name and blobs).
template <class L>
constexpr NodeDesc describe_layer(const L& l) {
  NodeDesc d;
  d.type = type_name<L>();
  d.storage = storage_mask(layer_storage<L>{});
  d.packs = pack_mask(layer_packs<L>{});
  using T0 = typename layer_storage<L>::first;
  d.inplace = HasSingleInplace<L, T0, 1>;
  // Only one-blob forms: exactly one input and one output. A layer with both forms (BinaryOp,
  // Scale) takes the one-blob form for one input and the multi-blob form otherwise.
  constexpr bool single = HasSingleForward<L, T0, 1> || HasSingleInplace<L, T0, 1>;
  constexpr bool multi = HasMultiForward<L, T0, 1> || HasMultiInplace<L, T0, 1>;
  d.one_blob = single && !multi;
  d.fuses_activation = FusesActivation<L, T0, 1, act::Identity>;
  d.folds_affine = FoldsAffine<L>;
  d.fuses_residual = FusesResidual<L, T0, 1, act::Identity>;
  d.vulkan = VulkanLayer<L>;
  if constexpr (requires { l.vulkan_inplace(); }) d.vulkan_inplace = l.vulkan_inplace();
  if constexpr (requires { L::vulkan_fuses_activation; })
    d.vulkan_fuses_activation = L::vulkan_fuses_activation;
  if constexpr (requires { L::vulkan_fuses_residual; })
    d.vulkan_fuses_residual = L::vulkan_fuses_residual;
  if constexpr (requires { L::vulkan_any_out_pack; })
    d.vulkan_any_out_pack = L::vulkan_any_out_pack;
  if constexpr (requires { l.vulkan_f32_vectors(); }) d.vulkan_f32_vectors = l.vulkan_f32_vectors();
  if constexpr (requires { l.is_plain_sum(); }) d.plain_sum = l.is_plain_sum();
  if constexpr (requires { l.is_channel_mul(); }) d.channel_mul = l.is_channel_mul();
  if constexpr (requires { L::vulkan_gate_min_channels; })
    d.vulkan_gate_min_channels = L::vulkan_gate_min_channels;
  if constexpr (requires { L::packs_fill_groups; l.group; })
    if (L::packs_fill_groups) d.channel_groups = l.group;
  if constexpr (requires { l.packed_group_min(); }) d.packed_group_min = l.packed_group_min();
  d.is_affine = foldable_affine(l);
  if constexpr (requires { L::outputs_share_input; }) d.shares_input = L::outputs_share_input;
  if constexpr (requires { L::moves_data; }) d.moves_data = L::moves_data;
  if constexpr (requires { l.passes_int8(); }) d.passes_int8 = l.passes_int8();
  if constexpr (requires { L::elementwise; }) d.elementwise = L::elementwise;
  if constexpr (requires { L::variable_rows; }) d.variable_rows = L::variable_rows;
  if constexpr (requires { L::reads_shapes_only; }) d.reads_shapes_only = L::reads_shapes_only;
  if constexpr (requires { l.cpu_wide_out_packs(); }) d.cpu_wide_out_packs = l.cpu_wide_out_packs();
  if constexpr (requires {
                  L::axis_ranges;
                  l.axis;
                }) {
    d.ranges = L::axis_ranges;
    d.range_axis = l.axis;
  }
  d.as_activation = activation_of(l);
  d.as_gpu_activation = gpu_activation_of(l);
  if constexpr (requires { l.activation; }) d.fused = l.activation;
  if constexpr (requires {
                  l.quantized();
                  l.int8.bottom_scale;
                  l.int8_output_type();
                }) {
    if (l.quantized()) {
      d.int8 = true;
      d.int8_in_scale = l.int8.bottom_scale;
      d.int8_out_type = l.int8_output_type();
      d.int8_out_scale = d.int8_out_type == ElemType::i8 ? l.int8.top_scale : 0.f;
      if constexpr (requires(L& m) { m.requantize_output(0.f); })
        d.int8_requantizable = d.int8_out_type == ElemType::f32;
      d.vulkan = false;
      d.folds_affine = false;
    }
  }
  return d;
}

/// The description of one node of a static graph.
template <class L, std::size_t I, std::size_t O>
constexpr NodeDesc describe(const Node<L, I, O>& n, GraphDesc& g) {
  NodeDesc d = describe_layer(n.layer);
  d.name = n.name;
  for (std::string_view b : n.in) d.in.push_back(g.blob_id(b));
  for (std::string_view b : n.out) d.out.push_back(g.blob_id(b));
  return d;
}

/// The description of a static graph.
template <std::size_t NI, std::size_t NO, class... Nodes>
constexpr GraphDesc describe(const Graph<NI, NO, Nodes...>& graph) {
  GraphDesc g;
  for (const Input& in : graph.inputs) {
    g.inputs.push_back(g.blob_id(in.blob));
    g.input_shapes.push_back(in.shape);
  }
  g.nodes.reserve(sizeof...(Nodes));
  g.blobs.reserve(2 * sizeof...(Nodes) + NI);
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (g.nodes.push_back(describe(get<K>(graph.nodes), g)), ...);
  }(std::make_index_sequence<sizeof...(Nodes)>{});
  for (const Output& out : graph.outputs) g.outputs.push_back(g.blob_id(out.blob));
  return g;
}

}  // namespace infer::graph
