// io/ncnn_layers.hpp: ncnn keys to layer fields (values, ncnn's defaults, the kSameAs keys), the
// range checks and their messages (file, line, type, name, key), the type dispatch, Input shapes,
// and every layer line of the models/*.param files.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <infer/io/ncnn_layers.hpp>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if __has_include(<infer/io/param.hpp>) && defined(INFER_MODELS_DIR)
#include <filesystem>
#include <infer/io/param.hpp>
#define INFER_TEST_MODELS 1
#endif

namespace layers = infer::layers;
using infer::Shape;
using infer::Status;
using infer::io::LayerSpec;
using infer::io::ParamFile;
using infer::io::ParamReader;
using infer::io::ParamValue;
using layers::kSameAs;

namespace {

const ParamFile kFile{"net.param", {}, {}, {}};

/// A layer line's parameters written as in a text .param ("0=64 1=3 -23301=2,1.0,2.5"), parsed here
/// (apart from io/param.hpp, so these tests do not depend on it): a value with '.', 'e' or "nan"
/// is a float, others ints.
ParamValue value_of(const std::string& t) {
  if (t.find_first_of(".eEn") != std::string::npos) return ParamValue::of_float(std::stof(t));
  return ParamValue::of_int(std::stoi(t));
}

LayerSpec spec(std::string type, std::string name, std::string params, int bottoms = 1,
               int tops = 1, int line = 7) {
  LayerSpec s;
  s.type = std::move(type);
  s.name = std::move(name);
  for (int i = 0; i < bottoms; ++i) s.bottoms.push_back(i);
  for (int i = 0; i < tops; ++i) s.tops.push_back(bottoms + i);
  s.line = line;
  std::size_t pos = 0;
  while (pos < params.size()) {
    const std::size_t end = std::min(params.find(' ', pos), params.size());
    const std::string tok = params.substr(pos, end - pos);
    pos = end + 1;
    if (tok.empty()) continue;
    const std::size_t eq = tok.find('=');
    const int key = std::stoi(tok.substr(0, eq));
    const std::string rest = tok.substr(eq + 1);
    if (key <= -23300) {
      std::vector<ParamValue> values;
      std::size_t p = rest.find(',');  // the count comes first
      while (p != std::string::npos) {
        const std::size_t q = rest.find(',', p + 1);
        values.push_back(value_of(rest.substr(p + 1, q == std::string::npos ? q : q - p - 1)));
        p = q;
      }
      REQUIRE(std::size_t(std::stoi(rest.substr(0, rest.find(',')))) == values.size());
      s.params.set_array(-23300 - key, std::move(values));
    } else {
      s.params.set(key, value_of(rest));
    }
  }
  return s;
}

/// The layer a spec gives through set_params; fails the test with the message on error.
template <class L>
L build(const LayerSpec& s) {
  L l{};
  ParamReader r(kFile, s);
  const Status st = infer::io::read_params(l, r);
  INFO(s.type << " '" << s.name << "'");
  if (!st.ok()) FAIL(st.message());
  return l;
}

/// The message set_params gives for a spec that must fail.
template <class L>
std::string error_of(const LayerSpec& s) {
  L l{};
  ParamReader r(kFile, s);
  const Status st = infer::io::read_params(l, r);
  INFO(s.type << " '" << s.name << "'");
  REQUIRE_FALSE(st.ok());
  return st.message();
}

/// The message visit_ncnn_layer gives (f must not be called).
std::string visit_error(const LayerSpec& s) {
  bool called = false;
  const Status st = infer::io::visit_ncnn_layer(kFile, s, [&](auto&) -> Status {
    called = true;
    return {};
  });
  REQUIRE_FALSE(st.ok());
  CHECK_FALSE(called);
  return st.message();
}

using Catch::Matchers::Contains;

}  // namespace

TEST_CASE("ncnn_layers: Convolution keys", "[ncnn_layers]") {
  SECTION("resnet's conv1: 0=64 1=7 3=2 4=3 5=1 6=9408 9=1") {
    const auto c = build<layers::Convolution>(
        spec("Convolution", "conv1", "0=64 1=7 3=2 4=3 5=1 6=9408 9=1 -23330=4,3,112,112,64"));
    CHECK(c.num_output == 64);
    CHECK(c.kernel_w == 7);
    CHECK(c.kernel_h == kSameAs);  // ncnn: kernel_h defaults to kernel_w
    CHECK(c.stride_w == 2);
    CHECK(c.stride_h == kSameAs);
    CHECK(c.dilation_w == 1);
    CHECK(c.dilation_h == kSameAs);
    CHECK(c.pad_left == 3);
    CHECK(c.pad_top == kSameAs);
    CHECK(c.pad_right == kSameAs);
    CHECK(c.pad_bottom == kSameAs);
    CHECK(c.bias_term == 1);
    CHECK(c.weight_data_size == 9408);
    CHECK(c.activation.type == 1);
    CHECK(c.pad_value == 0.f);
    CHECK(c.int8_scale_term == 0);
    const auto win = layers::detail::conv_window(c);
    CHECK(win.kernel_h == 7);
    CHECK(win.stride_h == 2);
    const auto pads = layers::detail::conv_pads(c);
    CHECK((pads.left == 3 && pads.right == 3 && pads.top == 3 && pads.bottom == 3));
    CHECK(c.num_input() == 3);
  }
  SECTION("every key given") {
    const auto c =
        build<layers::Convolution>(spec("Convolution", "c",
                                        "0=4 1=3 11=5 2=2 12=1 3=1 13=2 4=1 15=2 14=3 16=4 5=0 "
                                        "6=120 18=-1.5 9=2 -23310=1,0.1"));
    CHECK(c.kernel_w == 3);
    CHECK(c.kernel_h == 5);
    CHECK(c.dilation_w == 2);
    CHECK(c.dilation_h == 1);
    CHECK(c.stride_w == 1);
    CHECK(c.stride_h == 2);
    CHECK(c.pad_left == 1);
    CHECK(c.pad_right == 2);
    CHECK(c.pad_top == 3);
    CHECK(c.pad_bottom == 4);
    CHECK(c.pad_value == -1.5f);
    CHECK(c.activation.type == 2);
    CHECK(c.activation.params[0] == 0.1f);
    CHECK(c.num_input() == 2);
  }
  SECTION("pad_bottom defaults to pad_top, pad_right to pad_left") {
    const auto c = build<layers::Convolution>(spec("Convolution", "c", "0=1 1=3 4=1 14=2 6=9"));
    const auto p = layers::detail::conv_pads(c);
    CHECK((p.left == 1 && p.right == 1 && p.top == 2 && p.bottom == 2));
  }
  SECTION("SAME pads and activations with parameters") {
    auto c = build<layers::Convolution>(
        spec("Convolution", "c", "0=2 1=3 4=-233 6=18 9=3 -23310=2,0.0,6.0"));
    CHECK(c.pad_left == layers::kPadSameUpper);
    CHECK(c.activation.type == 3);
    CHECK(c.activation.params == std::array<float, 2>{0.f, 6.f});
    c = build<layers::Convolution>(
        spec("Convolution", "c", "0=2 1=3 4=-234 6=18 9=6 -23310=2,0.2,0.5"));
    CHECK(c.pad_left == layers::kPadSameLower);
    CHECK(c.activation.params == std::array<float, 2>{0.2f, 0.5f});
    // 0=0 and the key 19 switch off at their defaults are accepted.
    CHECK(build<layers::Convolution>(spec("Convolution", "c", "0=2 1=1 6=2 8=0 19=0")).num_output ==
          2);
  }
}

