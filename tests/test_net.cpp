// infer::Net on the real networks in models/: the fast plan (fused, packed, in place) against the
// reference plan (pack 1, nothing fused or folded, every blob its own buffer) on the same random
// weights and input; weights through .bin bytes; any blob as an output; errors.
#include <fmt/core.h>

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <infer/graph/print.hpp>
#include <infer/net.hpp>
#include <infer/simd.hpp>
#include <memory>
#include <string>

#include "support/model_compare.hpp"
#include "support/plan_checks.hpp"

#ifndef INFER_MODELS_DIR
#error "INFER_MODELS_DIR must name the models/ directory"
#endif

namespace {

std::filesystem::path model_path(const std::string& name) {
  return std::filesystem::path(INFER_MODELS_DIR) / (name + ".param");
}

using infer::test::relative_error;
infer::Mat make_input(infer::Shape shape) { return infer::test::make_model_input(shape); }

constexpr infer::graph::Target kReference{infer::ElemType::f32, 1, false, false};

}  // namespace

namespace {
/// `shape`: the input's, where the network takes another than its declared one (none: declared).
void check_model(const std::string& name, infer::Shape shape = {}) {
  CAPTURE(name);
  infer::Option opt;
  opt.num_threads = 2;
  infer::Net fast({}, opt), ref(kReference, opt);
  std::vector<std::byte> bin;
  REQUIRE(fast.load_param(model_path(name)).ok());
  REQUIRE(fast.load_random_weights(7, &bin).ok());
  REQUIRE(ref.load_param(model_path(name)).ok());
  const infer::Status loaded = ref.load_model(std::span<const std::byte>(bin), name + ".bin");
  INFO((loaded.ok() ? std::string() : loaded.message()));
  REQUIRE(loaded.ok());

  // The last layer's input (the logits, where a difference in arithmetic shows before a
  // Softmax squeezes it) and the network's output.
  const infer::io::LayerSpec& last = fast.param().layers.back();
  const std::string_view outs[] = {fast.param().blobs[std::size_t(last.bottoms.at(0))],
                                   fast.default_output()};
  const infer::NamedMat in[] = {
      {fast.input_names()[0], make_input(shape.dims != 0 ? shape : fast.input_shape())}};
  auto a = fast.run(in, outs);
  INFO((a.ok() ? std::string() : a.message()));
  REQUIRE(a.ok());
  auto b = ref.run(in, outs);
  INFO((b.ok() ? std::string() : b.message()));
  REQUIRE(b.ok());
  CHECK(relative_error((*a)[0], (*b)[0]) < 1e-3);
  CHECK(relative_error((*a)[1], (*b)[1]) < 1e-3);
  auto plan = fast.plan(in, outs);
  REQUIRE(plan.ok());
  infer::test::check_no_overlap(**plan);
}
}  // namespace

namespace {
/// Runs the one-input network `text` (its output blob "out") at the default target and as the
/// reference plan on the same random weights; checks that they agree within 1e-5 and returns the
/// default target's plan.
// A plan names its layers and blobs through views into the network that made it: the network is
// returned beside the plan and must outlive every read of it.
struct PlannedNet {
  std::unique_ptr<infer::Net> net;
  std::shared_ptr<const infer::graph::Plan> plan;
};

PlannedNet plan_matching_reference(const std::string& text, std::uint64_t seed) {
  auto fast = std::make_unique<infer::Net>();
  infer::Net ref(kReference);
  REQUIRE(fast->load_param_text(text).ok());
  REQUIRE(ref.load_param_text(text).ok());
  REQUIRE(fast->load_random_weights(seed).ok());
  REQUIRE(ref.load_random_weights(seed).ok());
  const infer::Mat in = make_input(fast->input_shape());
  auto a = fast->run(in);
  auto b = ref.run(in);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(relative_error(*a, *b) < 1e-5);
  const infer::NamedMat inputs[] = {{"data", in}};
  const std::string_view outs[] = {"out"};
  auto plan = fast->plan(inputs, outs);
  REQUIRE(plan.ok());
  return {std::move(fast), *plan};
}
}  // namespace

