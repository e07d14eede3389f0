// A user's layer inside a model file: registered with infer::Net under its type name, it reads its
// own keys and weights, runs at the types and packs it declares (conversions around it), in place
// when it can; bad keys and parameters are errors naming file, line, layer and key.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <infer/net.hpp>
#include <infer/net/custom_layer.hpp>
#include <string>

namespace {

/// y = x * scale[c] + offset (0=channels, 1=offset; a weight per channel). f32 at pack 1 and 4.
struct ChannelScale {
  static constexpr std::string_view ncnn_type = "ChannelScale";
  using storage = infer::storage_list<infer::f32>;
  using packs = infer::pack_list<1, 4>;

  int channels = 0;
  float offset = 0;
  std::vector<float> scale;

  infer::Status load_param(infer::io::ParamReader& pd) {
    channels = pd.get(0, 0);
    offset = pd.get(1, 0.f);
    if (channels < 1) return infer::make_error("channels must be >= 1, got {}", channels);
    return {};
  }
  infer::Status load(infer::io::ModelBin& mb) {
    auto w = mb.load(std::size_t(channels), infer::io::WeightType::raw_f32);
    INFER_TRY(w);
    scale = std::move(*w);
    return {};
  }
  constexpr infer::ShapeCheck infer_shapes(std::span<const infer::Shape> in,
                                           std::span<infer::Shape> out) const {
    if (in.size() != 1 || in[0].dims != 3 || in[0].c != channels)
      return infer::shape_error("ChannelScale: expects 0=channels channels");
    return infer::same_shape(in, out);
  }
  template <infer::StorageElement T, int Pack>
  infer::Status forward_inplace(infer::Mat& blob, const infer::Option&) const {
    const std::size_t plane = std::size_t(blob.w()) * std::size_t(blob.h());
    for (int q = 0; q < blob.c(); ++q) {
      float* p = static_cast<float*>(blob.channel_data(q));
      for (std::size_t i = 0; i < plane; ++i)
        for (int l = 0; l < Pack; ++l)
          p[i * Pack + std::size_t(l)] =
              p[i * Pack + std::size_t(l)] * scale[std::size_t(q * Pack + l)] + offset;
    }
    return {};
  }
};

constexpr std::string_view kParam = R"(7767517
3 3
Input         in      0 1 in
ChannelScale  scale   1 1 in scaled 0=8 1=0.5
ReLU          relu    1 1 scaled out
)";

infer::Mat ramp(int w, int h, int c) {
  infer::Mat m(infer::Shape::of(w, h, c));
  for (int q = 0; q < c; ++q) {
    float* p = static_cast<float*>(m.channel_data(q));
    for (int i = 0; i < w * h; ++i) p[i] = float(i % 7) - 3.f + 0.25f * float(q);
  }
  return m;
}

std::vector<std::byte> weights(int channels) {
  std::vector<float> w;
  for (int c = 0; c < channels; ++c) w.push_back(0.5f + float(c));
  std::vector<std::byte> b(w.size() * sizeof(float));
  std::memcpy(b.data(), w.data(), b.size());
  return b;
}

}  // namespace

TEST_CASE("Net: a registered user layer with weights runs packed, in place", "[net][custom]") {
  for (int max_pack : {1, 16}) {
    infer::graph::Target target;
    target.max_pack = max_pack;
    infer::Net net(target);
    REQUIRE(infer::register_layer<ChannelScale>(net).ok());
    const infer::Status loaded = net.load_param_text(kParam, "user.param");
    INFO((loaded.ok() ? std::string() : loaded.message()));
    REQUIRE(loaded.ok());
    REQUIRE(net.load_model(weights(8), "user.bin").ok());
    const infer::Mat in = ramp(5, 3, 8);
    auto out = net.run(in);
    REQUIRE(out.ok());
    for (int q = 0; q < 8; ++q)
      for (int i = 0; i < 15; ++i) {
        const float x = float(i % 7) - 3.f + 0.25f * float(q);
        const float want = std::max(0.f, x * (0.5f + float(q)) + 0.5f);
        REQUIRE(out->channel(q).data_as<const float>()[i] == Approx(want).margin(1e-6));
      }
    // The plan runs it at the widest pack it declares that the target allows, in place.
    const infer::NamedMat named{"in", in};
    const std::string_view outs[] = {"out"};
    auto plan = net.plan(std::span<const infer::NamedMat>(&named, 1), outs);
    REQUIRE(plan.ok());
    bool seen = false;
    for (const auto& s : (*plan)->steps) {
      if (s.kind != infer::graph::StepDesc::layer) continue;
      if ((*plan)->desc.nodes[std::size_t(s.node)].type != "ChannelScale") continue;
      seen = true;
      CHECK(s.pack == (max_pack == 1 ? 1 : 4));
    }
    CHECK(seen);
  }
}

