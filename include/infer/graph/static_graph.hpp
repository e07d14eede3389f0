// A static graph: the composer's plan made at compile time for a graph value, and the code that
// runs it. Each step is a call instantiated for exactly the node's layer, element type and pack
// (fused activations as template arguments of the kernels); blobs live at fixed offsets in one
// arena whose size is a compile-time constant, so forward allocates nothing.
//
// Concurrency: the graph's layers (its weights) are read-only once finalized, so one graph serves
// any number of threads, each running through a Context of its own (the arena and temporaries of
// one caller). forward(inputs) without one runs through the graph's own context: one thread at a
// time.
#pragma once

#include <array>
#include <infer/convert.hpp>
#include <infer/graph/compose.hpp>
#include <infer/graph/execute.hpp>
#include <infer/io/model_bin.hpp>
#include <infer/shape.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace infer::graph {

namespace detail {

/// The element type of an ElemType tag.
template <ElemType E>
using element_t = std::conditional_t<
    E == ElemType::f32, f32,
    std::conditional_t<E == ElemType::f16, f16, std::conditional_t<E == ElemType::bf16, bf16, i8>>>;

/// A plan step without vectors, so it can be a compile-time constant.
template <std::size_t MaxIo>
struct FixedStep {
  StepDesc::Kind kind = StepDesc::layer;
  Device device = Device::cpu;
  int node = -1;
  ElemType type = ElemType::f32;
  int pack = 1;
  bool inplace = false;
  std::size_t n_in = 0, n_out = 0;
  std::array<int, MaxIo> in{}, out{};
  layers::ActivationParam act;
  int fused_node = -1;
  std::size_t n_folded = 0;
  std::array<int, 4> folded{};
  float scale = 0.f;  ///< a cast to or from i8: StepDesc::scale
  /// A quantized node's float output requantized for its readers (NodeDesc::int8_requantized):
  /// the scale, else 0.
  float requant = 0.f;
  /// A quantized node that reads such an output: the input scale the plan assumed, which its
  /// loaded scale must equal; else 0.
  float requant_in_scale = 0.f;
};

/// The plan as compile-time constants.
template <std::size_t Steps, std::size_t Buffers, std::size_t MaxIo, std::size_t NI, std::size_t NO>
struct FixedPlan {
  std::array<FixedStep<MaxIo>, Steps> steps{};
  std::array<BufferDesc, Buffers> buffers{};
  std::array<int, NI> inputs{};
  std::array<int, NO> outputs{};
  std::size_t arena_bytes = 0;
  std::size_t lower_bound = 0;
};

/// The GPU side of a static graph whose target is Device D: for Device::vulkan it is defined by
/// <infer/graph/vulkan.hpp> (which brings the Vulkan executor), so a CPU graph compiles none of it.
template <Device D>
struct GpuOps;
template <>
struct GpuOps<Device::cpu> {
  struct Graph {};
  struct Run {};
};

}  // namespace detail

/// A graph composed at compile time. G is a constexpr Graph object with static storage
/// (`static constexpr auto net = make_graph(...)`), T the target.
template <const auto& G, Target Tgt = Target{}>
class StaticGraph {
  using GraphType = std::remove_cvref_t<decltype(G)>;
  static constexpr std::size_t kNodes = GraphType::node_count;
  static constexpr std::size_t kInputs = std::tuple_size_v<decltype(G.inputs)>;
  static constexpr std::size_t kOutputs = std::tuple_size_v<decltype(G.outputs)>;

  template <std::size_t N>
  using LayerOf = std::remove_cvref_t<decltype(graph::get<N>(G.nodes).layer)>;

  template <std::size_t... N>
  static auto slots_of(std::index_sequence<N...>)
      -> detail::Slots<std::index_sequence<N...>, LayerOf<N>...>;
  /// Every node's layer in one flat object (detail::Slots, as the graph's own nodes: not a
  /// std::tuple, whose recursive _Tuple_impl costs compile time quadratic in the node count).
  using Layers = decltype(slots_of(std::make_index_sequence<kNodes>{}));
  /// The layers copied out of the graph value.
  template <std::size_t... N>
  static Layers copy_layers(std::index_sequence<N...>) {
    return Layers{{graph::get<N>(G.nodes).layer}...};
  }

