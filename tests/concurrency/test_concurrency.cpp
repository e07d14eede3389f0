// One loaded network, many threads: 8 threads x INFER_STRESS_ROUNDS forwards over three models of
// models/ with mixed input shapes (so plans are made while other threads run), half through
// Net::run and half through a NetContext of their own; every output must be bit-identical to a
// single-threaded run. Also: the plan cache's bound, and one static graph's weights shared by 8
// threads with a context each. The sanitizer builds run 9 rounds (every thread still runs each
// model at each shape), the tsan preset under ThreadSanitizer.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <infer/graph.hpp>
#include <infer/layers.hpp>
#include <infer/net.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/model_compare.hpp"

#ifndef INFER_MODELS_DIR
#error "INFER_MODELS_DIR must name the models/ directory"
#endif
#ifndef INFER_STRESS_ROUNDS
#define INFER_STRESS_ROUNDS 200
#endif

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = INFER_STRESS_ROUNDS;

bool same_bits(const infer::Mat& a, const infer::Mat& b) {
  if (!(a.shape() == b.shape()) || a.type() != b.type() || a.elempack() != b.elempack())
    return false;
  for (int q = 0; q < a.c(); ++q) {
    const std::size_t n = std::size_t(a.w()) * a.h() * a.d() * a.elemsize();
    if (std::memcmp(a.channel_data(q), b.channel_data(q), n) != 0) return false;
  }
  return true;
}

struct Model {
  std::string name;
  std::unique_ptr<infer::Net> net;
  std::vector<infer::Mat> inputs;    // one per shape
  std::vector<infer::Mat> expected;  // single-threaded outputs, one per shape
};

std::vector<Model> load_models(const std::vector<infer::Shape>& shapes) {
  std::vector<Model> models;
  for (const char* name : {"squeezenet", "mobilenet_v2", "shufflenet_v2"}) {
    Model m;
    m.name = name;
    infer::Option opt;
    opt.num_threads = 1;  // the concurrency under test is the callers'
    m.net = std::make_unique<infer::Net>(infer::graph::Target{}, opt);
    const auto path = std::filesystem::path(INFER_MODELS_DIR) / (m.name + ".param");
    REQUIRE(m.net->load_param(path).ok());
    REQUIRE(m.net->load_random_weights(5).ok());
    for (const infer::Shape& s : shapes) {
      m.inputs.push_back(infer::test::make_model_input(s));
      auto out = m.net->run(m.inputs.back());
      INFO(m.name << " " << s.w << "x" << s.h << ": " << (out.ok() ? "ok" : out.message()));
      REQUIRE(out.ok());
      m.expected.push_back(std::move(*out));
    }
    models.push_back(std::move(m));
  }
  return models;
}

}  // namespace

