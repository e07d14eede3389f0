// Permute: every order_type of 2-D (2), 3-D (6) and 4-D (24) inputs against a reference that
// moves values by logical coordinates, bit for bit, in every type and pack; 1-D passes through.
#include <algorithm>
#include <cctype>
#include <infer/layers/permute.hpp>
#include <set>

#include "support/layer_tester.hpp"

using infer::ElemType;
using infer::Mat;
using infer::Option;
using infer::Placement;
using infer::Shape;
using infer::layers::Permute;
using infer::test::LayerTester;
using infer::test::RefTensor;

namespace {

// ncnn's docs (operators.md, Permute): the output's axes innermost first, named by the input
// axis each takes, for 2-D / 3-D / 4-D inputs ("" where the dims has no such order).
struct DocRow {
  const char* d2;
  const char* d3;
  const char* d4;
};
constexpr DocRow kDoc[24] = {
    {"WH", "WHC", "WHDC"}, {"HW", "HWC", "HWDC"}, {"", "WCH", "WDHC"}, {"", "CWH", "DWHC"},
    {"", "HCW", "HDWC"},   {"", "CHW", "DHWC"},   {"", "", "WHCD"},    {"", "", "HWCD"},
    {"", "", "WCHD"},      {"", "", "CWHD"},      {"", "", "HCWD"},    {"", "", "CHWD"},
    {"", "", "WDCH"},      {"", "", "DWCH"},      {"", "", "WCDH"},    {"", "", "CWDH"},
    {"", "", "DCWH"},      {"", "", "CDWH"},      {"", "", "HDCW"},    {"", "", "DHCW"},
    {"", "", "HCDW"},      {"", "", "CHDW"},      {"", "", "DCHW"},    {"", "", "CDHW"}};

std::string doc_order(int dims, int order_type) {
  if (dims == 1) return "W";
  return dims == 2 ? kDoc[order_type].d2 : dims == 3 ? kDoc[order_type].d3 : kDoc[order_type].d4;
}

constexpr std::string_view kAxes = "WHDC";

int order_count(int dims) { return dims == 1 ? 1 : dims == 2 ? 2 : dims == 3 ? 6 : 24; }

// The output's slots innermost first: w, h, then d (4-D only), then c.
const char* slots(int dims) {
  return dims == 1 ? "W" : dims == 2 ? "WH" : dims == 3 ? "WHC" : "WHDC";
}

int extent_of(const Shape& s, char axis) {
  switch (axis) {
    case 'W':
      return s.w;
    case 'H':
      return s.h;
    case 'D':
      return s.d;
    default:
      return s.c;
  }
}

RefTensor permute_ref(const RefTensor& in, int order_type) {
  const Shape s = in.shape;
  const std::string order = doc_order(s.dims, order_type);
  const std::string slot = slots(s.dims);
  int e[4] = {1, 1, 1, 1};  // output w, h, d, c
  for (std::size_t k = 0; k < slot.size(); ++k) e[kAxes.find(slot[k])] = extent_of(s, order[k]);
  const Shape os = s.dims == 1   ? Shape::of(e[0])
                   : s.dims == 2 ? Shape::of(e[0], e[1])
                   : s.dims == 3 ? Shape::of(e[0], e[1], e[3])
                                 : Shape::of(e[0], e[1], e[2], e[3]);
  // Input axis (W, H, D, C) -> the output slot whose coordinate it takes; absent axes read 0.
  int slot_of[4] = {4, 4, 4, 4};
  for (std::size_t k = 0; k < slot.size(); ++k)
    slot_of[kAxes.find(order[k])] = int(kAxes.find(slot[k]));
  RefTensor out(os);
  for (int c = 0; c < os.c; ++c)
    for (int z = 0; z < os.d; ++z)
      for (int y = 0; y < os.h; ++y)
        for (int x = 0; x < os.w; ++x) {
          const int at[5] = {x, y, z, c, 0};  // by output slot W, H, D, C, then "absent"
          out.at(x, y, z, c) =
              in.at(at[slot_of[0]], at[slot_of[1]], at[slot_of[2]], at[slot_of[3]]);
        }
  return out;
}

}  // namespace

