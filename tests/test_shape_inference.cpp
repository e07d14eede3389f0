// Shape inference of every layer, evaluated at compile time (static_assert) as the static graph
// composer evaluates it: each layer is built and asked in a constant expression, for shapes that
// fit and shapes that do not; then the messages of the failures at run time. That forward makes
// exactly the shapes infer_shapes predicts is checked by every layer's sweep (LayerTester).
// Only infer_shapes is called here, so no forward is instantiated.
#include <array>
#include <catch2/catch.hpp>
#include <infer/layers/batchnorm.hpp>
#include <infer/layers/bias.hpp>
#include <infer/layers/binary_op.hpp>
#include <infer/layers/clip.hpp>
#include <infer/layers/concat.hpp>
#include <infer/layers/crop.hpp>
#include <infer/layers/dropout.hpp>
#include <infer/layers/eltwise.hpp>
#include <infer/layers/elu.hpp>
#include <infer/layers/flatten.hpp>
#include <infer/layers/gelu.hpp>
#include <infer/layers/hardsigmoid.hpp>
#include <infer/layers/hardswish.hpp>
#include <infer/layers/mish.hpp>
#include <infer/layers/noop.hpp>
#include <infer/layers/padding.hpp>
#include <infer/layers/permute.hpp>
#include <infer/layers/pooling.hpp>
#include <infer/layers/relu.hpp>
#include <infer/layers/reshape.hpp>
#include <infer/layers/scale.hpp>
#include <infer/layers/shuffle_channel.hpp>
#include <infer/layers/sigmoid.hpp>
#include <infer/layers/slice.hpp>
#include <infer/layers/softmax.hpp>
#include <infer/layers/split.hpp>
#include <infer/layers/swish.hpp>
#include <infer/layers/tanh.hpp>
#include <string>
#include <string_view>

using infer::Shape;
using infer::ShapeCheck;
using namespace infer::layers;

namespace {

/// What infer_shapes answered for some inputs and NOut outputs.
template <std::size_t NOut>
struct Inferred {
  ShapeCheck check;
  std::array<Shape, NOut> out{};