TEST_CASE("Net: every small model in models/ matches the reference plan", "[net][models]") {
  const std::string name =
      GENERATE(as<std::string>{}, "squeezenet", "mobilenet", "mobilenet_v2", "mobilenet_v3",
               "shufflenet_v2", "mnasnet", "efficientnet_b0", "resnet18");
#ifdef INFER_TEST_SANITIZED
  // The sanitizer build (ASan runs these networks about 10x slower) takes 96x96 inputs where the
  // network ends in a global pooling: every layer still runs, on a fifth of the pixels. ResNet-18's
  // 7x7 pool5 needs its 224x224.
  check_model(name, name == "resnet18" ? infer::Shape{} : infer::Shape::of(96, 96, 3));
#else
  check_model(name);
#endif
}

// Networks outside ncnn's benchmark set (scripts/make-sweep-nets.py): grouped convolutions of 80
// and 72 channels per group with shuffles and pooled shortcuts (ShuffleNet v1), 8 per group with
// projections (RegNetX-200MF).
TEST_CASE("Net: the grouped-convolution networks of models/sweep match the reference plan",
          "[net][models]") {
  check_model(GENERATE(as<std::string>{}, "sweep/shufflenet_v1_g3", "sweep/regnetx_200mf"));
}

// alexnet, resnet50 and vgg16 hold 61M to 138M weights: the sanitizer build leaves them out.
TEST_CASE("Net: large models in models/ match the reference plan", "[net][models]") {
  check_model(GENERATE(as<std::string>{}, "alexnet", "resnet50", "vgg16"));
}

TEST_CASE("Net: any blob can be requested, the plan keeps it", "[net]") {
  infer::Net fast, ref(kReference);
  REQUIRE(fast.load_param(model_path("resnet18")).ok());
  REQUIRE(fast.load_random_weights(3).ok());
  REQUIRE(ref.load_param(model_path("resnet18")).ok());
  REQUIRE(ref.load_random_weights(3).ok());
  const infer::Mat in = make_input(fast.input_shape());
  // An early convolution's output, and the last one, together.
  const std::string_view names[] = {"conv1_conv1_relu", "fc1000"};
  const infer::NamedMat inputs[] = {{"data", in}};
  for (std::string_view n : names) {
    const bool known = std::find(fast.param().blobs.begin(), fast.param().blobs.end(), n) !=
                       fast.param().blobs.end();
    INFO(n);
    REQUIRE(known);
  }
  auto a = fast.run(inputs, names);
  REQUIRE(a.ok());
  auto b = ref.run(inputs, names);
  REQUIRE(b.ok());
  REQUIRE(a->size() == 2);
  CHECK(relative_error((*a)[0], (*b)[0]) < 1e-4);
  CHECK(relative_error((*a)[1], (*b)[1]) < 1e-3);
  CHECK((*a)[0].shape().c == 64);
}

TEST_CASE("Net: weights from .bin bytes give the same output as the generator", "[net]") {
  infer::Net a, b;
  std::vector<std::byte> bin;
  REQUIRE(a.load_param(model_path("squeezenet")).ok());
  REQUIRE(a.load_random_weights(11, &bin).ok());
  REQUIRE(b.load_param(model_path("squeezenet")).ok());
  REQUIRE(b.load_model(std::span<const std::byte>(bin)).ok());
  const infer::Mat in = make_input(a.input_shape());
  auto x = a.run(in);
  auto y = b.run(in);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  CHECK(relative_error(*x, *y) == 0.0);
}

