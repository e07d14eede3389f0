// infer::Net's code (NetBase's members), compiled into infer::runtime (src/runtime/net.cpp) or,
// with INFER_HEADER_ONLY, into the file that includes <infer/net.hpp>.
#pragma once

#include <algorithm>
#include <chrono>
#include <infer/convert.hpp>
#include <infer/graph/compose.hpp>
#include <infer/io/ncnn_layers.hpp>
#include <infer/io/param.hpp>
#include <infer/io/random_weights.hpp>
#include <infer/net.hpp>
#include <infer/net/any_layer.hpp>
#ifdef INFER_HAS_VULKAN
#include <infer/net/gpu_executor.hpp>
#endif
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace infer {

/// A plan and the layers it changed (folded weights) or prepared differently: read-only once made,
/// shared by every context that runs it.
struct NetBase::Compiled {
  std::vector<int> key;  ///< input shapes, then requested blobs (NetBase::make_key)
  graph::Plan plan;
  std::vector<std::unique_ptr<net::AnyLayer>> own;  ///< by node; null: the shared layer
#ifdef INFER_HAS_VULKAN
  std::unique_ptr<net::gpu::PlanWeights> gpu;  ///< the GPU steps' weights (Vulkan targets)
#endif
  const net::AnyLayer* layer(const NetBase::State& st, int node) const;
};
struct NetBase::State {
  struct InputDecl {
    int blob = -1;
    Shape shape;
  };
  io::ParamFile file;
  std::vector<InputDecl> inputs;
  std::vector<std::unique_ptr<net::AnyLayer>> layers;  ///< by node (non-Input layers in order)
  std::vector<std::size_t> layer_spec;                 ///< node -> index in file.layers
  /// (type, pack, AnyLayer::layout, requantization scale) a shared layer is prepared for; pack 0:
  /// not prepared.
  std::vector<std::tuple<ElemType, int, int, float>> prepared;
  bool weights = false;

  // Guarded by `mutex`: the plans (most recently used first), their limit, the shared layers'
  // preparation, and the pool of contexts Net::run takes from.
  mutable std::mutex mutex;
  std::list<std::shared_ptr<const Compiled>> plans;
  std::size_t plan_limit = 16;
  std::vector<std::unique_ptr<NetContext>> pool;
#ifdef INFER_HAS_VULKAN
  std::shared_ptr<net::gpu::Device> gpu;  ///< opened by the first plan with GPU steps
  bool gpu_failed = false;  ///< a Device::any target found no device: it plans for the CPU
#endif

  void forget_plans() {
    std::lock_guard lock(mutex);
    plans.clear();
    prepared.assign(layers.size(), {});
  }
};

inline const net::AnyLayer* NetBase::Compiled::layer(const NetBase::State& st, int node) const {
  const std::size_t n = std::size_t(node);
  return own[n] ? own[n].get() : st.layers[n].get();
}

/// A context's memory: the arena laid out for the plan it last ran.
struct NetContext::Impl {
  explicit Impl(const Option& o) : workspace(o.workspace_alloc()), opt(o) {
    arena_alloc = o.blob_alloc();
    // The layers' temporaries come from a pool over the caller's allocator: after the first run
    // they reuse its blocks.
    opt.workspace_allocator = &workspace;
    opt.blob_allocator = &workspace;
  }

  std::shared_ptr<const NetBase::Compiled> compiled;
  std::vector<int> key;  ///< reused for each run's key
  PoolAllocator workspace;
  Option opt;
  Allocator* arena_alloc = nullptr;
  void* arena = nullptr;
  std::size_t arena_bytes = 0;
  std::vector<Mat> bufs;
  /// bufs as bind() laid them out, when a step shrinks its output to the rows it found
  /// (NodeDesc::variable_rows): restored before each run. Empty otherwise.
  std::vector<Mat> planned;
  std::vector<Mat> outputs;
  bool profile = false;
  std::vector<StepTiming> timings;
#ifdef INFER_HAS_VULKAN
  std::unique_ptr<net::gpu::Run> gpu;  ///< the plan's GPU arena and recorded segments
  std::vector<double> gpu_ms;          ///< the last segment's step times (profiling)
#endif

  ~Impl() {
    bufs.clear();
    outputs.clear();
    if (arena) arena_alloc->deallocate(arena, arena_bytes);
  }
  /// Lays the buffers of `c` out in the arena, growing it when the plan needs more.
  Status bind(std::shared_ptr<const NetBase::Compiled> c) {
    const graph::Plan& p = c->plan;
    if (p.arena_bytes > arena_bytes) {
      bufs.clear();
      outputs.clear();
      if (arena) arena_alloc->deallocate(arena, arena_bytes);
      arena = arena_alloc->allocate(p.arena_bytes);
      arena_bytes = arena ? p.arena_bytes : 0;
      if (!arena) return make_error("Net::run: out of memory for a {}-byte arena", p.arena_bytes);
    }
    bufs.resize(p.buffers.size());
    for (std::size_t b = 0; b < p.buffers.size(); ++b) {
      const graph::BufferDesc& d = p.buffers[b];
      if (d.device != graph::Device::cpu) {  // in the GPU's arena, not the host's
        bufs[b] = Mat();
        continue;
      }
      bufs[b] = Mat::wrap(static_cast<char*>(arena) + d.offset, d.shape, d.type, d.pack,
                          packed_layout(d.shape, d.type, d.pack).cstep);
    }
    planned.clear();
    for (const graph::NodeDesc& n : p.desc.nodes)
      if (n.variable_rows && n.merged_into < 0) planned = bufs;
    outputs.resize(p.output_buffers.size());
    compiled = std::move(c);
    return {};
  }
};

INFER_NET_FUNC NetBase::NetBase(graph::Target target, Option opt, net::LayerFactory make,
                                unsigned storage_types)
    : target_(target),
      opt_(opt),
      make_layer_(make),
      storage_types_(storage_types),
      state_(std::make_unique<State>()) {}
INFER_NET_FUNC NetBase::NetBase(NetBase&&) noexcept = default;
INFER_NET_FUNC NetBase& NetBase::operator=(NetBase&&) noexcept = default;
INFER_NET_FUNC NetBase::~NetBase() = default;

INFER_NET_FUNC Status NetBase::load_param(const std::filesystem::path& path) {
  auto file = io::read_param(path);
  INFER_TRY(file);
  return load_param(std::move(*file));
}

INFER_NET_FUNC Status NetBase::load_param_text(std::string_view text, std::string source) {
  auto file = io::parse_param_text(text, std::move(source));
  INFER_TRY(file);
  return load_param(std::move(*file));
}

INFER_NET_FUNC Status NetBase::load_param(io::ParamFile file) {
  if (!graph::detail::has_type(storage_types_, target_.storage)) {
    std::string listed;
    for (ElemType t : {ElemType::f32, ElemType::f16, ElemType::bf16, ElemType::i8})
      if (graph::detail::has_type(storage_types_, t))
        listed += fmt::format("{}{}", listed.empty() ? "" : ", ", to_string(t));
    return make_error(
        "{}: the target's storage is {}, but this network's layer table is instantiated for {} "
        "only; use infer::BasicNet<infer::storage_list<...>> with {} and include "
        "<infer/net/layer_table.hpp> in one file",
        file.source, to_string(target_.storage), listed, to_string(target_.storage));
  }
  auto st = std::make_unique<State>();
  if (state_) st->plan_limit = state_->plan_limit;  // a limit set before loading stays
  st->file = std::move(file);
  const io::ParamFile& f = st->file;
  // Every unsupported type at once, so one attempt shows all that a model needs.
  std::vector<std::string_view> seen;
  std::string unsupported;
  for (const io::LayerSpec& spec : f.layers) {
    if (spec.type == "Input" || custom_creator(spec.type) || io::is_supported_ncnn_type(spec.type))
      continue;
    if (std::find(seen.begin(), seen.end(), spec.type) != seen.end()) continue;
    seen.push_back(spec.type);
    unsupported +=
        fmt::format("{}{} (first at line {})", seen.size() > 1 ? ", " : "", spec.type, spec.line);
  }
  if (!unsupported.empty())
    return make_error("{}: unsupported layer types: {}", f.source, unsupported);
  for (std::size_t i = 0; i < f.layers.size(); ++i) {
    const io::LayerSpec& spec = f.layers[i];
    if (spec.type == "Input") {
      auto shape = io::input_shape(f, spec);
      INFER_TRY(shape);
      if (spec.tops.size() != 1)
        return make_error("{}: line {}: Input '{}' must have one output, has {}", f.source,
                          spec.line, spec.name, spec.tops.size());
      st->inputs.push_back({spec.tops[0], *shape});
      continue;
    }
    const LayerCreator* custom = custom_creator(spec.type);
    auto layer = custom ? (*custom)(f, spec) : make_layer_(f, spec);
    INFER_TRY(layer);
    if (!*layer)
      return make_error("{}: line {}: the creator registered for {} made no layer", f.source,
                        spec.line, spec.type);
    st->layers.push_back(std::move(*layer));
    st->layer_spec.push_back(i);
  }
  if (st->layers.empty()) return make_error("{}: the network has no layers to run", f.source);
  if (st->inputs.empty()) return make_error("{}: the network has no Input layer", f.source);
  state_ = std::move(st);
  return {};
}

INFER_NET_FUNC Status NetBase::register_layer(std::string type, LayerCreator creator) {
  if (type.empty() || type.find_first_of(" \t\r\n") != std::string::npos)
    return make_error("Net::register_layer: '{}' is not a layer type name (one word)", type);
  if (type == "Input")
    return make_error("Net::register_layer: Input is the network's input, not a layer to replace");
  if (!creator) return make_error("Net::register_layer: no creator given for {}", type);
  for (auto& [name, make] : custom_)
    if (name == type) {
      make = std::move(creator);
      return {};
    }
  custom_.emplace_back(std::move(type), std::move(creator));
  return {};
}

INFER_NET_FUNC const NetBase::LayerCreator* NetBase::custom_creator(std::string_view type) const {
  for (const auto& [name, make] : custom_)
    if (name == type) return &make;
  return nullptr;
}

INFER_NET_FUNC Status NetBase::load_model(std::span<const std::byte> bytes, std::string source) {
  io::ModelBinFromMemory mb(bytes, source);
  INFER_TRY(load_model(mb));
  if (mb.offset() != bytes.size())
    return make_error(
        "{}: {} bytes of weights left over after the last layer (file has {}, "
        "layers read {}): the .bin does not belong to this .param",
        source, bytes.size() - mb.offset(), bytes.size(), mb.offset());
  return {};
}

INFER_NET_FUNC Status NetBase::load_model(const std::filesystem::path& path) {
  auto bytes = io::read_file_bytes(path);
  INFER_TRY(bytes);
  return load_model(std::span<const std::byte>(*bytes), path.string());
}

INFER_NET_FUNC Status NetBase::load_model(io::ModelBin& mb) {
  if (!state_ || state_->layers.empty()) return make_error("Net::load_model: load a .param first");
  State& st = *state_;
  for (std::size_t n = 0; n < st.layers.size(); ++n) {
    Status s = st.layers[n]->load(mb);
    if (!s.ok()) {
      const io::LayerSpec& spec = spec_of(int(n));
      return make_error("{}: weights of layer {} '{}' (line {}): {}", st.file.source, spec.type,
                        spec.name, spec.line, s.message());
    }
  }
  st.weights = true;
  st.forget_plans();
  return {};
}

INFER_NET_FUNC Status NetBase::load_random_weights(std::uint64_t seed,
                                                   std::vector<std::byte>* bin) {
  if (!state_ || state_->layers.empty())
    return make_error("Net::load_random_weights: load a .param first");
  io::RandomWeights gen(seed, bin);
  for (std::size_t n = 0; n < state_->layers.size(); ++n) {
    gen.begin_layer(spec_of(int(n)));
    Status s = state_->layers[n]->load(gen);
    if (!s.ok())
      return make_error("random weights of layer '{}': {}", spec_of(int(n)).name, s.message());
  }
  state_->weights = true;
  state_->forget_plans();
  return {};
}

INFER_NET_FUNC Status NetBase::load_ncnn_random_weights(std::uint32_t seed,
                                                        std::vector<std::byte>* bin) {
  if (!state_ || state_->layers.empty())
    return make_error("Net::load_ncnn_random_weights: load a .param first");
  io::NcnnRandomWeights gen(seed, bin);
  for (std::size_t n = 0; n < state_->layers.size(); ++n) {
    gen.begin_layer(spec_of(int(n)));
    Status s = state_->layers[n]->load(gen);
    if (!s.ok())
      return make_error("ncnn random weights of layer '{}': {}", spec_of(int(n)).name,
                        s.message());
  }
  state_->weights = true;
  state_->forget_plans();
  return {};
}

INFER_NET_FUNC std::vector<std::string_view> NetBase::input_names() const {
  std::vector<std::string_view> out;
  for (const auto& in : state_->inputs) out.push_back(state_->file.blobs[std::size_t(in.blob)]);
  return out;
}

INFER_NET_FUNC Shape NetBase::input_shape(std::size_t i) const {
  return state_->inputs.at(i).shape;
}

INFER_NET_FUNC std::string_view NetBase::default_output() const {
  const io::LayerSpec& last = state_->file.layers.back();
  return last.tops.empty() ? std::string_view() : state_->file.blobs[std::size_t(last.tops[0])];
}

INFER_NET_FUNC const io::ParamFile& NetBase::param() const { return state_->file; }

INFER_NET_FUNC std::size_t NetBase::layer_count() const { return state_->layers.size(); }

INFER_NET_FUNC Result<std::vector<Mat>> NetBase::run(
    std::span<const NamedMat> inputs, std::span<const std::string_view> outputs) const {
  if (!state_) return make_error("Net::run: load a .param first");
  State& st = *state_;
  // A context from the pool (made when every pooled one is busy), given back when done.
  std::unique_ptr<NetContext> ctx;
  {
    std::lock_guard lock(st.mutex);
    if (!st.pool.empty()) {
      ctx = std::move(st.pool.back());
      st.pool.pop_back();
    }
  }
  if (!ctx) ctx = std::make_unique<NetContext>(*this);
  ctx->net_ = this;  // pooled contexts move with the network
  Status ran = ctx->run(inputs, outputs);
  std::vector<Mat> out;
  if (ran.ok()) {
    out.reserve(ctx->output_count());
    for (std::size_t i = 0; i < ctx->output_count() && ran.ok(); ++i) {
      auto copy = ctx->output(i).clone();
      if (!copy.ok())
        ran = copy.error();
      else
        out.push_back(std::move(*copy));
    }
  }
  {
    std::lock_guard lock(st.mutex);
    st.pool.push_back(std::move(ctx));
  }
  INFER_TRY(ran);
  return out;
}

INFER_NET_FUNC Status NetBase::single_input(const Mat& input, std::string_view output, NamedMat& in,
                                            std::string_view& name) const {
  if (!state_ || state_->inputs.empty()) return make_error("Net::run: load a .param first");
  if (state_->inputs.size() != 1)
    return make_error("Net::run: the network has {} inputs; name them", state_->inputs.size());
  in = {state_->file.blobs[std::size_t(state_->inputs[0].blob)], input};
  name = output.empty() ? default_output() : output;
  return {};
}

INFER_NET_FUNC Result<Mat> NetBase::run(const Mat& input, std::string_view output) const {
  NamedMat in;
  std::string_view name;
  INFER_TRY(single_input(input, output, in, name));
  auto r = run(std::span<const NamedMat>(&in, 1), std::span<const std::string_view>(&name, 1));
  INFER_TRY(r);
  return std::move((*r)[0]);
}

INFER_NET_FUNC Result<std::shared_ptr<const graph::Plan>> NetBase::plan(
    std::span<const NamedMat> inputs, std::span<const std::string_view> outputs) const {
  std::vector<int> key;
  INFER_TRY(make_key(inputs, outputs, key));
  auto c = compiled_for(key);
  INFER_TRY(c);
  // The plan, kept alive by the Compiled that holds it.
  return std::shared_ptr<const graph::Plan>(*c, &(*c)->plan);
}

INFER_NET_FUNC void NetBase::set_plan_cache_limit(std::size_t n) {
  std::lock_guard lock(state_->mutex);
  state_->plan_limit = n < 1 ? 1 : n;
  while (state_->plans.size() > state_->plan_limit) state_->plans.pop_back();
}

INFER_NET_FUNC std::size_t NetBase::plan_cache_limit() const {
  std::lock_guard lock(state_->mutex);
  return state_->plan_limit;
}

INFER_NET_FUNC std::size_t NetBase::plan_cache_size() const {
  std::lock_guard lock(state_->mutex);
  return state_->plans.size();
}

INFER_NET_FUNC const io::LayerSpec& NetBase::spec_of(int node) const {
  return state_->file.layers[state_->layer_spec[std::size_t(node)]];
}

INFER_NET_FUNC int NetBase::blob_id(std::string_view name) const {
  const auto& blobs = state_->file.blobs;
  for (std::size_t i = 0; i < blobs.size(); ++i)
    if (blobs[i] == name) return int(i);
  return -1;
}

INFER_NET_FUNC Status NetBase::make_key(std::span<const NamedMat> inputs,
                                        std::span<const std::string_view> outputs,
                                        std::vector<int>& key) const {
  if (!state_ || state_->layers.empty()) return make_error("Net::run: load a .param first");
  const State& st = *state_;
  if (!st.weights) return make_error("Net::run: load the weights first (load_model)");
  if (inputs.size() != st.inputs.size())
    return make_error("Net::run: the network has {} inputs, got {}", st.inputs.size(),
                      inputs.size());
  if (outputs.empty()) return make_error("Net::run: name at least one blob to return");
  key.clear();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::size_t k = 0;
    while (k < st.inputs.size() && st.file.blobs[std::size_t(st.inputs[k].blob)] != inputs[i].name)
      ++k;
    if (k == st.inputs.size())
      return make_error("Net::run: '{}' is not an input of the network", inputs[i].name);
    if (k != i)
      return make_error("Net::run: give the inputs in the order of the .param ('{}' is input {})",
                        inputs[i].name, k);
    if (inputs[i].mat.empty()) return make_error("Net::run: input '{}' is empty", inputs[i].name);
    const Shape sh = inputs[i].mat.shape();
    key.insert(key.end(), {sh.dims, sh.w, sh.h, sh.d, sh.c});
  }
  for (std::string_view name : outputs) {
    const int b = blob_id(name);
    if (b < 0) return make_error("Net::run: no blob named '{}' in {}", name, st.file.source);
    key.push_back(b);
  }
  return {};
}

