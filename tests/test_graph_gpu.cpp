// The composer on a Vulkan target (no GPU needed: the passes are plain functions over a graph
// description): which steps run where, uploads and downloads only where a blob crosses (once per
// blob and format), conversions on the right side of a transfer, the GPU's own arena, and the
// printed plan naming the device of every step. Also at compile time (static_assert).
#include <catch2/catch.hpp>
#include <infer/graph/compose.hpp>
#include <infer/graph/print.hpp>

#include "support/plan_checks.hpp"

using namespace infer;
using graph::Device;
using graph::StepDesc;

namespace {

/// A one-blob node reading `in`, writing `out`; `gpu` says whether its layer has a GPU forward.
constexpr graph::NodeDesc make_node(graph::GraphDesc& d, std::string_view name, std::string_view in,
                                    std::string_view out, bool gpu, bool inplace = false) {
  graph::NodeDesc n;
  n.type = gpu ? "GpuLayer" : "CpuLayer";
  n.name = name;
  n.in = {d.blob_id(in)};
  n.out = {d.blob_id(out)};
  n.storage = (1u << unsigned(ElemType::f32)) | (1u << unsigned(ElemType::f16));
  n.packs = 1u | 4u | 8u | 16u;
  n.one_blob = true;
  n.inplace = inplace;
  n.vulkan = gpu;
  return n;
}

/// The layer step of the node named `name`, or null where the plan has none (merged away).
const StepDesc* step_of(const graph::Plan& p, std::string_view name) {
  for (const StepDesc& s : p.steps)
    if (s.kind == StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == name) return &s;
  return nullptr;
}

/// in -> a (gpu) -> b (gpu, in place) -> c (cpu only) -> d (gpu) -> out; `e` (gpu) also reads c.
constexpr graph::GraphDesc mixed_graph(int channels) {
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("in"));
  d.input_shapes.push_back(Shape::of(5, 3, channels));
  d.nodes.push_back(make_node(d, "a", "in", "a", true));
  d.nodes.push_back(make_node(d, "b", "a", "b", true, true));
  d.nodes.push_back(make_node(d, "c", "b", "c", false));
  d.nodes.push_back(make_node(d, "d", "c", "d", true));
  d.nodes.push_back(make_node(d, "e", "c", "e", true));
  d.outputs.push_back(d.blob_id("d"));
  d.outputs.push_back(d.blob_id("e"));
  return d;
}

constexpr auto same_shape_fn = [](int, std::span<const Shape> in, std::span<Shape> out) {
  return same_shape(in, out);
};

constexpr graph::Plan plan_for(graph::Target t, int channels = 16) {
  return graph::compose(mixed_graph(channels), t, same_shape_fn);
}

constexpr graph::Target gpu_target() {
  graph::Target t;
  t.device = Device::vulkan;
  return t;
}

/// The kinds of the plan's steps, one letter each: L layer, C cast, R repack, U upload, D download.
constexpr int count_kind(const graph::Plan& p, StepDesc::Kind k) {
  int n = 0;
  for (const StepDesc& s : p.steps) n += s.kind == k;
  return n;
}

// Transfers cast between the float storage types only; the same type is a plain copy.
static_assert(graph::detail::transfer_casts(ElemType::f32, ElemType::f16));
static_assert(graph::detail::transfer_casts(ElemType::bf16, ElemType::f32));
static_assert(!graph::detail::transfer_casts(ElemType::f16, ElemType::f16));
static_assert(!graph::detail::transfer_casts(ElemType::f32, ElemType::i8));

// At compile time: two uploads (the input; c's output for d and e, shared), two downloads (b's
// output for c; d and e as graph outputs, one each).
static_assert(plan_for(gpu_target()).error.ok());
static_assert(count_kind(plan_for(gpu_target()), StepDesc::upload) == 2);
static_assert(count_kind(plan_for(gpu_target()), StepDesc::download) == 3);
static_assert(plan_for(gpu_target()).gpu_arena_bytes > 0);
static_assert(count_kind(plan_for(graph::Target{}), StepDesc::upload) == 0);
static_assert(plan_for(graph::Target{}).gpu_arena_bytes == 0);

std::string kinds(const graph::Plan& p) {
  std::string k;
  for (const StepDesc& s : p.steps) k += "LCRUD"[int(s.kind)];
  return k;
}

}  // namespace

