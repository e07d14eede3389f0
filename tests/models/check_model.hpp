// The check behind tests/models/test_models_*.cpp: the generated static graph of a model in
// models/ (infer-gen through infer_add_model) against the reference plan of infer::Net (pack 1,
// nothing fused, folded or in place) on the same random weights (.bin bytes) and input. The
// eleven models are split over three files, compiled in parallel.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <infer/net.hpp>
#include <memory>
#include <string>

#include "support/fused_instances.hpp"  // the kernels come from infer::runtime (f32)
#include "support/model_compare.hpp"

namespace infer::test {

/// Runs model `name` as generated static graph G and as the reference Net; returns the largest
/// difference of the outputs relative to the reference's largest value (the caller checks it).
template <class G>
double check_model(const std::string& name) {
  INFO(name);
  constexpr infer::graph::Target kReference{infer::ElemType::f32, 1, false, false};
  infer::Option opt;
  opt.num_threads = 2;
  infer::Net ref(kReference, opt);
  const std::filesystem::path param = std::filesystem::path(INFER_MODELS_DIR) / (name + ".param");
  REQUIRE(ref.load_param(param).ok());
  std::vector<std::byte> bin;
  REQUIRE(ref.load_random_weights(13, &bin).ok());

  auto graph = std::make_unique<G>(opt);
  infer::io::ModelBinFromMemory mb(bin, name + ".bin");
  const infer::Status loaded = graph->load(mb);
  INFO((loaded.ok() ? std::string() : loaded.message()));
  REQUIRE(loaded.ok());
  CHECK(mb.offset() == bin.size());

  const infer::Mat in = make_model_input(ref.input_shape());
  const infer::Status ran = graph->forward(in);
  INFO((ran.ok() ? std::string() : ran.message()));
  REQUIRE(ran.ok());
  auto expected = ref.run(in);
  REQUIRE(expected.ok());
  // The arena is what the plan says, planned at compile time.
  CHECK(G::arena_bytes >= G::lower_bound);
  return relative_error(graph->output(), *expected);
}

}  // namespace infer::test