TEST_CASE("ncnn_layers: ConvolutionDepthWise, Deconvolution, InnerProduct keys", "[ncnn_layers]") {
  const auto dw = build<layers::ConvolutionDepthWise>(
      spec("ConvolutionDepthWise", "dw", "0=116 1=3 3=2 4=1 5=1 6=1044 7=116"));
  CHECK(dw.group == 116);
  CHECK(dw.num_output == 116);
  CHECK(dw.depthwise());
  const auto grouped = build<layers::ConvolutionDepthWise>(
      spec("ConvolutionDepthWise", "g", "0=256 1=5 4=2 5=1 6=307200 7=2 9=1"));
  CHECK(grouped.group == 2);
  CHECK(grouped.num_input() == 96);

  const auto de = build<layers::Deconvolution>(
      spec("Deconvolution", "up", "0=16 1=4 3=2 4=1 5=1 6=2048 18=1 9=1"));
  CHECK(de.num_output == 16);
  CHECK(de.kernel_w == 4);
  CHECK(de.kernel_h == kSameAs);
  CHECK(de.output_pad_right == 1);
  CHECK(de.output_pad_bottom == kSameAs);
  CHECK(de.output_w == 0);
  CHECK(de.output_h == kSameAs);
  const auto same = build<layers::Deconvolution>(
      spec("Deconvolution", "up", "0=8 1=3 3=2 4=-233 6=216 20=32 21=30"));
  CHECK(same.output_w == 32);
  CHECK(same.output_h == 30);
  const auto ddw = build<layers::DeconvolutionDepthWise>(
      spec("DeconvolutionDepthWise", "updw", "0=8 1=4 3=2 6=128 7=8"));
  CHECK(ddw.group == 8);

  const auto fc =
      build<layers::InnerProduct>(spec("InnerProduct", "fc6", "0=4096 1=1 2=37748736 9=1"));
  CHECK(fc.num_output == 4096);
  CHECK(fc.bias_term == 1);
  CHECK(fc.weight_data_size == 37748736);
  CHECK(fc.activation.type == 1);
  CHECK(fc.num_input() == 9216);
  const auto fc0 = build<layers::InnerProduct>(spec("InnerProduct", "fc", "0=10 2=20"));
  CHECK(fc0.bias_term == 0);
  CHECK(fc0.activation.type == 0);
}

TEST_CASE("ncnn_layers: Pooling keys", "[ncnn_layers]") {
  auto p = build<layers::Pooling>(spec("Pooling", "pool1", "1=3 2=2"));
  CHECK(p.pooling_type == 0);
  CHECK(p.kernel_w == 3);
  CHECK(p.kernel_h == kSameAs);
  CHECK(p.stride_w == 2);
  CHECK(p.stride_h == kSameAs);
  CHECK(p.pad_left == 0);
  CHECK(p.pad_top == kSameAs);
  CHECK(p.global_pooling == 0);
  CHECK(p.pad_mode == 0);
  CHECK(p.out_h == kSameAs);

  p = build<layers::Pooling>(spec("Pooling", "pool5", "0=1 1=7"));
  CHECK(p.pooling_type == 1);
  p = build<layers::Pooling>(spec("Pooling", "gap", "0=1 4=1"));
  CHECK(p.global_pooling == 1);
  CHECK(p.kernel_w == 0);  // unused by global pooling, so not checked
  p = build<layers::Pooling>(spec("Pooling", "p", "1=2 11=3 2=1 12=2 3=1 14=0 13=2 15=1 5=2 6=1"));
  CHECK((p.kernel_h == 3 && p.stride_h == 2 && p.pad_right == 0 && p.pad_top == 2 &&
         p.pad_bottom == 1 && p.pad_mode == 2 && p.avgpool_count_include_pad == 1));
  p = build<layers::Pooling>(spec("Pooling", "ada", "0=1 7=1 8=4 18=-233"));
  CHECK((p.adaptive_pooling == 1 && p.out_w == 4 && p.out_h == -233));

  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "0=2 1=2")),
             Contains("key 0: pooling_type must be 0..1") && Contains("got 2"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "2=2")),
             Contains("key 1: kernel_w must be >= 1, got 0"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "1=2 12=0")),
             Contains("key 12: stride_h must be >= 1, got 0"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "1=2 5=4")),
             Contains("key 5: pad_mode must be 0..3"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "1=2 3=-1")),
             Contains("key 3: pad_left must be >= 0, got -1"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "7=1 8=0")),
             Contains("key 8: out_w must be >= 1 or -233"));
  CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "1=2 4=2")),
             Contains("key 4: global_pooling must be 0 or 1, got 2"));
}