TEST_CASE("Net: errors name what was wrong", "[net]") {
  infer::Net net;
  SECTION("running before loading") {
    const auto r = net.run(make_input(infer::Shape::of(4, 4, 3)));
    REQUIRE_FALSE(r.ok());
  }
  REQUIRE(net.load_param(model_path("squeezenet")).ok());
  SECTION("no weights") {
    const auto r = net.run(make_input(net.input_shape()));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.message(), Catch::Contains("weights"));
  }
  SECTION("a .bin too short names the layer and the offset") {
    std::vector<std::byte> bin;
    infer::Net other;
    REQUIRE(other.load_param(model_path("squeezenet")).ok());
    REQUIRE(other.load_random_weights(1, &bin).ok());
    bin.resize(bin.size() / 2);
    const infer::Status st = net.load_model(std::span<const std::byte>(bin), "short.bin");
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("short.bin") && Catch::Contains("offset") &&
                                 Catch::Contains("Convolution"));
  }
  SECTION("a .bin too long") {
    std::vector<std::byte> bin;
    REQUIRE(net.load_random_weights(1, &bin).ok());
    bin.resize(bin.size() + 8);
    const infer::Status st = net.load_model(std::span<const std::byte>(bin), "long.bin");
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("long.bin") && Catch::Contains("8 bytes"));
  }
  SECTION("unknown blob, wrong input name, wrong input shape") {
    REQUIRE(net.load_random_weights(1).ok());
    const infer::Mat in = make_input(net.input_shape());
    const auto r1 = net.run(in, "no_such_blob");
    REQUIRE_FALSE(r1.ok());
    CHECK_THAT(r1.message(), Catch::Contains("no_such_blob"));
    const infer::NamedMat wrong[] = {{"image", in}};
    const std::string_view out[] = {"output"};
    const auto r2 = net.run(wrong, out);
    REQUIRE_FALSE(r2.ok());
    CHECK_THAT(r2.message(), Catch::Contains("'image' is not an input"));
    const auto r3 = net.run(make_input(infer::Shape::of(224, 224, 4)));
    REQUIRE_FALSE(r3.ok());
    CHECK_THAT(r3.message(), Catch::Contains("conv1"));
  }
  SECTION("an unknown layer type") {
    const infer::Status st = net.load_param_text(
        "7767517\n4 4\nInput data 0 1 data 0=4 1=4 2=3\nFancyOp f 1 1 data a\n"
        "ReLU r 1 1 a b\nOtherOp o 1 1 b out\n",
        "fancy.param");
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(),
               Catch::Contains("fancy.param") &&
                   Catch::Contains("FancyOp (first at line 4), OtherOp (first at line 6)"));
  }
  SECTION("a storage type the network's layer table does not hold") {
    // infer::Net instantiates f32 and i8: f16 storage must be refused when loading, not when a
    // convolution's step first runs.
    infer::graph::Target target;
    target.storage = infer::ElemType::f16;
    infer::Net f16_net(target);
    const infer::Status st = f16_net.load_param(model_path("squeezenet"));
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.message(), Catch::Contains("squeezenet.param") &&
                                 Catch::Contains("storage is f16") &&
                                 Catch::Contains("instantiated for f32, i8 only"));
  }
}

TEST_CASE("Net: a hand-written .param with a branch and every conversion", "[net]") {
  // Channels 3 -> 8 -> split -> (conv 8->16, relu) + (conv 8->16) -> sum -> pooling: packs 1, 8 and
  // 16 meet, a ReLU fuses, a Split is a view.
  const char* text =
      "7767517\n"
      "7 8\n"
      "Input data 0 1 data 0=9 1=7 2=3\n"
      "Convolution c0 1 1 data a 0=8 1=3 4=1 5=1 6=216\n"
      "Split s 1 2 a a1 a2\n"
      "Convolution c1 1 1 a1 b 0=16 1=1 5=1 6=128\n"
      "ReLU r 1 1 b b_relu\n"
      "Convolution c2 1 1 a2 c 0=16 1=3 4=1 5=0 6=1152\n"
      "Eltwise sum 2 1 b_relu c out 0=1\n";
  infer::Net fast, ref(kReference);
  REQUIRE(fast.load_param_text(text).ok());
  REQUIRE(ref.load_param_text(text).ok());
  REQUIRE(fast.load_random_weights(5).ok());
  REQUIRE(ref.load_random_weights(5).ok());
  const infer::Mat in = make_input(fast.input_shape());
  auto a = fast.run(in);
  auto b = ref.run(in);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->shape() == infer::Shape::of(9, 7, 16));
  CHECK(relative_error(*a, *b) < 1e-5);
  // Two threads give the same numbers.
  infer::Option two;
  two.num_threads = 2;
  infer::Net fast2({}, two);
  REQUIRE(fast2.load_param_text(text).ok());
  REQUIRE(fast2.load_random_weights(5).ok());
  auto c = fast2.run(in);
  REQUIRE(c.ok());
  CHECK(relative_error(*c, *a) < 1e-6);
}