  constexpr bool ok() const { return check.ok(); }
  /// Succeeded with exactly these outputs.
  template <class... S>
  constexpr bool gives(S... want) const {
    return check.ok() && out == std::array<Shape, NOut>{want...};
  }
  /// Failed with exactly this message.
  constexpr bool fails_with(std::string_view why) const {
    return !check.ok() && std::string_view(check.error) == why;
  }
};

/// layer.infer_shapes on the inputs `in`, for a node with NOut outputs.
template <std::size_t NOut = 1, class L, class... In>
constexpr Inferred<NOut> shapes_of(const L& layer, In... in) {
  const std::array<Shape, sizeof...(In)> inputs{in...};
  Inferred<NOut> r;
  r.check = layer.infer_shapes(inputs, r.out);
  return r;
}

constexpr Shape kC3 = Shape::of(5, 7, 3);    // w 5, h 7, c 3
constexpr Shape kC16 = Shape::of(6, 4, 16);  // w 6, h 4, c 16

// Every layer is a literal type that a constant expression can build from its defaults.
template <class... L>
constexpr bool all_constexpr_and_inferable() {
  return ((infer::ShapeInferable<L> && (static_cast<void>(L{}), true)) && ...);
}
static_assert(all_constexpr_and_inferable<
              ReLU, Clip, Sigmoid, TanH, Swish, Mish, HardSigmoid, HardSwish, ELU, GELU, Dropout,
              Noop, BatchNorm, Scale, Bias, BinaryOp, Eltwise, Split, Concat, Slice, Crop, Padding,
              Flatten, Reshape, Permute, ShuffleChannel, Softmax, Pooling>());
constexpr Slice kDefaultSlice{};  // constexpr variables too, when their vectors are empty
constexpr Pooling kDefaultPooling{};

// ---- element-wise layers: the output is the input ----
static_assert(shapes_of(ReLU{}, kC3).gives(kC3));
static_assert(shapes_of(Clip{-1.f, 1.f}, Shape::of(9)).gives(Shape::of(9)));
static_assert(shapes_of(Sigmoid{}, Shape::of(3, 4, 2, 8)).gives(Shape::of(3, 4, 2, 8)));
static_assert(shapes_of(TanH{}, Shape::of(2, 5)).gives(Shape::of(2, 5)));
static_assert(shapes_of(Swish{}, kC16).gives(kC16));
static_assert(shapes_of(Mish{}, kC3).gives(kC3));
static_assert(shapes_of(HardSigmoid{}, kC3).gives(kC3));
static_assert(shapes_of(HardSwish{}, kC3).gives(kC3));
static_assert(shapes_of(ELU{}, kC3).gives(kC3));
static_assert(shapes_of(GELU{true}, kC3).gives(kC3));
static_assert(shapes_of(Dropout{0.5f}, kC3).gives(kC3));
static_assert(shapes_of(ReLU{}, kC3, kC3).fails_with("expects exactly one input blob"));
static_assert(shapes_of<2>(Sigmoid{}, kC3).fails_with("gives exactly one output blob"));
static_assert(shapes_of(ReLU{}, Shape{}).fails_with("input must have 1 to 4 dims"));

// ---- Noop: blobs pass through ----
static_assert(shapes_of<2>(Noop{}, kC3, Shape::of(4)).gives(kC3, Shape::of(4)));
static_assert(shapes_of<2>(Noop{}, kC3).fails_with("gives at most as many outputs as inputs"));

// ---- per-channel affine layers: the channel count must match the parameters ----
static_assert(shapes_of(BatchNorm{.channels = 3}, kC3).gives(kC3));
static_assert(
    shapes_of(BatchNorm{.channels = 7}, Shape::of(5, 7)).gives(Shape::of(5, 7)));  // 2-D: h
static_assert(shapes_of(BatchNorm{.channels = 4}, kC3)
                  .fails_with("input's channel count (its packing axis) differs from channels"));
static_assert(shapes_of(Scale{.scale_data_size = 3}, kC3).gives(kC3));
static_assert(shapes_of(Scale{.scale_data_size = -233}, kC3, Shape::of(3)).gives(kC3));
static_assert(shapes_of(Scale{.scale_data_size = 16}, kC3)
                  .fails_with("scale_data_size differs from the input's channel count"));
static_assert(shapes_of(Scale{.scale_data_size = -233}, kC3, Shape::of(4))
                  .fails_with("the scale blob must hold one value per channel of the first input"));
static_assert(shapes_of(Scale{.scale_data_size = 3}, kC3, Shape::of(3))
                  .fails_with("takes 1 input, or 2 with scale_data_size = -233"));
static_assert(shapes_of(Bias{.bias_data_size = 3}, kC3).gives(kC3));
static_assert(shapes_of(Bias{.bias_data_size = 1}, Shape::of(8, 2)).gives(Shape::of(8, 2)));
static_assert(shapes_of(Bias{.bias_data_size = 3, .bias_data = {1.f, 2.f}}, kC3)
                  .fails_with("bias_data does not hold bias_data_size values"));

// ---- BinaryOp: ncnn's broadcasting ----
static_assert(shapes_of(BinaryOp{}, kC3, kC3).gives(kC3));
static_assert(shapes_of(BinaryOp{}, kC3, Shape::of(3)).gives(kC3));     // 1-D along c
static_assert(shapes_of(BinaryOp{}, Shape::of(5), kC3).gives(kC3));     // 1-D along w
static_assert(shapes_of(BinaryOp{}, Shape::of(7, 3), kC3).gives(kC3));  // 2-D as (h, c)
static_assert(shapes_of(BinaryOp{}, Shape::of(1, 7, 3), Shape::of(5, 1, 3)).gives(kC3));
static_assert(shapes_of(BinaryOp{.op_type = 2, .with_scalar = 1, .b = 2.f}, kC3).gives(kC3));
static_assert(shapes_of(BinaryOp{}, kC3, Shape::of(4, 7, 3))
                  .fails_with("inputs do not broadcast (each extent must be 1 or equal)"));
static_assert(shapes_of(BinaryOp{}, kC3).fails_with("with_scalar=0 takes 2 inputs"));
static_assert(shapes_of(BinaryOp{.op_type = 12}, kC3, kC3).fails_with("op_type must be 0 to 11"));

// ---- Eltwise: equal shapes ----
static_assert(shapes_of(Eltwise{.op_type = 1}, kC3, kC3, kC3).gives(kC3));
static_assert(shapes_of(Eltwise{}, kC3, Shape::of(5, 7, 4))
                  .fails_with("all inputs must have the same shape"));
static_assert(shapes_of(Eltwise{.op_type = 1, .coeffs = {1.f, 2.f, 3.f}}, kC3, kC3)
                  .fails_with("coeffs must hold one weight per input, or none"));

// ---- Split: any number of outputs ----
static_assert(shapes_of<3>(Split{}, kC3).gives(kC3, kC3, kC3));
static_assert(shapes_of<0>(Split{}, kC3).fails_with("gives at least one output blob"));

// ---- Concat ----
static_assert(shapes_of(Concat{.axis = 0}, kC3, Shape::of(5, 7, 5)).gives(Shape::of(5, 7, 8)));
static_assert(
    shapes_of(Concat{.axis = -1}, Shape::of(2, 6), Shape::of(3, 6)).gives(Shape::of(5, 6)));
static_assert(shapes_of(Concat{.axis = 1}, kC3, Shape::of(5, 2, 3)).gives(Shape::of(5, 9, 3)));
static_assert(shapes_of(Concat{.axis = 0}, kC3, Shape::of(6, 7, 3))
                  .fails_with("inputs may differ only in their extent along axis"));
static_assert(
    shapes_of(Concat{}, kC3, Shape::of(5, 7)).fails_with("inputs must have the same dims"));
static_assert(
    shapes_of(Concat{.axis = 3}, kC3, kC3).fails_with("axis is out of range for the inputs"));

// ---- Slice ----
static_assert(
    shapes_of<2>(Slice{.slices = {1, -233}}, kC3).gives(Shape::of(5, 7, 1), Shape::of(5, 7, 2)));
static_assert(shapes_of<3>(Slice{.slices = {-233, -233, -233}, .axis = -1}, Shape::of(6, 2))
                  .gives(Shape::of(2, 2), Shape::of(2, 2), Shape::of(2, 2)));
static_assert(shapes_of<2>(Slice{.axis = 1, .indices = {-2}}, kC3)
                  .gives(Shape::of(5, 5, 3), Shape::of(5, 2, 3)));
static_assert(
    shapes_of<2>(Slice{.slices = {1, 1}}, kC3).fails_with("slices must add up to the axis extent"));
static_assert(shapes_of<2>(Slice{.slices = {2, 2}}, kC3)
                  .fails_with("each slice must be positive and fit in the axis"));
static_assert(shapes_of<3>(Slice{.slices = {1, 2}}, kC3)
                  .fails_with("slices must number as many as the outputs"));
static_assert(shapes_of<2>(Slice{.indices = {3}}, kC3)
                  .fails_with("indices must rise strictly inside the axis"));

// ---- Crop ----
static_assert(shapes_of(Crop{.woffset = 1, .outw = 3, .outh = -233, .outc = -233}, kC3)
                  .gives(Shape::of(3, 7, 3)));
static_assert(shapes_of(Crop{.starts = {1, -3}, .ends = {3, -233}, .axes = {0, 2}}, kC3)
                  .gives(Shape::of(3, 7, 2)));
static_assert(
    shapes_of(Crop{}, kC3)
        .fails_with("every out* and *offset2 is 0: ncnn's two-blob form is not supported"));
static_assert(shapes_of(Crop{.starts = {4}, .ends = {2}, .axes = {2}}, kC3)
                  .fails_with("start/end select an empty range or one outside the axis"));

// ---- Padding ----
static_assert(shapes_of(Padding{.top = 1, .bottom = 2, .left = 3, .right = 4}, kC3)
                  .gives(Shape::of(12, 10, 3)));
static_assert(shapes_of(Padding{.front = 1, .behind = 1}, kC3).gives(Shape::of(5, 7, 5)));
static_assert(shapes_of(Padding{.front = 1}, Shape::of(2, 3, 4, 5)).gives(Shape::of(2, 3, 5, 5)));
static_assert(shapes_of(Padding{.left = 5, .type = 2}, kC3)
                  .fails_with("reflect pads must be below the extent they pad"));

// ---- Flatten, Reshape, Permute, ShuffleChannel ----
static_assert(shapes_of(Flatten{}, kC3).gives(Shape::of(105)));
static_assert(shapes_of(Reshape{.w = -1, .h = 3}, kC3).gives(Shape::of(35, 3)));
static_assert(shapes_of(Reshape{.w = 15, .h = 0, .c = -1}, kC3).gives(Shape::of(15, 7, 1)));
static_assert(shapes_of(Reshape{.w = 5, .h = 7, .d = 3, .c = 1}, kC3).gives(Shape::of(5, 7, 3, 1)));
static_assert(shapes_of(Reshape{.w = 10, .h = 10}, kC3)
                  .fails_with("the output shape holds a different number of values"));
static_assert(shapes_of(Reshape{.w = -1, .h = -1}, kC3)
                  .fails_with("at most one extent can be -1 (inferred)"));
static_assert(shapes_of(Permute{.order_type = 5}, kC3).gives(Shape::of(3, 7, 5)));  // w<-c, c<-w
static_assert(shapes_of(Permute{.order_type = 1}, Shape::of(2, 9)).gives(Shape::of(9, 2)));
static_assert(shapes_of(Permute{.order_type = 2}, Shape::of(2, 9))
                  .fails_with("order_type is not defined for the input's dims"));
static_assert(shapes_of(ShuffleChannel{.group = 4}, kC16).gives(kC16));
static_assert(
    shapes_of(ShuffleChannel{.group = 2}, kC3).fails_with("group must divide the channel count"));

// ---- Softmax ----
static_assert(shapes_of(Softmax{.axis = -1}, kC3).gives(kC3));
static_assert(shapes_of(Softmax{.axis = 3}, kC3).fails_with("axis is out of range"));

// ---- Pooling ----
static_assert(shapes_of(Pooling{.kernel_w = 2, .stride_w = 2}, kC16).gives(Shape::of(3, 2, 16)));
// Full padding (ncnn's default) rounds up: h 7 pads to 8 for 2x2 s2, and 3x3 s2 pad 1 fits.
static_assert(
    shapes_of(Pooling{.kernel_w = 3, .stride_w = 2, .pad_left = 1}, kC3).gives(Shape::of(3, 4, 3)));
static_assert(shapes_of(Pooling{.kernel_w = 2, .stride_w = 2}, kC3).gives(Shape::of(3, 4, 3)));
static_assert(shapes_of(Pooling{.kernel_w = 2, .stride_w = 2, .pad_mode = 1}, kC3)  // valid: floor
                  .gives(Shape::of(2, 3, 3)));
static_assert(shapes_of(Pooling{.kernel_w = 3, .stride_w = 2, .pad_mode = 2}, kC3)  // SAME: ceil
                  .gives(Shape::of(3, 4, 3)));
static_assert(shapes_of(Pooling{.pooling_type = 1, .global_pooling = 1}, kC3).gives(Shape::of(3)));
static_assert(shapes_of(Pooling{.adaptive_pooling = 1, .out_w = 2, .out_h = -233}, kC3)
                  .gives(Shape::of(2, 7, 3)));
static_assert(
    shapes_of(Pooling{.kernel_w = 2}, Shape::of(5, 7)).fails_with("takes a 3-D input (w, h, c)"));
static_assert(shapes_of(Pooling{.kernel_w = 6, .pad_mode = 1}, kC3)
                  .fails_with("the kernel is larger than the padded input"));
static_assert(shapes_of(Pooling{}, kC3).fails_with("kernel_w and kernel_h must be at least 1"));

}  // namespace

