// Mat-level conversions the runner and the graph insert between layers that disagree: repacking
// along the packing axis and casts between storage types (f32 <-> f16 <-> bf16, f32 <-> i8 with a
// per-tensor or per-channel scale).
#pragma once

#include <cstring>
#include <infer/kernels/cast.hpp>
#include <infer/kernels/pack.hpp>
#include <infer/mat.hpp>
#include <infer/option.hpp>
#include <infer/status.hpp>
#include <span>

namespace infer {

namespace detail {
template <class V, int InPack>
void repack_from(const Mat& src, Mat& dst, int num_threads) {
  const int channels = src.shape().packed_extent();
  // The packing axis: channels for 3-D/4-D (cstep apart), rows for 2-D (w apart). 1-D packs the
  // w axis, whose layout does not depend on the pack.
  const std::size_t n = src.dims() >= 3 ? std::size_t(src.w()) * src.h() * src.d() : src.w();
  const std::size_t sg = src.dims() >= 3 ? src.cstep() : src.w();
  const std::size_t dg = dst.dims() >= 3 ? dst.cstep() : dst.w();
  auto* s = src.data_as<const V>();
  auto* d = dst.data_as<V>();
  switch (dst.elempack()) {
    case 1:
      kernels::repack<V, InPack, 1>(s, sg, d, dg, channels, n, num_threads);
      break;
    case 4:
      kernels::repack<V, InPack, 4>(s, sg, d, dg, channels, n, num_threads);
      break;
    case 8:
      kernels::repack<V, InPack, 8>(s, sg, d, dg, channels, n, num_threads);
      break;
    default:
      kernels::repack<V, InPack, 16>(s, sg, d, dg, channels, n, num_threads);
      break;
  }
}
template <class V>
void repack_any(const Mat& src, Mat& dst, int num_threads) {
  switch (src.elempack()) {
    case 1:
      repack_from<V, 1>(src, dst, num_threads);
      break;
    case 4:
      repack_from<V, 4>(src, dst, num_threads);
      break;
    case 8:
      repack_from<V, 8>(src, dst, num_threads);
      break;
    default:
      repack_from<V, 16>(src, dst, num_threads);
      break;
  }
}
}  // namespace detail

/// Repacks `src` to the widest pack of {16, 8, 4, 1} that is at most `max_pack` and divides the
/// packing axis (DESIGN.md's fallback for axes that are not a multiple of the width). When the
/// pack does not change, `dst` shares `src`'s storage.
inline Status convert_packing(const Mat& src, Mat& dst, int max_pack, const Option& opt) {
  if (src.empty()) return make_error("convert_packing: the source Mat is empty");
  const Shape s = src.shape();
  const int pack = pack_for(s.packed_extent(), max_pack);
  if (pack == src.elempack()) {
    dst = src;
    return {};
  }
  INFER_TRY(dst.create(s, src.type(), pack, opt.blob_alloc()));
  if (s.dims == 1) {  // 1-D: the packed layout is the plain one
    std::memcpy(dst.data(), src.data(), s.total() * elem_size(src.type()));
    return {};
  }
  switch (elem_size(src.type())) {
    case 1:
      detail::repack_any<std::uint8_t>(src, dst, opt.num_threads);
      break;
    case 2:
      detail::repack_any<std::uint16_t>(src, dst, opt.num_threads);
      break;
    default:
      detail::repack_any<std::uint32_t>(src, dst, opt.num_threads);
      break;
  }
  return {};
}

namespace detail {
template <class From, class To>
void cast_channels(const Mat& src, Mat& dst, std::span<const float> scales, int num_threads) {
  const std::size_t n = std::size_t(src.w()) * src.h() * src.d() * src.elempack();
  const int groups = src.c();
#pragma omp parallel for num_threads(num_threads) if (num_threads > 1)
  for (int q = 0; q < groups; ++q) {
    const From* s = static_cast<const From*>(src.channel_data(q));
    To* d = static_cast<To*>(dst.channel_data(q));
    if constexpr (std::is_same_v<To, std::int8_t> || std::is_same_v<From, std::int8_t>) {
      // One scale per tensor, or per channel (3-D/4-D, unpacked values of a group share nothing
      // but their lane: per-channel scales need a loop over lanes).
      const int pack = src.elempack();
      if (scales.size() == 1) {
        if constexpr (std::is_same_v<To, std::int8_t>)
          kernels::quantize(s, d, n, scales[0]);
        else
          kernels::dequantize(s, d, n, 1.f / scales[0]);
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          const float sc = scales[std::size_t(q) * pack + i % pack];
          if constexpr (std::is_same_v<To, std::int8_t>)
            d[i] = float2int8(s[i] * sc);
          else
            d[i] = float(s[i]) / sc;
        }
      }
    } else {
      kernels::cast<From, To>(s, d, n);
    }
  }
}
}  // namespace detail

