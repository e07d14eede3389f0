// The layer contract as concepts: capabilities detected from real layers, and the generic runner
// calling each forward form correctly.
#include <catch2/catch.hpp>
#include <infer/concepts.hpp>
#include <infer/layers/noop.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/scale.hpp>
#include <infer/layers/sigmoid.hpp>
#include <infer/runner.hpp>

namespace L = infer::layers;
using infer::Mat;
using infer::Placement;
using infer::Shape;

// Capabilities detected from what the layers provide.
static_assert(infer::OneBlobLayer<L::ReLU> && infer::InplaceLayer<L::ReLU>);
static_assert(infer::PackingLayer<L::ReLU> && infer::Fp16StorageLayer<L::ReLU> &&
              infer::Bf16StorageLayer<L::ReLU> && infer::Int8StorageLayer<L::ReLU>);
static_assert(infer::Fp16StorageLayer<L::Sigmoid> && !infer::Int8StorageLayer<L::Sigmoid>);
static_assert(!infer::OneBlobLayer<L::Noop> && infer::InplaceLayer<L::Noop>);
// ReLU has a GPU forward where the Vulkan backend is built; Noop has none anywhere.
#ifdef INFER_HAS_VULKAN
static_assert(infer::VulkanLayer<L::ReLU>);
#else
static_assert(!infer::VulkanLayer<L::ReLU>);
#endif
static_assert(!infer::VulkanLayer<L::Noop>);
static_assert(infer::check_layer<L::ReLU>() && infer::check_layer<L::Scale>());

namespace {
/// Only an in-place form: the runner must copy for an out-of-place call.
struct InplaceOnly {
  int* calls;
  template <infer::StorageElement T, int Pack>
  infer::Status forward_inplace(Mat& blob, const infer::Option&) const {
    ++*calls;
    blob.fill(5.f);
    return {};
  }
};
/// f32 pack 1 only, as a user's first layer would be.
struct PlainOnly {
  template <infer::StorageElement T, int Pack>
  infer::Status forward(const Mat& bottom, Mat& top, const infer::Option& opt) const {
    if (bottom.elempack() != 1 || bottom.type() != infer::ElemType::f32)
      return infer::make_error("PlainOnly got {}", bottom.describe());
    return top.create(bottom.shape(), infer::ElemType::f32, 1, opt.blob_alloc());
  }
};
}  // namespace

static_assert(infer::OneBlobLayer<InplaceOnly> && infer::InplaceLayer<InplaceOnly>);
static_assert(!infer::PackingLayer<PlainOnly> && !infer::Fp16StorageLayer<PlainOnly>);

TEST_CASE("runner runs an in-place-only layer out of place on a copy", "[runner]") {
  int calls = 0;
  Mat in(Shape::of(4, 4, 3));
  in.fill(1.f);
  Mat out;
  REQUIRE(
      infer::run_layer<float>(InplaceOnly{&calls}, in, out, 1, Placement::out_of_place, {}).ok());
  REQUIRE(calls == 1);
  REQUIRE(out.data() != in.data());
  REQUIRE(in.data_as<float>()[0] == 1.f);  // the caller's input is untouched
  REQUIRE(out.data_as<float>()[0] == 5.f);
}

TEST_CASE("runner converts inputs to what the layer declares", "[runner]") {
  Mat in(Shape::of(4, 4, 16));
  in.fill(1.f);
  Mat out;
  // A pack-1 f32 layer asked for pack 16 runs at pack 1.
  auto s = infer::run_layer<float>(PlainOnly{}, in, out, 16, Placement::out_of_place, {});
  REQUIRE(s.ok());
  REQUIRE(out.elempack() == 1);
  // ReLU at pack 16 gets a packed input; channels not a multiple of 16 fall back to 8, 4 or 1.
  REQUIRE(infer::run_layer<infer::f16>(L::ReLU{}, in, out, 16, Placement::in_place, {}).ok());
  REQUIRE(out.elempack() == 16);
  REQUIRE(out.type() == infer::ElemType::f16);
  Mat in12(Shape::of(4, 4, 12));
  in12.fill(1.f);
  REQUIRE(infer::run_layer<float>(L::ReLU{}, in12, out, 16, Placement::in_place, {}).ok());
  REQUIRE(out.elempack() == 4);
  // An undeclared storage type is an error, not a silent fallback.
  auto bad = infer::run_layer<infer::f16>(PlainOnly{}, in, out, 1, Placement::out_of_place, {});
  REQUIRE_FALSE(bad.ok());
  REQUIRE_THAT(bad.message(), Catch::Contains("does not declare f16 storage"));
}

TEST_CASE("runner reports a wrong number of inputs", "[runner]") {
  Mat a(Shape::of(4)), b(Shape::of(4));
  std::vector<Mat> tops(1);
  std::vector<Mat> two{a, b};
  auto s = infer::run_layer<float>(L::ReLU{}, std::span<const Mat>(two), tops, 1,
                                   Placement::out_of_place, {});
  REQUIRE_FALSE(s.ok());
  REQUIRE_THAT(s.message(), Catch::Contains("takes 1 input and 1 output, got 2 and 1"));
}

TEST_CASE("runner keeps pack 1 when packing is off", "[runner]") {
  Mat in(Shape::of(4, 4, 16));
  in.fill(-1.f);
  Mat out;
  infer::Option opt;
  opt.use_packing = false;
  REQUIRE(infer::run_layer<float>(L::ReLU{}, in, out, 16, Placement::out_of_place, opt).ok());
  REQUIRE(out.elempack() == 1);
  REQUIRE(out.data_as<float>()[0] == 0.f);
}