TEST_CASE("ncnn_layers: BinaryOp, Eltwise", "[ncnn_layers]") {
  auto b = build<layers::BinaryOp>(spec("BinaryOp", "mul", "0=2", 2));
  CHECK((b.op_type == 2 && b.with_scalar == 0 && b.b == 0.f));
  b = build<layers::BinaryOp>(spec("BinaryOp", "add", "", 2));
  CHECK(b.op_type == 0);
  b = build<layers::BinaryOp>(spec("BinaryOp", "rsub", "0=7 1=1 2=0.5", 1));
  CHECK((b.op_type == 7 && b.with_scalar == 1 && b.b == 0.5f));
  b = build<layers::BinaryOp>(spec("BinaryOp", "s", "1=1 2=3", 1));
  CHECK(b.b == 3.f);  // an int where a float goes is converted, as ncnn's text reader does
  CHECK_THAT(error_of<layers::BinaryOp>(spec("BinaryOp", "x", "0=12", 2)),
             Contains("key 0: op_type must be 0..11"));
  CHECK_THAT(error_of<layers::BinaryOp>(spec("BinaryOp", "x", "1=1", 2)),
             Contains("key 1: with_scalar=1 takes 1 input(s), the layer has 2"));
  CHECK_THAT(error_of<layers::BinaryOp>(spec("BinaryOp", "x", "0=1", 1)),
             Contains("with_scalar=0 takes 2 input(s)"));

  auto e = build<layers::Eltwise>(spec("Eltwise", "res", "0=1", 2));
  CHECK(e.op_type == 1);
  CHECK(e.coeffs.empty());
  e = build<layers::Eltwise>(spec("Eltwise", "sub", "0=1 -23301=2,1.0,-1.0", 2));
  CHECK(e.coeffs == std::vector<float>{1.f, -1.f});
  e = build<layers::Eltwise>(spec("Eltwise", "ints", "0=1 -23301=3,1,2,3", 3));
  CHECK(e.coeffs == std::vector<float>{1.f, 2.f, 3.f});
  e = build<layers::Eltwise>(spec("Eltwise", "prod", "", 2));
  CHECK(e.op_type == 0);
  CHECK_THAT(error_of<layers::Eltwise>(spec("Eltwise", "x", "0=1 -23301=3,1.0,1.0,1.0", 2)),
             Contains("key 1: coeffs holds 3 values for 2 inputs"));
  CHECK_THAT(error_of<layers::Eltwise>(spec("Eltwise", "x", "0=3", 2)),
             Contains("key 0: op_type must be 0..2"));
  CHECK_THAT(error_of<layers::Eltwise>(spec("Eltwise", "x", "0=1 1=2", 2)),
             Contains("key 1: expected an array"));
}

TEST_CASE("ncnn_layers: Slice, Concat, Reshape, Permute, ShuffleChannel", "[ncnn_layers]") {
  auto s = build<layers::Slice>(spec("Slice", "shuffle9", "-23300=2,116,-233", 1, 2));
  CHECK(s.slices == std::vector<int>{116, -233});
  CHECK(s.axis == 0);
  CHECK(s.indices.empty());
  s = build<layers::Slice>(spec("Slice", "s", "-23300=3,1,2,3 1=-1", 1, 3));
  CHECK(s.axis == -1);
  s = build<layers::Slice>(spec("Slice", "s", "1=2 -23302=1,4", 1, 2));
  CHECK(s.indices == std::vector<int>{4});
  CHECK(s.slices.empty());
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "-23300=2,1,1", 1, 3)),
             Contains("key 0: slices holds 2 values for 3 outputs"));
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "-23300=2,0,-233", 1, 2)),
             Contains("key 0: each slice must be >= 1 or -233"));
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "-23300=2,1,1 1=4", 1, 2)),
             Contains("key 1: axis must be -4..3, got 4"));
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "1=0", 1, 2)),
             Contains("key 0: slices (or 2=indices) must be given"));
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "-23302=2,1,2", 1, 2)),
             Contains("key 2: indices holds 2 values for 2 outputs"));
  CHECK_THAT(error_of<layers::Slice>(spec("Slice", "s", "-23300=2,1.5,2", 1, 2)),
             Contains("key 0: expected integers"));

  CHECK(build<layers::Concat>(spec("Concat", "cat", "", 2)).axis == 0);
  CHECK(build<layers::Concat>(spec("Concat", "cat", "0=-3", 2)).axis == -3);
  CHECK_THAT(error_of<layers::Concat>(spec("Concat", "cat", "0=-5", 2)),
             Contains("key 0: axis must be -4..3, got -5"));

  auto r = build<layers::Reshape>(spec("Reshape", "flat", "0=-1"));
  CHECK((r.w == -1 && r.h == layers::Reshape::kDrop && r.d == layers::Reshape::kDrop &&
         r.c == layers::Reshape::kDrop));
  r = build<layers::Reshape>(spec("Reshape", "r", "0=7 1=0 2=-1 11=2 3=0"));
  CHECK((r.w == 7 && r.h == 0 && r.c == -1 && r.d == 2));
  CHECK_THAT(error_of<layers::Reshape>(spec("Reshape", "r", "0=-2")),
             Contains("key 0: w must be > 0, 0 (keep), -1 (infer) or -233 (drop), got -2"));
  CHECK_THAT(error_of<layers::Reshape>(spec("Reshape", "r", "0=-1 1=-1")),
             Contains("key 1: at most one extent can be -1"));
  CHECK_THAT(error_of<layers::Reshape>(spec("Reshape", "r", "0=4 3=1")),
             Contains("key 3: permute=1") && Contains("not supported"));
  CHECK_THAT(error_of<layers::Reshape>(spec("Reshape", "r", "")),
             Contains("key 0: w must be given"));

  CHECK(build<layers::Permute>(spec("Permute", "p", "0=5")).order_type == 5);
  CHECK(build<layers::Permute>(spec("Permute", "p", "")).order_type == 0);
  CHECK_THAT(error_of<layers::Permute>(spec("Permute", "p", "0=24")),
             Contains("key 0: order_type must be 0..23"));

  auto sc = build<layers::ShuffleChannel>(spec("ShuffleChannel", "sh", "0=2"));
  CHECK((sc.group == 2 && sc.reverse == 0));
  sc = build<layers::ShuffleChannel>(spec("ShuffleChannel", "sh", "0=4 1=1"));
  CHECK(sc.reverse == 1);
  CHECK(build<layers::ShuffleChannel>(spec("ShuffleChannel", "sh", "")).group == 1);
  CHECK_THAT(error_of<layers::ShuffleChannel>(spec("ShuffleChannel", "sh", "0=0")),
             Contains("key 0: group must be >= 1, got 0"));
}

