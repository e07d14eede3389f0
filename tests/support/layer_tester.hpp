// The sweep harness: runs a layer over every element type and pack width it declares, in place
// and out of place, on 1 and 2 threads, on random inputs of awkward shapes, and compares each
// output with an independent f32 scalar reference. Outputs come from an allocator that fills new
// memory with NaN (0xFF bytes), so a value the layer forgot to write fails the comparison.
//
// Tolerances, stated once: |got - want| <= abs + rel * |want| with
//   f32  abs 1e-5  rel 1e-5   (vectorized transcendental functions differ from libm by ulps)
//   f16  abs 1e-3  rel 2e-3   (output rounding 2^-11, plus one rounding inside)
//   bf16 abs 8e-3  rel 1.6e-2 (output rounding 2^-8, plus one rounding inside)
//   i8   abs 0.5   rel 0      (want is clamped to [-127, 127]; got is an integer)
// Inputs are first rounded to the storage type, and the reference runs on the rounded values.
#pragma once

#include <algorithm>

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <infer/concepts.hpp>
#include <infer/kernels/bf16.hpp>
#include <infer/runner.hpp>
#include <infer/shape.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/ref_tensor.hpp"

namespace infer::test {

/// Fills every new block with 0xFF bytes: NaN in f32/f16/bf16, -1 in i8.
class PoisonAllocator final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override {
    void* p = default_allocator()->allocate(bytes);
    if (p) std::memset(p, 0xFF, bytes);
    return p;
  }
  void deallocate(void* p, std::size_t bytes) override {
    default_allocator()->deallocate(p, bytes);
  }
};

struct Tolerance {
  float abs = 0.f;
  float rel = 0.f;
  /// Plus this fraction of the output's largest |value|: for arithmetic whose error grows with
  /// the sum of the products' magnitudes rather than with each result (bf16 products).
  float peak = 0.f;
};

inline Tolerance default_tolerance(ElemType t) {
  switch (t) {
    case ElemType::f32:
      return {1e-5f, 1e-5f};
    case ElemType::f16:
      return {1e-3f, 2e-3f};
    case ElemType::bf16:
      return {8e-3f, 1.6e-2f};
    default:
      return {0.5f, 0.f};
  }
}

/// The bf16-storage tolerance of a layer that multiplies in bf16 where the build has AVX512_BF16
/// (Convolution's GEMM and Winograd, InnerProduct's product, grouped convolutions): inputs and
/// weights are rounded to bf16 before the products, so besides the output rounding the error
/// grows with the sum of |w x|: `peak` of the largest output. Elsewhere bf16's default.
inline Tolerance bf16_products(float peak) {
  Tolerance t = default_tolerance(ElemType::bf16);
  if (kernels::bf16dot::kAvailable) t.peak = peak;
  return t;
}

/// The value `v` as storage type `t` would hold it (i8: an integer in [-127, 127]).
inline float round_to(ElemType t, float v) {
  switch (t) {
    case ElemType::f16:
      return f16_to_f32(f32_to_f16(v));
    case ElemType::bf16:
      return bf16_to_f32(f32_to_bf16(v));
    case ElemType::i8:
      return float(float2int8(v));
    default:
      return v;
  }
}

inline std::string shape_string(const Shape& s) {
  switch (s.dims) {
    case 1:
      return fmt::format("[w={}]", s.w);
    case 2:
      return fmt::format("[w={} h={}]", s.w, s.h);
    case 3:
      return fmt::format("[w={} h={} c={}]", s.w, s.h, s.c);
    default:
      return fmt::format("[w={} h={} d={} c={}]", s.w, s.h, s.d, s.c);
  }
}

/// Shapes that catch layout bugs: every dims, extents of 1, channel counts that are and are not
/// multiples of 4, 8 and 16, and one large blob.
inline std::vector<Shape> awkward_shapes() {
  return {Shape::of(1),           Shape::of(7),          Shape::of(48),
          Shape::of(1001),        Shape::of(5, 1),       Shape::of(1, 12),
          Shape::of(9, 16),       Shape::of(3, 20),      Shape::of(1, 1, 1),
          Shape::of(5, 7, 3),     Shape::of(1, 9, 16),   Shape::of(13, 1, 20),
          Shape::of(8, 8, 32),    Shape::of(17, 3, 24),  Shape::of(3, 4, 2, 12),
          Shape::of(5, 1, 3, 16), Shape::of(2, 3, 5, 7), Shape::of(67, 45, 48)};
}