TEST_CASE("a Vulkan target places GPU layers on the GPU and transfers at the borders",
          "[graph][gpu]") {
  const graph::Plan p = plan_for(gpu_target());
  INFO(graph::format_plan(p));
  REQUIRE(p.error.ok());
  // in (f32 p1, host) -> repack p4, upload casting to f16 -> a, b on the GPU -> download casting
  // to f32 (c runs at the CPU's f32 default), repack to the CPU's widest pack -> c -> repack p4,
  // upload casting to f16 -> d, e on the GPU -> each downloaded as f32, repacked to p1.
  for (const StepDesc& s : p.steps) {
    CAPTURE(graph::detail::step_title(p, s));
    if (s.kind == StepDesc::layer) {
      const bool gpu = p.desc.nodes[std::size_t(s.node)].vulkan;
      CHECK(s.device == (gpu ? Device::vulkan : Device::cpu));
      CHECK(s.type == (gpu ? ElemType::f16 : ElemType::f32));
      if (gpu) CHECK(s.pack == 4);
    }
    // Every step reads and writes buffers on its own side, transfers from one side to the other.
    for (int b : s.in) {
      const Device want = s.kind == StepDesc::upload     ? Device::cpu
                          : s.kind == StepDesc::download ? Device::vulkan
                                                         : s.device;
      CHECK(p.buffers[std::size_t(b)].device == want);
    }
    for (int b : s.out) {
      const Device want = s.kind == StepDesc::upload     ? Device::vulkan
                          : s.kind == StepDesc::download ? Device::cpu
                                                         : s.device;
      CHECK(p.buffers[std::size_t(b)].device == want);
    }
    // A transfer keeps the pack and casts between the host's f32 and the GPU's f16 as it copies.
    if (s.kind == StepDesc::upload || s.kind == StepDesc::download) {
      const graph::BufferDesc &from = p.buffers[std::size_t(s.in[0])],
                              &to = p.buffers[std::size_t(s.out[0])];
      CHECK(from.type == (s.kind == StepDesc::upload ? ElemType::f32 : ElemType::f16));
      CHECK(to.type == (s.kind == StepDesc::upload ? ElemType::f16 : ElemType::f32));
      CHECK(from.pack == to.pack);
      CHECK(from.blob == to.blob);
    }
    // No cast anywhere: the transfers make them.
    CHECK(s.kind != StepDesc::cast);
    // No conversion runs on the GPU here: the GPU side keeps one format (f16 p4).
    if (s.kind == StepDesc::cast || s.kind == StepDesc::repack) CHECK(s.device == Device::cpu);
  }
  CHECK(count_kind(p, StepDesc::upload) == 2);
  CHECK(count_kind(p, StepDesc::download) == 3);
  // b runs in place on a's buffer, on the GPU.
  const auto b = std::find_if(p.steps.begin(), p.steps.end(), [&](const StepDesc& s) {
    return s.kind == StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == "b";
  });
  REQUIRE(b != p.steps.end());
  CHECK(b->inplace);
  // The outputs leave as f32 pack 1 on the host.
  for (int o : p.output_buffers) {
    CHECK(p.buffers[std::size_t(o)].device == Device::cpu);
    CHECK(p.buffers[std::size_t(o)].type == ElemType::f32);
    CHECK(p.buffers[std::size_t(o)].pack == 1);
  }
  test::check_no_overlap(p);
  CHECK(p.gpu_lower_bound <= p.gpu_arena_bytes);
  CHECK(p.lower_bound <= p.arena_bytes);
}

TEST_CASE("the printed plan names each step's device", "[graph][gpu]") {
  const graph::Plan p = plan_for(gpu_target());
  const std::string text = graph::format_plan(p);
  INFO(text);
  CHECK_THAT(text, Catch::Contains("upload -> gpu"));
  CHECK_THAT(text, Catch::Contains("download -> cpu"));
  CHECK_THAT(text, Catch::Contains("GpuLayer 'a'"));
  CHECK_THAT(text, Catch::Contains("[gpu]"));
  CHECK_THAT(text, Catch::Contains("gpu arena"));
  CHECK_THAT(text, Catch::Contains("a[5x3x16 f16 p4 gpu]"));
  const std::string dot = graph::to_dot(p);
  CHECK_THAT(dot, Catch::Contains("color=darkgreen"));
  // The CPU-only layer's line has no GPU mark.
  const std::size_t c = text.find("CpuLayer 'c'");
  REQUIRE(c != std::string::npos);
  const std::string line = text.substr(c, text.find('\n', c) - c);
  CHECK_THAT(line, !Catch::Contains("[gpu]"));
}

TEST_CASE("a Vulkan target with f32 storage and pack 1, and odd channel counts", "[graph][gpu]") {
  graph::Target t = gpu_target();
  t.gpu_storage = ElemType::f32;
  t.gpu_max_pack = 1;
  const graph::Plan p = plan_for(t);
  INFO(graph::format_plan(p));
  REQUIRE(p.error.ok());
  // The input goes up as it is: no conversion before the first upload.
  CHECK(kinds(p).rfind("UL", 0) == 0);
  for (const StepDesc& s : p.steps)
    if (s.device == Device::vulkan && s.kind == StepDesc::layer) {
      CHECK(s.type == ElemType::f32);
      CHECK(s.pack == 1);
    }
  test::check_no_overlap(p);

  // 7 channels: pack 4 does not divide them, so the GPU runs at pack 1.
  const graph::Plan odd = plan_for(gpu_target(), 7);
  INFO(graph::format_plan(odd));
  REQUIRE(odd.error.ok());
  for (const StepDesc& s : odd.steps)
    if (s.device == Device::vulkan && s.kind == StepDesc::layer) CHECK(s.pack == 1);
  test::check_no_overlap(odd);
}