INFER_NET_FUNC Result<std::shared_ptr<const NetBase::Compiled>> NetBase::compiled_for(
    const std::vector<int>& key) const {
  State& st = *state_;
  // Planning happens under the lock too: it prepares shared layers that no plan runs yet, and two
  // threads asking for one new shape then plan it once.
  std::lock_guard lock(st.mutex);
  for (auto it = st.plans.begin(); it != st.plans.end(); ++it) {
    if ((*it)->key != key) continue;
    st.plans.splice(st.plans.begin(), st.plans, it);  // most recently used first
    return st.plans.front();
  }
  auto c = compile(key);
  INFER_TRY(c);
  st.plans.push_front(*c);
  while (st.plans.size() > st.plan_limit) st.plans.pop_back();
  return std::move(*c);
}

INFER_NET_FUNC Result<std::shared_ptr<const NetBase::Compiled>> NetBase::compile(
    const std::vector<int>& key) const {
  State& st = *state_;
  // The key: five numbers per input shape, then the requested blobs.
  std::vector<Shape> shapes(st.inputs.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const int* k = key.data() + 5 * i;
    shapes[i] = Shape{k[0], k[1], k[2], k[3], k[4]};
  }
  const std::vector<int> outs(key.begin() + std::ptrdiff_t(5 * shapes.size()), key.end());
  graph::GraphDesc g;
  for (const std::string& b : st.file.blobs) g.blobs.push_back(b);
  for (std::size_t i = 0; i < st.inputs.size(); ++i) {
    g.inputs.push_back(st.inputs[i].blob);
    g.input_shapes.push_back(shapes[i]);
  }
  for (std::size_t n = 0; n < st.layers.size(); ++n) {
    graph::NodeDesc d = st.layers[n]->describe();
    const io::LayerSpec& spec = spec_of(int(n));
    d.name = spec.name;
    d.in = spec.bottoms;
    d.out = spec.tops;
    g.nodes.push_back(std::move(d));
  }
  g.outputs = outs;
  auto infer = [&](int n, std::span<const Shape> in, std::span<Shape> out) {
    return st.layers[std::size_t(n)]->infer_shapes(in, out);
  };
  graph::Target target = target_;
  if (target.device == graph::Device::any) {
    // The caller's fallback: the GPU when a Vulkan device opens, else the CPU.
    bool opened = false;
#ifdef INFER_HAS_VULKAN
    if (!st.gpu && !st.gpu_failed) {
      auto dev = net::gpu::open_device(opt_.vulkan_device);
      if (dev.ok())
        st.gpu = std::move(*dev);
      else
        st.gpu_failed = true;
    }
    opened = st.gpu != nullptr;
#endif
    target.device = opened ? graph::Device::vulkan : graph::Device::cpu;
  }
  auto c = std::make_shared<Compiled>();
  c->key = key;
  c->plan = graph::compose(std::move(g), target, infer);
  if (!c->plan.error.ok()) return make_error("{}: {}", st.file.source, graph::describe(c->plan));
  const graph::Plan& p = c->plan;
  // Folding changes weights, and a plan may need a layer at another pack than an earlier
  // plan prepared it for: such layers get a copy of their own.
  c->own.resize(st.layers.size());
  for (const graph::StepDesc& s : p.steps) {
    if (s.kind != graph::StepDesc::layer) continue;
    const std::size_t n = std::size_t(s.node);
    net::AnyLayer* layer = st.layers[n].get();
    // The step's input shape picks a ShapePreparedLayer's layout (Convolution's Winograd tile).
    const Shape in = s.in.empty() ? Shape{} : p.buffers[std::size_t(s.in[0])].shape;
    // A float output the composer requantizes for its int8 readers (graph/requantize.hpp).
    const graph::NodeDesc& nd = p.desc.nodes[n];
    const float requant = nd.requant_scale();
    const std::tuple<ElemType, int, int, float> want{s.type, s.pack, layer->layout(s.pack, in),
                                                     requant};
    if (!s.folded.empty() || (std::get<1>(st.prepared[n]) != 0 && st.prepared[n] != want)) {
      c->own[n] = layer->clone();
      layer = c->own[n].get();
    }
    for (int f : s.folded) {
      std::vector<float> a, b;
      Status fs = st.layers[std::size_t(f)]->affine(a, b);
      if (fs.ok()) fs = layer->fold_affine(a, b);
      if (!fs.ok())
        return make_error("{}: folding '{}' into '{}': {}", st.file.source, spec_of(f).name,
                          spec_of(s.node).name, fs.message());
    }
    if (!c->own[n] && st.prepared[n] == want) continue;
    Status ps = layer->requantize_output(requant);
    if (ps.ok()) ps = layer->prepare(s.type, s.pack, opt_, in);
    if (!ps.ok())
      return make_error("{}: preparing layer {} '{}': {}", st.file.source, spec_of(s.node).type,
                        spec_of(s.node).name, ps.message());
    if (!c->own[n]) st.prepared[n] = want;
  }
  bool on_gpu = false;
  for (const graph::StepDesc& s : p.steps) on_gpu = on_gpu || s.device != graph::Device::cpu;
  if (on_gpu) {
#ifdef INFER_HAS_VULKAN
    if (!st.gpu) {
      auto dev = net::gpu::open_device(opt_.vulkan_device);
      if (!dev.ok())
        return make_error("{}: the target places layers on the GPU: {}", st.file.source,
                          dev.message());
      st.gpu = std::move(*dev);
    }
    if (p.target.gpu_storage == ElemType::f16 && !st.gpu->ctx->info().fp16_storage)
      return make_error(
          "{}: {} has no 16-bit storage for the target's f16 GPU storage (set "
          "gpu_storage = f32)",
          st.file.source, st.gpu->ctx->info().name);
    auto w = net::gpu::upload_weights(st.gpu, p, [&](int node) { return c->layer(st, node); });
    if (!w.ok()) return make_error("{}: uploading the weights: {}", st.file.source, w.message());
    c->gpu = std::move(*w);
#else
    return make_error(
        "{}: the target places layers on the GPU, and infer was built without the "
        "Vulkan backend (INFER_VULKAN=OFF)",
        st.file.source);
#endif
  }
  return std::shared_ptr<const Compiled>(std::move(c));
}

