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
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer {

/// A plan with its arena and the layers it changed (folded weights) or prepared differently.
struct NetBase::Compiled {
  graph::Plan plan;
  std::vector<std::unique_ptr<net::AnyLayer>> own;  ///< by node; null: the shared layer
  PoolAllocator workspace;
  Option opt;
  Allocator* arena_alloc = nullptr;
  void* arena = nullptr;
  std::vector<Mat> bufs;
  ~Compiled() {
    if (arena) arena_alloc->deallocate(arena, plan.arena_bytes);
  }
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
  std::vector<std::pair<ElemType, int>> prepared;      ///< (type, pack) a shared layer has
  bool weights = false;
  std::map<std::vector<int>, std::unique_ptr<Compiled>> plans;  ///< by shapes and outputs
};

INFER_NET_FUNC NetBase::NetBase(graph::Target target, Option opt, net::LayerFactory make)
    : target_(target), opt_(opt), make_layer_(make), state_(std::make_unique<State>()) {}
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
  auto st = std::make_unique<State>();
  st->file = std::move(file);
  const io::ParamFile& f = st->file;
  // Every unsupported type at once, so one attempt shows all that a model needs.
  std::vector<std::string_view> seen;
  std::string unsupported;
  for (const io::LayerSpec& spec : f.layers) {
    if (spec.type == "Input" || io::is_supported_ncnn_type(spec.type)) continue;
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
    auto layer = make_layer_(f, spec);
    INFER_TRY(layer);
    st->layers.push_back(std::move(*layer));
    st->layer_spec.push_back(i);
  }
  if (st->layers.empty()) return make_error("{}: the network has no layers to run", f.source);
  if (st->inputs.empty()) return make_error("{}: the network has no Input layer", f.source);
  state_ = std::move(st);
  return {};
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
  if (!state_ || state_->layers.empty())
    return make_error("Net::load_model: load a .param first");
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
  st.plans.clear();
  st.prepared.assign(st.layers.size(), {});
  return {};
}

INFER_NET_FUNC Status NetBase::load_random_weights(std::uint64_t seed, std::vector<std::byte>* bin) {
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
  state_->plans.clear();
  state_->prepared.assign(state_->layers.size(), {});
  return {};
}

INFER_NET_FUNC std::vector<std::string_view> NetBase::input_names() const {
  std::vector<std::string_view> out;
  for (const auto& in : state_->inputs) out.push_back(state_->file.blobs[std::size_t(in.blob)]);
  return out;
}

INFER_NET_FUNC Shape NetBase::input_shape(std::size_t i) const { return state_->inputs.at(i).shape; }

INFER_NET_FUNC std::string_view NetBase::default_output() const {
  const io::LayerSpec& last = state_->file.layers.back();
  return last.tops.empty() ? std::string_view() : state_->file.blobs[std::size_t(last.tops[0])];
}

INFER_NET_FUNC const io::ParamFile& NetBase::param() const { return state_->file; }

INFER_NET_FUNC std::size_t NetBase::layer_count() const { return state_->layers.size(); }

INFER_NET_FUNC Result<std::vector<Mat>> NetBase::run(std::span<const NamedMat> inputs,
                             std::span<const std::string_view> outputs) {
  auto compiled = compiled_for(inputs, outputs);
  INFER_TRY(compiled);
  Compiled& c = **compiled;
  for (std::size_t i = 0; i < inputs.size(); ++i) INFER_TRY(set_input(c, i, inputs[i]));
  if (!profile_) {
    for (std::size_t k = 0; k < c.plan.steps.size(); ++k) INFER_TRY(run_step(c, k));
  } else {
    timings_.clear();
    for (std::size_t k = 0; k < c.plan.steps.size(); ++k) {
      const auto start = std::chrono::steady_clock::now();
      INFER_TRY(run_step(c, k));
      const auto stop = std::chrono::steady_clock::now();
      timings_.push_back(
          {step_text(c, k), std::chrono::duration<double, std::milli>(stop - start).count()});
    }
  }
  std::vector<Mat> out;
  for (int b : c.plan.output_buffers) {
    auto copy = c.bufs[std::size_t(b)].clone();
    INFER_TRY(copy);
    out.push_back(std::move(*copy));
  }
  return out;
}

