// The composer on the convolution family: activation fusion (by the pass and as stated with
// ncnn's 9=activation_type), BatchNorm/Scale folding, and agreement of the fused, packed,
// in-place graph with the plain one (no fusion, pack 1, no in-place) and with f16/bf16 storage.
#include <catch2/catch.hpp>
#include <cmath>
#include <infer/convert.hpp>
#include <infer/graph.hpp>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/binary_op.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/convolution.hpp>
#include <infer/layers/convolution_depthwise.hpp>
#include <infer/layers/deconvolution.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/innerproduct.hpp>
#include <infer/layers/mish.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/scale.hpp>
#include <infer/layers/split.hpp>
#include <infer/layers/swish.hpp>
#include <random>

#include "support/fused_instances.hpp"

using namespace infer;
using namespace infer::layers;
using graph::from;
using graph::input;
using graph::node;
using graph::output;

namespace {

constexpr Convolution conv(int in, int out, int k, int stride, int pad, int act = 0) {
  Convolution c;
  c.num_output = out;
  c.kernel_w = k;
  c.stride_w = stride;
  c.pad_left = pad;
  c.bias_term = 1;
  c.weight_data_size = out * in * k * k;
  c.activation.type = act;
  c.activation.params = {-0.5f, 0.5f};
  return c;
}
constexpr ConvolutionDepthWise depthwise(int ch) {
  ConvolutionDepthWise c;
  c.num_output = ch;
  c.kernel_w = 3;
  c.pad_left = 1;
  c.group = ch;
  c.bias_term = 1;
  c.weight_data_size = ch * 9;
  return c;
}
constexpr Deconvolution deconv(int in, int out) {
  Deconvolution d;
  d.num_output = out;
  d.kernel_w = d.kernel_h = 4;
  d.stride_w = d.stride_h = 2;
  d.pad_left = d.pad_top = d.pad_right = d.pad_bottom = 1;
  d.bias_term = true;
  d.weight_data_size = in * out * 16;
  return d;
}
constexpr InnerProduct fc(int in, int out) {
  InnerProduct f;
  f.num_output = out;
  f.bias_term = true;
  f.weight_data_size = in * out;
  return f;
}
constexpr Pooling global_avg() {
  Pooling p;
  p.pooling_type = 1;
  p.global_pooling = 1;
  return p;
}
constexpr BatchNorm bn(int ch) {
  BatchNorm b;
  b.channels = ch;
  b.eps = 1e-3f;
  return b;
}
constexpr Scale scale(int n) {
  Scale s;
  s.scale_data_size = n;
  s.bias_term = true;
  return s;
}

static constexpr auto net = graph::make_graph(
    input("in", Shape::of(12, 10, 6)),
    node(conv(6, 16, 3, 1, 1), "in", "conv_a"),  // + BatchNorm folded, + ReLU fused
    node(bn(16), "conv_a", "bn_a"), node(ReLU{}, "bn_a", "a"),
    node(conv(16, 16, 1, 1, 0, 3), "a", "b"),  // Clip stated directly (9=3)
    node(depthwise(16), "b", "dw"),            // + Swish fused (not one of ncnn's)
    node(Swish{}, "dw", "c"),
    node(conv(16, 8, 3, 2, 1), "c", "d"),  // two readers: Mish is not fused
    node(Mish{}, "d", "e"), node(Eltwise{1}, from("d", "e"), "f"),
    node(deconv(8, 8), "f", "deconv"),  // + HardSwish fused
    node(HardSwish{}, "deconv", "g"), node(global_avg(), "g", "pooled"),
    node(fc(8, 5), "pooled", "fc"),  // + Scale folded, + leaky ReLU fused
    node(scale(5), "fc", "scaled"), node(ReLU{0.2f}, "scaled", "out"), output("out"));

using Fused = graph::StaticGraph<net>;
using Plain = graph::StaticGraph<net, graph::Target{ElemType::f32, 1, false, false}>;

/// Random weights, the same for every graph given the same seed.
template <class G>
void set_weights(G& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  auto values = [&](std::size_t n, float lo = -0.5f, float hi = 0.5f) {
    std::vector<float> v(n);
    for (float& x : v) x = lo + (hi - lo) * (u(rng) + 0.5f);
    return v;
  };
  g.for_each_layer([&](auto& l) {
    using L = std::remove_cvref_t<decltype(l)>;
    if constexpr (requires {
                    l.weight_data;
                    l.weight_data_size;
                    l.num_output;
                  }) {
      l.weight_data = values(std::size_t(l.weight_data_size));
      if (l.bias_term) l.bias_data = values(std::size_t(l.num_output));
    } else if constexpr (std::is_same_v<L, BatchNorm>) {
      const std::size_t n = std::size_t(l.channels);
      REQUIRE(l.load(values(n, 0.5f, 1.5f), values(n), values(n, 0.2f, 1.f), values(n)).ok());
    } else if constexpr (std::is_same_v<L, Scale>) {
      l.scale_data = values(std::size_t(l.scale_data_size), 0.5f, 2.f);
      l.bias_data = values(std::size_t(l.scale_data_size));
    }
  });
  REQUIRE(g.finalize().ok());
}

Mat random_input(unsigned seed) {
  Mat m(Shape::of(12, 10, 6));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int q = 0; q < 6; ++q)
    for (int i = 0; i < 120; ++i) static_cast<float*>(m.channel_data(q))[i] = u(rng);
  return m;
}

