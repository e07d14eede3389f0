// Depthwise convolution at pack 4 (group = input channels = output channels, both blobs at pack
// 4): one invocation per output pixel and channel quad, every tap one 4-wide load of the input,
// so neighbouring invocations read neighbouring pixels. Any window, stride, dilation and pad
// value; bias, residual and activation in the epilogue. Weights in ncnn's order [channel][ky][kx]
// (four scalar reads per tap, served from cache). Storage f32, or f16 with INFER_FP16_STORAGE.
// Specialization constants: 0-2 workgroup size; 3-16 as convolution.comp (9, 10 and 11 unused:
// group = channels, packs 4), 17 the residual's pack (0: none).
// Push constants: input w, h, c, channel step; the same of the output; left and top padding; the
// residual's channel step.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#define STORE4 f16vec4
#else
#define STORE float
#define STORE4 vec4
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int kernel_w = 1;
layout(constant_id = 4) const int kernel_h = 1;
layout(constant_id = 5) const int dilation_w = 1;
layout(constant_id = 6) const int dilation_h = 1;
layout(constant_id = 7) const int stride_w = 1;
layout(constant_id = 8) const int stride_h = 1;
layout(constant_id = 12) const int bias_term = 0;
layout(constant_id = 13) const int act = 0;
layout(constant_id = 14) const float p0 = 0.0;
layout(constant_id = 15) const float p1 = 0.0;
layout(constant_id = 16) const float pad_value = 0.0;
layout(constant_id = 17) const int res_pack = 0;

layout(binding = 0) readonly buffer Bottom4 { STORE4 v[]; } bottom4;
layout(binding = 1) writeonly buffer Top4 { STORE4 v[]; } top4;
layout(binding = 2) readonly buffer Weights { STORE v[]; } weights;
layout(binding = 3) readonly buffer Bias { STORE v[]; } bias;
layout(binding = 4) readonly buffer Residual { STORE v[]; } residual;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, outc, out_cstep;
  int pad_left, pad_top;
  int res_cstep;
} pc;

#include "activation.glsl"

void main() {
  const int x = int(gl_GlobalInvocationID.x);
  const int y = int(gl_GlobalInvocationID.y);
  const int q = int(gl_GlobalInvocationID.z);  // channel quad
  if (x >= pc.outw || y >= pc.outh || q * 4 >= pc.outc) return;
  const int maxk = kernel_w * kernel_h;
  const int x0 = x * stride_w - pc.pad_left;
  const int y0 = y * stride_h - pc.pad_top;
  const int base = q * pc.cstep;
  // Every tap loads from a valid address (its row and column clamped into the input) and the pad
  // value replaces what lies outside afterwards: no load waits on a bounds test, so the window's
  // loads are all in flight at once instead of one tap after another (a 5x5 window at 7x7x1152
  // took 4.5 us against 3.2 for 3x3 with the loads behind the tests).
  vec4 sum = vec4(0.0);
  for (int ky = 0; ky < kernel_h; ++ky) {
    const int iy = y0 + ky * dilation_h;
    const bool row_in = iy >= 0 && iy < pc.h;
    const int row = base + clamp(iy, 0, pc.h - 1) * pc.w;
    [[unroll]] for (int kx = 0; kx < kernel_w; ++kx) {
      const int ix = x0 + kx * dilation_w;
      const vec4 loaded = vec4(bottom4.v[row + clamp(ix, 0, pc.w - 1)]);
      const vec4 v = row_in && ix >= 0 && ix < pc.w ? loaded : vec4(pad_value);
      const int t = ky * kernel_w + kx;
      const int wi = q * 4 * maxk + t;
      sum += v * vec4(float(weights.v[wi]), float(weights.v[wi + maxk]),
                      float(weights.v[wi + 2 * maxk]), float(weights.v[wi + 3 * maxk]));
    }
  }
  const int p = y * pc.outw + x;
  [[unroll]] for (int e = 0; e < 4; ++e) {
    const int o = q * 4 + e;
    float s = sum[e];
    if (bias_term != 0) s += float(bias.v[o]);
    if (res_pack != 0)
      s += float(residual.v[(o / res_pack) * pc.res_cstep * res_pack + p * res_pack + o % res_pack]);
    sum[e] = activate(s, act, p0, p1);
  }
  top4.v[q * pc.out_cstep + p] = STORE4(sum);
}