INFER_NET_FUNC Result<Mat> NetBase::run(const Mat& input, std::string_view output) {
  if (state_->inputs.size() != 1)
    return make_error("Net::run: the network has {} inputs; name them", state_->inputs.size());
  const NamedMat in{input_names()[0], input};
  const std::string_view name = output.empty() ? default_output() : output;
  auto r = run(std::span<const NamedMat>(&in, 1), std::span<const std::string_view>(&name, 1));
  INFER_TRY(r);
  return std::move((*r)[0]);
}

INFER_NET_FUNC Result<const graph::Plan*> NetBase::plan(std::span<const NamedMat> inputs,
                                std::span<const std::string_view> outputs) {
  auto c = compiled_for(inputs, outputs);
  INFER_TRY(c);
  return &(*c)->plan;
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

INFER_NET_FUNC Result<NetBase::Compiled*> NetBase::compiled_for(std::span<const NamedMat> inputs,
                               std::span<const std::string_view> outputs) {
  if (!state_ || state_->layers.empty()) return make_error("Net::run: load a .param first");
  State& st = *state_;
  if (!st.weights) return make_error("Net::run: load the weights first (load_model)");
  if (inputs.size() != st.inputs.size())
    return make_error("Net::run: the network has {} inputs, got {}", st.inputs.size(),
                      inputs.size());
  std::vector<Shape> shapes(st.inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::size_t k = 0;
    while (k < st.inputs.size() &&
           st.file.blobs[std::size_t(st.inputs[k].blob)] != inputs[i].name)
      ++k;
    if (k == st.inputs.size())
      return make_error("Net::run: '{}' is not an input of the network", inputs[i].name);
    if (k != i)
      return make_error("Net::run: give the inputs in the order of the .param ('{}' is input {})",
                        inputs[i].name, k);
    if (inputs[i].mat.empty()) return make_error("Net::run: input '{}' is empty", inputs[i].name);
    shapes[i] = inputs[i].mat.shape();
  }
  std::vector<int> outs;
  for (std::string_view name : outputs) {
    const int b = blob_id(name);
    if (b < 0) return make_error("Net::run: no blob named '{}' in {}", name, st.file.source);
    outs.push_back(b);
  }
  std::vector<int> key;  // the input shapes, then the requested blobs
  for (const Shape& sh : shapes) key.insert(key.end(), {sh.dims, sh.w, sh.h, sh.d, sh.c});
  key.insert(key.end(), outs.begin(), outs.end());
  if (auto it = st.plans.find(key); it != st.plans.end()) return it->second.get();
  auto c = compile(shapes, outs);
  INFER_TRY(c);
  Compiled* raw = c->get();
  st.plans.emplace(std::move(key), std::move(*c));
  return raw;
}

INFER_NET_FUNC Result<std::unique_ptr<NetBase::Compiled>> NetBase::compile(const std::vector<Shape>& shapes,
                                          const std::vector<int>& outs) {
  State& st = *state_;
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
  auto c = std::make_unique<Compiled>();
  c->plan = graph::compose(std::move(g), target_, infer);
  if (!c->plan.error.ok()) return make_error("{}: {}", st.file.source, graph::describe(c->plan));
  const graph::Plan& p = c->plan;
  // Folding changes weights, and a plan may need a layer at another pack than an earlier
  // plan prepared it for: such layers get a copy of their own.
  c->own.resize(st.layers.size());
  for (const graph::StepDesc& s : p.steps) {
    if (s.kind != graph::StepDesc::layer) continue;
    const std::size_t n = std::size_t(s.node);
    const std::pair<ElemType, int> want{s.type, s.pack};
    net::AnyLayer* layer = st.layers[n].get();
    if (!s.folded.empty() || (st.prepared[n].second != 0 && st.prepared[n] != want)) {
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
    Status ps = layer->prepare(s.type, s.pack, opt_);
    if (!ps.ok())
      return make_error("{}: preparing layer {} '{}': {}", st.file.source, spec_of(s.node).type,
                        spec_of(s.node).name, ps.message());
    if (!c->own[n]) st.prepared[n] = want;
  }
  c->opt = opt_;
  c->arena_alloc = opt_.blob_alloc();
  c->arena = p.arena_bytes ? c->arena_alloc->allocate(p.arena_bytes) : nullptr;
  c->bufs.resize(p.buffers.size());
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const graph::BufferDesc& d = p.buffers[b];
    c->bufs[b] = Mat::wrap(static_cast<char*>(c->arena) + d.offset, d.shape, d.type, d.pack,
                           packed_layout(d.shape, d.type, d.pack).cstep);
  }
  c->opt.workspace_allocator = &c->workspace;
  c->opt.blob_allocator = &c->workspace;
  return c;
}

INFER_NET_FUNC Status NetBase::set_input(Compiled& c, std::size_t i, const NamedMat& in) {
  Mat& dst = c.bufs[std::size_t(c.plan.input_buffers[i])];
  if (in.mat.type() != ElemType::f32)
    return make_error("Net::run: input '{}' must be f32, got {}", in.name,
                      to_string(in.mat.type()));
  if (in.mat.elempack() == 1) {
    in.mat.copy_to(dst);
    return {};
  }
  return convert_packing(in.mat, dst, 1, c.opt);
}

INFER_NET_FUNC Status NetBase::run_step(Compiled& c, std::size_t k) {
  const graph::StepDesc& s = c.plan.steps[k];
  Status r;
  std::string_view what;
  if (s.kind == graph::StepDesc::cast) {
    what = "cast";
    r = cast(c.bufs[std::size_t(s.in[0])], c.bufs[std::size_t(s.out[0])], s.type, c.opt);
  } else if (s.kind == graph::StepDesc::repack) {
    what = "repack";
    r = convert_packing(c.bufs[std::size_t(s.in[0])], c.bufs[std::size_t(s.out[0])], s.pack,
                        c.opt);
  } else {
    const std::size_t n = std::size_t(s.node);
    what = spec_of(s.node).name;
    const net::AnyLayer* layer = c.own[n] ? c.own[n].get() : state_->layers[n].get();
    r = layer->run(s, c.bufs, c.opt);
  }
  if (r.ok()) {
    // A layer that made another shape or type than planned would have allocated instead.
    for (std::size_t o = 0; o < s.out.size(); ++o) {
      const graph::BufferDesc& d = c.plan.buffers[std::size_t(s.out[o])];
      const Mat& m = c.bufs[std::size_t(s.out[o])];
      if (m.data() != static_cast<char*>(c.arena) + d.offset) {
        const Mat planned = Mat::wrap(nullptr, d.shape, d.type, d.pack);
        r = make_error("output {} is {}, the plan expected {}", o, m.describe(),
                       planned.describe());
        break;
      }
    }
  }
  if (!r.ok())
    return make_error("{}: step {} ({}): {}", state_->file.source, k, what, r.message());
  return {};
}

INFER_NET_FUNC std::string NetBase::step_text(const Compiled& c, std::size_t k) const {
  const graph::StepDesc& s = c.plan.steps[k];
  const graph::BufferDesc& out = c.plan.buffers[std::size_t(s.out[0])];
  const std::string what =
      s.kind == graph::StepDesc::cast ? std::string("cast")
      : s.kind == graph::StepDesc::repack
          ? std::string("repack")
          : fmt::format("{} '{}'", spec_of(s.node).type, spec_of(s.node).name);
  return fmt::format("{} p{} -> {}x{}x{} p{}", what, s.pack, out.shape.w, out.shape.h,
                     out.shape.c, out.pack);
}

}  // namespace infer
