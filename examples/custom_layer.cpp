// User layers, written here as templated structs.
//
// 1. In a static graph: SoftSign supports only f32 at pack 1, and says so; the composer gives it
//    exactly that, adding an unpack before it and a pack after it, and the printed plan shows both.
// 2. In a model file read at run time: ncnn's custom-layer guide ends with a .param that names a
//    layer ncnn does not ship (MyLayer, with two parameters and a weight per channel). MyLayer
//    names its type, reads its own keys and weights, and is registered with infer::Net before
//    load_param; the composer then treats it like any built-in layer.
// 3. On the GPU (a Vulkan build with a device): MyLayer brings its own kernel,
//    examples/shaders/my_layer.comp, compiled and embedded by infer_add_shaders(); the same .param
//    then runs with a Vulkan target, MyLayer on the GPU beside the built-in layers.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <infer/graph.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/relu.hpp>
#include <infer/net.hpp>
#include <infer/net/custom_layer.hpp>
#ifdef INFER_HAS_VULKAN
#include <infer/vulkan/context.hpp>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/my_layer_f16.hpp>  // examples/shaders/my_layer.comp, f16 storage
#include <infer_shaders/my_layer_f32.hpp>
#endif

using namespace infer;

/// y = x / (1 + |x|) ("softsign"), a layer infer does not ship.
struct SoftSign {
  // Capabilities are declared by what the struct provides: f32 storage, pack 1, one blob, in
  // place (forward_inplace) and out of place (forward).
  using storage = storage_list<f32>;
  using packs = pack_list<1>;

  /// The composer plans shapes with this, at compile time.
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return same_shape(in, out);
  }

  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option&) const {
    for (int q = 0; q < blob.c(); ++q) {
      float* p = static_cast<float*>(blob.channel_data(q));
      for (int i = 0; i < blob.w() * blob.h() * blob.d(); ++i)
        p[i] = p[i] / (1.f + std::fabs(p[i]));
    }
    return {};
  }
};

// The contract is checked at compile time: a claim without its member is a one-line error.
static_assert(check_layer<SoftSign>());
static_assert(InplaceLayer<SoftSign> && !PackingLayer<SoftSign>);

/// The guide's MyLayer: 0=channels, 1=eps, a gamma per channel; y = x / sqrt(x*x + eps) * gamma.
/// It runs f32 at pack 1 and 4 (each lane of a packed element is one channel of its group).
struct MyLayer {
  static constexpr std::string_view ncnn_type = "MyLayer";
  using storage = storage_list<f32>;
  using packs = pack_list<1, 4>;

  int channels = 0;
  float eps = 0.001f;
  std::vector<float> gamma;

  /// Reads the .param keys, as ncnn's load_param does; a key it does not read is an error.
  Status load_param(io::ParamReader& pd) {
    channels = pd.get(0, 0);
    eps = pd.get(1, 0.001f);
    if (channels < 1) return make_error("channels (0=) must be >= 1, got {}", channels);
    if (!(eps > 0)) return make_error("eps (1=) must be > 0, got {}", eps);
    return {};
  }
  /// Reads the weights, as ncnn's load_model does.
  Status load(io::ModelBin& mb) {
    auto g = mb.load(std::size_t(channels), io::WeightType::raw_f32);
    INFER_TRY(g);
    gamma = std::move(*g);
    return {};
  }
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.size() != 1 || in[0].dims != 3 || in[0].c != channels)
      return shape_error("MyLayer: expects a 3-D blob of 0=channels channels");
    return same_shape(in, out);
  }
  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option&) const {
    const std::size_t plane = std::size_t(blob.w()) * blob.h();
    for (int q = 0; q < blob.c(); ++q) {
      float* p = static_cast<float*>(blob.channel_data(q));
      for (std::size_t i = 0; i < plane; ++i)
        for (int l = 0; l < Pack; ++l) {
          float& x = p[i * Pack + std::size_t(l)];
          x = x / std::sqrt(x * x + eps) * gamma[std::size_t(q * Pack + l)];
        }
    }
    return {};
  }