TEST_CASE("on the GPU a convolution of 3 input channels writes its output at pack 4",
          "[graph][gpu]") {
  // in (3 channels) -> conv (to 32) -> b: the convolution runs at pack 1 (its input's) and, where
  // its kernels write any pack, writes pack 4 for b; no repack between conv and b.
  auto plan_of = [](bool any_out_pack) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(9, 9, 3));
    graph::NodeDesc conv = make_node(d, "conv", "in", "c", true);
    conv.type = "Convolution";
    conv.vulkan_any_out_pack = any_out_pack;
    d.nodes.push_back(conv);
    d.nodes.push_back(make_node(d, "b", "c", "b", true));
    d.outputs.push_back(d.blob_id("b"));
    auto shapes = [](int n, std::span<const Shape> in, std::span<Shape> out) {
      out[0] = n == 0 ? Shape::of(in[0].w, in[0].h, 32) : in[0];
      return ShapeCheck{};
    };
    return graph::compose(d, gpu_target(), shapes);
  };
  const graph::Plan p = plan_of(true);
  INFO(graph::format_plan(p));
  REQUIRE(p.error.ok());
  CHECK(kinds(p) == "ULLDR");
  const StepDesc& conv = p.steps[1];
  REQUIRE(conv.kind == StepDesc::layer);
  CHECK(conv.pack == 1);
  CHECK(p.buffers[std::size_t(conv.in[0])].pack == 1);
  CHECK(p.buffers[std::size_t(conv.out[0])].pack == 4);
  test::check_no_overlap(p);
  // Without it, a repack on the GPU between the two.
  const graph::Plan narrow = plan_of(false);
  REQUIRE(narrow.error.ok());
  CHECK(kinds(narrow) == "ULRLDR");
}

TEST_CASE("every layer on the GPU: one upload, one download per output", "[graph][gpu]") {
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("in"));
  d.input_shapes.push_back(Shape::of(9, 9, 32));
  d.nodes.push_back(make_node(d, "a", "in", "a", true));
  d.nodes.push_back(make_node(d, "b", "a", "b", true, true));
  d.nodes.push_back(make_node(d, "c", "b", "c", true));
  d.outputs.push_back(d.blob_id("c"));
  const graph::Plan p = graph::compose(d, gpu_target(), same_shape_fn);
  INFO(graph::format_plan(p));
  REQUIRE(p.error.ok());
  CHECK(kinds(p) == "RULLLDR");
  test::check_no_overlap(p);
}

TEST_CASE("on the GPU an element-wise producer takes in the activation after it", "[graph][gpu]") {
  // in -> a; in, a -> sum (two inputs, its GPU forward applies an activation) -> relu -> out.
  auto graph_of = [](bool relu_on_gpu) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(5, 3, 8));
    d.nodes.push_back(make_node(d, "a", "in", "a", true));
    graph::NodeDesc sum = make_node(d, "sum", "in", "s", true);
    sum.type = "Eltwise";
    sum.in = {d.blob_id("in"), d.blob_id("a")};
    sum.one_blob = false;
    sum.vulkan_fuses_activation = true;
    d.nodes.push_back(sum);
    graph::NodeDesc relu = make_node(d, "relu", "s", "out", relu_on_gpu, true);
    relu.type = "ReLU";
    relu.as_activation.type = 1;
    d.nodes.push_back(relu);
    d.outputs.push_back(d.blob_id("out"));
    return d;
  };
  auto shapes = [](int, std::span<const Shape> in, std::span<Shape> out) {
    return same_shape(in.first(1), out);
  };
  // A Vulkan target: the ReLU is the sum's epilogue, no step of its own.
  const graph::Plan gpu = graph::compose(graph_of(true), gpu_target(), shapes);
  REQUIRE(gpu.error.ok());
  const StepDesc* sum = step_of(gpu, "sum");
  REQUIRE(sum);
  CHECK(sum->device == Device::vulkan);
  CHECK(sum->act.type == 1);
  CHECK(step_of(gpu, "relu") == nullptr);
  // A CPU target: the CPU's Eltwise has no fused form, so the ReLU stays a step.
  const graph::Plan cpu = graph::compose(graph_of(true), graph::Target{}, shapes);
  REQUIRE(cpu.error.ok());
  CHECK(step_of(cpu, "sum")->act.type == 0);
  CHECK(step_of(cpu, "relu") != nullptr);
  // A ReLU without a GPU forward runs on the CPU: not fused into the GPU's sum.
  const graph::Plan mixed = graph::compose(graph_of(false), gpu_target(), shapes);
  REQUIRE(mixed.error.ok());
  CHECK(step_of(mixed, "sum")->act.type == 0);
  CHECK(step_of(mixed, "relu") != nullptr);
}

