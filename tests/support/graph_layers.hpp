// Small layers for testing the composer alone: their arithmetic is trivial so a test can predict
// every output, and each exercises one capability the passes depend on.
#pragma once

#include <infer/concepts.hpp>
#include <infer/shape.hpp>
#include <span>

namespace infer::test {

namespace detail {
template <class T, class F>
void each_value(Mat& m, F f) {
  // Every value of every channel, padding lanes included (harmless for these layers).
  for (int q = 0; q < m.c(); ++q) {
    T* p = static_cast<T*>(m.channel_data(q));
    const std::size_t n = std::size_t(m.w()) * m.h() * m.d() * m.elempack();
    for (std::size_t i = 0; i < n; ++i) p[i] = from_f32<T>(f(to_f32(p[i])));
  }
}
}  // namespace detail

/// y = x + 1; f32 pack 1 only, out of place only: the user layer the composer must wrap with
/// an unpack before and a pack after.
struct AddOne {
  using storage = storage_list<f32>;
  using packs = pack_list<1>;
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return same_shape(in, out);
  }
  template <StorageElement T, int Pack>
  Status forward(const Mat& bottom, Mat& top, const Option& opt) const {
    INFER_TRY(top.create(bottom.shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    bottom.copy_to(top);
    detail::each_value<T>(top, [](float x) { return x + 1.f; });
    return {};
  }
};

/// y = 2x; every float storage and pack, in place only.
struct Twice {
  using storage = float_storage;
  using packs = all_packs;
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    return same_shape(in, out);
  }
  template <StorageElement T, int Pack>
  Status forward_inplace(Mat& blob, const Option&) const {
    detail::each_value<T>(blob, [](float x) { return 2.f * x; });
    return {};
  }
};

/// top = a - b for two inputs of one shape; every float storage and pack.
struct Subtract {
  using storage = float_storage;
  using packs = all_packs;
  constexpr ShapeCheck infer_shapes(std::span<const Shape> in, std::span<Shape> out) const {
    if (in.size() != 2 || out.size() != 1) return shape_error("takes two inputs, gives one output");
    if (!(in[0] == in[1])) return shape_error("both inputs must have one shape");
    out[0] = in[0];
    return {};
  }
  template <StorageElement T, int Pack>
  Status forward(std::span<const Mat> bottoms, std::span<Mat> tops, const Option& opt) const {
    INFER_TRY(tops[0].create(bottoms[0].shape(), elem_type_v<T>, Pack, opt.blob_alloc()));
    for (int q = 0; q < bottoms[0].c(); ++q) {
      const T* a = static_cast<const T*>(bottoms[0].channel_data(q));
      const T* b = static_cast<const T*>(bottoms[1].channel_data(q));
      T* y = static_cast<T*>(tops[0].channel_data(q));
      const std::size_t n = std::size_t(bottoms[0].w()) * bottoms[0].h() * bottoms[0].d() * Pack;
      for (std::size_t i = 0; i < n; ++i) y[i] = from_f32<T>(to_f32(a[i]) - to_f32(b[i]));
    }
    return {};
  }
};

}  // namespace infer::test