const graph::StepDesc& step_of(const graph::Plan& p, std::string_view name) {
  for (const auto& s : p.steps)
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == name)
      return s;
  FAIL("no step for node " << name);
  return p.steps.front();
}

}  // namespace

TEST_CASE("activations fuse into their producers, affine layers fold into their weights",
          "[graph][fusion]") {
  const graph::Plan p = Fused::plan();
  REQUIRE(p.error.ok());
  INFO(graph::format_plan(p));
  const auto& a = step_of(p, "conv_a");
  CHECK(a.act.type == 1);
  REQUIRE(a.folded.size() == 1);
  CHECK(p.desc.nodes[std::size_t(a.folded[0])].type == "BatchNorm");
  CHECK(step_of(p, "b").act.type == 3);  // stated directly, kept
  CHECK(step_of(p, "dw").act.type == 7);
  CHECK(step_of(p, "d").act.type == 0);  // its output has two readers
  CHECK(step_of(p, "e").act.type == 0);  // Mish runs on its own
  CHECK(step_of(p, "deconv").act.type == 6);
  const auto& f = step_of(p, "fc");
  CHECK(f.act.type == 2);
  CHECK(f.act.params[0] == 0.2f);
  REQUIRE(f.folded.size() == 1);
  CHECK(p.desc.nodes[std::size_t(f.folded[0])].type == "Scale");
  for (std::string_view gone : {"bn_a", "a", "c", "g", "scaled", "out"}) {
    bool found = false;
    for (const auto& s : p.steps)
      found = found ||
              (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == gone);
    INFO("node " << gone);
    CHECK(!found);
  }
  // The plain plan runs every node and converts nothing.
  const graph::Plan plain = Plain::plan();
  CHECK(plain.steps.size() == 15);
  for (const auto& s : plain.steps) CHECK((s.kind == graph::StepDesc::layer && !s.inplace));
}