TEST_CASE("Net: grouped convolutions run at a pack that fills their groups", "[net]") {
  // ShuffleNet v1's grouped 1x1 (240 -> 216 in 3 groups: pack 8) and a 3x3 with 8 channels per
  // group, between layers at pack 16: the plan repacks around them, and the output matches the
  // reference plan.
  const char* text =
      "7767517\n"
      "4 4\n"
      "Input data 0 1 data 0=11 1=9 2=240\n"
      "ConvolutionDepthWise g1 1 1 data a 0=216 1=1 5=1 6=17280 7=3\n"
      "ConvolutionDepthWise g2 1 1 a b 0=216 1=3 4=1 5=1 6=15552 7=27\n"
      "Convolution c 1 1 b out 0=32 1=1 5=1 6=6912\n";
  const PlannedNet planned = plan_matching_reference(text, 9);
  const infer::graph::Plan& p = *planned.plan;
  for (const auto& s : p.steps)
    if (s.kind == infer::graph::StepDesc::layer &&
        p.desc.nodes[std::size_t(s.node)].type == "ConvolutionDepthWise")
      CHECK(s.pack == 8);  // 80 and 72 channels per group, then 8 and 8
}

TEST_CASE("Net: Swish (and Sigmoid) fuse into their CPU producers", "[net][fusion]") {
  // EfficientNet's and YOLO's Swish (ncnn runs it as a layer of its own): the convolution, the
  // grouped and depthwise convolutions apply it before their store (the InnerProduct a Sigmoid):
  // 1x1 GEMMs at packs 16 and 4 (12 channels), the depthwise kernel, a grouped 3x3 and a GEMV; a
  // Swish behind a Split stays a step. Values match the reference plan's.
  const char* text =
      "7767517\n"
      "15 16\n"
      "Input data 0 1 data 0=13 1=11 2=16\n"
      "Convolution c1 1 1 data c1 0=32 1=1 5=1 6=512\n"
      "Swish s1 1 1 c1 s1\n"
      "ConvolutionDepthWise dw 1 1 s1 dw 0=32 1=3 4=1 5=1 6=288 7=32\n"
      "Swish s2 1 1 dw s2\n"
      "Convolution c2 1 1 s2 c2 0=12 1=1 5=1 6=384\n"
      "Swish s3 1 1 c2 s3\n"
      "Convolution c3 1 1 s3 c3 0=16 1=3 4=1 5=1 6=1728\n"
      "Split sp 1 2 c3 c3a c3b\n"
      "Swish s4 1 1 c3a s4\n"
      "BinaryOp add 2 1 s4 c3b sum 0=0\n"
      "ConvolutionDepthWise g 1 1 sum g 0=16 1=3 4=1 5=1 6=1152 7=2\n"
      "Swish s5 1 1 g s5\n"
      "InnerProduct fc 1 1 s5 fc 0=10 1=1 2=22880\n"
      "Sigmoid out 1 1 fc out\n";
  const PlannedNet planned = plan_matching_reference(text, 5);
  const infer::graph::Plan& p = *planned.plan;
  const std::string printed = infer::graph::format_plan(p);
  INFO(printed);
  for (const char* gone : {"Swish 's1'", "Swish 's2'", "Swish 's3'", "Swish 's5'", "Sigmoid 'out'"})
    CHECK_THAT(printed, !Catch::Contains(gone));
  CHECK_THAT(printed, Catch::Contains("Swish 's4'"));  // behind the Split
  int swish = 0, sigmoid = 0;
  for (const auto& s : p.steps)
    if (s.kind == infer::graph::StepDesc::layer) {
      swish += s.act.type == 7;
      sigmoid += s.act.type == 4;
    }
  CHECK(swish == 4);
  CHECK(sigmoid == 1);
}

