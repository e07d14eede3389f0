// The quantizer (infer/quantize.hpp, infer-quantize): float models with random weights quantized
// on calibration inputs from one seed, then float and int8 logits compared on held-out inputs from
// another (same distribution: uniform in [-1, 1]): cosine similarity at least 0.99, with both
// calibration methods; the written .param carries ncnn's int8_scale_term keys, the .bin the scales
// in ncnn's order (infer's loader reads it back), requantized outputs only where every reader is
// quantized; KL's threshold on a known histogram; the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <infer/graph/print.hpp>
#include <infer/quantize.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

std::string read_text(const std::string& model) {
  std::ifstream f(std::filesystem::path(INFER_MODELS_DIR) / (model + ".param"));
  REQUIRE(f.good());
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<infer::Mat> inputs(infer::Shape s, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<infer::Mat> out;
  for (int i = 0; i < n; ++i) {
    infer::Mat m(s, infer::ElemType::f32, 1);
    const std::size_t plane = std::size_t(s.w) * s.h;
    for (int c = 0; c < s.c; ++c) {
      float* p = static_cast<float*>(m.channel_data(c));
      for (std::size_t k = 0; k < plane; ++k) p[k] = d(rng);
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<float> values(const infer::Mat& m) {
  infer::Mat f;
  REQUIRE(infer::convert(m, f, infer::ElemType::f32, 1, infer::Option{}).ok());
  const infer::Shape s = f.shape();
  const int channels = s.dims >= 3 ? s.c : 1;
  const std::size_t plane = s.dims >= 3 ? std::size_t(s.w) * s.h * s.d : s.total();
  std::vector<float> v;
  for (int c = 0; c < channels; ++c) {
    const float* p = static_cast<const float*>(f.channel_data(c));
    v.insert(v.end(), p, p + plane);
  }
  return v;
}

}  // namespace

TEST_CASE("quantized models agree with their float originals on held-out inputs",
          "[int8][quantize]") {
  const struct {
    const char* model;
    const char* logits;
  } models[] = {{"squeezenet", "pool10"}, {"mobilenet", "fc7"}};
  const infer::Shape shape = infer::Shape::of(64, 64, 3);
  const std::vector<infer::Mat> calib = inputs(shape, 8, 1);
  const std::vector<infer::Mat> held_out = inputs(shape, 4, 2);
  for (const auto& m : models) {
    for (infer::CalibrationMethod method :
         {infer::CalibrationMethod::kl, infer::CalibrationMethod::max_abs}) {
      const bool kl = method == infer::CalibrationMethod::kl;
      CAPTURE(m.model, kl);
      const std::string text = read_text(m.model);
      infer::Net fnet;
      REQUIRE(fnet.load_param_text(text).ok());
      std::vector<std::byte> bin;
      REQUIRE(fnet.load_random_weights(5, &bin).ok());
      infer::io::ModelBinFromMemory mb(bin);
      infer::QuantizeOptions opt;
      opt.method = method;
      auto q = infer::quantize_model(text, mb, calib, opt, 2);
      INFO((q.ok() ? std::string() : q.message()));
      REQUIRE(q.ok());
      CHECK(q->layers.size() >= 20);
      // Requantized where every reader is quantized (ncnn's squeezenet: each fire module's squeeze
      // convolution, through the Split, into its two expand convolutions).
      CHECK_THAT(q->param, Catch::Contains(" 8=102") && Catch::Contains(" 8=2"));
      if (std::string_view(m.model) == "mobilenet")
        CHECK_THAT(q->param, Catch::Contains(" 8=101"));  // depthwise: a scale per channel
      infer::Net qnet;
      REQUIRE(qnet.load_param_text(q->param).ok());
      const infer::Status loaded = qnet.load_model(q->bin);
      INFO((loaded.ok() ? std::string() : loaded.message()));
      REQUIRE(loaded.ok());
      double dot = 0, nf = 0, nq = 0;
      for (const infer::Mat& in : held_out) {
        auto f = fnet.run(in, m.logits);
        auto g = qnet.run(in, m.logits);
        REQUIRE(f.ok());
        INFO((g.ok() ? std::string() : g.message()));
        REQUIRE(g.ok());
        const std::vector<float> a = values(*f), b = values(*g);
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          dot += double(a[i]) * b[i];
          nf += double(a[i]) * a[i];
          nq += double(b[i]) * b[i];
        }
      }
      const double cosine = dot / std::sqrt(nf * nq);
      fmt::print("{} quantized ({}): cosine similarity {:.5f} on {} held-out inputs\n", m.model,
                 kl ? "kl" : "max-abs", cosine, held_out.size());
      CHECK(cosine >= 0.99);
      // The int8 network's plan runs its convolutions at i8.
      const infer::NamedMat named[] = {{qnet.input_names()[0], held_out[0]}};
      const std::string_view outs[] = {m.logits};
      auto plan = qnet.plan(named, outs);
      REQUIRE(plan.ok());
      CHECK_THAT(infer::graph::format_plan(**plan), Catch::Contains("quantize -> i8"));
    }
  }
}

TEST_CASE("quantize: KL picks the edge of a histogram's bulk; options and errors",
          "[int8][quantize]") {
  // 2048 bins over [0, 1): an exponential bulk (1e6 e^(-k / 60), down to single counts near bin
  // 830) and a thin tail of single values out to the end. KL cuts where the bulk thins out (bin
  // 639 by a separate computation), well below the largest value max-abs would take; a flat
  // histogram, which 128 levels represent exactly at any cut, keeps its whole range.
  std::vector<double> hist(2048, 0.0);
  for (int k = 0; k < 2048; ++k)
    hist[std::size_t(k)] = std::floor(1e6 * std::exp(-k / 60.0)) + (k % 97 == 0 ? 1.0 : 0.0);
  const double width = 1.0 / 2048;
  const double threshold = 127.0 / infer::detail::kl_scale(hist, width);
  CHECK(threshold == Approx((639 + 0.5) / 2048.0).epsilon(1e-4));
  std::vector<double> flat(2048, 5.0);
  CHECK(127.0 / infer::detail::kl_scale(flat, width) == Approx(1.0).epsilon(1e-3));

  CHECK(infer::detail::with_term("Convolution c 1 1 a b 0=4 1=3 8=2 6=36", 102) ==
        "Convolution c 1 1 a b 0=4 1=3 6=36 8=102");

  const std::string text = read_text("squeezenet");
  infer::Net fnet;
  REQUIRE(fnet.load_param_text(text).ok());
  std::vector<std::byte> bin;
  REQUIRE(fnet.load_random_weights(5, &bin).ok());
  {
    infer::io::ModelBinFromMemory mb(bin);
    auto none = infer::quantize_model(text, mb, {});
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.message(), Catch::Contains("no calibration inputs"));
  }
  {
    // Layers kept float, no requantization: 8=2 only, and not on the kept layers.
    infer::io::ModelBinFromMemory mb(bin);
    infer::QuantizeOptions opt;
    opt.keep_float = {"conv1", "conv10"};
    opt.requantize = false;
    opt.method = infer::CalibrationMethod::max_abs;
    const std::vector<infer::Mat> calib = inputs(infer::Shape::of(48, 48, 3), 2, 3);
    auto q = infer::quantize_model(text, mb, calib, opt);
    REQUIRE(q.ok());
    CHECK_THAT(q->param, !Catch::Contains("8=102"));
    for (const infer::QuantizedLayer& l : q->layers) {
      CHECK(l.name != "conv1");
      CHECK(l.name != "conv10");
      CHECK(l.term == 2);
    }
  }
}