/// Converts `src` into `dst`, which has its shape and pack (its own channel step) and the same
/// type (a copy) or another float storage type (f32, f16, bf16): what a transfer applies as it
/// copies through staging memory.
inline Status cast_into(const Mat& src, Mat& dst, int num_threads = 1) {
  const ElemType from = src.type(), to = dst.type();
  if (src.empty() || dst.empty()) return make_error("cast: an empty Mat");
  if (!(src.shape() == dst.shape()) || src.elempack() != dst.elempack())
    return make_error("cast: {} and {} differ in shape or pack", src.describe(), dst.describe());
  using E = ElemType;
  auto run = [&]<class From, class To>() {
    detail::cast_channels<From, To>(src, dst, {}, num_threads);
    return Status{};
  };
  if (from == to) {
    const std::size_t n = std::size_t(src.w()) * src.h() * src.d() * src.elempack();
    for (int q = 0; q < src.c(); ++q)
      std::memcpy(dst.channel_data(q), src.channel_data(q), n * elem_size(from));
    return {};
  }
  if (from == E::f32 && to == E::f16) return run.template operator()<float, f16>();
  if (from == E::f32 && to == E::bf16) return run.template operator()<float, bf16>();
  if (from == E::f16 && to == E::f32) return run.template operator()<f16, float>();
  if (from == E::bf16 && to == E::f32) return run.template operator()<bf16, float>();
  if (from == E::f16 && to == E::bf16) return run.template operator()<f16, bf16>();
  if (from == E::bf16 && to == E::f16) return run.template operator()<bf16, f16>();
  return make_error("cast: {} to {} is not a float conversion", to_string(from), to_string(to));
}

/// Casts `src` to element type `to`, keeping shape and pack. Casts to and from i8 use ncnn's
/// quantization q = clamp(round(v * scale), -127, 127) and v = q / scale, with one scale per
/// tensor (scales.size() == 1) or one per channel of a 3-D/4-D Mat. i8 converts only to and from
/// f32. When the type does not change, `dst` shares `src`'s storage.
inline Status cast(const Mat& src, Mat& dst, ElemType to, const Option& opt,
                   std::span<const float> scales = {}) {
  if (src.empty()) return make_error("cast: the source Mat is empty");
  const ElemType from = src.type();
  if (from == to) {
    dst = src;
    return {};
  }
  const bool int8 = from == ElemType::i8 || to == ElemType::i8;
  static constexpr float kUnit[1] = {1.f};
  if (int8) {
    if (from != ElemType::f32 && to != ElemType::f32)
      return make_error("cast: i8 converts only to and from f32, not {} to {}", to_string(from),
                        to_string(to));
    if (scales.empty()) scales = kUnit;
    const int channels = src.dims() >= 3 ? src.shape().c : 1;
    if (scales.size() != 1 && int(scales.size()) != channels)
      return make_error("cast: {} scales given for a Mat of {} channels", scales.size(), channels);
  }
  if (from == ElemType::i32 || to == ElemType::i32)
    return make_error("cast: i32 is an accumulator type, not a storage type");
  INFER_TRY(dst.create(src.shape(), to, src.elempack(), opt.blob_alloc()));
  if (!int8) return cast_into(src, dst, opt.num_threads);
  const int t = opt.num_threads;
  if (to == ElemType::i8) detail::cast_channels<float, std::int8_t>(src, dst, scales, t);
  if (from == ElemType::i8) detail::cast_channels<std::int8_t, float>(src, dst, scales, t);
  return {};
}

/// Converts `src` to element type `type` and the widest pack at most `max_pack` that divides its
/// packing axis: the cast and the repack the runner inserts in front of a layer.
inline Status convert(const Mat& src, Mat& dst, ElemType type, int max_pack, const Option& opt,
                      std::span<const float> scales = {}) {
  Mat tmp;
  INFER_TRY(cast(src, tmp, type, opt, scales));
  return convert_packing(tmp, dst, max_pack, opt);
}

}  // namespace infer