TEST_CASE("fused, packed, in-place graphs agree with the plain one", "[graph][fusion]") {
  Option opt;
  opt.num_threads = 2;
  Plain plain(opt);
  set_weights(plain, 11);
  Fused fused(opt);
  set_weights(fused, 11);
  graph::StaticGraph<net, graph::Target{ElemType::f32, 4}> pack4(opt);
  set_weights(pack4, 11);
  graph::StaticGraph<net, graph::Target{ElemType::f16, 16}> half(opt);
  set_weights(half, 11);
  graph::StaticGraph<net, graph::Target{ElemType::bf16, 8}> brain(opt);
  set_weights(brain, 11);
  for (unsigned seed : {1u, 2u}) {
    const Mat in = random_input(seed);
    for (const Status& st :
         {plain.forward(in), fused.forward(in), pack4.forward(in), half.forward(in),
          brain.forward(in)}) {
      INFO((st.ok() ? std::string() : st.message()));
      REQUIRE(st.ok());
    }
    const float* want = plain.output().data_as<const float>();
    auto compare = [&](const Mat& got_mat, float abs, float rel, const char* what) {
      REQUIRE(got_mat.shape() == Shape::of(5));
      const float* got = got_mat.data_as<const float>();
      for (int k = 0; k < 5; ++k) {
        INFO(what << " output " << k << " got " << got[k] << " want " << want[k]);
        CHECK(std::fabs(got[k] - want[k]) <= abs + rel * std::fabs(want[k]));
      }
    };
    compare(fused.output(), 1e-5f, 1e-4f, "fused f32");
    compare(pack4.output(), 1e-5f, 1e-4f, "fused f32 pack 4");
    compare(half.output(), 1e-2f, 2e-2f, "fused f16");
    compare(brain.output(), 5e-2f, 1e-1f, "fused bf16");
  }
}

TEST_CASE("weights load through the graph in ncnn order and fold at load", "[graph][fusion]") {
  // The arrays reader checks every count, so a wrong order or size is an error.
  std::vector<std::vector<float>> buffers;
  auto add = [&](std::size_t n, float v) { buffers.push_back(std::vector<float>(n, v)); };
  add(16 * 6 * 9, 0.01f), add(16, 0.f);                    // conv_a
  add(16, 1.f), add(16, 0.f), add(16, 1.f), add(16, 0.f);  // bn_a
  add(16 * 16, 0.01f), add(16, 0.f);                       // b
  add(16 * 9, 0.1f), add(16, 0.f);                         // dw
  add(8 * 16 * 9, 0.01f), add(8, 0.f);                     // d
  add(8 * 8 * 16, 0.01f), add(8, 0.f);                     // deconv
  add(5 * 8, 0.1f), add(5, 0.f);                           // fc
  add(5, 2.f), add(5, 1.f);                                // scaled
  io::ModelBinFromArrays mb(buffers);
  Fused g;
  const Status st = g.load(mb);
  INFO((st.ok() ? std::string("ok") : st.message()));
  REQUIRE(st.ok());
  CHECK(mb.consumed() == buffers.size());
  REQUIRE(g.forward(random_input(3)).ok());

  io::ModelBinFromArrays short_mb({buffers[0]});
  Fused h;
  const Status bad = h.load(short_mb);
  REQUIRE(!bad.ok());
  CHECK_THAT(bad.message(), Catch::Contains("node 0 (Convolution 'conv_a')"));
}

namespace {

// ResNet's shortcuts on the CPU: a sum (Eltwise or BinaryOp add) of a convolution's output and
// another blob of its shape fuses into that convolution, which adds the other blob in its kernel's
// epilogue, then applies the sum's activation. Winograd (3x3 16 -> 16 on 11x9, F(2x2)) with a
// folded BatchNorm and the ReLU after the sum; a 1x1 projection pair (either may take the sum; no
// activation after it); a 7-channel pair at pack 1 (3x3 stride 2 im2col and a 1x1 stride 2) whose
// sum goes on to Swish; a sum whose convolution has a second reader stays a step, as does a
// weighted one.
constexpr BinaryOp add() {
  BinaryOp b;
  b.op_type = 0;
  return b;
}
constexpr Eltwise weighted_sum() {
  Eltwise e;
  e.op_type = 1;
  e.coeffs = {1.f, 0.5f};
  return e;
}

static constexpr auto resnet = graph::make_graph(
    input("in", Shape::of(11, 9, 16)),                                    //
    node(conv(16, 16, 3, 1, 1), "in", "c1"), node(bn(16), "c1", "b1"),    //
    node(ReLU{}, "b1", "r1"),                                             //
    node(conv(16, 16, 3, 1, 1), "r1", "c2"), node(bn(16), "c2", "b2"),    // takes s1 and r2
    node(Eltwise{1}, from("b2", "in"), "s1"), node(ReLU{}, "s1", "r2"),   //
    node(conv(16, 24, 1, 1, 0), "r2", "c3"),                              // takes s2
    node(conv(16, 24, 1, 1, 0), "r2", "c4"),                              //
    node(add(), from("c4", "c3"), "s2"),                                  //
    node(conv(24, 7, 3, 2, 1), "s2", "c5"),                               // takes s3, Swish
    node(conv(24, 7, 1, 2, 0), "s2", "c6"),                               //
    node(Eltwise{1}, from("c5", "c6"), "s3"), node(Swish{}, "s3", "r3"),  //
    node(conv(7, 7, 1, 1, 0), "r3", "c7"), node(ReLU{}, "c7", "r7"),      // two readers
    node(Eltwise{1}, from("c7", "r3"), "s4"),                             //
    node(conv(7, 7, 1, 1, 0), "s4", "c8"),                                //
    node(weighted_sum(), from("c8", "r7"), "out"), output("out"));

using ResFused = graph::StaticGraph<resnet>;
using ResPlain = graph::StaticGraph<resnet, graph::Target{ElemType::f32, 1, false, false}>;

Mat resnet_input(unsigned seed) {
  Mat m(Shape::of(11, 9, 16));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int q = 0; q < 16; ++q)
    for (int i = 0; i < 99; ++i) static_cast<float*>(m.channel_data(q))[i] = u(rng);
  return m;
}