INFER_NET_FUNC NetContext::NetContext(const NetBase& net)
    : net_(&net), impl_(std::make_unique<Impl>(net.options())) {}
INFER_NET_FUNC NetContext::NetContext(NetContext&&) noexcept = default;
INFER_NET_FUNC NetContext& NetContext::operator=(NetContext&&) noexcept = default;
INFER_NET_FUNC NetContext::~NetContext() = default;

INFER_NET_FUNC void NetContext::set_profiling(bool on) { impl_->profile = on; }
INFER_NET_FUNC const std::vector<StepTiming>& NetContext::step_timings() const {
  return impl_->timings;
}
INFER_NET_FUNC const Mat& NetContext::output(std::size_t i) const { return impl_->outputs.at(i); }
INFER_NET_FUNC std::size_t NetContext::output_count() const { return impl_->outputs.size(); }

INFER_NET_FUNC Status NetContext::run(const Mat& input, std::string_view output) {
  NamedMat in;
  std::string_view name;
  INFER_TRY(net_->single_input(input, output, in, name));
  return run(std::span<const NamedMat>(&in, 1), std::span<const std::string_view>(&name, 1));
}

INFER_NET_FUNC Status NetContext::run(std::span<const NamedMat> inputs,
                                      std::span<const std::string_view> outputs) {
  const NetBase& net = *net_;
  Impl& x = *impl_;
  INFER_TRY(net.make_key(inputs, outputs, x.key));
  // A new plan, or (GPU) profiling switched: the GPU side is recorded again.
  bool rerecord = false;
#ifdef INFER_HAS_VULKAN
  rerecord = x.gpu && x.gpu->timestamps_requested() != x.profile;
#endif
  if (!x.compiled || x.compiled->key != x.key || rerecord) {
    if (!x.compiled || x.compiled->key != x.key) {
      auto c = net.compiled_for(x.key);
      INFER_TRY(c);
      INFER_TRY(x.bind(std::move(*c)));
    }
#ifdef INFER_HAS_VULKAN
    x.gpu.reset();
    if (x.compiled->gpu) {
      const NetBase::Compiled& cc = *x.compiled;
      auto r = net::gpu::Run::record(
          cc.plan, *cc.gpu, [&](int node) { return cc.layer(*net.state_, node); },
          [&](std::size_t k) { return net.step_text(cc, k); }, x.profile);
      if (!r.ok()) {
        x.compiled.reset();
        return make_error("{}: {}", net.state_->file.source, r.message());
      }
      x.gpu = std::move(*r);
    }
#endif
  }
  const NetBase::Compiled& c = *x.compiled;
  const graph::Plan& p = c.plan;
  const std::string& source = net.state_->file.source;
  if (!x.planned.empty()) std::copy(x.planned.begin(), x.planned.end(), x.bufs.begin());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const NamedMat& in = inputs[i];
    Mat& dst = x.bufs[std::size_t(p.input_buffers[i])];
    if (in.mat.type() != ElemType::f32)
      return make_error("Net::run: input '{}' must be f32, got {}", in.name,
                        to_string(in.mat.type()));
    if (in.mat.elempack() == 1)
      in.mat.copy_to(dst);
    else
      INFER_TRY(convert_packing(in.mat, dst, 1, x.opt));
  }
  if (x.profile) x.timings.clear();
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const graph::StepDesc& s = p.steps[k];
    const auto start =
        x.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    Status r;
    std::string_view what;