  static constexpr bool kAllShapeInferable = []<std::size_t... N>(std::index_sequence<N...>) {
    return (ShapeInferable<LayerOf<N>> && ...);
  }
  (std::make_index_sequence<kNodes>{});
  /// A layer writes fewer rows than planned (L::variable_rows): its buffer is laid out again
  /// before each forward.
  static constexpr bool kVariableRows = []<std::size_t... N>(std::index_sequence<N...>) {
    return (requires { LayerOf<N>::variable_rows; } || ...);
  }
  (std::make_index_sequence<kNodes>{});
  static_assert(
      kAllShapeInferable,
      "infer graph: every layer needs `constexpr ShapeCheck infer_shapes(in, out) const`");

  static constexpr ShapeCheck infer_node(int n, std::span<const Shape> in, std::span<Shape> out) {
    ShapeCheck r = shape_error("no such node");
    [&]<std::size_t... N>(std::index_sequence<N...>) {
      ((int(N) == n ? (r = graph::get<N>(G.nodes).layer.infer_shapes(in, out), 0) : 0), ...);
    }
    (std::make_index_sequence<kNodes>{});
    return r;
  }

 public:
  /// The plan, computed again (the passes are constexpr functions that run at run time too).
  static constexpr Plan plan() { return compose(describe(G), Tgt, &infer_node); }

 private:
  // The plan is computed twice while compiling (the passes are costly at compile time): once
  // for its sizes, once to copy it into arrays of those sizes.
  struct Counts {
    std::size_t steps = 0, buffers = 0, max_io = 1;
    PlanError error;
  };
  static constexpr Counts kCounts = [] {
    const Plan p = plan();
    Counts c{p.steps.size(), p.buffers.size(), 1, p.error};
    for (const StepDesc& s : p.steps) {
      c.max_io = s.in.size() > c.max_io ? s.in.size() : c.max_io;
      c.max_io = s.out.size() > c.max_io ? s.out.size() : c.max_io;
    }
    return c;
  }();
  static constexpr std::size_t kMaxIo = kCounts.max_io;
  static_assert(kMaxIo <= kMaxNodeIo, "infer graph: a node has more than 64 inputs or outputs");
  static constexpr PlanError::Kind kError = kCounts.error.kind;
  static_assert(kError != PlanError::unknown_blob,
                "infer graph: a node reads a blob that no node or input produces");
  static_assert(kError != PlanError::duplicate_blob,
                "infer graph: a blob is produced twice (two nodes, or a node and an input)");
  static_assert(kError != PlanError::cycle, "infer graph: the nodes form a cycle");
  static_assert(kError != PlanError::io_count,
                "infer graph: a one-blob layer is given other than one input and one output");
  static_assert(kError != PlanError::unknown_output,
                "infer graph: a graph output names a blob that nothing produces");
  static_assert(kError != PlanError::no_nodes, "infer graph: the graph has no nodes");
  static_assert(kError != PlanError::shape,
                "infer graph: incompatible shapes: a layer's infer_shapes rejected its inputs");
  static_assert(kError != PlanError::storage,
                "infer graph: a layer declares no storage type the target can run");
  static_assert(kError != PlanError::variable_rows,
                "infer graph: a node reads the output of a layer whose row count is known only "
                "at run time (DetectionOutput, the YOLO heads); only the caller may read it");
  static_assert(Tgt.device != Device::any,
                "infer graph: a static graph's target names its device (cpu or vulkan); the "
                "'any' fallback is infer::Net's");
  static_assert(Tgt.device != Device::vulkan ||
                    requires { typename detail::GpuOps<Tgt.device>::Run; },
                "infer graph: a Vulkan target needs the executor: include <infer/graph/vulkan.hpp>");
  using Gpu = detail::GpuOps<Tgt.device>;
  static constexpr bool kGpu = Tgt.device != Device::cpu;