/// How many values of `got` differ from `want` (f32, pack 1, one 3-D shape) by more than 1e-6 of
/// want's largest magnitude: float rounding apart, none. A want of zeros only counts as all off.
std::size_t off_rounding(const Mat& got, const Mat& want) {
  const Shape s = want.shape();
  if (got.shape() != s) return s.total();
  const std::size_t plane = std::size_t(s.w) * std::size_t(s.h);
  float peak = 0.f;
  for (int q = 0; q < s.c; ++q)
    for (std::size_t i = 0; i < plane; ++i)
      peak = std::max(peak, std::fabs(static_cast<const float*>(want.channel_data(q))[i]));
  if (!(peak > 0.f)) return s.total();
  std::size_t off = 0;
  for (int q = 0; q < s.c; ++q)
    for (std::size_t i = 0; i < plane; ++i)
      off += !(std::fabs(static_cast<const float*>(got.channel_data(q))[i] -
                         static_cast<const float*>(want.channel_data(q))[i]) <= 1e-6f * peak);
  return off;
}

bool has_step(const graph::Plan& p, std::string_view name) {
  for (const auto& s : p.steps)
    if (s.kind == graph::StepDesc::layer && p.desc.nodes[std::size_t(s.node)].name == name)
      return true;
  return false;
}

}  // namespace

TEST_CASE("residual sums fuse into the convolution before them on the CPU",
          "[graph][fusion][residual]") {
  const graph::Plan p = ResFused::plan();
  REQUIRE(p.error.ok());
  const std::string text = graph::format_plan(p);
  INFO(text);
  for (std::string_view gone : {"s1", "r2", "s2", "s3", "r3"}) {
    INFO("node " << gone);
    CHECK_FALSE(has_step(p, gone));
  }
  for (std::string_view kept : {"c4", "c6", "s4", "out"}) {
    INFO("node " << kept);
    CHECK(has_step(p, kept));
  }
  const auto& c2 = step_of(p, "c2");
  CHECK(c2.in.size() == 2);
  CHECK(c2.act.type == 1);
  CHECK(c2.folded.size() == 1);
  CHECK(step_of(p, "c3").in.size() == 2);
  CHECK(step_of(p, "c3").act.type == 0);
  CHECK(step_of(p, "c5").act.type == 7);
  CHECK(step_of(p, "c7").in.size() == 1);
  CHECK(step_of(p, "c8").in.size() == 1);
  CHECK_THAT(text, Catch::Contains("+sum Eltwise 's1'") && Catch::Contains("+sum BinaryOp 's2'"));
  // The residual is read at the output's pack.
  for (std::string_view name : {"c2", "c3", "c5"}) {
    const auto& s = step_of(p, name);
    CHECK(p.buffers[std::size_t(s.in[1])].pack == p.buffers[std::size_t(s.out[0])].pack);
  }
  CHECK(ResPlain::plan().steps.size() == 19);
}