TEST_CASE("on the GPU a producer takes in an activation only the shaders apply", "[graph][gpu]") {
  // in -> ip (an InnerProduct: forward_fused) -> hs (HardSigmoid: no CPU kernel fuses it) -> out.
  auto graph_of = [](bool ip_on_gpu, bool hs_on_gpu) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(5, 3, 8));
    graph::NodeDesc ip = make_node(d, "ip", "in", "x", ip_on_gpu);
    ip.type = "InnerProduct";
    ip.fuses_activation = true;
    d.nodes.push_back(ip);
    graph::NodeDesc hs = make_node(d, "hs", "x", "out", hs_on_gpu, true);
    hs.type = "HardSigmoid";
    hs.as_gpu_activation = {int(layers::ActivationType::hardsigmoid), {0.25f, 0.5f}};
    d.nodes.push_back(hs);
    d.outputs.push_back(d.blob_id("out"));
    return d;
  };
  // Both on the GPU: the HardSigmoid is the InnerProduct's epilogue, its parameters kept.
  const graph::Plan gpu = graph::compose(graph_of(true, true), gpu_target(), same_shape_fn);
  INFO(graph::format_plan(gpu));
  REQUIRE(gpu.error.ok());
  const StepDesc* ip = step_of(gpu, "ip");
  REQUIRE(ip);
  CHECK(ip->act.type == int(layers::ActivationType::hardsigmoid));
  CHECK(ip->act.params[0] == 0.25f);
  CHECK(ip->act.params[1] == 0.5f);
  CHECK(step_of(gpu, "hs") == nullptr);
  CHECK_THAT(graph::format_plan(gpu), Catch::Contains("+HardSigmoid"));
  // A CPU target, or either layer on the CPU: two steps, the InnerProduct without an activation.
  for (const graph::Plan& p :
       {graph::compose(graph_of(true, true), graph::Target{}, same_shape_fn),
        graph::compose(graph_of(false, true), gpu_target(), same_shape_fn),
        graph::compose(graph_of(true, false), gpu_target(), same_shape_fn)}) {
    REQUIRE(p.error.ok());
    REQUIRE(step_of(p, "ip"));
    CHECK(step_of(p, "ip")->act.type == 0);
    CHECK(step_of(p, "hs") != nullptr);
  }
}

