// The Interp kernel on the GPU (shaders/interp.comp): nearest, bilinear or bicubic resizing of a
// 3-D blob's w and h, of a 2-D blob's w, and a 1-D blob's values spread over constant channels, in
// the CPU layer's arithmetic (layers::Interp); input and output at one pack (1 or 4), f32 or f16
// storage. The GPU Interp forward records it with the output shape its layer computes.
#pragma once

#include <cstdint>
#include <infer/vulkan/recorder.hpp>
#include <infer_shaders/interp_f16.hpp>
#include <infer_shaders/interp_f32.hpp>

namespace infer::vk {

/// Records top = resize(bottom), top's shape being the layer's output shape: bottom 3-D (w, h, c)
/// -> top (outw, outh, c); 2-D (w, h) -> (outw, h), rows resized along w alone; 1-D of n values ->
/// top 3-D (outw, outh, n), value q over all of channel q. `resize_type`: 1 nearest, 2 bilinear,
/// 3 bicubic; `align_corner` maps corner pixels onto each other (bilinear and bicubic).
/// `width_scale` / `height_scale`: the layer's scale along that axis when its output extent came
/// from the scales (Interp's output_width / output_height 0), where nearest reads input
/// floor(o / scale); 0 when the extent was given, where nearest reads floor(o * in / out).
/// Both blobs share storage type and pack.
inline Status record_interp(Recorder& rec, const VkMat& bottom, const VkMat& top, int resize_type,
                            bool align_corner, float width_scale = 0.f, float height_scale = 0.f) {
  const Shape& in = bottom.shape();
  const Shape& out = top.shape();
  if (resize_type < 1 || resize_type > 3)
    return make_error("Vulkan interp: resize_type {} (1 nearest, 2 bilinear, 3 bicubic)",
                      resize_type);
  if (in.dims < 1 || in.dims > 3)
    return make_error("Vulkan interp: input must have 1 to 3 dims, got {}-D", in.dims);
  const bool broadcast = in.dims == 1;
  // A 2-D blob's rows are its "channels" (h is the packed axis), each a 1-high plane; a 1-D
  // input's value q fills output channel q.
  const int w = broadcast ? 1 : in.w, h = in.dims == 3 ? in.h : 1;
  const int c = broadcast ? in.w : in.dims == 2 ? in.h : in.c;
  const int outw = out.w, outh = out.dims == 3 ? out.h : 1;
  const int outc = out.dims == 3 ? out.c : out.h;
  const int want_dims = in.dims == 2 ? 2 : 3;
  if (out.dims != want_dims || outc != c)
    return make_error("Vulkan interp: a {}-D input of {} {} needs a {}-D output of as many, got "
                      "{}-D with {}",
                      in.dims, c, in.dims == 2 ? "rows" : "channels", want_dims, out.dims, outc);
  if (outw < 1 || outh < 1)
    return make_error("Vulkan interp: output {}x{} is empty", outw, outh);
  if (top.type() != bottom.type() || top.elempack() != bottom.elempack())
    return make_error("Vulkan interp: input {} pack {} and output {} pack {} differ",
                      to_string(bottom.type()), bottom.elempack(), to_string(top.type()),
                      top.elempack());
  for (const VkMat* m : {&bottom, &top}) INFER_TRY(check_blob(rec, *m, "Vulkan interp"));
  if (!(width_scale >= 0.f) || !(height_scale >= 0.f))
    return make_error("Vulkan interp: scales {}x{} must be positive, or 0 for a given size",
                      width_scale, height_scale);
  // The shader indexes with 32-bit ints; the z dimension of a dispatch is only guaranteed 65535.
  if (c > 65535) return make_error("Vulkan interp: {} channels, at most 65535", c);

  // As layers::Interp computes them: the nearest ratio in float, the step in double.
  auto ratio = [](int n, int out_n, float scale) {
    return scale > 0.f ? 1.f / scale : float(n) / float(out_n);
  };
  auto step = [align_corner](int n, int out_n) {
    return float(align_corner ? (out_n > 1 ? double(n - 1) / double(out_n - 1) : 0.0)
                              : double(n) / double(out_n));
  };
  struct Push {
    std::int32_t w, h, c, cstep;
    std::int32_t outw, outh, out_cstep;
    float ratio_x, ratio_y, step_x, step_y;
  };
  // 2-D: a row of w packed elements per channel group; 1-D: read by value index.
  const Push push{w,
                  h,
                  c,
                  std::int32_t(in.dims == 3 ? bottom.cstep() : std::size_t(in.w)),
                  outw,
                  outh,
                  std::int32_t(out.dims == 3 ? top.cstep() : std::size_t(out.w)),
                  ratio(w, outw, width_scale),
                  ratio(h, outh, in.dims == 3 ? height_scale : 0.f),
                  step(w, outw),
                  step(h, outh)};
  const bool f16 = bottom.type() == ElemType::f16;
  const ShaderCode code{f16 ? "interp.comp (f16)" : "interp.comp (f32)",
                        f16 ? std::span<const std::uint32_t>(shaders::interp_f16)
                            : std::span<const std::uint32_t>(shaders::interp_f32),
                        2, sizeof(Push)};
  const SpecValue spec[] = {SpecValue::of(3, resize_type), SpecValue::of(4, align_corner ? 1 : 0),
                            SpecValue::of(5, bottom.elempack()),
                            SpecValue::of(6, broadcast ? 1 : 0)};
  constexpr std::uint32_t kLocal[3] = {8, 8, 1};
  const VkMat* blobs[] = {&bottom, &top};
  return rec.dispatch(code, {kLocal[0], kLocal[1], kLocal[2]}, spec, blobs,
                      std::as_bytes(std::span(&push, 1)),
                      {(std::uint32_t(outw) + kLocal[0] - 1) / kLocal[0],
                       (std::uint32_t(outh) + kLocal[1] - 1) / kLocal[1], std::uint32_t(c)});
}

}  // namespace infer::vk