TEST_CASE("fused residual sums agree with the plain graph at every type and pack",
          "[graph][fusion][residual]") {
  Option opt;
  opt.num_threads = 2;
  ResPlain plain(opt);
  set_weights(plain, 21);
  ResFused fused(opt);
  set_weights(fused, 21);
  graph::StaticGraph<resnet, graph::Target{ElemType::f32, 4}> pack4(opt);
  set_weights(pack4, 21);
  graph::StaticGraph<resnet, graph::Target{ElemType::f16, 8}> half(opt);
  set_weights(half, 21);
  graph::StaticGraph<resnet, graph::Target{ElemType::bf16, 16}> brain(opt);
  set_weights(brain, 21);
  for (unsigned seed : {1u, 2u}) {
    const Mat in = resnet_input(seed);
    for (const Status& st :
         {plain.forward(in), fused.forward(in), pack4.forward(in), half.forward(in),
          brain.forward(in)}) {
      INFO((st.ok() ? std::string() : st.message()));
      REQUIRE(st.ok());
    }
    const Mat& want_mat = plain.output();
    REQUIRE(want_mat.shape() == Shape::of(6, 5, 7));
    const std::size_t n = 6 * 5;
    float peak = 0.f;
    for (int q = 0; q < 7; ++q)
      for (std::size_t i = 0; i < n; ++i)
        peak = std::max(peak, std::fabs(static_cast<const float*>(want_mat.channel_data(q))[i]));
    auto compare = [&](const Mat& got_mat, float rel, const char* what) {
      REQUIRE(got_mat.shape() == want_mat.shape());
      REQUIRE(got_mat.elempack() == 1);
      std::size_t bad = 0;
      for (int q = 0; q < 7; ++q)
        for (std::size_t i = 0; i < n; ++i) {
          const float g = static_cast<const float*>(got_mat.channel_data(q))[i];
          const float w = static_cast<const float*>(want_mat.channel_data(q))[i];
          bad += !(std::fabs(g - w) <= rel * peak);
        }
      INFO(what << ": " << bad << " values off by more than " << rel << " of " << peak);
      CHECK(bad == 0);
    };
    compare(fused.output(), 1e-4f, "fused f32");
    compare(pack4.output(), 1e-4f, "fused f32 pack 4");
    compare(half.output(), 2e-2f, "fused f16 pack 8");
    compare(brain.output(), 1e-1f, "fused bf16 pack 16");
  }
}

