// ShuffleChannel: groups that divide the channel count, forward and reverse, 3-D and 4-D, bit for
// bit in every type and pack; groups that do not divide are errors.
#include <infer/layers/shuffle_channel.hpp>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::ShuffleChannel;
using infer::test::from_mat;
using infer::test::LayerTester;
using infer::test::RefTensor;
using infer::test::to_mat;

namespace {

// Forward: channels read as a group x (C / group) matrix, row-major, come out transposed. Reverse
// undoes that: the value the forward shuffle moves from channel i to j goes back from j to i.
RefTensor shuffle_ref(const RefTensor& in, int group, bool reverse) {
  const Shape s = in.shape;
  const int channels = s.dims >= 3 ? s.c : 1;
  const int per = channels / group;
  std::vector<int> to(
      static_cast<std::size_t>(channels));  // forward: input channel -> output channel
  for (int i = 0; i < group; ++i)
    for (int j = 0; j < per; ++j) to[std::size_t(i * per + j)] = j * group + i;
  RefTensor out(s);
  const std::size_t plane = std::size_t(s.w) * s.h * s.d;
  for (int q = 0; q < channels; ++q) {
    const int src = reverse ? to[std::size_t(q)] : q;
    const int dst = reverse ? q : to[std::size_t(q)];
    std::copy_n(in.v.begin() + std::ptrdiff_t(src * plane), plane,
                out.v.begin() + std::ptrdiff_t(dst * plane));
  }
  return out;
}

}  // namespace

TEST_CASE("ShuffleChannel", "[layer][shufflechannel]") {
  const struct {
    std::vector<Shape> shapes;
    std::vector<int> groups;
  } sets[] = {
      {{Shape::of(5, 7, 12), Shape::of(1, 1, 12), Shape::of(3, 4, 2, 12)}, {1, 2, 3, 4, 6, 12}},
      {{Shape::of(1, 1, 16), Shape::of(8, 3, 16), Shape::of(2, 1, 3, 16)}, {2, 4, 8}},
      {{Shape::of(13, 1, 20), Shape::of(2, 3, 5, 20)}, {4, 5, 10}},
      {{Shape::of(5, 7, 3), Shape::of(2, 3, 5, 7)}, {1, 3, 7}},
      {{Shape::of(67, 45, 48)}, {3, 16}},
      {{Shape::of(7), Shape::of(9, 16)}, {1}},  // one channel: only group 1, a copy
  };
  for (const auto& set : sets) {
    for (int group : set.groups) {
      for (int reverse : {0, 1}) {
        std::vector<Shape> shapes;  // those whose channels the group divides
        for (const Shape& s : set.shapes)
          if ((s.dims < 3 ? 1 : s.c) % group == 0) shapes.push_back(s);
        REQUIRE(!shapes.empty());
        LayerTester(ShuffleChannel{group, reverse},
                    fmt::format("ShuffleChannel group={} reverse={}", group, reverse))
            .reference([group, reverse](const std::vector<RefTensor>& in) {
              return std::vector<RefTensor>{shuffle_ref(in[0], group, reverse != 0)};
            })
            .shapes(shapes)
            .input_range(-100.f, 100.f)
            .tolerance(ElemType::f32, 0, 0)
            .tolerance(ElemType::f16, 0, 0)
            .tolerance(ElemType::bf16, 0, 0)
            .tolerance(ElemType::i8, 0, 0)
            .run();
      }
    }
  }
}

TEST_CASE("ShuffleChannel reverse undoes the shuffle", "[layer][shufflechannel]") {
  RefTensor t(Shape::of(3, 2, 24));
  for (std::size_t i = 0; i < t.v.size(); ++i) t.v[i] = float(i);
  const Mat in = to_mat(t);
  for (int group : {2, 3, 4, 6, 8}) {
    for (int pack : {1, 4, 8}) {
      Mat mid, back;
      Option opt;
      REQUIRE(infer::run_layer<float>(ShuffleChannel{group, 0}, in, mid, pack,
                                      Placement::out_of_place, opt)
                  .ok());
      REQUIRE(from_mat(mid).v != t.v);
      REQUIRE(infer::run_layer<float>(ShuffleChannel{group, 1}, mid, back, pack,
                                      Placement::out_of_place, opt)
                  .ok());
      INFO("group " << group << " pack " << pack);
      REQUIRE(from_mat(back).v == t.v);
    }
  }
}

TEST_CASE("ShuffleChannel rejects groups that do not divide the channels",
          "[layer][shufflechannel]") {
  const struct {
    Shape in;
    ShuffleChannel layer;
    const char* message;
  } bad[] = {
      {Shape::of(4, 4, 12), {5, 0}, "group 5 does not divide the 12 channels of the 3-D input"},
      {Shape::of(4, 4, 12), {8, 1}, "group 8 does not divide the 12 channels"},
      {Shape::of(2, 4, 4, 7), {2, 0}, "group 2 does not divide the 7 channels of the 4-D input"},
      {Shape::of(9, 16), {2, 0}, "group 2 does not divide the 1 channels of the 2-D input"},
      {Shape::of(4, 4, 12), {0, 0}, "group must be at least 1, got 0"},
      {Shape::of(4, 4, 12), {-3, 0}, "group must be at least 1, got -3"},
  };
  for (const auto& b : bad) {
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(b.layer, in, out, 4, Placement::out_of_place, Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("ShuffleChannel"));
  }
}