TEST_CASE("Net: 8 threads share one network per model, outputs bit-identical", "[net][threads]") {
  const std::vector<infer::Shape> shapes = {infer::Shape::of(224, 224, 3),
                                            infer::Shape::of(160, 160, 3),
                                            infer::Shape::of(192, 128, 3)};
  std::vector<Model> models = load_models(shapes);
  // The expected outputs were planned by the loading thread; drop those plans so the threads
  // also plan while others run.
  for (Model& m : models) {
    m.net->set_plan_cache_limit(1);
    m.net->set_plan_cache_limit(16);
  }
  std::atomic<int> runs{0}, mismatches{0}, errors{0};
  std::vector<std::string> first_error(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Even threads run through Net::run (a pooled context), odd ones through their own.
      std::vector<infer::NetContext> own;
      if (t % 2) {
        for (Model& m : models) own.push_back(m.net->context());
      }
      for (int r = 0; r < kRounds; ++r) {
        const std::size_t mi = std::size_t(t + r) % models.size();
        const std::size_t si = std::size_t(t * 7 + r / 3) % shapes.size();
        Model& m = models[mi];
        infer::Mat got;
        if (t % 2) {
          infer::Status s = own[mi].run(m.inputs[si]);
          if (!s.ok()) {
            if (errors++ == 0) first_error[std::size_t(t)] = s.message();
            continue;
          }
          got = own[mi].output();
        } else {
          auto out = m.net->run(m.inputs[si]);
          if (!out.ok()) {
            if (errors++ == 0) first_error[std::size_t(t)] = out.message();
            continue;
          }
          got = std::move(*out);
        }
        ++runs;
        if (!same_bits(got, m.expected[si])) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  std::string err;
  for (const auto& e : first_error) err += e;
  INFO(err);
  CHECK(errors == 0);
  CHECK(runs == kThreads * kRounds);
  CHECK(mismatches == 0);
}

TEST_CASE("Net: the plan cache keeps at most its limit, least recently used out", "[net][threads]") {
  infer::Net net;
  CHECK(net.plan_cache_limit() == 16);
  net.set_plan_cache_limit(2);  // before loading: kept
  const auto path = std::filesystem::path(INFER_MODELS_DIR) / "squeezenet.param";
  REQUIRE(net.load_param(path).ok());
  REQUIRE(net.load_random_weights(2).ok());
  CHECK(net.plan_cache_limit() == 2);
  std::vector<infer::Mat> first;
  for (int s : {64, 72, 80, 88, 96}) {
    auto out = net.run(infer::test::make_model_input(infer::Shape::of(s, s, 3)));
    REQUIRE(out.ok());
    first.push_back(std::move(*out));
    CHECK(net.plan_cache_size() <= 2);
  }
  CHECK(net.plan_cache_size() == 2);
  // 64 was dropped long ago: planned again, same result.
  auto again = net.run(infer::test::make_model_input(infer::Shape::of(64, 64, 3)));
  REQUIRE(again.ok());
  CHECK(same_bits(*again, first[0]));
  net.set_plan_cache_limit(0);  // at least one is kept
  CHECK(net.plan_cache_limit() == 1);
  CHECK(net.plan_cache_size() == 1);
}

namespace {

constexpr infer::layers::Convolution conv3x3(int in, int out) {
  infer::layers::Convolution c;
  c.num_output = out;
  c.kernel_w = 3;
  c.pad_left = 1;
  c.bias_term = 1;
  c.weight_data_size = out * in * 9;
  return c;
}

inline constexpr auto kGraph = infer::graph::chain(
    infer::graph::input("x", infer::Shape::of(23, 19, 8)), conv3x3(8, 16), infer::layers::ReLU{},
    conv3x3(16, 24), infer::layers::Sigmoid{});

}  // namespace

TEST_CASE("StaticGraph: one graph's weights shared by 8 threads, a context each",
          "[graph][threads]") {
  using G = infer::graph::StaticGraph<kGraph>;
  G g;
  int seed = 1;
  g.for_each_layer([&](auto& layer) {
    if constexpr (requires { layer.weight_data; }) {
      layer.weight_data.resize(std::size_t(layer.weight_data_size));
      for (std::size_t i = 0; i < layer.weight_data.size(); ++i)
        layer.weight_data[i] = float(int((i * 2654435761u + unsigned(seed)) % 97) - 48) / 400.f;
      layer.bias_data.assign(std::size_t(layer.num_output), 0.01f * float(seed++));
    }
  });
  REQUIRE(g.finalize().ok());
  const infer::Mat in = infer::test::make_model_input(infer::Shape::of(23, 19, 8));
  REQUIRE(g.forward(in).ok());
  auto expected = g.output().clone();
  REQUIRE(expected.ok());
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto ctx = g.make_context(infer::Option{});
      for (int r = 0; r < kRounds; ++r) {
        if (!g.forward(ctx, in).ok()) {
          ++errors;
          continue;
        }
        if (!same_bits(ctx.output(), *expected)) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  CHECK(mismatches == 0);
}