namespace {

// The same fusion for quantized convolutions whose output is float: ResNet's basic block as
// ncnn's int8 ResNets hold it. q1 requantizes (term 102) into q2, whose float output (term 2)
// takes the sum with the block's input and the ReLU after it; of a 1x1 pair summed by BinaryOp,
// q3 (float output) takes the sum, its other input q4's requantized output dequantized (q4 cannot
// take it).
constexpr Convolution qconv(int in, int out, int k, int pad, int term) {
  Convolution c = conv(in, out, k, 1, pad);
  c.int8_scale_term = term;
  c.int8.bottom_scale = 40.f;
  if (term > 100) c.int8.top_scale = 30.f;
  return c;
}

static constexpr auto qres = graph::make_graph(
    input("in", Shape::of(11, 9, 16)),                                   //
    node(qconv(16, 16, 3, 1, 102), "in", "q1"),                          //
    node(qconv(16, 16, 3, 1, 2), "q1", "q2"),                            // takes s1 and r1
    node(Eltwise{1}, from("q2", "in"), "s1"), node(ReLU{}, "s1", "r1"),  //
    node(qconv(16, 24, 1, 0, 2), "r1", "q3"),                            // takes out
    node(qconv(16, 24, 1, 0, 102), "r1", "q4"),                          //
    node(add(), from("q4", "q3"), "out"), output("out"));

using QFused = graph::StaticGraph<qres>;
using QPlain = graph::StaticGraph<qres, graph::Target{ElemType::f32, 1, false, false}>;

/// Random weights and bias, weight scales per output channel as ncnn's tools write them.
template <class G>
void set_int8_weights(G& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  g.for_each_layer([&](auto& l) {
    using L = std::remove_cvref_t<decltype(l)>;
    if constexpr (std::is_same_v<L, Convolution>) {
      l.weight_data.resize(std::size_t(l.weight_data_size));
      for (float& x : l.weight_data) x = u(rng);
      l.bias_data.resize(std::size_t(l.num_output));
      for (float& x : l.bias_data) x = u(rng);
      const std::size_t per = l.weight_data.size() / std::size_t(l.num_output);
      l.int8.weight_scales.assign(std::size_t(l.num_output), 1.f);
      for (std::size_t o = 0; o < l.int8.weight_scales.size(); ++o) {
        float m = 0.f;
        for (std::size_t i = 0; i < per; ++i) m = std::max(m, std::fabs(l.weight_data[o * per + i]));
        l.int8.weight_scales[o] = 127.f / m;
      }
    }
  });
  REQUIRE(g.finalize().ok());
}

/// Plain (unfused) and Fused, given the same int8 weights (set_int8_weights(`weights`)), on the
/// inputs resnet_input(1) and (2) at 1 and 2 threads: each output has `shape`, and the two agree
/// to float rounding (off_rounding).
template <class Plain, class Fused>
void agree_to_rounding(unsigned weights, Shape shape) {
  for (int threads : {1, 2}) {
    Option opt;
    opt.num_threads = threads;
    Plain plain(opt);
    set_int8_weights(plain, weights);
    Fused fused(opt);
    set_int8_weights(fused, weights);
    for (unsigned seed : {1u, 2u}) {
      const Mat in = resnet_input(seed);
      REQUIRE(plain.forward(in).ok());
      const Status st = fused.forward(in);
      INFO((st.ok() ? std::string() : st.message()));
      REQUIRE(st.ok());
      Mat got, want;
      REQUIRE(convert(fused.output(), got, ElemType::f32, 1, opt).ok());
      REQUIRE(convert(plain.output(), want, ElemType::f32, 1, opt).ok());
      REQUIRE(got.shape() == shape);
      CHECK(off_rounding(got, want) == 0);
    }
  }
}

}  // namespace

TEST_CASE("residual sums fuse into quantized convolutions with a float output (static graph)",
          "[graph][fusion][residual][int8]") {
  const graph::Plan p = QFused::plan();
  REQUIRE(p.error.ok());
  const std::string text = graph::format_plan(p);
  INFO(text);
  for (std::string_view gone : {"s1", "r1", "out"}) {
    INFO("node " << gone);
    CHECK_FALSE(has_step(p, gone));
  }
  for (std::string_view name : {"q2", "q3"}) {
    INFO("node " << name);
    const auto& s = step_of(p, name);
    REQUIRE(s.in.size() == 2);
    CHECK(s.type == ElemType::i8);
    // The residual is read as f32 at the output's pack.
    CHECK(p.buffers[std::size_t(s.in[1])].type == ElemType::f32);
    CHECK(p.buffers[std::size_t(s.in[1])].pack == p.buffers[std::size_t(s.out[0])].pack);
    CHECK(p.buffers[std::size_t(s.out[0])].type == ElemType::f32);
  }
  CHECK(step_of(p, "q2").act.type == 1);
  CHECK(step_of(p, "q4").in.size() == 1);
  CHECK_THAT(text, Catch::Contains("+sum Eltwise 's1'") && Catch::Contains("+sum BinaryOp 'out'"));
  // The values: the plan without fusion at pack 1 runs the same integer sums; the dequantized
  // values agree to float rounding.
  agree_to_rounding<QPlain, QFused>(5, Shape::of(11, 9, 24));
}