TEST_CASE("Net: residual sums fuse into the convolution before them", "[net][fusion][residual]") {
  // ResNet's basic block (3x3 convolutions, BatchNorm folded, the ReLU after the sum), a
  // bottleneck's 1x1 projection pair summed by BinaryOp, MobileNet-v2's linear 1x1 into a sum at
  // pack 1 (13 channels) and a sum whose convolution has another reader (kept). Values match the
  // reference plan's; the plan prints each fused sum.
  const char* text =
      "7767517\n"
      "17 21\n"
      "Input data 0 1 data 0=14 1=12 2=16\n"
      "Split sp 1 2 data d1 d2\n"
      "Convolution c1 1 1 d1 c1 0=16 1=3 4=1 5=1 6=2304 9=1\n"
      "Convolution c2 1 1 c1 c2 0=16 1=3 4=1 5=0 6=2304\n"
      "BatchNorm bn 1 1 c2 bn 0=16\n"
      "Eltwise s1 2 1 bn d2 s1 0=1\n"
      "ReLU r1 1 1 s1 r1\n"
      "Split sp2 1 2 r1 e1 e2\n"
      "Convolution c3 1 1 e1 c3 0=32 1=1 5=1 6=512\n"
      "Convolution c4 1 1 e2 c4 0=32 1=1 5=1 6=512\n"
      "BinaryOp s2 2 1 c3 c4 s2 0=0\n"
      "Convolution c5 1 1 s2 c5 0=13 1=1 5=1 6=416\n"
      "Split sp3 1 2 c5 f1 f2\n"
      "Convolution c6 1 1 f1 c6 0=13 1=1 5=1 6=169\n"
      "Eltwise s3 2 1 c6 f2 s3 0=1\n"
      "Split sp4 1 2 s3 g1 g2\n"
      "Eltwise out 2 1 g1 g2 out 0=1\n";
  const PlannedNet planned = plan_matching_reference(text, 9);
  const infer::graph::Plan& p = *planned.plan;
  const std::string printed = infer::graph::format_plan(p);
  INFO(printed);
  CHECK_THAT(printed, Catch::Contains("+sum Eltwise 's1' +ReLU"));
  CHECK_THAT(printed, Catch::Contains("+sum BinaryOp 's2'"));
  CHECK_THAT(printed, Catch::Contains("+sum Eltwise 's3'"));
  int sums = 0, residuals = 0;
  for (const auto& s : p.steps)
    if (s.kind == infer::graph::StepDesc::layer) {
      const auto& d = p.desc.nodes[std::size_t(s.node)];
      sums += d.type == "Eltwise" || d.type == "BinaryOp";
      residuals += s.residual_node >= 0;
      if (s.residual_node >= 0) {
        CHECK(s.in.size() == 2);
        CHECK(p.buffers[std::size_t(s.in[1])].pack == p.buffers[std::size_t(s.out[0])].pack);
      }
    }
  CHECK(residuals == 3);
  CHECK(sums == 1);  // `out` sums a blob with itself (two reads of s3): no convolution before it
}