using Reference = std::function<std::vector<RefTensor>(const std::vector<RefTensor>&)>;

/// Sweeps one layer (with one parameter set) over its declared types and packs.
///   LayerTester(ReLU{0.1f}, "ReLU slope=0.1").reference(ref).shapes(awkward_shapes()).run();
template <class L>
class LayerTester {
 public:
  LayerTester(L layer, std::string what) : layer_(std::move(layer)), what_(std::move(what)) {}

  /// The scalar reference: inputs to outputs, in f32.
  LayerTester& reference(Reference f) {
    ref_ = std::move(f);
    return *this;
  }
  /// One-input cases, one per shape.
  LayerTester& shapes(const std::vector<Shape>& s) {
    for (const Shape& x : s) cases_.push_back({x});
    return *this;
  }
  /// A multi-input case.
  LayerTester& inputs(std::vector<Shape> s) {
    cases_.push_back(std::move(s));
    return *this;
  }
  /// Outputs the layer produces (1 unless multi-blob).
  LayerTester& outputs(int n) {
    outputs_ = n;
    return *this;
  }
  /// Random inputs uniform in [lo, hi] (for i8: rounded, so keep it within [-127, 127]).
  LayerTester& input_range(float lo, float hi) {
    lo_ = lo;
    hi_ = hi;
    return *this;
  }
  /// For i8 only: random inputs uniform in [lo, hi] (rounded), e.g. the whole int8 range where
  /// the float types keep input_range's.
  LayerTester& int8_range(float lo, float hi) {
    i8_lo_ = lo;
    i8_hi_ = hi;
    i8_range_ = true;
    return *this;
  }
  LayerTester& tolerance(ElemType t, Tolerance tol) {
    tol_[int(t)] = tol;
    tol_set_[int(t)] = true;
    return *this;
  }
  LayerTester& tolerance(ElemType t, float abs, float rel) {
    tol_[int(t)] = {abs, rel};
    tol_set_[int(t)] = true;
    return *this;
  }
  /// Skip the in-place run (for layers whose in-place form changes the shape).
  LayerTester& only_out_of_place() {
    inplace_ = false;
    return *this;
  }

  void run() {
    REQUIRE(ref_);
    REQUIRE(!cases_.empty());
    for_each_storage(layer_storage<L>{});
  }

 private:
  // The sanitizer build (INFER_TEST_SANITIZED) sweeps f32 only, at the narrowest and widest
  // declared packs: the kernels' indexing is the same template at every element type (the f16 and
  // bf16 paths differ in their loads and stores, which the release build sweeps), and its f32
  // kernels come from its own sanitized infer::runtime, which keeps its build time bounded.
#ifdef INFER_TEST_SANITIZED
  static constexpr bool kSanitized = true;
#else
  static constexpr bool kSanitized = false;
#endif
  template <class... Ts>
  void for_each_storage(storage_list<Ts...>) {
    (for_each_pack<Ts>(layer_packs<L>{}), ...);
  }
  template <class T, int... Ps>
  void for_each_pack(pack_list<Ps...>) {
    // i8 of a layer that takes it only in its quantized form (Convolution, ...): swept by
    // test_int8.cpp against an int8 reference, not here.
    if constexpr (std::is_same_v<T, i8> && requires { layer_.quantized(); })
      if (!layer_.quantized()) return;
    constexpr int lo = std::min({Ps...}), hi = std::max({Ps...});
    (
        [&] {
          if constexpr (!kSanitized || (std::is_same_v<T, f32> && (Ps == lo || Ps == hi)))
            run_type_pack<T, Ps>();
        }(),
        ...);
  }