  using Fixed = detail::FixedPlan<kCounts.steps, kCounts.buffers, kMaxIo, kInputs, kOutputs>;
  static constexpr Fixed kPlan = [] {
    const Plan p = plan();
    Fixed f;
    if (!p.error.ok()) return f;
    for (std::size_t i = 0; i < f.steps.size(); ++i) {
      const StepDesc& s = p.steps[i];
      auto& d = f.steps[i];
      d.kind = s.kind;
      d.device = s.device;
      d.node = s.node;
      d.type = s.type;
      d.pack = s.pack;
      d.inplace = s.inplace;
      d.n_in = s.in.size();
      d.n_out = s.out.size();
      for (std::size_t k = 0; k < s.in.size(); ++k) d.in[k] = s.in[k];
      for (std::size_t k = 0; k < s.out.size(); ++k) d.out[k] = s.out[k];
      d.act = s.act;
      d.fused_node = s.fused_node;
      d.scale = s.scale;
      if (s.kind == StepDesc::layer) {
        const NodeDesc& nd = p.desc.nodes[std::size_t(s.node)];
        d.requant = nd.requant_scale();
        d.requant_in_scale = nd.int8_reads_requantized ? nd.int8_in_scale : 0.f;
      }
      d.n_folded = s.folded.size() < 4 ? s.folded.size() : 4;
      for (std::size_t k = 0; k < d.n_folded; ++k) d.folded[k] = s.folded[k];
    }
    for (std::size_t i = 0; i < f.buffers.size(); ++i) f.buffers[i] = p.buffers[i];
    for (std::size_t i = 0; i < kInputs; ++i) f.inputs[i] = p.input_buffers[i];
    for (std::size_t i = 0; i < kOutputs; ++i) f.outputs[i] = p.output_buffers[i];
    f.arena_bytes = p.arena_bytes;
    f.lower_bound = p.lower_bound;
    return f;
  }();

 public:
  /// Bytes of the arena every intermediate blob lives in (a compile-time constant).
  static constexpr std::size_t arena_bytes = kPlan.arena_bytes;
  /// The most bytes live at one time: no plan can use a smaller arena.
  static constexpr std::size_t lower_bound = kPlan.lower_bound;
  static constexpr std::size_t step_count = kCounts.steps;

  /// The memory of one caller: the arena (from opt.blob_alloc()), the blobs laid out in it, and a
  /// pool for the layers' temporaries (over opt.workspace_alloc()). One per thread.
  class Context {
   public:
    explicit Context(const Option& opt = {}) : workspace_(opt.workspace_alloc()), opt_(opt) {
      arena_alloc_ = opt.blob_alloc();
      arena_ = arena_bytes ? arena_alloc_->allocate(arena_bytes) : nullptr;
      wrap_buffers();
      // Layers' own temporaries (and conversions') come from a pool over the caller's workspace
      // allocator: after the first pass they reuse its blocks.
      opt_.workspace_allocator = &workspace_;
      opt_.blob_allocator = &workspace_;
    }
    ~Context() {
      if (arena_) arena_alloc_->deallocate(arena_, arena_bytes);
    }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    /// Graph output i (f32, pack 1) of this context's last forward, a view into its arena.
    const Mat& output(std::size_t i = 0) const { return bufs_[std::size_t(kPlan.outputs[i])]; }

   private:
    friend class StaticGraph;
    /// Every host buffer as the plan lays it out in the arena (again before each forward of a
    /// graph whose layer shrinks its output to the rows it found: kVariableRows).
    void wrap_buffers() {
      for (std::size_t b = 0; b < kPlan.buffers.size(); ++b) {
        const BufferDesc& d = kPlan.buffers[b];
        if (d.device != Device::cpu) continue;  // in the GPU's arena
        bufs_[b] = Mat::wrap(static_cast<char*>(arena_) + d.offset, d.shape, d.type, d.pack,
                             packed_layout(d.shape, d.type, d.pack).cstep);
      }
    }
    PoolAllocator workspace_;
    Option opt_;
    Allocator* arena_alloc_ = nullptr;
    void* arena_ = nullptr;
    std::array<Mat, kCounts.buffers> bufs_;
    std::unique_ptr<typename Gpu::Run> gpu_;  ///< Vulkan: the GPU arena and recorded segments
  };