TEST_CASE("on the GPU a convolution takes in the residual sum after it, then its activation",
          "[graph][gpu]") {
  // ResNet's block: in -> short (gpu) ; in -> conv -> bn -> sum(conv, short) -> relu -> out.
  // `sum_kind`: 0 a plain sum, 1 a weighted one (not fused).
  auto graph_of = [](int sum_kind, bool conv_gpu) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(5, 3, 8));
    d.nodes.push_back(make_node(d, "short", "in", "short", true));
    graph::NodeDesc conv = make_node(d, "conv", "in", "c", conv_gpu);
    conv.type = "Convolution";
    conv.fuses_activation = true;
    conv.folds_affine = true;
    conv.vulkan_fuses_residual = true;
    d.nodes.push_back(conv);
    graph::NodeDesc bn = make_node(d, "bn", "c", "b", true, true);
    bn.type = "BatchNorm";
    bn.is_affine = true;
    d.nodes.push_back(bn);
    graph::NodeDesc sum = make_node(d, "sum", "b", "s", true);
    sum.type = "Eltwise";
    sum.in = {d.blob_id("b"), d.blob_id("short")};
    sum.one_blob = false;
    sum.vulkan_fuses_activation = true;
    sum.plain_sum = sum_kind != 1;
    d.nodes.push_back(sum);
    graph::NodeDesc relu = make_node(d, "relu", "s", "out", true, true);
    relu.type = "ReLU";
    relu.as_activation.type = 1;
    d.nodes.push_back(relu);
    d.outputs.push_back(d.blob_id("out"));
    return d;
  };
  auto shapes = [](int, std::span<const Shape> in, std::span<Shape> out) {
    return same_shape(in.first(1), out);
  };
  const graph::Plan gpu = graph::compose(graph_of(0, true), gpu_target(), shapes);
  REQUIRE(gpu.error.ok());
  const StepDesc* conv = step_of(gpu, "conv");
  REQUIRE(conv);
  CHECK(conv->device == Device::vulkan);
  CHECK(conv->in.size() == 2);  // its input and the residual
  CHECK(conv->act.type == 1);   // the ReLU after the sum
  CHECK(conv->folded.size() == 1);
  CHECK(step_of(gpu, "sum") == nullptr);
  CHECK(step_of(gpu, "relu") == nullptr);
  // It runs after the shortcut it reads, which the sum's place guarantees.
  CHECK(conv > step_of(gpu, "short"));
  const std::string text = graph::format_plan(gpu);
  CHECK_THAT(text, Catch::Contains("+sum Eltwise 'sum' +ReLU"));
  test::check_no_overlap(gpu);
  // The residual buffer is the shortcut's, read at the output's pack.
  const graph::BufferDesc& res = gpu.buffers[std::size_t(conv->in[1])];
  const graph::BufferDesc& out = gpu.buffers[std::size_t(conv->out[0])];
  CHECK(res.pack == out.pack);
  CHECK(gpu.desc.blobs[std::size_t(res.blob)] == "short");

  // A weighted sum, a CPU target, a convolution without a GPU forward: no residual fusion (the
  // sum keeps its step), for a layer with no CPU forward_residual (fuses_residual).
  for (const graph::Plan& p : {graph::compose(graph_of(1, true), gpu_target(), shapes),
                               graph::compose(graph_of(0, true), graph::Target{}, shapes),
                               graph::compose(graph_of(0, false), gpu_target(), shapes)}) {
    REQUIRE(p.error.ok());
    CHECK(step_of(p, "sum") != nullptr);
    CHECK(step_of(p, "conv")->in.size() == 1);
  }
  // With one, a CPU target fuses the sum, as does a GPU target where the convolution stays on the
  // CPU and the sum has no GPU forward either; a sum on the other device than the convolution
  // stays a step; an int8 convolution that requantizes keeps it too, one with a float output
  // takes it (its residual read as f32 at its output's pack).
  for (int form = 0; form < 5; ++form) {
    graph::GraphDesc d = graph_of(0, form != 1);
    for (graph::NodeDesc& n : d.nodes) {
      if (n.name == "conv") {
        n.fuses_residual = true;
        n.int8 = form >= 3;
        n.int8_in_scale = 20.f;
        if (form == 3) {
          n.int8_out_type = ElemType::i8;
          n.int8_out_scale = 10.f;
        }
        if (form == 2) n.vulkan = false;
      }
      if (n.name == "sum" && form == 2) n.vulkan = false;
    }
    const graph::Plan p =
        graph::compose(d, form == 0 || form >= 3 ? graph::Target{} : gpu_target(), shapes);
    REQUIRE(p.error.ok());
    CAPTURE(form);
    INFO(graph::format_plan(p));
    const bool fused = form == 0 || form == 2 || form == 4;
    if (form == 4) {
      const StepDesc* c = step_of(p, "conv");
      REQUIRE(c);
      REQUIRE(c->in.size() == 2);
      CHECK(c->type == ElemType::i8);
      CHECK(p.buffers[std::size_t(c->in[1])].type == ElemType::f32);
      CHECK(p.buffers[std::size_t(c->in[1])].pack == p.buffers[std::size_t(c->out[0])].pack);
    }
    CHECK((step_of(p, "sum") == nullptr) == fused);
    CHECK(step_of(p, "conv")->in.size() == (fused ? 2u : 1u));
  }
}

namespace {

/// Forms of the squeeze-excitation graph below.
struct SeForm {
  int channels = 40;        ///< the map's channels
  bool vector_first = false;  ///< the multiply reads the gate first
  bool second_reader = false; ///< another node reads the multiply's output too
  bool map_by_map = false;  ///< the multiply's second operand is a 3-D map, not a vector
  bool conv_gates = true;   ///< the convolution takes gates in (vulkan_gate_min_channels)
};

/// A squeeze-excitation block and its projection with a residual: in -> dw (gpu) -> m;
/// m -> pool -> v (1-D) -> fc -> g (1-D); mul(m, g) -> relu -> y; conv(y) -> c;
/// sum(c, in) -> out (and, with second_reader, y -> other -> out2).
graph::GraphDesc se_graph(const SeForm& f) {
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("in"));
  d.input_shapes.push_back(Shape::of(7, 5, f.channels));
  d.nodes.push_back(make_node(d, "dw", "in", "m", true));
  d.nodes.push_back(make_node(d, "pool", "m", "v", true));
  d.nodes.push_back(make_node(d, "fc", "v", "g", true));
  graph::NodeDesc mul = make_node(d, "mul", "m", "x", true);
  mul.type = "BinaryOp";
  mul.in = f.vector_first ? std::vector<int>{d.blob_id("g"), d.blob_id("m")}
                          : std::vector<int>{d.blob_id("m"), d.blob_id(f.map_by_map ? "in" : "g")};
  mul.one_blob = false;
  mul.vulkan_fuses_activation = true;
  mul.channel_mul = true;
  d.nodes.push_back(mul);
  graph::NodeDesc relu = make_node(d, "relu", "x", "y", true, true);
  relu.type = "ReLU";
  relu.as_activation.type = 1;
  d.nodes.push_back(relu);
  graph::NodeDesc conv = make_node(d, "conv", "y", "c", true);
  conv.type = "Convolution";
  conv.fuses_activation = true;
  conv.vulkan_fuses_residual = true;
  conv.vulkan_gate_min_channels = f.conv_gates ? 5 : 0;
  d.nodes.push_back(conv);
  graph::NodeDesc sum = make_node(d, "sum", "c", "out", true);
  sum.type = "Eltwise";
  sum.in = {d.blob_id("c"), d.blob_id("in")};
  sum.one_blob = false;
  sum.plain_sum = true;
  d.nodes.push_back(sum);
  d.outputs.push_back(d.blob_id("out"));
  if (f.second_reader) {
    d.nodes.push_back(make_node(d, "other", "y", "out2", true));
    d.outputs.push_back(d.blob_id("out2"));
  }
  return d;
}