TEST_CASE("Net: random weights reach a user layer's load", "[net][custom]") {
  infer::Net net;
  REQUIRE(infer::register_layer<ChannelScale>(net, "Scale2").ok());
  std::string param(kParam);
  param.replace(param.find("ChannelScale"), 12, "Scale2      ");
  REQUIRE(net.load_param_text(param, "user.param").ok());
  REQUIRE(net.load_random_weights(3).ok());
  REQUIRE(net.run(ramp(4, 4, 8)).ok());
}

TEST_CASE("Net: a user layer's bad parameters and unknown keys are errors", "[net][custom][errors]") {
  auto load = [](std::string_view line) {
    infer::Net net;
    REQUIRE(infer::register_layer<ChannelScale>(net).ok());
    const std::string text =
        "7767517\n2 2\nInput in 0 1 in\n" + std::string(line) + "\n";
    return net.load_param_text(text, "bad.param");
  };
  const infer::Status bad = load("ChannelScale scale 1 1 in out 0=0");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("bad.param") && Catch::Contains("line 4") &&
                                Catch::Contains("scale") && Catch::Contains("channels must be >= 1"));
  const infer::Status unknown = load("ChannelScale scale 1 1 in out 0=4 7=1");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.message(), Catch::Contains("key 7: not a parameter of ChannelScale"));
  const infer::Status wrong_kind = load("ChannelScale scale 1 1 in out 0=4.5");
  REQUIRE_FALSE(wrong_kind.ok());
  CHECK_THAT(wrong_kind.message(), Catch::Contains("key 0: expected an integer"));
  // Without registration the type is unknown, as before.
  infer::Net plain;
  const infer::Status unsupported =
      plain.load_param_text("7767517\n2 2\nInput in 0 1 in\nChannelScale s 1 1 in out 0=4\n");
  REQUIRE_FALSE(unsupported.ok());
  CHECK_THAT(unsupported.message(), Catch::Contains("unsupported layer types: ChannelScale"));
}

TEST_CASE("Net: register_layer rejects bad type names and may replace a built-in", "[net][custom]") {
  infer::Net net;
  CHECK_FALSE(net.register_layer("", {}).ok());
  CHECK_FALSE(infer::register_layer<ChannelScale>(net, "Two words").ok());
  CHECK_FALSE(infer::register_layer<ChannelScale>(net, "Input").ok());
  // The user's ChannelScale under ncnn's name "ReLU": the file's ReLU line is then the user's.
  REQUIRE(infer::register_layer<ChannelScale>(net, "ReLU").ok());
  const std::string text = "7767517\n2 2\nInput in 0 1 in\nReLU r 1 1 in out 0=2 1=1\n";
  REQUIRE(net.load_param_text(text).ok());
  const std::vector<float> w = {2.f, 3.f};
  std::vector<std::byte> b(w.size() * sizeof(float));
  std::memcpy(b.data(), w.data(), b.size());
  REQUIRE(net.load_model(b).ok());
  auto out = net.run(ramp(2, 1, 2));
  REQUIRE(out.ok());
  CHECK(out->channel(1).data_as<const float>()[0] == Approx((-3.f + 0.25f) * 3.f + 1.f));
}