TEST_CASE("Net: a convolution on the GEMM writes the pack its readers run at", "[net]") {
  // An 8-channel input runs its 1x1 expansion at pack 8; its 32 (or 48) outputs, read by a
  // depthwise layer at the widest pack they allow, are written at that pack by the GEMM's
  // epilogue, with no repack between. Where a reader runs at another pack (a grouped 1x1 of 4
  // channels a group), or the outputs allow no wider pack (24 channels: pack 8), the expansion
  // writes its own pack. The values match the reference plan's.
  struct Case {
    int outs, groups;  // the reader: depthwise (groups == outs) or grouped
  };
  const int widest = infer::simd::max_width >= 16 ? 16 : infer::simd::max_width;
  for (const Case k : {Case{32, 32}, Case{48, 48}, Case{24, 24}, Case{32, 8}}) {
    CAPTURE(k.outs, k.groups);
    const bool depthwise = k.groups == k.outs;
    const std::string text = fmt::format(
        "7767517\n4 4\nInput data 0 1 data 0=23 1=17 2=8\n"
        "Convolution expand 1 1 data a 0={0} 1=1 5=1 6={1} 9=1\n"
        "ConvolutionDepthWise reader 1 1 a b 0={0} 1={2} 4={3} 5=1 6={4} 7={5}\n"
        "Convolution out 1 1 b out 0=8 1=1 5=1 6={6}\n",
        k.outs, k.outs * 8, depthwise ? 3 : 1, depthwise ? 1 : 0,
        depthwise ? k.outs * 9 : k.outs * k.outs / k.groups, k.groups, k.outs * 8);
    const PlannedNet planned = plan_matching_reference(text, 9);
    const infer::graph::Plan& p = *planned.plan;
    INFO(infer::graph::format_plan(p));
    int expand_out = -1, reader_pack = 0, repacked = 0;
    for (const auto& s : p.steps) {
      if (s.kind != infer::graph::StepDesc::layer) continue;
      const std::string_view name = p.desc.nodes[std::size_t(s.node)].name;
      if (name == "expand") {
        CHECK(s.pack == std::min(8, widest));
        expand_out = s.out[0];
      }
      if (name == "reader") reader_pack = s.pack;
    }
    for (const auto& s : p.steps)
      repacked += s.kind == infer::graph::StepDesc::repack && s.in[0] == expand_out;
    REQUIRE(expand_out >= 0);
    const int written = p.buffers[std::size_t(expand_out)].pack;
    if (depthwise) CHECK(reader_pack == infer::pack_for(k.outs, widest));
    if (reader_pack > std::min(8, widest)) {
      CHECK(written == reader_pack);
      CHECK(repacked == 0);
    } else {
      CHECK(written == std::min(8, widest));
    }
  }
}

TEST_CASE("Net: a convolution of a pack-1 input writes the widest pack its outputs allow",
          "[net]") {
  // A 3-channel stem's GEMM gathers its pack-1 input anyway: its output is planned at the widest
  // pack its channels allow (24 -> 8, 20 -> 4, 13 -> 1) and stored as whole vectors, with no
  // repack before the next layer; the values match the reference plan's (pack 1 everywhere).
  const std::array<std::array<int, 3>, 4> stems{{{24, 3, 2}, {20, 7, 2}, {13, 3, 1}, {32, 1, 1}}};
  for (auto [outs, kernel, stride] : stems) {
    CAPTURE(outs, kernel, stride);
    const std::string text = fmt::format(
        "7767517\n3 3\nInput data 0 1 data 0=23 1=17 2=3\n"
        "Convolution stem 1 1 data a 0={} 1={} 3={} 4={} 5=1 6={} 9=1\n"
        "Convolution next 1 1 a out 0=16 1=1 5=1 6={}\n",
        outs, kernel, stride, kernel / 2, outs * 3 * kernel * kernel, outs * 16);
    const PlannedNet planned = plan_matching_reference(text, 5);
    const infer::graph::Plan& p = *planned.plan;
    INFO(infer::graph::format_plan(p));
    const int widest = infer::simd::max_width >= 16 ? 16 : infer::simd::max_width;
    int stem_out = -1, repacked = 0;
    for (const auto& s : p.steps) {
      if (s.kind == infer::graph::StepDesc::layer &&
          p.desc.nodes[std::size_t(s.node)].name == "stem") {
        CHECK(s.pack == 1);
        stem_out = s.out[0];
        CHECK(p.buffers[std::size_t(stem_out)].pack == infer::pack_for(outs, widest));
      }
      repacked += s.kind == infer::graph::StepDesc::repack && s.in[0] == stem_out;
    }
    CHECK(stem_out >= 0);
    CHECK(repacked == 0);
  }
}