TEST_CASE("ncnn_layers: Softmax, Padding, Crop", "[ncnn_layers]") {
  CHECK(build<layers::Softmax>(spec("Softmax", "prob", "")).axis == 0);
  CHECK(build<layers::Softmax>(spec("Softmax", "prob", "0=0")).axis == 0);
  CHECK(build<layers::Softmax>(spec("Softmax", "prob", "0=1 1=1")).axis == 1);
  CHECK(build<layers::Softmax>(spec("Softmax", "prob", "0=-1 1=1")).axis == -1);
  CHECK_THAT(error_of<layers::Softmax>(spec("Softmax", "prob", "0=1")),
             Contains("key 1: axis=1 without 1=1 (fixbug0)"));
  CHECK_THAT(error_of<layers::Softmax>(spec("Softmax", "prob", "0=4 1=1")),
             Contains("key 0: axis must be -4..3"));

  auto p = build<layers::Padding>(spec("Padding", "pad", "0=1 1=2 2=3 3=4 4=1 5=2.5 7=1 8=2"));
  CHECK((p.top == 1 && p.bottom == 2 && p.left == 3 && p.right == 4 && p.type == 1 &&
         p.value == 2.5f && p.front == 1 && p.behind == 2 && p.per_channel_pad_data_size == 0));
  p = build<layers::Padding>(spec("Padding", "pad", "7=3"));
  CHECK((p.front == 3 && p.behind == 0));  // ncnn: behind defaults to 0, not to front
  p = build<layers::Padding>(spec("Padding", "pad", "0=1 6=16"));
  CHECK(p.per_channel_pad_data_size == 16);
  CHECK_THAT(error_of<layers::Padding>(spec("Padding", "pad", "4=3")),
             Contains("key 4: type must be 0..2"));
  CHECK_THAT(error_of<layers::Padding>(spec("Padding", "pad", "0=-233 1=-233 2=-233 3=-233")),
             Contains("key 0: top=-233 selects ncnn's two-blob form"));
  CHECK_THAT(error_of<layers::Padding>(spec("Padding", "pad", "2=-1")),
             Contains("key 2: left must be >= 0, got -1"));

  auto c = build<layers::Crop>(spec("Crop", "crop", "0=1 1=2 2=3 3=4 4=5 5=-233"));
  CHECK((c.woffset == 1 && c.hoffset == 2 && c.coffset == 3 && c.outw == 4 && c.outh == 5 &&
         c.outc == -233 && c.outd == 0 && c.doffset == 0 && c.woffset2 == 0 && c.hoffset2 == 0 &&
         c.coffset2 == 0));
  c = build<layers::Crop>(spec("Crop", "crop", "-23309=2,1,-3 -23310=2,-233,0 -23311=2,0,-1"));
  CHECK(c.starts == std::vector<int>{1, -3});
  CHECK(c.ends == std::vector<int>{-233, 0});
  CHECK(c.axes == std::vector<int>{0, -1});
  c = build<layers::Crop>(spec("Crop", "crop", "13=1 14=2 15=3 6=1 7=1 8=1"));
  CHECK((c.doffset == 1 && c.outd == 2 && c.doffset2 == 3 && c.woffset2 == 1));
  CHECK_THAT(error_of<layers::Crop>(spec("Crop", "crop", "-23309=2,1,2 -23310=1,3")),
             Contains("key 10: ends holds 1 values for 2 starts"));
  CHECK_THAT(error_of<layers::Crop>(spec("Crop", "crop", "0=-1 3=2")),
             Contains("key 0: woffset must be >= 0, got -1"));
  CHECK_THAT(error_of<layers::Crop>(spec("Crop", "crop", "3=-2")),
             Contains("key 3: out size must be >= 0 or -233"));
  CHECK_THAT(error_of<layers::Crop>(spec("Crop", "crop", "-23309=1,0 -23310=1,1 -23311=1,4")),
             Contains("key 11: each of axes must be -4..3, got 4"));
}

