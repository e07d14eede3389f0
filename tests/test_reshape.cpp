// Reshape: to every dims, with explicit, kept (0) and inferred (-1) extents, across packs; the
// values keep their logical order bit for bit. Expected shapes are written out by hand.
#include <infer/layers/reshape.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Reshape;
using infer::test::LayerTester;
using infer::test::RefTensor;
using infer::test::shape_string;

namespace {

struct Case {
  Shape in;
  Reshape layer;
  Shape want;
};

std::string describe(const Reshape& r) {
  return fmt::format("Reshape w={} h={} d={} c={}", r.w, r.h, r.d, r.c);
}

}  // namespace

TEST_CASE("Reshape", "[layer][reshape]") {
  const std::vector<Case> cases = {
      // to 1-D
      {Shape::of(5, 7, 3), {.w = -1}, Shape::of(105)},
      {Shape::of(48), {.w = 0}, Shape::of(48)},
      {Shape::of(3, 4, 2, 12), {.w = 288}, Shape::of(288)},
      {Shape::of(9, 16), {.w = -1}, Shape::of(144)},
      // to 2-D
      {Shape::of(8, 8, 32), {.w = -1, .h = 4}, Shape::of(512, 4)},
      {Shape::of(3, 4, 2, 12), {.w = 12, .h = -1}, Shape::of(12, 24)},
      {Shape::of(9, 16), {.w = 0, .h = -1}, Shape::of(9, 16)},
      {Shape::of(4, 6, 16), {.w = -1, .h = 0}, Shape::of(64, 6)},
      {Shape::of(1001), {.w = 7, .h = -1}, Shape::of(7, 143)},
      {Shape::of(1, 9, 16), {.w = 16, .h = 9}, Shape::of(16, 9)},
      // to 3-D
      {Shape::of(105), {.w = 5, .h = 3, .c = 7}, Shape::of(5, 3, 7)},
      {Shape::of(17, 3, 24), {.w = 0, .h = 0, .c = -1}, Shape::of(17, 3, 24)},
      {Shape::of(17, 3, 24), {.w = 17, .h = -1, .c = 8}, Shape::of(17, 9, 8)},
      {Shape::of(9, 16), {.w = -1, .h = 1, .c = 16}, Shape::of(9, 1, 16)},
      {Shape::of(5, 1, 3, 16), {.w = -1, .h = 0, .c = 0}, Shape::of(15, 1, 16)},
      {Shape::of(13, 1, 20), {.w = 26, .h = -1, .c = 5}, Shape::of(26, 2, 5)},
      // to 4-D
      {Shape::of(4, 6, 16), {.w = 2, .h = 3, .d = -1, .c = 16}, Shape::of(2, 3, 4, 16)},
      {Shape::of(1001), {.w = 7, .h = 11, .d = 13, .c = 1}, Shape::of(7, 11, 13, 1)},
      {Shape::of(3, 4, 2, 12), {.w = 0, .h = 0, .d = -1, .c = 0}, Shape::of(3, 4, 2, 12)},
      {Shape::of(3, 4, 2, 12), {.w = 4, .h = 3, .d = 3, .c = -1}, Shape::of(4, 3, 3, 8)},
      {Shape::of(24, 20), {.w = 0, .h = 5, .d = 2, .c = 2}, Shape::of(24, 5, 2, 2)},
      {Shape::of(67, 45, 48), {.w = 45, .h = 67, .d = 3, .c = 16}, Shape::of(45, 67, 3, 16)},
  };
  for (const Case& k : cases) {
    const Shape want = k.want;
    INFO(describe(k.layer) << " " << shape_string(k.in) << " -> " << shape_string(want));
    auto shape = k.layer.output_shape(k.in);
    REQUIRE(shape.ok());
    REQUIRE(*shape == want);
    LayerTester(k.layer, describe(k.layer))
        .reference([want](const std::vector<RefTensor>& in) {
          RefTensor out(want);
          out.v = in[0].v;  // dense logical order on both sides
          return std::vector<RefTensor>{out};
        })
        .shapes({k.in})
        .input_range(-100.f, 100.f)
        .tolerance(ElemType::f32, 0, 0)
        .tolerance(ElemType::f16, 0, 0)
        .tolerance(ElemType::bf16, 0, 0)
        .tolerance(ElemType::i8, 0, 0)
        .run();
  }
}

TEST_CASE("Reshape rejects bad parameters", "[layer][reshape]") {
  const struct {
    Shape in;
    Reshape layer;
    const char* message;
  } bad[] = {
      {Shape::of(12), {}, "no output shape"},
      {Shape::of(12), {.w = 4, .c = 3}, "c=3 is set but h is dropped"},
      {Shape::of(12), {.w = 4, .h = 3, .d = 1}, "d=1 is set but c is dropped"},
      {Shape::of(12), {.w = -1, .h = -1}, "at most one extent can be inferred"},
      {Shape::of(7), {.w = -1, .h = 2}, "cannot infer w"},
      {Shape::of(5, 7, 3), {.w = 10}, "105 input values cannot take the shape"},
      {Shape::of(5, 7, 3), {.w = 0, .h = 0, .c = 2}, "cannot take the shape"},
      {Shape::of(12), {.w = -5}, "w=-5 is not an extent"},
  };
  for (const auto& b : bad) {
    INFO(describe(b.layer) << " " << shape_string(b.in));
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    Option opt;
    auto st = infer::run_layer<float>(b.layer, in, out, 1, Placement::out_of_place, opt);
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Reshape"));
  }
}