#ifdef INFER_HAS_VULKAN
    if (const int seg = x.gpu ? x.gpu->segment_at(k) : -1; seg >= 0) {
      // A run of GPU steps: recorded once, one submit and one wait here.
      const std::size_t end = x.gpu->segment_end(seg);
      r = x.gpu->run_segment(seg, x.bufs, x.opt.vulkan_spin_us, x.profile ? &x.gpu_ms : nullptr);
      if (!r.ok())
        return make_error("{}: steps {}..{} on the GPU: {}", source, k, end - 1, r.message());
      if (x.profile) {
        // Each GPU step's own time from the device's timestamps, when it has them; else the
        // segment's wall time (submit to wait) as one entry.
        if (x.gpu->timestamps() && x.gpu_ms.size() == end - k) {
          for (std::size_t i = k; i < end; ++i)
            x.timings.push_back({net.step_text(c, i) + " [gpu]", x.gpu_ms[i - k]});
        } else {
          const auto stop = std::chrono::steady_clock::now();
          x.timings.push_back({fmt::format("gpu steps {}..{} ({} to {})", k, end - 1,
                                           net.step_text(c, k), net.step_text(c, end - 1)),
                               std::chrono::duration<double, std::milli>(stop - start).count()});
        }
      }
      k = end - 1;
      continue;
    }