#ifdef INFER_HAS_VULKAN
  /// Its GPU weights: gamma, handed back in step.weights[0].
  Status upload_vulkan(infer::vk::Uploader& up) const {
    auto g = up.add(gamma);
    INFER_TRY(g);
    return {};
  }
  /// Its GPU forward: its own shader over the blob, in place (after a copy when the plan runs it
  /// out of place). The plan picks the storage type (f32 or f16) and pack (1 or 4).
  Status forward_vulkan(std::span<const infer::vk::VkMat> in, std::span<const infer::vk::VkMat> out,
                        const infer::vk::GpuStep& step, infer::vk::Recorder& rec) const {
    const infer::vk::VkMat& blob = out[0];
    if (!infer::vk::same_memory(in[0], blob)) {
      INFER_TRY(rec.copy(in[0], 0, blob, 0, blob.bytes()));
      INFER_TRY(rec.barrier());
    }
    const bool f16 = step.type == ElemType::f16;
    const infer::vk::ShaderCode code{f16 ? "my_layer.comp (f16)" : "my_layer.comp (f32)",
                              f16 ? std::span<const std::uint32_t>(shaders::my_layer_f16)
                                  : std::span<const std::uint32_t>(shaders::my_layer_f32),
                              2, 8};
    const infer::vk::SpecValue spec[] = {infer::vk::SpecValue::of(3, eps), infer::vk::SpecValue::of(4, step.pack)};
    const std::uint32_t push[2] = {std::uint32_t(blob.total() * std::size_t(blob.elempack())),
                                   std::uint32_t(blob.cstep())};
    const infer::vk::VkMat* blobs[] = {&blob, &step.weights[0]};
    return rec.dispatch(code, {64, 1, 1}, spec, blobs, std::as_bytes(std::span(push)),
                        {(push[0] + 63) / 64, 1, 1});
  }
#endif
};
static_assert(check_layer<MyLayer>());

/// Prints a failed step's message and leaves main's helper with 1.
#define INFER_TRY_MAIN(expr)                                                 \
  do {                                                                       \
    if (const auto& st_ = (expr); !st_.ok()) {                               \
      fmt::print(stderr, "{}: {}\n", #expr, st_.message());                  \
      return 1;                                                              \
    }                                                                        \
  } while (0)

/// The guide's four lines (the Input without a shape: it comes with the input).
constexpr std::string_view kGuideParam = R"(7767517
4 4
Input            input    0 1 input
Convolution      conv2d   1 1 input conv2d 0=32 1=1 2=1 3=1 4=0 5=0 6=768
MyLayer          mylayer  1 1 conv2d mylayer0 0=32 1=0.2
Pooling          maxpool  1 1 mylayer0 maxpool 0=0 1=3 2=2 4=0
)";

/// Part 3: the same network on a Vulkan device, MyLayer running its own shader there (f32 storage,
/// so the value checks to the CPU's tolerance).
int run_guide_model_on_gpu(const std::vector<std::byte>& bin, const Mat& in, float want) {
#ifdef INFER_HAS_VULKAN
  if (auto devices = infer::vk::Context::list_devices(); !devices.ok() || devices->empty()) {
    fmt::print("\n== custom_layer on the GPU: skipped, no Vulkan device\n");
    return 0;
  }
  graph::Target target;
  target.device = graph::Device::vulkan;
  target.gpu_storage = ElemType::f32;
  Net net(target);
  INFER_TRY_MAIN(register_layer<MyLayer>(net));
  INFER_TRY_MAIN(net.load_param_text(kGuideParam, "guide.param"));
  INFER_TRY_MAIN(net.load_model(bin, "guide.bin"));
  const NamedMat named{"input", in};
  const std::string_view out_name = "maxpool";
  auto plan = net.plan(std::span<const NamedMat>(&named, 1),
                       std::span<const std::string_view>(&out_name, 1));
  INFER_TRY_MAIN(plan);
  fmt::print("\n== custom_layer: the same .param on the GPU, MyLayer with its own shader\n{}",
             graph::format_plan(**plan));
  auto out = net.run(in, out_name);
  INFER_TRY_MAIN(out);
  const float got = out->channel(5).data_as<const float>()[0];
  fmt::print("GPU: channel 5 value {:.5f}, expected {:.5f}: {}\n", got, want,
             std::fabs(got - want) < 1e-4f ? "OK" : "MISMATCH");
  return std::fabs(got - want) < 1e-4f ? 0 : 1;
#else
  (void)bin, (void)in, (void)want;
  fmt::print("\n== custom_layer on the GPU: skipped, built without the Vulkan backend\n");
  return 0;
#endif
}