TEST_CASE("ncnn_layers: activation and affine layers", "[ncnn_layers]") {
  CHECK(build<layers::ReLU>(spec("ReLU", "relu", "")).slope == 0.f);
  CHECK(build<layers::ReLU>(spec("ReLU", "leaky", "0=0.1")).slope == 0.1f);
  auto clip = build<layers::Clip>(spec("Clip", "relu6", "0=0.0 1=6.0"));
  CHECK((clip.min == 0.f && clip.max == 6.f));
  clip = build<layers::Clip>(spec("Clip", "clip", ""));
  CHECK((clip.min == -FLT_MAX && clip.max == FLT_MAX));
  CHECK_THAT(error_of<layers::Clip>(spec("Clip", "clip", "0=2.0 1=1.0")),
             Contains("key 1: max 1 is below min 2"));
  CHECK(build<layers::ELU>(spec("ELU", "elu", "")).alpha == 0.1f);
  CHECK(build<layers::ELU>(spec("ELU", "elu", "0=1.0")).alpha == 1.f);
  CHECK_FALSE(build<layers::GELU>(spec("GELU", "gelu", "")).fast_gelu);
  CHECK(build<layers::GELU>(spec("GELU", "gelu", "0=1")).fast_gelu);
  auto hs = build<layers::HardSigmoid>(spec("HardSigmoid", "hs", ""));
  CHECK((hs.alpha == 0.2f && hs.beta == 0.5f));
  hs = build<layers::HardSigmoid>(spec("HardSigmoid", "hs", "0=1.666667e-01 1=0.5"));
  CHECK(hs.alpha == Approx(1.f / 6));
  auto hw = build<layers::HardSwish>(spec("HardSwish", "hw", ""));
  CHECK((hw.alpha == 0.2f && hw.beta == 0.5f));
  hw = build<layers::HardSwish>(spec("HardSwish", "hw", "0=1.666667e-01 1=5.0e-01"));
  CHECK(hw.alpha == Approx(1.f / 6));
  CHECK(build<layers::Dropout>(spec("Dropout", "drop", "")).scale == 1.f);
  CHECK(build<layers::Dropout>(spec("Dropout", "drop", "0=0.5")).scale == 0.5f);

  auto bn = build<layers::BatchNorm>(spec("BatchNorm", "bn", "0=64 1=1.0e-05"));
  CHECK((bn.channels == 64 && bn.eps == 1e-5f));
  CHECK(build<layers::BatchNorm>(spec("BatchNorm", "bn", "0=3")).eps == 0.f);
  CHECK_THAT(error_of<layers::BatchNorm>(spec("BatchNorm", "bn", "")),
             Contains("key 0: channels must be >= 1, got 0"));
  auto sc = build<layers::Scale>(spec("Scale", "scale", "0=64 1=1"));
  CHECK((sc.scale_data_size == 64 && sc.bias_term));
  sc = build<layers::Scale>(spec("Scale", "scale", "0=-233", 2));
  CHECK((sc.scale_data_size == -233 && !sc.bias_term));
  CHECK_THAT(error_of<layers::Scale>(spec("Scale", "scale", "")),
             Contains("key 0: scale_data_size must be >= 1, or -233"));
  CHECK(build<layers::Bias>(spec("Bias", "bias", "0=8")).bias_data_size == 8);
  CHECK_THAT(error_of<layers::Bias>(spec("Bias", "bias", "0=-1")),
             Contains("key 0: bias_data_size must be >= 1, got -1"));

  auto lrn = build<layers::LRN>(spec("LRN", "norm1", "2=1.000000e-04"));
  CHECK((lrn.region_type == 0 && lrn.local_size == 5 && lrn.alpha == 1e-4f && lrn.beta == 0.75f &&
         lrn.bias == 1.f));
  lrn = build<layers::LRN>(spec("LRN", "norm", "0=1 1=3 3=0.5 4=2.0"));
  CHECK((lrn.region_type == 1 && lrn.local_size == 3 && lrn.beta == 0.5f && lrn.bias == 2.f));
  CHECK_THAT(error_of<layers::LRN>(spec("LRN", "norm", "0=2")),
             Contains("key 0: region_type must be 0..1"));
  CHECK_THAT(error_of<layers::LRN>(spec("LRN", "norm", "1=0")),
             Contains("key 1: local_size must be >= 1, got 0"));

  // The parameterless layers take no key.
  (void)build<layers::Sigmoid>(spec("Sigmoid", "s", ""));
  (void)build<layers::Split>(spec("Split", "s", "", 1, 3));
  CHECK_THAT(error_of<layers::Swish>(spec("Swish", "sw", "0=1")),
             Contains("key 0: not a parameter of Swish"));
  CHECK_THAT(error_of<layers::Flatten>(spec("Flatten", "f", "-23300=1,1")),
             Contains("key 0: not a parameter of Flatten"));
}