  /// Copies the layers out of the graph value; `opt` (threads, allocators) is what prepare and
  /// the graph's own context use.
  explicit StaticGraph(const Option& opt = {})
      : layers_(copy_layers(std::make_index_sequence<kNodes>{})), opt_(opt), own_(opt) {}
  StaticGraph(const StaticGraph&) = delete;
  StaticGraph& operator=(const StaticGraph&) = delete;

  /// A context for running this graph from another thread (with `opt`'s threads and allocators).
  Context make_context(const Option& opt) const { return Context(opt); }

  /// The layer of node N (as written), e.g. to set weights before finalize().
  template <std::size_t N>
  LayerOf<N>& layer() {
    return detail::slot_get<N>(layers_);
  }

  /// Calls f(layer) on every node's layer in the written order (e.g. to set weights by hand).
  template <class F>
  void for_each_layer(F&& f) {
    [&]<std::size_t... N>(std::index_sequence<N...>) { (f(layer<N>()), ...); }
    (std::make_index_sequence<kNodes>{});
  }

  /// Loads every node's weights from `mb` in the graph's written order (ncnn's .bin order), then
  /// finalize()s.
  Status load(io::ModelBin& mb) {
    Status st;
    [&]<std::size_t... N>(std::index_sequence<N...>) { (void)((load_node<N>(mb, st)) && ...); }
    (std::make_index_sequence<kNodes>{});
    INFER_TRY(st);
    return finalize();
  }

  /// Folds the affine nodes into their producers' weights and prepares every layer for the type
  /// and pack it runs at. Call after setting weights by hand; load() calls it.
  Status finalize() {
    Status st;
    [&]<std::size_t... S>(std::index_sequence<S...>) { (void)((finalize_step<S>(st)) && ...); }
    (std::make_index_sequence<kCounts.steps>{});
    INFER_TRY(st);
    if constexpr (kGpu) {
      // The GPU steps' layers, folded, uploaded once; the device from opt.vulkan_device.
      std::vector<typename Gpu::LayerRef> refs(kNodes);
      [&]<std::size_t... N>(std::index_sequence<N...>) { ((refs[N] = Gpu::ref(layer<N>())), ...); }
      (std::make_index_sequence<kNodes>{});
      INFER_TRY(Gpu::prepare(gpu_, plan(), std::move(refs), opt_));
    }
    ready_ = true;
    return {};
  }

  /// Runs the graph on `inputs` (f32, one per graph input, in the order of the graph's input()s,
  /// shapes as declared) in context `ctx`; the results are then in ctx.output(i). Safe from several
  /// threads at once, each with its own context.
  Status forward(Context& ctx, std::span<const Mat> inputs) const {
    if (!ready_) return make_error("StaticGraph::forward: call load() or finalize() first");
    if (inputs.size() != kInputs)
      return make_error("StaticGraph::forward: the graph has {} inputs, got {}", kInputs,
                        inputs.size());
    if constexpr (kVariableRows) ctx.wrap_buffers();
    for (std::size_t i = 0; i < kInputs; ++i) INFER_TRY(set_input(ctx, i, inputs[i]));
    if constexpr (kGpu) {
      if (!ctx.gpu_) {  // this context's GPU arena and command buffers, recorded once
        auto run = Gpu::record(gpu_);
        INFER_TRY(run);
        ctx.gpu_ = std::move(*run);
      }
    }
    Status st;
    [&]<std::size_t... S>(std::index_sequence<S...>) { (void)((run_step<S>(ctx, st)) && ...); }
    (std::make_index_sequence<kCounts.steps>{});
    return st;
  }
  Status forward(Context& ctx, const Mat& input) const {
    return forward(ctx, std::span<const Mat>(&input, 1));
  }
  /// Runs in the graph's own context (one thread at a time); the results are then in output(i).
  Status forward(std::span<const Mat> inputs) { return forward(own_, inputs); }
  Status forward(const Mat& input) { return forward(own_, std::span<const Mat>(&input, 1)); }

  /// Graph output i (f32, pack 1) of the last forward in the graph's own context.
  const Mat& output(std::size_t i = 0) const { return own_.output(i); }

  /// The options layers run with (threads from the constructor's Option).
  const Option& options() const { return opt_; }