/// Shapes of se_graph: the pooling and the product make a 1-D vector of the map's channels; the
/// others keep their first 3-D input's shape.
constexpr auto se_shapes = [](int node, std::span<const Shape> in, std::span<Shape> out) {
  if (node == 1 || node == 2) {
    out[0] = Shape::of(in[0].dims == 1 ? in[0].w : in[0].c);
    return ShapeCheck{};
  }
  const Shape& a = in[0].dims == 3 || in.size() == 1 ? in[0] : in[1];
  out[0] = a;
  return ShapeCheck{};
};

}  // namespace

TEST_CASE("on the GPU a convolution gathers the squeeze-excitation multiply it reads",
          "[graph][gpu]") {
  for (bool vector_first : {false, true}) {
    CAPTURE(vector_first);
    const graph::Plan p =
        graph::compose(se_graph({.vector_first = vector_first}), gpu_target(), se_shapes);
    REQUIRE(p.error.ok());
    INFO(graph::format_plan(p));
    const StepDesc* conv = step_of(p, "conv");
    REQUIRE(conv);
    CHECK(conv->device == Device::vulkan);
    // Its inputs: the map the multiply scaled, the gate, the residual (the sum's other input).
    REQUIRE(conv->in.size() == 3);
    auto blob_of = [&](int buffer) {
      return p.desc.blobs[std::size_t(p.buffers[std::size_t(buffer)].blob)];
    };
    CHECK(blob_of(conv->in[0]) == "m");
    CHECK(blob_of(conv->in[1]) == "g");
    CHECK(blob_of(conv->in[2]) == "in");
    CHECK(p.desc.nodes[std::size_t(conv->gate_node)].name == "mul");
    CHECK(conv->gate_act.type == 1);  // the multiply's ReLU, applied after it
    CHECK(conv->act.type == 0);
    CHECK(p.desc.nodes[std::size_t(conv->residual_node)].name == "sum");
    for (const char* gone : {"mul", "relu", "sum"}) CHECK(step_of(p, gone) == nullptr);
    // The map at the convolution's pack, the gate as a vector; after the product that makes it.
    CHECK(p.buffers[std::size_t(conv->in[0])].shape.dims == 3);
    CHECK(p.buffers[std::size_t(conv->in[1])].shape.dims == 1);
    CHECK(conv > step_of(p, "fc"));
    CHECK_THAT(graph::format_plan(p),
               Catch::Contains("*gate BinaryOp 'mul' (ReLU) +sum Eltwise 'sum'"));
    test::check_no_overlap(p);
  }
  // Not taken in: on the CPU; with fuse_gates off; where another node reads the product; a map
  // of 4 channels (a convolution's small-input kernel takes no gate); a product of two maps; a
  // convolution that takes no gates. The multiply keeps its step and the ReLU it took in.
  graph::Target no_gates = gpu_target();
  no_gates.fuse_gates = false;
  const std::pair<SeForm, graph::Target> kept[] = {
      {SeForm{}, graph::Target{}},
      {SeForm{}, no_gates},
      {SeForm{.second_reader = true}, gpu_target()},
      {SeForm{.channels = 4}, gpu_target()},
      {SeForm{.map_by_map = true}, gpu_target()},
      {SeForm{.conv_gates = false}, gpu_target()},
  };
  int form = 0;
  for (const auto& [f, target] : kept) {
    CAPTURE(form++);
    const graph::Plan p = graph::compose(se_graph(f), target, se_shapes);
    REQUIRE(p.error.ok());
    INFO(graph::format_plan(p));
    const StepDesc* mul = step_of(p, "mul");
    REQUIRE(mul);
    CHECK(mul->act.type == (target.device == Device::vulkan ? 1 : 0));
    CHECK(step_of(p, "conv")->gate_node == -1);
    CHECK_THAT(graph::format_plan(p), !Catch::Contains("*gate"));
  }
}