TEST_CASE("ncnn_layers: Interp, Reduction, MemoryData", "[ncnn_layers]") {
  auto in = build<layers::Interp>(spec("Interp", "up", "0=2 1=2.0 2=2.0"));
  CHECK((in.resize_type == 2 && in.height_scale == 2.f && in.width_scale == 2.f &&
         in.output_height == 0 && in.output_width == 0 && in.align_corner == 0 &&
         in.dynamic_target_size == 0));
  in = build<layers::Interp>(spec("Interp", "up", "0=1 3=640 4=480 6=1"));
  CHECK((in.resize_type == 1 && in.output_height == 640 && in.output_width == 480 &&
         in.align_corner == 1 && in.height_scale == 1.f && in.width_scale == 1.f));
  CHECK_THAT(error_of<layers::Interp>(spec("Interp", "up", "1=2.0 2=2.0")),
             Contains("key 0: resize_type must be 1..3") && Contains("got 0"));
  CHECK_THAT(error_of<layers::Interp>(spec("Interp", "up", "0=2 2=0.0")),
             Contains("key 2: width_scale must be > 0, got 0"));
  CHECK_THAT(error_of<layers::Interp>(spec("Interp", "up", "0=2 3=-1 4=4")),
             Contains("key 3: output_height must be >= 0, got -1"));
  CHECK_THAT(error_of<layers::Interp>(spec("Interp", "up", "0=2 5=1", 2)),
             Contains("key 5: dynamic_target_size=1") && Contains("not supported"));

  auto re = build<layers::Reduction>(spec("Reduction", "sum", ""));
  CHECK((re.operation == 0 && re.reduce_all == 1 && re.coeff == 1.f && re.axes.empty() &&
         re.keepdims == 0 && re.fixbug0 == 0));
  re = build<layers::Reduction>(spec("Reduction", "mean", "0=3 1=0 -23303=2,1,2 4=1 5=1"));
  CHECK((re.operation == 3 && re.reduce_all == 0 && re.keepdims == 1 && re.fixbug0 == 1));
  CHECK(re.axes == std::vector<int>{1, 2});
  CHECK_THAT(error_of<layers::Reduction>(spec("Reduction", "r", "0=11")),
             Contains("key 0: operation must be 0..10"));
  CHECK_THAT(error_of<layers::Reduction>(spec("Reduction", "r", "1=0 -23303=1,1")),
             Contains("key 5: axes without 5=1 (fixbug0)"));
  CHECK_THAT(error_of<layers::Reduction>(spec("Reduction", "r", "1=0 -23303=2,1,1 5=1")),
             Contains("key 3: axis 1 is listed twice"));
  CHECK_THAT(error_of<layers::Reduction>(spec("Reduction", "r", "1=0 -23303=1,5 5=1")),
             Contains("key 3: each of axes must be -4..3, got 5"));

  auto md = build<layers::MemoryData>(spec("MemoryData", "const", "0=4 1=3 2=2", 0));
  CHECK((md.w == 4 && md.h == 3 && md.c == 2 && md.d == 0 && md.load_type == 1));
  md = build<layers::MemoryData>(spec("MemoryData", "scalar", "", 0));
  CHECK((md.w == 0 && md.h == 0 && md.c == 0));
  md = build<layers::MemoryData>(spec("MemoryData", "m", "0=2 1=2 11=2 2=2 21=0", 0));
  CHECK((md.d == 2 && md.load_type == 0));
  CHECK_THAT(error_of<layers::MemoryData>(spec("MemoryData", "m", "0=4 2=2", 0)),
             Contains("key 1: h must be >= 1 when d or c is given"));
  CHECK_THAT(error_of<layers::MemoryData>(spec("MemoryData", "m", "0=4 21=2", 0)),
             Contains("key 21: load_type must be 0..1"));
  CHECK_THAT(error_of<layers::MemoryData>(spec("MemoryData", "m", "0=-4", 0)),
             Contains("key 0: w must be >= 0, got -4"));
}