TEST_CASE("Permute order tables match ncnn's docs", "[layer][permute]") {
  for (int dims = 2; dims <= 4; ++dims) {
    std::set<std::array<int, 4>> seen;
    for (int t = 0; t < order_count(dims); ++t) {
      std::string_view mine = dims == 2   ? Permute::kOrders2[std::size_t(t)]
                              : dims == 3 ? Permute::kOrders3[std::size_t(t)]
                                          : Permute::kOrders4[std::size_t(t)];
      std::string upper(mine);
      for (char& ch : upper) ch = char(std::toupper(static_cast<unsigned char>(ch)));
      INFO("dims " << dims << " order_type " << t);
      REQUIRE(upper == doc_order(dims, t));
      auto from = Permute{t}.axis_map(dims);
      REQUIRE(from.ok());
      // Each source axis appears exactly once: the map is a permutation of 0..dims-1.
      std::array<int, 4> uses{};
      for (int j = 0; j < dims; ++j) {
        const int axis = (*from)[std::size_t(j)];
        REQUIRE((axis >= 0 && axis < dims));
        ++uses[std::size_t(axis)];
      }
      for (int j = 0; j < dims; ++j) REQUIRE(uses[std::size_t(j)] == 1);
      seen.insert(*from);
    }
    REQUIRE(int(seen.size()) == order_count(dims));
  }
}

TEST_CASE("Permute", "[layer][permute]") {
  const std::vector<std::vector<Shape>> by_dims = {
      {Shape::of(7), Shape::of(48)},
      {Shape::of(5, 1), Shape::of(1, 12), Shape::of(9, 16), Shape::of(3, 20), Shape::of(16, 6)},
      {Shape::of(1, 1, 1), Shape::of(5, 7, 3), Shape::of(1, 9, 16), Shape::of(13, 1, 20),
       Shape::of(8, 12, 16), Shape::of(16, 4, 8), Shape::of(67, 45, 48)},
      {Shape::of(3, 4, 2, 12), Shape::of(5, 1, 3, 16), Shape::of(2, 3, 5, 7),
       Shape::of(8, 4, 16, 4)}};
  for (int dims = 1; dims <= 4; ++dims) {
    const std::vector<int> orders = dims == 1 ? std::vector<int>{0, 3, 23} : [&] {
      std::vector<int> v(std::size_t(order_count(dims)));
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = int(i);
      return v;
    }();
    for (int t : orders) {
      LayerTester(Permute{t}, fmt::format("Permute order_type={}", t))
          .reference([t](const std::vector<RefTensor>& in) {
            return std::vector<RefTensor>{permute_ref(in[0], t)};
          })
          .shapes(by_dims[std::size_t(dims - 1)])
          .input_range(-100.f, 100.f)
          .tolerance(ElemType::f32, 0, 0)
          .tolerance(ElemType::f16, 0, 0)
          .tolerance(ElemType::bf16, 0, 0)
          .tolerance(ElemType::i8, 0, 0)
          .run();
    }
  }
}

TEST_CASE("Permute rejects order types the input's dims lacks", "[layer][permute]") {
  const struct {
    Shape in;
    int order_type;
    const char* message;
  } bad[] = {
      {Shape::of(6, 4), 2, "order_type 2 is not defined for a 2-D input (expected 0 to 1)"},
      {Shape::of(3, 6, 4), 6, "order_type 6 is not defined for a 3-D input (expected 0 to 5)"},
      {Shape::of(2, 3, 6, 4), 24, "order_type 24 is not defined for a 4-D input"},
      {Shape::of(2, 3, 6, 4), -1, "order_type -1 is not defined"},
      {Shape::of(8), 24, "order_type 24 is not defined (expected 0 to 23)"},
  };
  for (const auto& b : bad) {
    Mat in(b.in);
    in.fill(1.f);
    Mat out;
    auto st = infer::run_layer<float>(Permute{b.order_type}, in, out, 4, Placement::out_of_place,
                                      Option{});
    REQUIRE_FALSE(st.ok());
    REQUIRE_THAT(st.message(), Catch::Contains(b.message) && Catch::Contains("Permute"));
  }
}