TEST_CASE("a residual sum of differing shapes stays a step of its own", "[graph][gpu]") {
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("in"));
  d.input_shapes.push_back(Shape::of(5, 3, 8));
  d.nodes.push_back(make_node(d, "short", "in", "short", true));
  graph::NodeDesc conv = make_node(d, "conv", "in", "c", true);
  conv.type = "Convolution";
  conv.vulkan_fuses_residual = true;
  d.nodes.push_back(conv);
  graph::NodeDesc sum = make_node(d, "sum", "c", "s", true);
  sum.type = "BinaryOp";
  sum.in = {d.blob_id("c"), d.blob_id("short")};
  sum.one_blob = false;
  sum.plain_sum = true;
  d.nodes.push_back(sum);
  d.outputs.push_back(d.blob_id("s"));
  // "short" is 1 x 1 x 8: a broadcast add.
  auto shapes = [](int node, std::span<const Shape> in, std::span<Shape> out) {
    if (node == 0) {
      out[0] = Shape::of(1, 1, in[0].c);
      return ShapeCheck{};
    }
    return same_shape(in.first(1), out);
  };
  const graph::Plan p = graph::compose(d, gpu_target(), shapes);
  REQUIRE(p.error.ok());
  int sums = 0;
  for (const StepDesc& s : p.steps)
    sums += s.kind == StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == "sum";
  CHECK(sums == 1);
}

TEST_CASE("a grouped convolution runs at a pack that fills its groups", "[graph]") {
  // 240 -> 216 channels in 3 groups (80 and 72 per group): pack 16 would split groups, pack 8
  // does not. 12 -> 12 in 4 groups (3 per group): no pack above 1 fills them, the input's pack
  // stays. A depthwise layer (one channel per group) keeps the widest pack.
  auto plan_of = [](int cin, int cout, int groups, int packed_group_min = 2) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(7, 7, cin));
    graph::NodeDesc n = make_node(d, "g", "in", "out", false);
    n.type = "ConvolutionDepthWise";
    n.channel_groups = groups;
    n.packed_group_min = packed_group_min;
    d.nodes.push_back(n);
    d.outputs.push_back(d.blob_id("out"));
    graph::Target t;
    t.max_pack = 16;
    return graph::compose(std::move(d), t,
                          [cout](int, std::span<const Shape> in, std::span<Shape> out) {
                            out[0] = Shape::of(in[0].w, in[0].h, cout);
                            return ShapeCheck{};
                          });
  };
  auto pack_of = [](const graph::Plan& p) {
    for (const StepDesc& s : p.steps)
      if (s.kind == StepDesc::layer) return s.pack;
    return 0;
  };
  const graph::Plan shuffle = plan_of(240, 216, 3);
  REQUIRE(shuffle.error.ok());
  CHECK(pack_of(shuffle) == 8);
  const graph::Plan odd = plan_of(12, 12, 4);
  REQUIRE(odd.error.ok());
  CHECK(pack_of(odd) == 4);
  const graph::Plan depthwise = plan_of(32, 32, 32);
  REQUIRE(depthwise.error.ok());
  CHECK(pack_of(depthwise) == 16);
  // Groups narrower than the layer's packed_group_min (ResNeXt's 4 a group, which
  // ConvolutionDepthWise runs unpacked at stride 1: test_graph.cpp) take the channels' widest
  // pack; at least that wide, the groups' pack.
  const graph::Plan narrow = plan_of(64, 64, 16, 8);
  REQUIRE(narrow.error.ok());
  CHECK(pack_of(narrow) == 16);
  const graph::Plan strided = plan_of(64, 64, 16, 4);
  REQUIRE(strided.error.ok());
  CHECK(pack_of(strided) == 4);
}