TEST_CASE("ncnn_layers: weighted layers' range checks", "[ncnn_layers]") {
  using C = layers::Convolution;
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "1=3 6=27")),
             Contains("key 0: num_output must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 6=9")),
             Contains("key 1: kernel_w must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 11=0 6=9")),
             Contains("key 11: kernel_h must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 3=0 6=9")),
             Contains("key 3: stride_w must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 2=0 6=9")),
             Contains("key 2: dilation_w must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 12=-1 6=9")),
             Contains("key 12: dilation_h must be >= 1, got -1"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=4 1=3 6=100")),
             Contains("key 6: weight_data_size 100 is not a multiple of 36"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=100000 11=100000 6=1")),
             Contains("key 6: weight_data_size 1 is not a multiple of 10000000000"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=4 1=3")),
             Contains("key 6: weight_data_size must be >= 1, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 4=-1")),
             Contains("key 4: pad_left must be >= 0, or -233"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 4=-233 14=0")),
             Contains("key 4: pad_left must be >= 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 4=-233 16=-234")), Contains("SAME"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 5=2")),
             Contains("key 5: bias_term must be 0 or 1, got 2"));
  CHECK(build<C>(spec("Convolution", "c", "0=1 1=3 6=9 8=102")).int8_scale_term == 102);
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 8=3")),
             Contains("key 8: int8_scale_term must be 0, 1, 2, 101 or 102") &&
                 Contains("got 3"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 19=1")),
             Contains("key 19: dynamic_weight=1") && Contains("not supported"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 9=7")),
             Contains("key 9: activation_type must be 0..6") && Contains("got 7"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 9=2")),
             Contains("key 10: activation_type 2 needs 1 activation_params, got 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 9=3 -23310=1,0.0")),
             Contains("key 10: activation_type 3 needs 2 activation_params, got 1"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 9=3 -23310=2,6.0,0.0")),
             Contains("key 10: clip activation min 6 is above max 0"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 9=2 -23310=3,0.1,0,0")),
             Contains("key 10: at most 2 activation_params, got 3"));
  CHECK_THAT(error_of<C>(spec("Convolution", "c", "0=1 1=3 6=9 7=2")),
             Contains("key 7: not a parameter of Convolution"));

  using DW = layers::ConvolutionDepthWise;
  CHECK_THAT(error_of<DW>(spec("ConvolutionDepthWise", "dw", "0=6 1=3 6=54 7=4")),
             Contains("key 7: group 4 does not divide num_output 6"));
  CHECK_THAT(error_of<DW>(spec("ConvolutionDepthWise", "dw", "0=6 1=3 6=54 7=0")),
             Contains("key 7: group must be >= 1, got 0"));
  CHECK_THAT(error_of<DW>(spec("ConvolutionDepthWise", "dw", "0=6 1=3 6=50 7=6")),
             Contains("key 6: weight_data_size 50 is not a multiple of 9"));
  // 6 outputs in 3 groups: 2 per group, 9*2=18 per input channel; 36 gives 2 input channels,
  // which 3 groups cannot split.
  CHECK_THAT(error_of<DW>(spec("ConvolutionDepthWise", "dw", "0=6 1=3 6=36 7=3")),
             Contains("key 7: group 3 does not divide the 2 input channels"));

  using D = layers::Deconvolution;
  CHECK_THAT(error_of<D>(spec("Deconvolution", "d", "0=2 1=2 6=8 18=-1")),
             Contains("key 18: output_pad_right must be >= 0, got -1"));
  CHECK_THAT(error_of<D>(spec("Deconvolution", "d", "0=2 1=2 6=8 20=10")),
             Contains("key 20: output_w/output_h (10x10) need pads of -233"));
  // Positive pads win over output_w/h in ncnn: accepted.
  CHECK(build<D>(spec("Deconvolution", "d", "0=2 1=2 6=8 4=1 20=10")).output_w == 10);
  CHECK_THAT(error_of<D>(spec("Deconvolution", "d", "0=2 1=2 6=7")),
             Contains("key 6: weight_data_size 7 is not a multiple of 8"));
  CHECK_THAT(error_of<D>(spec("Deconvolution", "d", "0=2 1=2 6=8 28=1")),
             Contains("key 28: dynamic_weight=1"));
  CHECK_THAT(error_of<D>(spec("Deconvolution", "d", "0=2 1=2 6=8 8=1")),
             Contains("key 8: not a parameter of Deconvolution"));
  CHECK_THAT(error_of<layers::DeconvolutionDepthWise>(
                 spec("DeconvolutionDepthWise", "d", "0=6 1=2 6=24 7=4")),
             Contains("key 7: group 4 does not divide num_output 6"));

  using IP = layers::InnerProduct;
  CHECK_THAT(error_of<IP>(spec("InnerProduct", "fc", "0=10 2=25")),
             Contains("key 2: weight_data_size 25 is not a multiple of num_output 10"));
  CHECK_THAT(error_of<IP>(spec("InnerProduct", "fc", "2=25")),
             Contains("key 0: num_output must be >= 1, got 0"));
  CHECK(build<IP>(spec("InnerProduct", "fc", "0=10 2=20 8=1")).int8_scale_term == 1);
  CHECK_THAT(error_of<IP>(spec("InnerProduct", "fc", "0=10 2=20 8=101")),
             Contains("key 8: int8_scale_term must be 0, 1 or 2") && Contains("got 101"));
}

TEST_CASE("ncnn_layers: messages name file, line, type, name and key", "[ncnn_layers]") {
  SECTION("an unknown key") {
    const std::string m =
        error_of<layers::Convolution>(spec("Convolution", "conv1", "0=64 1=7 6=9408 17=1"));
    CHECK_THAT(m, Contains("net.param") && Contains("line 7") && Contains("Convolution") &&
                      Contains("'conv1'") && Contains("key 17: not a parameter of Convolution"));
  }
  SECTION("a float where an int goes") {
    const std::string m =
        error_of<layers::Convolution>(spec("Convolution", "conv1", "0=64.5 1=7 6=9408", 1, 1, 12));
    CHECK_THAT(m, Contains("net.param: line 12: layer Convolution 'conv1': key 0: expected an "
                           "integer, got 64.5"));
  }
  SECTION("an array where a scalar goes") {
    CHECK_THAT(error_of<layers::ReLU>(spec("ReLU", "r", "-23300=1,0.1")),
               Contains("key 0: expected a single value, got an array"));
  }
  SECTION("the first problem is reported") {
    CHECK_THAT(error_of<layers::Pooling>(spec("Pooling", "p", "0=3 5=9")),
               Contains("key 0: pooling_type") && !Contains("pad_mode"));
  }
  SECTION("a binary file's offset") {
    LayerSpec s = spec("Permute", "layer3", "0=99");
    s.line = 0;
    s.offset = 128;
    CHECK_THAT(error_of<layers::Permute>(s), Contains("net.param: offset 128: layer Permute"));
  }
}

TEST_CASE("ncnn_layers: visit_ncnn_layer dispatch", "[ncnn_layers]") {
  SECTION("f gets the concrete layer") {
    int conv_calls = 0;
    const Status st = infer::io::visit_ncnn_layer(
        kFile, spec("Convolution", "conv1", "0=64 1=7 3=2 4=3 5=1 6=9408 9=1"),
        [&](auto& layer) -> Status {
          using L = std::decay_t<decltype(layer)>;
          if constexpr (std::is_same_v<L, layers::Convolution>) {
            ++conv_calls;
            CHECK(layer.num_output == 64);
            CHECK(layer.activation.type == 1);
          } else {
            FAIL("not a Convolution");
          }
          return {};
        });
    CHECK(st.ok());
    CHECK(conv_calls == 1);
  }
  SECTION("f's Status is returned") {
    const Status st = infer::io::visit_ncnn_layer(
        kFile, spec("ReLU", "r", ""), [](auto&) -> Status { return infer::make_error("from f"); });
    REQUIRE_FALSE(st.ok());
    CHECK(st.message() == "from f");
  }
  SECTION("a parameter error stops before f") {
    CHECK_THAT(visit_error(spec("Pooling", "pool1", "0=2 1=3", 1, 1, 9)),
               Contains("net.param: line 9: layer Pooling 'pool1': key 0: pooling_type"));
  }
  SECTION("an unknown type") {
    const std::string m = visit_error(spec("ROIPooling", "det", "0=80", 1, 1, 42));
    CHECK_THAT(m, Contains("net.param: line 42:") && Contains("'det'") &&
                      Contains("type 'ROIPooling' is not supported") &&
                      Contains("Convolution, "));
  }
  SECTION("Input is not a layer") {
    const std::string m = visit_error(spec("Input", "data", "0=224 1=224 2=3", 0, 1, 3));
    CHECK_THAT(m, Contains("net.param: line 3: layer Input 'data'") &&
                      Contains("Input is not a layer here") && Contains("input_shape"));
  }
  SECTION("the supported list") {
    const std::vector<std::string_view> types = infer::io::supported_ncnn_types();
    for (std::string_view t : {"ReLU",
                               "Clip",
                               "Sigmoid",
                               "TanH",
                               "Swish",
                               "Mish",
                               "HardSigmoid",
                               "HardSwish",
                               "ELU",
                               "GELU",
                               "BatchNorm",
                               "Scale",
                               "Bias",
                               "BinaryOp",
                               "Eltwise",
                               "Split",
                               "Concat",
                               "Slice",
                               "Flatten",
                               "Reshape",
                               "Permute",
                               "ShuffleChannel",
                               "Padding",
                               "Crop",
                               "Softmax",
                               "Dropout",
                               "Noop",
                               "Convolution",
                               "ConvolutionDepthWise",
                               "Deconvolution",
                               "DeconvolutionDepthWise",
                               "InnerProduct",
                               "Pooling",
                               "LRN",
                               "LayerNorm",
                               "Gemm",
                               "MultiHeadAttention",
                               "PriorBox",
                               "DetectionOutput",
                               "YoloDetectionOutput",
                               "Yolov3DetectionOutput"}) {
      INFO(t);
      CHECK(infer::io::is_supported_ncnn_type(t));
      CHECK(std::count(types.begin(), types.end(), t) == 1);
    }
    CHECK_FALSE(infer::io::is_supported_ncnn_type("Input"));
    CHECK_FALSE(infer::io::is_supported_ncnn_type("relu"));
    CHECK_FALSE(infer::io::is_supported_ncnn_type(""));
  }
  SECTION("every supported type builds from a line with its required keys") {
    // The fewest keys each type needs (ncnn's defaults are not enough for these).
    const std::map<std::string_view, std::string> required = {
        {"Convolution", "0=1 1=1 6=1"},
        {"ConvolutionDepthWise", "0=1 1=1 6=1"},
        {"Deconvolution", "0=1 1=1 6=1"},
        {"DeconvolutionDepthWise", "0=1 1=1 6=1"},
        {"InnerProduct", "0=1 2=1"},
        {"Pooling", "1=1"},
        {"BatchNorm", "0=1"},
        {"Scale", "0=1"},
        {"Bias", "0=1"},
        {"Slice", "-23300=1,-233"},
        {"Reshape", "0=-1"},
        {"Interp", "0=2"},
        {"LayerNorm", "0=1"},
        {"DetectionOutput", "0=2"},
        {"MultiHeadAttention", "0=4 2=16"},
        {"PriorBox", "-23300=1,30.0 9=-233 10=-233"},
        {"YoloDetectionOutput", "-23304=10,1,1,1,1,1,1,1,1,1,1"},
        {"Gemm", ""},
    };
    for (std::string_view t : infer::io::supported_ncnn_types()) {
      const auto it = required.find(t);
      const int inputs = t == "BinaryOp" || t == "Eltwise" || t == "Concat" ? 2 : 1;
      const LayerSpec s = spec(std::string(t), "x", it == required.end() ? "" : it->second, inputs);
      std::string_view got;
      const Status st = infer::io::visit_ncnn_layer(kFile, s, [&](auto& layer) -> Status {
        got = infer::io::ncnn_type_name<std::decay_t<decltype(layer)>>;
        return {};
      });
      INFO(t << ": " << (st.ok() ? "" : st.message()));
      CHECK(st.ok());
      CHECK(got == t);
    }
  }
}

TEST_CASE("ncnn_layers: input_shape", "[ncnn_layers]") {
  using infer::io::input_shape;
  const auto shape_of = [](const std::string& params) {
    const auto r = input_shape(kFile, spec("Input", "data", params, 0, 1));
    INFO(params);
    if (!r.ok()) FAIL(r.message());
    return r.value();
  };
  const auto error = [](const std::string& params) {
    const auto r = input_shape(kFile, spec("Input", "data", params, 0, 1, 2));
    INFO(params);
    REQUIRE_FALSE(r.ok());
    return r.message();
  };
  CHECK(shape_of("0=224 1=224 2=3") == Shape::of(224, 224, 3));
  CHECK(shape_of("-23330=4,3,224,224,3 0=227 1=227 2=3") == Shape::of(227, 227, 3));
  CHECK(shape_of("0=10") == Shape::of(10));
  CHECK(shape_of("0=4 1=5") == Shape::of(4, 5));
  CHECK(shape_of("0=2 1=3 11=4 2=5") == Shape::of(2, 3, 4, 5));
  CHECK(shape_of("").dims == 0);  // given at run time
  CHECK(shape_of("-23330=4,3,16,8,3") == Shape::of(16, 8, 3));
  CHECK(shape_of("-23330=2,1,1000") == Shape::of(1000));

  CHECK_THAT(error("0=-1"), Contains("net.param: line 2: layer Input 'data': key 0: w must be >= "
                                     "0, got -1"));
  CHECK_THAT(error("2=3"), Contains("key 0: w must be >= 1 when h, d or c is given"));
  CHECK_THAT(error("0=4 2=3"), Contains("key 1: h must be >= 1 when d or c is given"));
  CHECK_THAT(error("0=4 1=4 11=2"), Contains("key 11: d needs c"));
  CHECK_THAT(error("0=4 3=1"), Contains("key 3: not a parameter of Input"));
  CHECK_THAT(error("0=4.5"), Contains("key 0: expected an integer"));
  CHECK_THAT(error("-23330=4,5,1,1,1"), Contains("key 30: the shape hint"));
  const auto not_input = input_shape(kFile, spec("ReLU", "r", ""));
  REQUIRE_FALSE(not_input.ok());
  CHECK_THAT(not_input.message(), Contains("not an Input layer"));
}

#ifdef INFER_TEST_MODELS
TEST_CASE("ncnn_layers: every layer line of models/*.param", "[ncnn_layers]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(INFER_MODELS_DIR))
    if (e.path().extension() == ".param") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 10);
  for (const fs::path& path : files) {
    INFO(path.string());
    const auto file = infer::io::read_param(path);
    if (!file.ok()) FAIL(file.message());
    int inputs = 0, built = 0;
    for (const LayerSpec& s : file->layers) {
      if (s.type == "Input") {
        const auto shape = infer::io::input_shape(file.value(), s);
        INFO(s.name);
        if (!shape.ok()) FAIL(shape.message());
        // 3-D, or none given (FastestDet, vision_transformer: the caller says it)
        CHECK((shape->dims == 3 || shape->dims == 0));
        ++inputs;
        continue;
      }
      const Status st = infer::io::visit_ncnn_layer(file.value(), s, [&](auto&) -> Status {
        ++built;
        return {};
      });
      if (!st.ok()) FAIL_CHECK(st.message());
    }
    CHECK(inputs == 1);
    CHECK(built + inputs == int(file->layers.size()));
  }
}
#endif