 private:
  template <std::size_t N>
  bool load_node(io::ModelBin& mb, Status& st) {
    if constexpr (io::LoadsWeights<LayerOf<N>>) {
      Status s = layer<N>().load(mb);
      if (!s.ok()) {
        st = make_error("loading weights of node {} ({} '{}'): {}", N, type_name<LayerOf<N>>(),
                        graph::get<N>(G.nodes).name, s.message());
        return false;
      }
    }
    return true;
  }

  template <std::size_t S>
  bool finalize_step(Status& st) {
    constexpr auto s = kPlan.steps[S];
    if constexpr (s.kind == StepDesc::layer) {
      using L = LayerOf<std::size_t(s.node)>;
      auto& layer = this->layer<std::size_t(s.node)>();
      if constexpr (FoldsAffine<L>) {
        bool ok = true;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
          ((ok = ok && fold_one<std::size_t(s.node), std::size_t(s.folded[K])>(st)), ...);
        }
        (std::make_index_sequence<s.n_folded>{});
        if (!ok) return false;
      }
      if constexpr (requires { layer.requantize_output(s.requant); })
        layer.requantize_output(s.requant);
      if constexpr (s.requant_in_scale != 0.f) {
        // The plan requantized this node's input for it at the scale the graph gave it while
        // compiling; loaded weights that move it would make it read the values at another.
        if (layer.int8.bottom_scale != s.requant_in_scale) {
          st = make_error(
              "node {} ({} '{}'): its int8 input scale is {} after loading, the plan was made "
              "for {} (its producer requantizes into it)",
              s.node, type_name<L>(), graph::get<std::size_t(s.node)>(G.nodes).name,
              layer.int8.bottom_scale, s.requant_in_scale);
          return false;
        }
      }
      if constexpr (PreparedLayer<L> && s.device == Device::cpu) {  // the GPU has its upload
        Status p;
        if constexpr (ShapePreparedLayer<L>)
          p = layer.prepare(s.type, s.pack, opt_, kPlan.buffers[std::size_t(s.in[0])].shape);
        else
          p = layer.prepare(s.type, s.pack, opt_);
        if (!p.ok()) {
          st = make_error("preparing node {} ({} '{}'): {}", s.node, type_name<L>(),
                          graph::get<std::size_t(s.node)>(G.nodes).name, p.message());
          return false;
        }
      }
    }
    return true;
  }

  template <std::size_t N, std::size_t F>
  bool fold_one(Status& st) {
    std::vector<float> a, b;
    Status s = affine_of(layer<F>(), a, b);
    if (s.ok()) s = layer<N>().fold_affine(a, b);
    if (!s.ok()) {
      st = make_error("folding node {} into node {}: {}", F, N, s.message());
      return false;
    }
    return true;
  }

  Status set_input(Context& ctx, std::size_t i, const Mat& in) const {
    Mat& dst = ctx.bufs_[std::size_t(kPlan.inputs[i])];
    const std::string_view name = G.inputs[i].blob;
    if (in.empty()) return make_error("StaticGraph::forward: input '{}' is empty", name);
    if (!(in.shape() == dst.shape()))
      return make_error("StaticGraph::forward: input '{}' is {}, the graph was composed for {}",
                        name, in.describe(), dst.describe());
    if (in.type() != ElemType::f32)
      return make_error("StaticGraph::forward: input '{}' must be f32, got {}", name,
                        to_string(in.type()));
    if (in.elempack() == 1) {
      in.copy_to(dst);
      return {};
    }
    INFER_TRY(convert_packing(in, dst, 1, ctx.opt_));
    return {};
  }

  /// Whether the step left its outputs in the planned memory (a layer that created another shape
  /// or type would have allocated instead).
  template <std::size_t S>
  static Status check_outputs(const Context& ctx, std::string_view what) {
    constexpr auto s = kPlan.steps[S];
    for (std::size_t k = 0; k < s.n_out; ++k) {
      const BufferDesc& d = kPlan.buffers[std::size_t(s.out[k])];
      const Mat& m = ctx.bufs_[std::size_t(s.out[k])];
      if (m.data() != static_cast<char*>(ctx.arena_) + d.offset) {
        const Mat planned = Mat::wrap(nullptr, d.shape, d.type, d.pack);
        return make_error("step {} ({}): output {} is {}, the plan expected {}", S, what, k,
                          m.describe(), planned.describe());
      }
    }
    return {};
  }

  template <std::size_t S>
  bool run_step(Context& ctx, Status& st) const {
    constexpr auto s = kPlan.steps[S];
    Status r;
    std::string_view what;
    if constexpr (s.device != Device::cpu) {
      // A run of GPU steps is one submit, at its first step; the others are in it.
      if constexpr (S == 0 || kPlan.steps[S == 0 ? 0 : S - 1].device == Device::cpu) {
        r = Gpu::run_segment(*ctx.gpu_, S, ctx.bufs_, ctx.opt_.vulkan_spin_us);
        if (!r.ok()) {
          st = make_error("forward: GPU steps from {}: {}", S, r.message());
          return false;
        }
      }
      return true;
    } else if constexpr (s.kind == StepDesc::cast) {
      what = "cast";
      r = cast(ctx.bufs_[std::size_t(s.in[0])], ctx.bufs_[std::size_t(s.out[0])], s.type,
               ctx.opt_,
               s.scale != 0.f ? std::span<const float>(&s.scale, 1) : std::span<const float>());
    } else if constexpr (s.kind == StepDesc::repack) {
      what = "repack";
      r = convert_packing(ctx.bufs_[std::size_t(s.in[0])], ctx.bufs_[std::size_t(s.out[0])], s.pack,
                          ctx.opt_);
    } else {
      constexpr std::size_t N = std::size_t(s.node);
      what = graph::get<N>(G.nodes).name;
      r = run_layer_step<S, N>(ctx);
    }
    if (r.ok()) r = check_outputs<S>(ctx, what);
    if (!r.ok()) {
      st = make_error("forward: {}", r.message());
      return false;
    }
    return true;
  }

  /// The layer's algorithm at `pack` for an input of shape `in` (where its choice follows the
  /// shape: Convolution's Winograd tile).
  template <class L>
  static constexpr auto algorithm_for(const L& layer, int pack, const Shape& in) {
    if constexpr (requires { layer.algorithm(pack, in); })
      return layer.algorithm(pack, in);
    else
      return layer.algorithm(pack);
  }

  template <std::size_t S, std::size_t N>
  Status run_layer_step(Context& ctx) const {
    constexpr auto s = kPlan.steps[S];
    using L = LayerOf<N>;
    using T = detail::element_t<s.type>;
    constexpr int Pack = s.pack;
    const L& layer = detail::slot_get<N>(layers_);
    const StepIo io{s.inplace, std::span<const int>(s.in.data(), s.n_in),
                    std::span<const int>(s.out.data(), s.n_out)};
    if constexpr (FusesActivation<L, T, Pack, act::Identity>) {
      // The step's activation (the layer's own 9=, or one fused into it) as the kernels' template
      // argument, Identity included: the layer's forward would instantiate all seven.
      const auto act = make_act<s.act.type>(s.act.params);
      constexpr const L& node_layer = graph::get<N>(G.nodes).layer;
      if constexpr (requires {
                      node_layer.template forward_with<T, Pack, node_layer.algorithm(Pack)>(
                          ctx.bufs_[0], ctx.bufs_[0], ctx.opt_, act);
                    }) {
        // The layer's parameters and its input's shape are constants here: so is its choice of
        // algorithm (finalize_step prepared it for that shape).
        constexpr auto algo =
            algorithm_for(node_layer, Pack, kPlan.buffers[std::size_t(s.in[0])].shape);
        return run_fused_node<L, T, Pack, algo>(layer, io, ctx.bufs_, ctx.opt_, act);
      } else {
        return run_fused_node<L, T, Pack>(layer, io, ctx.bufs_, ctx.opt_, act);
      }
    } else {
      return run_node<L, T, Pack>(layer, io, ctx.bufs_, ctx.opt_);
    }
  }

  Layers layers_;
  Option opt_;
  typename Gpu::Graph gpu_;  ///< Vulkan: the device, the plan and the uploaded weights
  Context own_;
  bool ready_ = false;
};

}  // namespace infer::graph