TEST_CASE("element-wise layers and splits run at their inputs' pack where their readers do",
          "[graph]") {
  // ShuffleNet v1's unit: x (240 channels, pack 16 from `head`) -> split -> g1 (grouped, 80 -> 20
  // per group: pack 4) -> g2 (20 -> 80 per group: pack 4) -> sum with the split's other output ->
  // relu -> `tail` (to 60 channels). With a grouped `tail` (pack 4) the split, the sum and the
  // relu run at pack 4 and the only repack is x's, before the split; with a plain `tail` (pack 16)
  // the split and the sum run at pack 16, g1's input and g2's output repacked.
  auto plan_of = [](bool grouped_tail) {
    graph::GraphDesc d;
    d.inputs.push_back(d.blob_id("in"));
    d.input_shapes.push_back(Shape::of(7, 7, 240));
    d.nodes.push_back(make_node(d, "head", "in", "x", false));
    graph::NodeDesc split = make_node(d, "split", "x", "x0", false);
    split.out = {d.blob_id("x0"), d.blob_id("x1")};
    split.shares_input = true;
    split.one_blob = false;
    d.nodes.push_back(split);
    graph::NodeDesc g1 = make_node(d, "g1", "x0", "y", false);
    g1.channel_groups = 3;
    d.nodes.push_back(g1);
    graph::NodeDesc g2 = make_node(d, "g2", "y", "z", false);
    g2.channel_groups = 3;
    d.nodes.push_back(g2);
    graph::NodeDesc sum = make_node(d, "sum", "z", "s", false);
    sum.in = {d.blob_id("z"), d.blob_id("x1")};
    sum.one_blob = false;
    sum.elementwise = true;
    d.nodes.push_back(sum);
    graph::NodeDesc relu = make_node(d, "relu", "s", "r", false);
    relu.elementwise = true;
    d.nodes.push_back(relu);
    graph::NodeDesc tail = make_node(d, "tail", "r", "out", false);
    tail.channel_groups = grouped_tail ? 3 : 0;
    d.nodes.push_back(tail);
    d.outputs.push_back(d.blob_id("out"));
    graph::Target t;
    t.max_pack = 16;
    return graph::compose(std::move(d), t,
                          [](int n, std::span<const Shape> in, std::span<Shape> out) {
                            for (Shape& o : out)
                              o = Shape::of(in[0].w, in[0].h, n == 2 || n == 6 ? 60 : 240);
                            return ShapeCheck{};
                          });
  };
  auto pack_of = [](const graph::Plan& p, std::string_view name) {
    for (const StepDesc& s : p.steps)
      if (s.kind == StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == name)
        return s.pack;
    return 0;
  };
  auto repacks_of = [](const graph::Plan& p) {
    std::vector<std::string_view> of;  // the blob each repack inside the graph converts
    for (const StepDesc& s : p.steps)
      if (s.kind == StepDesc::repack && !p.buffers[std::size_t(s.out[0])].output &&
          p.buffers[std::size_t(s.out[0])].shape.c == 240 &&
          p.buffers[std::size_t(s.in[0])].pack != 1)
        of.push_back(p.desc.blobs[std::size_t(p.buffers[std::size_t(s.in[0])].blob)]);
    return of;
  };
  const graph::Plan grouped = plan_of(true);
  INFO(graph::format_plan(grouped));
  REQUIRE(grouped.error.ok());
  CHECK(pack_of(grouped, "head") == 16);
  CHECK(pack_of(grouped, "split") == 4);
  CHECK(pack_of(grouped, "g1") == 4);
  CHECK(pack_of(grouped, "sum") == 4);
  CHECK(pack_of(grouped, "relu") == 4);
  CHECK(pack_of(grouped, "tail") == 4);
  CHECK(repacks_of(grouped) == std::vector<std::string_view>{"x"});
  test::check_no_overlap(grouped);

  const graph::Plan plain = plan_of(false);
  INFO(graph::format_plan(plain));
  REQUIRE(plain.error.ok());
  CHECK(pack_of(plain, "split") == 16);
  CHECK(pack_of(plain, "sum") == 16);
  CHECK(pack_of(plain, "relu") == 16);
  CHECK(repacks_of(plain) == std::vector<std::string_view>{"x0", "z"});
  test::check_no_overlap(plain);
}

TEST_CASE("an element-wise GPU layer keeps the target's GPU pack whatever its CPU readers take",
          "[graph][gpu]") {
  // in -> a (GPU) -> relu (GPU, element-wise) -> c (CPU, pack 16): with GPU packs limited to 1,
  // the relu runs at pack 1 on the GPU, not at its CPU reader's pack.
  graph::GraphDesc d;
  d.inputs.push_back(d.blob_id("in"));
  d.input_shapes.push_back(Shape::of(5, 3, 32));
  d.nodes.push_back(make_node(d, "a", "in", "a", true));
  graph::NodeDesc relu = make_node(d, "relu", "a", "r", true, true);
  relu.elementwise = true;
  d.nodes.push_back(relu);
  d.nodes.push_back(make_node(d, "c", "r", "out", false));
  d.outputs.push_back(d.blob_id("out"));
  graph::Target t = gpu_target();
  t.gpu_max_pack = 1;
  const graph::Plan p = graph::compose(d, t, same_shape_fn);
  INFO(graph::format_plan(p));
  REQUIRE(p.error.ok());
  for (const StepDesc& s : p.steps)
    if (s.device == Device::vulkan && s.kind == StepDesc::layer) CHECK(s.pack == 1);
  test::check_no_overlap(p);
}