TEST_CASE("infer_shapes failures name the problem", "[shape]") {
  // The same failures at run time (a graph read from a file is planned at load time).
  const Shape c3 = kC3;
  const struct {
    ShapeCheck check;
    const char* message;
  } cases[] = {
      {shapes_of(Concat{.axis = 2}, c3, Shape::of(6, 8, 3)).check,
       "inputs may differ only in their extent along axis"},
      {shapes_of(BinaryOp{}, c3, Shape::of(5, 6, 3)).check, "inputs do not broadcast"},
      {shapes_of(Reshape{.w = 4}, c3).check, "the output shape holds a different number of values"},
      {shapes_of<3>(Slice{.slices = {1, 1, 2}}, c3).check, "each slice must be positive and fit"},
      {shapes_of<2>(Slice{.slices = {1, 1}}, c3).check, "slices must add up to the axis extent"},
      {shapes_of(Eltwise{}, c3).check, "takes at least 2 inputs"},
      {shapes_of(BatchNorm{.channels = 16}, c3).check, "differs from channels"},
      {shapes_of(Scale{.scale_data_size = 5}, c3).check, "scale_data_size differs"},
      {shapes_of(Bias{.bias_data_size = 5}, c3).check, "bias_data_size differs"},
      {shapes_of(Permute{.order_type = 6}, c3).check, "order_type is not defined"},
      {shapes_of(Softmax{.axis = -4}, c3).check, "axis is out of range"},
      {shapes_of(Pooling{.pooling_type = 2, .kernel_w = 2}, c3).check, "pooling_type must be 0"},
      {shapes_of(Pooling{.kernel_w = 2, .pad_left = -1}, c3).check, "pads must not be negative"},
      {shapes_of(Padding{.type = 3}, c3).check, "type must be 0 (constant)"},
      {shapes_of(Crop{.starts = {0, 0}, .ends = {1, 1}, .axes = {1, -2}}, c3).check,
       "an axis is listed twice"},
      {shapes_of<2>(Noop{}, c3).check, "at most as many outputs as inputs"},
  };
  for (const auto& c : cases) {
    INFO("expected: " << c.message);
    REQUIRE_FALSE(c.check.ok());
    REQUIRE_THAT(std::string(c.check.error), Catch::Contains(c.message));
  }
  // A fresh evaluation at run time agrees with the compile-time one.
  CHECK(shapes_of<2>(Slice{.slices = {1, -233}}, c3).gives(Shape::of(5, 7, 1), Shape::of(5, 7, 2)));
  CHECK(kDefaultSlice.slices.empty());
  CHECK(kDefaultPooling.kernel_h == kSameAs);
}