/// Part 2: the .param through infer::Net with MyLayer registered; checks one output value.
int run_guide_model() {
  Net net;
  if (Status s = register_layer<MyLayer>(net); !s.ok()) {
    fmt::print(stderr, "register_layer: {}\n", s.message());
    return 1;
  }
  if (Status s = net.load_param_text(kGuideParam, "guide.param"); !s.ok()) {
    fmt::print(stderr, "load_param: {}\n", s.message());
    return 1;
  }
  // Weights: the convolution's 768 (no bias), then MyLayer's 32 gammas, as a .bin holds them
  // (each layer's raw f32 arrays after a 4-byte flag of 0 for the convolution's weights).
  std::vector<float> bin_f = {0.f};
  for (int i = 0; i < 768; ++i) bin_f.push_back(0.05f);
  for (int c = 0; c < 32; ++c) bin_f.push_back(1.f + 0.5f * float(c));
  std::vector<std::byte> bin(bin_f.size() * sizeof(float));
  std::memcpy(bin.data(), bin_f.data(), bin.size());
  if (Status s = net.load_model(bin, "guide.bin"); !s.ok()) {
    fmt::print(stderr, "load_model: {}\n", s.message());
    return 1;
  }
  Mat in(Shape::of(16, 16, 24));
  in.fill(1.f);
  const NamedMat named{"input", in};
  const std::string_view out_name = "maxpool";
  auto plan = net.plan(std::span<const NamedMat>(&named, 1),
                       std::span<const std::string_view>(&out_name, 1));
  if (!plan.ok()) {
    fmt::print(stderr, "plan: {}\n", plan.message());
    return 1;
  }
  fmt::print("\n== custom_layer: the guide's .param through infer::Net, MyLayer registered\n{}",
             graph::format_plan(**plan));
  auto out = net.run(in, out_name);
  if (!out.ok()) {
    fmt::print(stderr, "run: {}\n", out.message());
    return 1;
  }
  // conv = 24 * 0.05 = 1.2 everywhere; MyLayer: 1.2 / sqrt(1.44 + 0.2) * gamma[c]; max pooling
  // of a constant keeps it. Channel 5: gamma 3.5.
  const float want = 1.2f / std::sqrt(1.44f + 0.2f) * 3.5f;
  const float got = out->channel(5).data_as<const float>()[0];
  fmt::print("maxpool {}x{}x{}, channel 5 value {:.5f}, expected {:.5f}: {}\n", out->w(), out->h(),
             out->c(), got, want, std::fabs(got - want) < 1e-4f ? "OK" : "MISMATCH");
  if (std::fabs(got - want) >= 1e-4f) return 1;
  return run_guide_model_on_gpu(bin, in, want);
}

namespace {

constexpr layers::Convolution conv3x3(int in, int out) {
  layers::Convolution c;
  c.num_output = out;
  c.kernel_w = 3;
  c.pad_left = 1;
  c.weight_data_size = out * in * 9;
  return c;
}

static constexpr auto kSoftSignGraph =
    graph::chain(graph::input("image", Shape::of(16, 16, 16)), conv3x3(16, 32), layers::ReLU{},
                 SoftSign{}, conv3x3(32, 32));

}  // namespace

int main() {
  using Graph = graph::StaticGraph<kSoftSignGraph>;
  const graph::Plan plan = Graph::plan();
  fmt::print("== custom_layer: SoftSign (f32, pack 1 only) between packed convolutions\n{}",
             graph::format_plan(plan));

  // Find SoftSign and show the conversions around it.
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const auto& s = plan.steps[i];
    if (s.kind != graph::StepDesc::layer || plan.desc.nodes[std::size_t(s.node)].type != "SoftSign")
      continue;
    const auto& before = plan.steps[i - 1];
    const auto& after = plan.steps[i + 1];
    const bool ok = before.kind == graph::StepDesc::repack && before.pack == 1 &&
                    after.kind == graph::StepDesc::repack && after.pack > 1;
    fmt::print("SoftSign runs at pack {}, after '{}' and before '{}': {}\n", s.pack,
               graph::detail::step_title(plan, before), graph::detail::step_title(plan, after),
               ok ? "one unpack before, one pack after" : "UNEXPECTED");
    if (!ok) return 1;
  }

  // Weights from memory: set on the graph's own copies of the layers, then finalize.
  Graph g;
  auto& c1 = g.layer<0>();
  auto& c2 = g.layer<3>();
  c1.weight_data.assign(std::size_t(c1.weight_data_size), 0.01f);
  c2.weight_data.assign(std::size_t(c2.weight_data_size), 0.02f);
  if (Status s = g.finalize(); !s.ok()) {
    fmt::print(stderr, "finalize: {}\n", s.message());
    return 1;
  }
  Mat in(Shape::of(16, 16, 16));
  in.fill(1.f);
  if (Status s = g.forward(in); !s.ok()) {
    fmt::print(stderr, "forward: {}\n", s.message());
    return 1;
  }
  // Centre pixel: conv1 = 16 * 9 * 0.01 = 1.44 -> relu -> softsign 1.44 / 2.44; conv2 sums
  // 32 * 9 of those times 0.02.
  const float want = 32 * 9 * 0.02f * (1.44f / 2.44f);
  const float got = g.output().data_as<const float>()[8 * 16 + 8];
  fmt::print("output centre {:.5f}, expected {:.5f}: {}\n", got, want,
             std::fabs(got - want) < 1e-4f ? "OK" : "MISMATCH");
  if (std::fabs(got - want) >= 1e-4f) return 1;
  return run_guide_model();
}
