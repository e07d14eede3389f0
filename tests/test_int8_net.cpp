// ncnn's int8 benchmark networks through infer::Net against ncnn's own outputs
// (tests/data/ncnn_int8, README there): the same random weights (ncnn_weights' scheme, regenerated
// bit for bit), the same input, logits within 2e-2 of ncnn's largest (mobilenet_int8 excepted, see
// below). The plans: int8 layers at i8, quantize steps only where a float blob meets an int8 layer,
// int8 blobs passed on (a requantizing convolution into the next, through Split) without a
// dequantize; and the composer's placement on small graphs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <infer/convert.hpp>
#include <infer/graph/print.hpp>
#include <infer/net.hpp>
#include <string>
#include <vector>

#include "support/model_compare.hpp"
#include "support/ncnn_reference.hpp"

using infer::test::ncnn_run_input;
using infer::test::read_f32;

namespace {

std::filesystem::path model_path(const std::string& name) {
  return std::filesystem::path(INFER_MODELS_DIR) / (name + ".param");
}

std::string plan_of(const infer::Net& net, const infer::Mat& in, std::string_view out) {
  const infer::NamedMat named[] = {{net.input_names()[0], in}};
  const std::string_view outs[] = {out};
  auto plan = net.plan(named, outs);
  REQUIRE(plan.ok());
  return infer::graph::format_plan(**plan);
}

}  // namespace

TEST_CASE("int8 networks match ncnn's int8 outputs", "[int8][net]") {
  // Within 2e-2 but mobilenet_int8: its first depthwise layer requantizes 3 of 0.4 M values one
  // step away from ncnn's (values on a rounding boundary, where the order of ncnn's depthwise
  // epilogue differs from infer's one fused multiply-add), and 13 requantizing layers of random
  // weights amplify that to 3.1e-2 of the largest logit. The others agree to float rounding
  // (vgg16_int8 bit for bit).
  const struct {
    const char* name;
    int size;
    const char* logits;
    double bound;
  } models[] = {{"squeezenet_int8", 227, "pool10", 2e-2},
                {"mobilenet_int8", 224, "fc7", 4e-2},
                {"resnet18_int8", 224, "fc1000", 2e-2},
                {"resnet50_int8", 224, "fc1000", 2e-2},
                {"vgg16_int8", 224, "fc8", 2e-2}};
  for (const auto& m : models) {
#ifdef INFER_TEST_SANITIZED
    // The sanitizer build runs the two smaller networks (vgg16's 138 M weights take minutes there).
    if (std::string_view(m.name) != "squeezenet_int8" &&
        std::string_view(m.name) != "resnet18_int8")
      continue;
#endif
    CAPTURE(m.name);
    infer::Option opt;
    opt.num_threads = 2;
    infer::Net net({}, opt);
    REQUIRE(net.load_param(model_path(m.name)).ok());
    const infer::Status w = net.load_ncnn_random_weights(1234);
    INFO((w.ok() ? std::string() : w.message()));
    REQUIRE(w.ok());
    const infer::Mat in = ncnn_run_input(3, m.size, m.size);
    auto out = net.run(in, m.logits);
    INFO((out.ok() ? std::string() : out.message()));
    REQUIRE(out.ok());
    const std::vector<float> want = read_f32(std::filesystem::path(INFER_TEST_DATA_DIR) /
                                             "ncnn_int8" / (std::string(m.name) + ".f32"));
    infer::Mat flat;
    REQUIRE(infer::convert(*out, flat, infer::ElemType::f32, 1, infer::Option{}).ok());
    REQUIRE(flat.shape().total() == want.size());
    const float* got = static_cast<const float*>(flat.data());
    double diff = 0, peak = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      REQUIRE(std::isfinite(got[i]));
      diff = std::max(diff, double(std::fabs(got[i] - want[i])));
      peak = std::max(peak, double(std::fabs(want[i])));
    }
    const double rel = diff / std::max(peak, 1e-6);
    fmt::print("{}: logits within {:.3g} of ncnn's largest ({:.4g})\n", m.name, rel, peak);
    CHECK(rel <= m.bound);
    const std::string text = plan_of(net, in, m.logits);
    INFO(text);
    // The input is quantized once for the first int8 layer; int8 layers run at i8.
    CHECK_THAT(text, Catch::Contains("quantize -> i8 (scale 42.3333)"));
    CHECK_THAT(text, Catch::Contains(" i8 p"));
  }
}