#endif
    if (s.device != graph::Device::cpu) {
      what = s.kind == graph::StepDesc::layer ? net.spec_of(s.node).name : "transfer";
      r = make_error("a GPU step outside the recorded segments");
    } else if (s.kind == graph::StepDesc::cast) {
      what = "cast";
      r = cast(x.bufs[std::size_t(s.in[0])], x.bufs[std::size_t(s.out[0])], s.type, x.opt,
               graph::cast_scales(s));
    } else if (s.kind == graph::StepDesc::repack) {
      what = "repack";
      r = convert_packing(x.bufs[std::size_t(s.in[0])], x.bufs[std::size_t(s.out[0])], s.pack,
                          x.opt);
    } else {
      const std::size_t n = std::size_t(s.node);
      what = net.spec_of(s.node).name;
      const net::AnyLayer* layer = c.own[n] ? c.own[n].get() : net.state_->layers[n].get();
      r = layer->run(s, x.bufs, x.opt);
    }
    if (r.ok()) {
      // A layer that made another shape or type than planned would have allocated instead.
      for (std::size_t o = 0; o < s.out.size(); ++o) {
        const graph::BufferDesc& d = p.buffers[std::size_t(s.out[o])];
        const Mat& m = x.bufs[std::size_t(s.out[o])];
        if (m.data() != static_cast<char*>(x.arena) + d.offset) {
          const Mat planned = Mat::wrap(nullptr, d.shape, d.type, d.pack);
          r = make_error("output {} is {}, the plan expected {}", o, m.describe(),
                         planned.describe());
          break;
        }
      }
    }
    if (!r.ok()) return make_error("{}: step {} ({}): {}", source, k, what, r.message());
    if (x.profile) {
      const auto stop = std::chrono::steady_clock::now();
      x.timings.push_back(
          {net.step_text(c, k), std::chrono::duration<double, std::milli>(stop - start).count()});
    }
  }
  for (std::size_t o = 0; o < p.output_buffers.size(); ++o)
    x.outputs[o] = x.bufs[std::size_t(p.output_buffers[o])];
  return {};
}

INFER_NET_FUNC std::string NetBase::step_text(const Compiled& c, std::size_t k) const {
  const graph::StepDesc& s = c.plan.steps[k];
  const graph::BufferDesc& out = c.plan.buffers[std::size_t(s.out[0])];
  const std::string what = s.kind == graph::StepDesc::cast     ? std::string("cast")
                           : s.kind == graph::StepDesc::repack ? std::string("repack")
                           : s.kind == graph::StepDesc::upload ? std::string("upload")
                           : s.kind == graph::StepDesc::download
                               ? std::string("download")
                               : fmt::format("{} '{}'", spec_of(s.node).type, spec_of(s.node).name);
  return fmt::format("{} p{} -> {}x{}x{} p{}", what, s.pack, out.shape.w, out.shape.h, out.shape.c,
                     out.pack);
}

}  // namespace infer