namespace {

// A fire module and a VGG stage's end as ncnn's int8 SqueezeNet and VGG-16 hold them: e1 and e3
// (float outputs, term 2) reach v, a quantized reader, only through a Concat and a max Pooling,
// so the composer has them write int8 at v's input scale and nothing is quantized before v; v
// (float output) feeds an average Pooling, so it stays f32, and `out` quantizes what that gives.
constexpr Pooling pool(int type, int k, int s) {
  Pooling p;
  p.pooling_type = type;
  p.kernel_w = k;
  p.stride_w = s;
  return p;
}

static constexpr auto qfire = graph::make_graph(
    input("in", Shape::of(11, 9, 16)),                                                      //
    node(qconv(16, 8, 1, 0, 102), "in", "sq"), node(Split{}, "sq", graph::to("s1", "s2")),  //
    node(qconv(8, 16, 1, 0, 2), "s1", "e1"), node(qconv(8, 16, 3, 1, 2), "s2", "e3"),        //
    node(Concat{0}, from("e1", "e3"), "cat"), node(pool(0, 3, 2), "cat", "p"),               //
    node(qconv(32, 24, 3, 1, 2), "p", "v"), node(pool(1, 2, 2), "v", "a"),                   //
    node(qconv(24, 8, 1, 0, 2), "a", "out"), output("out"));

using FireFused = graph::StaticGraph<qfire>;
using FirePlain = graph::StaticGraph<qfire, graph::Target{ElemType::f32, 1, false, false}>;

std::size_t quantize_steps(const graph::Plan& p) {
  std::size_t n = 0;
  for (const auto& s : p.steps)
    n += s.kind == graph::StepDesc::cast && p.buffers[std::size_t(s.out[0])].type == ElemType::i8;
  return n;
}

}  // namespace

TEST_CASE("float outputs of quantized layers are requantized for their int8 readers (static)",
          "[graph][fusion][int8][requantize]") {
  const graph::Plan p = FireFused::plan();
  REQUIRE(p.error.ok());
  const std::string text = graph::format_plan(p);
  INFO(text);
  const auto node_of = [&](const graph::Plan& q, std::string_view name) -> const graph::NodeDesc& {
    return q.desc.nodes[std::size_t(step_of(q, name).node)];
  };
  for (std::string_view name : {"e1", "e3"}) {
    INFO("node " << name);
    const auto& out = p.buffers[std::size_t(step_of(p, name).out[0])];
    CHECK(out.type == ElemType::i8);
    CHECK(out.scale == 40.f);
    CHECK(node_of(p, name).int8_requantized);
  }
  // Concat and the max Pooling run on the int8 values; v reads them as they are.
  CHECK(step_of(p, "cat").type == ElemType::i8);
  CHECK(step_of(p, "p").type == ElemType::i8);
  CHECK(step_of(p, "v").in[0] == step_of(p, "p").out[0]);
  CHECK(node_of(p, "v").int8_reads_requantized);
  // v's output goes on through an average Pooling: f32, quantized again for `out`.
  CHECK_FALSE(node_of(p, "v").int8_requantized);
  CHECK(p.buffers[std::size_t(step_of(p, "v").out[0])].type == ElemType::f32);
  CHECK(step_of(p, "a").type == ElemType::f32);
  // Quantize steps: the input (for sq), s1 and s2 (sq writes them at its top scale 30, e1 and e3
  // read them at 40) and a (for out); without the pass, one more before v.
  CHECK(quantize_steps(p) == 4);
  const graph::Plan unfused = FirePlain::plan();
  CHECK(quantize_steps(unfused) == 5);
  CHECK_FALSE(node_of(unfused, "e1").int8_requantized);
  // The values: the same int8 values reach every quantized layer, so the float output agrees
  // with the plan without fusion to float rounding.
  agree_to_rounding<FirePlain, FireFused>(9, Shape::of(3, 2, 8));
  // Weights that give v another input scale than the plan was made for: refused.
  FireFused moved;
  set_int8_weights(moved, 9);
  moved.for_each_layer([](auto& l) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(l)>, Convolution>)
      if (l.num_output == 24) l.int8.bottom_scale = 20.f;
  });
  const Status st = moved.finalize();
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.message(), Catch::Contains("'v'") && Catch::Contains("int8 input scale is 20"));
}