TEST_CASE("int8 plans: quantize where float meets int8, int8 blobs passed on", "[int8][net]") {
  // conv1 (float out) -> ReLU -> qa (int8 out, term 102) -> Split -> qb (int8 in, float out)
  //                                                              \-> max Pooling (int8 too)
  constexpr const char* kParam =
      "7767517\n"
      "6 7\n"
      "Input in 0 1 data 0=8 1=8 2=16\n"
      "Convolution qa 1 1 data a 0=32 1=3 4=1 5=1 6=4608 8=102 9=1\n"
      "Split sp 1 2 a a1 a2\n"
      "Convolution qb 1 1 a1 b 0=16 1=1 5=1 6=512 8=2\n"
      "Pooling pool 1 1 a2 p 0=0 1=2 2=2\n"
      "Eltwise sum 2 1 b b out 0=1\n";
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::filesystem::path path = dir / "infer_int8_plan.param";
  { std::ofstream(path) << kParam; }
  infer::Net net;
  REQUIRE(net.load_param(path).ok());
  REQUIRE(net.load_ncnn_random_weights(7).ok());
  const infer::Mat in = infer::test::make_model_input(infer::Shape::of(8, 8, 16));
  const std::string text = plan_of(net, in, "out");
  INFO(text);
  // One quantize (the graph input into qa); qa's int8 output goes through the Split to qb
  // without a cast, and through the max Pooling (int8 values too): nothing is dequantized.
  const auto count = [](const std::string& t, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = t.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  CHECK(count(text, "quantize -> i8") == 1);
  CHECK(count(text, "dequantize -> f32") == 0);
  const std::size_t pool_at = text.find("Pooling 'pool'");
  REQUIRE(pool_at != std::string::npos);
  CHECK_THAT(text.substr(pool_at, text.find('\n', pool_at) - pool_at),
             Catch::Contains("-> p[4x4x32 i8"));
  // The caller reading the Pooling's output gets it dequantized by qa's top scale.
  const std::string pooled_plan = plan_of(net, in, "p");
  INFO(pooled_plan);
  CHECK(count(pooled_plan, "dequantize -> f32 (scale 42.3333)") == 1);
  auto out = net.run(in, "out");
  INFO((out.ok() ? std::string() : out.message()));
  REQUIRE(out.ok());
  auto pooled = net.run(in, "p");
  REQUIRE(pooled.ok());
  CHECK(pooled->type() == infer::ElemType::f32);
  // The same network with every layer's output read by the caller: each blob arrives as f32.
  auto a = net.run(in, "a");
  REQUIRE(a.ok());
  CHECK(a->type() == infer::ElemType::f32);
  std::filesystem::remove(path);
}

TEST_CASE("int8 plans: float outputs requantized for their int8 readers",
          "[int8][net][requantize]") {
  // A SqueezeNet fire module and a VGG stage's end as ncnn's int8 models hold them: e1 and e3
  // (float outputs, term 2) reach v only through a Concat and a max Pooling, so they write int8 at
  // v's input scale; v's float output goes on through an average Pooling, so it stays f32.
  constexpr const char* kParam =
      "7767517\n"
      "10 11\n"
      "Input in 0 1 data 0=11 1=9 2=16\n"
      "Convolution sq 1 1 data s 0=8 1=1 5=1 6=128 8=102 9=1\n"
      "Split sp 1 2 s s1 s2\n"
      "Convolution e1 1 1 s1 a 0=16 1=1 5=1 6=128 8=2 9=1\n"
      "Convolution e3 1 1 s2 b 0=16 1=3 4=1 5=1 6=1152 8=2 9=1\n"
      "Concat cat 2 1 a b c\n"
      "Pooling pool 1 1 c p 0=0 1=3 2=2\n"
      "Convolution v 1 1 p w 0=24 1=3 4=1 5=1 6=6912 8=2 9=1\n"
      "Pooling avg 1 1 w q 0=1 1=2 2=2\n"
      "Convolution out 1 1 q out 0=8 1=1 5=1 6=192 8=2\n";
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "infer_int8_requantize.param";
  { std::ofstream(path) << kParam; }
  const infer::graph::Target plain{infer::ElemType::f32, 1, false, false};
  const infer::Mat in = infer::test::make_model_input(infer::Shape::of(11, 9, 16));
  const auto count = [](const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  for (int threads : {1, 2}) {
    infer::Option opt;
    opt.num_threads = threads;
    infer::Net net({}, opt), ref(plain, opt);
    REQUIRE(net.load_param(path).ok());
    REQUIRE(ref.load_param(path).ok());
    REQUIRE(net.load_ncnn_random_weights(17).ok());
    REQUIRE(ref.load_ncnn_random_weights(17).ok());
    const std::string text = plan_of(net, in, "out");
    INFO(text << "threads " << threads);
    // The input (for sq) and q (for out) are quantized; without the pass, p too (for v).
    CHECK(count(text, "quantize -> i8") == 2);
    CHECK(count(plan_of(ref, in, "out"), "quantize -> i8") == 3);
    CHECK(count(text, "dequantize") == 0);
    CHECK_THAT(text, Catch::Contains("requantized"));
    auto got = net.run(in, "out");
    auto want = ref.run(in, "out");
    INFO((got.ok() ? std::string() : got.message()));
    REQUIRE(got.ok());
    REQUIRE(want.ok());
    REQUIRE(got->shape() == infer::Shape::of(3, 2, 8));
    std::vector<float> first;
    for (int q = 0; q < 8; ++q)
      for (std::size_t i = 0; i < 6; ++i)
        first.push_back(static_cast<const float*>(got->channel_data(q))[i]);
    REQUIRE(want->shape() == got->shape());
    // The same int8 values reach every quantized layer: the outputs agree to float rounding.
    float peak = 0.f;
    for (int q = 0; q < 8; ++q)
      for (std::size_t i = 0; i < 6; ++i)
        peak = std::max(peak, std::fabs(static_cast<const float*>(want->channel_data(q))[i]));
    CHECK(peak > 0.f);
    std::size_t off = 0;
    for (int q = 0; q < 8; ++q)
      for (std::size_t i = 0; i < 6; ++i)
        off += !(std::fabs(static_cast<const float*>(got->channel_data(q))[i] -
                           static_cast<const float*>(want->channel_data(q))[i]) <=
                 1e-6f * peak);
    CHECK(off == 0);
    // A caller reading e1's output gets its float values: then e1 is not requantized (another
    // plan of the same network), and the plan above still runs.
    const std::string with_a = plan_of(net, in, "a");
    INFO(with_a);
    auto a = net.run(in, "a");
    REQUIRE(a.ok());
    CHECK(a->type() == infer::ElemType::f32);
    auto a_ref = ref.run(in, "a");
    REQUIRE(a_ref.ok());
    std::size_t a_off = 0;
    float a_peak = 0.f;
    for (int q = 0; q < 16; ++q)
      for (std::size_t i = 0; i < 99; ++i)
        a_peak = std::max(a_peak, std::fabs(static_cast<const float*>(a_ref->channel_data(q))[i]));
    for (int q = 0; q < 16; ++q)
      for (std::size_t i = 0; i < 99; ++i)
        a_off +=
            !(std::fabs(static_cast<const float*>(a->channel_data(q))[i] -
                        static_cast<const float*>(a_ref->channel_data(q))[i]) <= 1e-6f * a_peak);
    CHECK(a_off == 0);
    auto again = net.run(in, "out");
    REQUIRE(again.ok());
    std::size_t changed = 0;
    for (int q = 0; q < 8; ++q)
      for (std::size_t i = 0; i < 6; ++i)
        changed +=
            static_cast<const float*>(again->channel_data(q))[i] != first[std::size_t(q) * 6 + i];
    CHECK(changed == 0);
  }
  std::filesystem::remove(path);
}

TEST_CASE("int8 plans: residual sums fuse into quantized convolutions with a float output",
          "[int8][net][fusion][residual]") {
  // ResNet's basic block quantized as ncnn's int8 models are: c1 requantizes (102) into c2, whose
  // float output (2) meets the shortcut in an Eltwise and a ReLU; c2 takes both in. A bottleneck
  // projection pair summed by BinaryOp: c3 (float out) takes the sum, its other input c4's output
  // dequantized (c4 requantizes, so it cannot); the sum's result read by the caller. A stem (3
  // channels) into a sum with a float blob of its shape. Every convolution quantized, so the plan
  // without fusion computes the same values.
  constexpr const char* kParam =
      "7767517\n"
      "14 17\n"
      "Input in 0 1 data 0=12 1=10 2=16\n"
      "Split sp 1 2 data d1 d2\n"
      "Convolution c1 1 1 d1 a 0=16 1=3 4=1 5=1 6=2304 8=102 9=1\n"
      "Convolution c2 1 1 a b 0=16 1=3 4=1 5=1 6=2304 8=2\n"
      "Eltwise s1 2 1 b d2 s1 0=1\n"
      "ReLU r1 1 1 s1 r1\n"
      "Split sp2 1 2 r1 e1 e2\n"
      "Convolution c3 1 1 e1 c3 0=24 1=1 5=1 6=384 8=2\n"
      "Convolution c4 1 1 e2 c4 0=24 1=1 5=1 6=384 8=102\n"
      "BinaryOp s2 2 1 c4 c3 s2 0=0\n"
      "Convolution c5 1 1 s2 c5 0=3 1=1 5=1 6=72 8=2\n"
      "Split sp3 1 2 c5 f1 f2\n"
      "Convolution c6 1 1 f1 c6 0=3 1=3 4=1 5=1 6=81 8=2\n"
      "Eltwise out 2 1 c6 f2 out 0=1\n";
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "infer_int8_residual.param";
  { std::ofstream(path) << kParam; }
  const infer::graph::Target plain{infer::ElemType::f32, 1, false, false};
  const infer::Mat in = infer::test::make_model_input(infer::Shape::of(12, 10, 16));
  for (int threads : {1, 2}) {
    infer::Option opt;
    opt.num_threads = threads;
    infer::Net net({}, opt), ref(plain, opt);
    REQUIRE(net.load_param(path).ok());
    REQUIRE(ref.load_param(path).ok());
    REQUIRE(net.load_ncnn_random_weights(13).ok());
    REQUIRE(ref.load_ncnn_random_weights(13).ok());
    for (const char* blob : {"out", "s2"}) {
      const std::string text = plan_of(net, in, blob);
      INFO(text << "threads " << threads);
      CHECK_THAT(text, Catch::Contains("+sum Eltwise 's1' +ReLU"));
      CHECK_THAT(text, Catch::Contains("+sum BinaryOp 's2'"));
      if (std::string_view(blob) == "out") CHECK_THAT(text, Catch::Contains("+sum Eltwise 'out'"));
      auto got = net.run(in, blob);
      auto want = ref.run(in, blob);
      INFO((got.ok() ? std::string() : got.message()));
      REQUIRE(got.ok());
      REQUIRE(want.ok());
      REQUIRE(got->shape() == want->shape());
      // The same integer sums; the dequantized values agree to float rounding (a layer's
      // epilogue at one pack or another may round its last bit differently).
      float peak = 0.f;
      for (int q = 0; q < want->shape().c; ++q)
        for (std::size_t i = 0; i < std::size_t(want->shape().w * want->shape().h); ++i)
          peak = std::max(peak, std::fabs(static_cast<const float*>(want->channel_data(q))[i]));
      std::size_t off = 0;
      for (int q = 0; q < got->shape().c; ++q)
        for (std::size_t i = 0; i < std::size_t(got->shape().w * got->shape().h); ++i)
          off += !(std::fabs(static_cast<const float*>(got->channel_data(q))[i] -
                             static_cast<const float*>(want->channel_data(q))[i]) <=
                   1e-6f * peak);
      CHECK(off == 0);
    }
  }
  std::filesystem::remove(path);
}