  template <class T, int Pack>
  void run_type_pack() {
    const ElemType type = elem_type_v<T>;
    const Tolerance tol = tol_set_[int(type)] ? tol_[int(type)] : default_tolerance(type);
    for (std::size_t ci = 0; ci < cases_.size(); ++ci) {
      const std::vector<Shape>& shapes = cases_[ci];
      std::mt19937 rng(unsigned(1234 + 7 * ci));
      const bool i8_range = type == ElemType::i8 && i8_range_;
      std::uniform_real_distribution<float> dist(i8_range ? i8_lo_ : lo_, i8_range ? i8_hi_ : hi_);
      std::vector<RefTensor> in;
      std::vector<Mat> mats;
      for (const Shape& s : shapes) {
        RefTensor t(s);
        for (float& x : t.v) x = round_to(type, dist(rng));
        in.push_back(t);
        mats.push_back(to_mat(t));
      }
      const std::vector<RefTensor> want = ref_(in);
      std::string shape_desc;
      for (const Shape& s : shapes) shape_desc += shape_string(s);
      if constexpr (ShapeInferable<L>) {
        // The composer plans with infer_shapes: it must predict exactly what forward produces.
        std::vector<Shape> predicted(want.size());
        const ShapeCheck check = layer_.infer_shapes(std::span<const Shape>(shapes), predicted);
        INFO(what_ << " infer_shapes on " << shape_desc << ": "
                   << (check.ok() ? "ok" : check.error));
        REQUIRE(check.ok());
        for (std::size_t o = 0; o < want.size(); ++o) {
          INFO("output " << o << " predicted " << shape_string(predicted[o]) << " reference "
                         << shape_string(want[o].shape));
          REQUIRE(predicted[o] == want[o].shape);
        }
      }

      for (int placement = 0; placement < (inplace_ && InplaceLayer<L> ? 2 : 1); ++placement) {
        for (int threads : {1, 2}) {
          PoisonAllocator poison;
          Option opt;
          opt.num_threads = threads;
          opt.blob_allocator = &poison;
          std::vector<Mat> tops(static_cast<std::size_t>(outputs_));
          const Placement pl = placement ? Placement::in_place : Placement::out_of_place;
          const std::string where =
              fmt::format("{} {} pack {} {} threads {} inputs {}", what_, to_string(type), Pack,
                          placement ? "in-place" : "out-of-place", threads, shape_desc);
          INFO(where);
          Status st = run_layer<T>(layer_, std::span<const Mat>(mats), tops, Pack, pl, opt);
          INFO("status: " << (st.ok() ? std::string("ok") : st.message()));
          REQUIRE(st.ok());
          REQUIRE(tops.size() == want.size());
          for (std::size_t o = 0; o < want.size(); ++o) {
            INFO("output " << o << " " << tops[o].describe());
            REQUIRE(!tops[o].empty());
            REQUIRE(tops[o].type() == type);
            compare(from_mat(tops[o]), want[o], type, tol);
          }
        }
      }
    }
  }

  static void compare(const RefTensor& got, const RefTensor& want, ElemType type, Tolerance tol) {
    INFO("got shape " << shape_string(got.shape) << " want " << shape_string(want.shape));
    REQUIRE(got.shape == want.shape);
    std::size_t bad = 0, first = 0;
    float first_got = 0, first_want = 0;
    float peak = 0.f;
    for (float w : want.v)
      if (std::isfinite(w)) peak = std::max(peak, std::fabs(w));
    tol.abs += tol.peak * peak;
    for (std::size_t i = 0; i < want.v.size(); ++i) {
      float w = want.v[i];
      // i8 holds no NaN: it stores 0 for one (float2int8), as an average over no positions gives.
      if (type == ElemType::i8) w = std::isnan(w) ? 0.f : std::fmin(127.f, std::fmax(-127.f, w));
      const float g = got.v[i];
      const bool ok =
          std::isnan(w) ? std::isnan(g) : (std::fabs(g - w) <= tol.abs + tol.rel * std::fabs(w));
      if (!ok && bad++ == 0) {
        first = i;
        first_got = g;
        first_want = w;
      }
    }
    const Shape s = want.shape;
    const std::size_t x = first % s.w, y = first / s.w % s.h, z = first / s.w / s.h % s.d,
                      c = first / s.w / s.h / s.d;
    INFO(fmt::format("{} of {} values wrong; first at x={} y={} z={} c={}: got {} want {}", bad,
                     want.v.size(), x, y, z, c, first_got, first_want));
    CHECK(bad == 0);
  }

  L layer_;
  std::string what_;
  Reference ref_;
  std::vector<std::vector<Shape>> cases_;
  int outputs_ = 1;
  float lo_ = -3.f, hi_ = 3.f;
  float i8_lo_ = 0.f, i8_hi_ = 0.f;
  bool i8_range_ = false;
  Tolerance tol_[5]{};
  bool tol_set_[5]{};
  bool inplace_ = true;
};

/// A reference for an element-wise function.
inline Reference elementwise(std::function<float(float)> f) {
  return [f](const std::vector<RefTensor>& in) {
    RefTensor out = in[0];
    for (float& x : out.v) x = f(x);
    return std::vector<RefTensor>{out};
  };
}

}  // namespace infer::test
