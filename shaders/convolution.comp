// Direct convolution, the portable path: one invocation per output value (x, y, output channel),
// any kernel size, stride, dilation, groups (depthwise included) and zero padding (taps outside
// the input read 0), input and output each at pack 1 or 4, bias and activation applied before
// the store. Storage f32, or f16 with INFER_FP16_STORAGE (blobs, weights and bias alike;
// arithmetic in f32). Weights in ncnn's order: [out channel][in channel of its group][ky][kx].
// Specialization constants: 0-2 workgroup size; 3/4 kernel w/h, 5/6 dilation w/h, 7/8 stride w/h,
// 9 group, 10 input pack, 11 output pack, 12 bias term, 13 activation, 14/15 its parameters,
// 16 the pad value (what taps outside the input read), 17 the residual's pack (0: none; else a
// blob of the output's shape added before the activation: a sum the composer fused in).
// Push constants: input w, h, c (channels) and channel step (packed elements); the same of the
// output; the left and top padding; the residual's channel step.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int kernel_w = 1;
layout(constant_id = 4) const int kernel_h = 1;
layout(constant_id = 5) const int dilation_w = 1;
layout(constant_id = 6) const int dilation_h = 1;
layout(constant_id = 7) const int stride_w = 1;
layout(constant_id = 8) const int stride_h = 1;
layout(constant_id = 9) const int group = 1;
layout(constant_id = 10) const int in_pack = 1;
layout(constant_id = 11) const int out_pack = 1;
layout(constant_id = 12) const int bias_term = 0;
layout(constant_id = 13) const int act = 0;
layout(constant_id = 14) const float p0 = 0.0;
layout(constant_id = 15) const float p1 = 0.0;
layout(constant_id = 16) const float pad_value = 0.0;
layout(constant_id = 17) const int res_pack = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
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
  const int oc = int(gl_GlobalInvocationID.z);
  if (x >= pc.outw || y >= pc.outh || oc >= pc.outc) return;

  const int in_per_group = pc.c / group;
  const int out_per_group = pc.outc / group;
  const int ic0 = (oc / out_per_group) * in_per_group;
  const int x0 = x * stride_w - pc.pad_left;
  const int y0 = y * stride_h - pc.pad_top;

  float sum = bias_term != 0 ? float(bias.v[oc]) : 0.0;
  int wi = oc * in_per_group * kernel_h * kernel_w;
  for (int k = 0; k < in_per_group; ++k) {
    const int ic = ic0 + k;
    const int base = (ic / in_pack) * pc.cstep * in_pack + ic % in_pack;
    for (int ky = 0; ky < kernel_h; ++ky) {
      const int iy = y0 + ky * dilation_h;
      const bool row_in = iy >= 0 && iy < pc.h;
      const int row = base + clamp(iy, 0, pc.h - 1) * pc.w * in_pack;
      // Loads from clamped (valid) addresses, the pad value chosen after: no load waits on a
      // bounds test (as in convolution_dw.comp).
      [[unroll]] for (int kx = 0; kx < kernel_w; ++kx, ++wi) {
        const int ix = x0 + kx * dilation_w;
        const float loaded = float(bottom.v[row + clamp(ix, 0, pc.w - 1) * in_pack]);
        sum += (row_in && ix >= 0 && ix < pc.w ? loaded : pad_value) * float(weights.v[wi]);
      }
    }
  }
  const int q = y * pc.outw + x;
  if (res_pack != 0)
    sum += float(residual.v[(oc / res_pack) * pc.res_cstep * res_pack + q * res_pack + oc % res_pack]);
  const int o = (oc / out_pack) * pc.out_cstep * out_pack + q * out_pack + oc % out_pack;
  top.v[o] = STORE(activate(sum, act, p0, p1));
}
