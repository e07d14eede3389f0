// Eltwise against a scalar reference: product, sum (plain and weighted) and max over 2, 3, 4 and
// 17 inputs of awkward shapes, and the errors.
#include <algorithm>
#include <infer/layers/eltwise.hpp>
#include <vector>

#include "support/layer_tester.hpp"

namespace {

using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::Status;
using infer::layers::Eltwise;
using infer::test::LayerTester;
using infer::test::RefTensor;

const char* const kOpNames[] = {"prod", "sum", "max"};

// out = in0 (*) in1 (*) ..., with each input scaled by its coeff first for a weighted sum.
infer::test::Reference reference(int op, std::vector<float> coeffs) {
  return [op, coeffs](const std::vector<RefTensor>& in) {
    RefTensor out(in[0].shape);
    for (std::size_t i = 0; i < out.v.size(); ++i) {
      float acc = 0.f;
      for (std::size_t k = 0; k < in.size(); ++k) {
        const float x = in[k].v[i];
        if (k == 0) {
          acc = op == 1 && !coeffs.empty() ? x * coeffs[0] : x;
        } else if (op == 0) {
          acc *= x;
        } else if (op == 1) {
          acc += coeffs.empty() ? x : x * coeffs[k];
        } else {
          acc = std::max(acc, x);
        }
      }
      out.v[i] = acc;
    }
    return std::vector<RefTensor>{out};
  };
}

void run_case(int op, std::vector<float> coeffs, int inputs,
              const std::vector<Shape>& shapes = infer::test::awkward_shapes()) {
  LayerTester<Eltwise> t(Eltwise{op, coeffs}, fmt::format("Eltwise op_type={} ({}) coeffs={} "
                                                          "inputs={}",
                                                          op, kOpNames[op], coeffs.size(), inputs));
  t.reference(reference(op, coeffs));
  for (const Shape& s : shapes) t.inputs(std::vector<Shape>(std::size_t(inputs), s));
  t.run();
}

}  // namespace

TEST_CASE("Eltwise every op, 2 and 3 inputs", "[layer][eltwise]") {
  for (int op = 0; op < 3; ++op) {
    DYNAMIC_SECTION(kOpNames[op]) {
      run_case(op, {}, 2);
      run_case(op, {}, 3);
    }
  }
}

TEST_CASE("Eltwise weighted sum", "[layer][eltwise]") {
  run_case(1, {0.5f, -2.f}, 2);
  run_case(1, {1.f, -1.f, 2.5f}, 3);
  run_case(1, {0.25f, 3.f, -0.5f, 1.5f}, 4);
}

TEST_CASE("Eltwise coeffs are ignored by prod and max, as in ncnn", "[layer][eltwise]") {
  run_case(0, {2.f, 3.f}, 2, {Shape::of(5, 7, 3), Shape::of(9, 16)});
  run_case(2, {-1.f}, 3, {Shape::of(5, 7, 3), Shape::of(9, 16)});
}

TEST_CASE("Eltwise many inputs", "[layer][eltwise]") {
  const std::vector<Shape> shapes = {Shape::of(7), Shape::of(3, 20), Shape::of(8, 8, 32),
                                     Shape::of(2, 3, 5, 7)};
  std::vector<float> coeffs;
  for (int k = 0; k < 17; ++k) coeffs.push_back(0.1f * float(k) - 0.8f);
  run_case(1, coeffs, 17, shapes);
  run_case(2, {}, 17, shapes);
}

namespace {

Status run_f32(const Eltwise& layer, const std::vector<Shape>& shapes) {
  std::vector<Mat> mats;
  for (const Shape& s : shapes) {
    mats.emplace_back(s);
    mats.back().fill(1.f);
  }
  std::vector<Mat> tops(1);
  return infer::run_layer<float>(layer, std::span<const Mat>(mats), tops, 16,
                                 Placement::out_of_place, Option{});
}

}  // namespace

TEST_CASE("Eltwise errors", "[layer][eltwise]") {
  const Shape s = Shape::of(5, 7, 3);
  SECTION("shapes differ") {
    Status st = run_f32(Eltwise{1, {}}, {s, Shape::of(5, 7, 4)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(),
                 Catch::Contains("input 1") && Catch::Contains("shapes must be equal"));
    st = run_f32(Eltwise{0, {}}, {s, s, Shape::of(105)});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(),
                 Catch::Contains("input 2") && Catch::Contains("shapes must be equal"));
  }
  SECTION("coeff count") {
    Status st = run_f32(Eltwise{1, {1.f, 2.f, 3.f}}, {s, s});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("3 coeffs given for 2 inputs"));
    st = run_f32(Eltwise{1, {1.f}}, {s, s, s});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("1 coeffs given for 3 inputs"));
  }
  SECTION("input count") {
    Status st = run_f32(Eltwise{1, {}}, {s});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains("at least 2 inputs, got 1"));
  }
  SECTION("op_type") {
    for (int op : {-1, 3}) {
      Status st = run_f32(Eltwise{op, {}}, {s, s});
      REQUIRE(!st.ok());
      REQUIRE_THAT(st.message(), Catch::Contains("op_type must be 0 (prod), 1 (sum) or 2 (max)"));
    }
  }
  SECTION("inputs of another pack, called directly") {
    std::vector<Mat> mats = {Mat(Shape::of(2, 3, 8), infer::ElemType::f32, 4),
                             Mat(Shape::of(2, 3, 8), infer::ElemType::f32, 1)};
    std::vector<Mat> tops(1);
    Status st =
        Eltwise{}.forward<float, 4>(std::span<const Mat>(mats), std::span<Mat>(tops), Option{});
    REQUIRE(!st.ok());
    REQUIRE_THAT(st.message(),
                 Catch::Contains("input 1") && Catch::Contains("expected f32 pack 4"));
  }
}
