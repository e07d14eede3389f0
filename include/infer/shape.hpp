// Shape inference, the contract every layer meets so the composer can plan a graph: a constexpr
// member that maps input shapes to output shapes or says, in a fixed string, why they do not fit.
// It runs at compile time for static graphs and at load time for networks read from files.
#pragma once

#include <infer/mat.hpp>
#include <span>

namespace infer {

/// The result of a layer's shape inference: success, or a static message saying what did not fit
/// (the composer adds the layer, blob names and shapes around it).
struct ShapeCheck {
  const char* error = nullptr;  ///< null on success; a string literal otherwise

  constexpr bool ok() const { return error == nullptr; }
};

/// Shorthand for a failed check.
constexpr ShapeCheck shape_error(const char* why) { return {why}; }

/// Checks a layer that takes exactly one input and gives exactly one output.
constexpr ShapeCheck expect_one_to_one(std::span<const Shape> in, std::span<Shape> out) {
  if (in.size() != 1) return shape_error("expects exactly one input blob");
  if (out.size() != 1) return shape_error("gives exactly one output blob");
  if (in[0].dims < 1 || in[0].dims > 4) return shape_error("input must have 1 to 4 dims");
  return {};
}

/// Shape inference of layers whose output has the input's shape (activations, affine layers).
constexpr ShapeCheck same_shape(std::span<const Shape> in, std::span<Shape> out) {
  if (ShapeCheck c = expect_one_to_one(in, out); !c.ok()) return c;
  out[0] = in[0];
  return {};
}

/// A layer the composer can plan: `infer_shapes(in, out)` is constexpr and fills out.size()
/// shapes from in.size() shapes (the graph states both counts).
template <class L>
concept ShapeInferable = requires(const L& l, std::span<const Shape> in, std::span<Shape> out) {
  { l.infer_shapes(in, out) } -> std::same_as<ShapeCheck>;
};

}  // namespace infer
