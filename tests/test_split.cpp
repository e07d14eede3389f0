// Split: every output equals the input, for 1 to 3 outputs over every type and pack, and the
// outputs share the input's storage rather than copying it.
#include <infer/layers/split.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Split;
using infer::test::awkward_shapes;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// Split only moves values: every type must come back bit for bit.
LayerTester<Split> exact_tester(std::string what) {
  return LayerTester(Split{}, std::move(what))
      .tolerance(ElemType::f32, 0, 0)
      .tolerance(ElemType::f16, 0, 0)
      .tolerance(ElemType::bf16, 0, 0)
      .tolerance(ElemType::i8, 0, 0);
}

}  // namespace

TEST_CASE("Split", "[layer][split]") {
  for (int n : {1, 2, 3}) {
    exact_tester(fmt::format("Split outputs={}", n))
        .reference([n](const std::vector<RefTensor>& in) {
          return std::vector<RefTensor>(static_cast<std::size_t>(n), in[0]);
        })
        .shapes(awkward_shapes())
        .outputs(n)
        .input_range(-100.f, 100.f)
        .run();
  }
}

TEST_CASE("Split outputs share the input", "[layer][split]") {
  Mat in(Shape::of(5, 7, 16), ElemType::f32, 1);
  in.fill(1.f);
  std::vector<Mat> tops(3);
  Option opt;
  Status st = infer::run_layer<float>(Split{}, std::span<const Mat>(&in, 1), tops, 1,
                                      Placement::out_of_place, opt);
  REQUIRE(st.ok());
  for (const Mat& t : tops) CHECK(t.data() == in.data());
}

TEST_CASE("Split errors", "[layer][split]") {
  Option opt;
  Mat a(Shape::of(4, 4), ElemType::f32, 1), b = a;
  std::vector<Mat> two{a, b}, tops(2);
  Status st = infer::run_layer<float>(Split{}, std::span<const Mat>(two), tops, 1,
                                      Placement::out_of_place, opt);
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("Split: expected 1 input, got 2"));

  std::vector<Mat> none;
  st = infer::run_layer<float>(Split{}, std::span<const Mat>(&a, 1), none, 1,
                               Placement::out_of_place, opt);
  REQUIRE(!st.ok());
  REQUIRE_THAT(st.message(), Catch::Contains("at least 1 output"));
}
