// Transposed convolution (ncnn Deconvolution, DeconvolutionDepthWise) in gather form: one
// invocation per output value (x, y, output channel) sums the input pixels whose dilated kernel
// footprint covers it, so every output is written once and the cut (pads, output_w/h) is where
// the output starts in the uncut output. Input (sy, sx) reaches uncut output row
// sy * stride_h + ky * dilation_h (likewise x), with weight [out channel][in channel of its
// group][ky][kx], as kernels::deconvolution reads them. Any kernel, stride, dilation and groups
// (depthwise included); input and output each at pack 1 or 4; bias and activation before the
// store. Storage f32, or f16 with INFER_FP16_STORAGE (blobs, weights and bias alike; arithmetic
// in f32).
// Specialization constants: 0-2 workgroup size; 3/4 kernel w/h, 5/6 dilation w/h, 7/8 stride w/h,
// 9 group, 10 input pack, 11 output pack, 12 bias term, 13 activation, 14/15 its parameters.
// Push constants: input w, h, c (channels) and channel step (packed elements); the same of the
// output; where output (0, 0) lies in the uncut output (x, y).
#version 450
#extension GL_GOOGLE_include_directive : require
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

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 2) readonly buffer Weights { STORE v[]; } weights;
layout(binding = 3) readonly buffer Bias { STORE v[]; } bias;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, outc, out_cstep;
  int offset_x, offset_y;
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
  const int ux = x + pc.offset_x;  // the position in the uncut output
  const int uy = y + pc.offset_y;
  const int maxk = kernel_w * kernel_h;
  const int w0 = oc * in_per_group * maxk;

  float sum = bias_term != 0 ? float(bias.v[oc]) : 0.0;
  for (int ky = 0; ky < kernel_h; ++ky) {
    const int sys = uy - ky * dilation_h;
    if (sys < 0 || sys % stride_h != 0 || sys / stride_h >= pc.h) continue;
    const int sy = sys / stride_h;
    for (int kx = 0; kx < kernel_w; ++kx) {
      const int sxs = ux - kx * dilation_w;
      if (sxs < 0 || sxs % stride_w != 0 || sxs / stride_w >= pc.w) continue;
      const int pixel = (sy * pc.w + sxs / stride_w) * in_pack;
      int wi = w0 + ky * kernel_w + kx;
      for (int k = 0; k < in_per_group; ++k, wi += maxk) {
        const int ic = ic0 + k;
        const int i = (ic / in_pack) * pc.cstep * in_pack + pixel + ic % in_pack;
        sum += float(bottom.v[i]) * float(weights.v[wi]);
      }
    }
  }
  const int o = (oc / out_pack) * pc.out_cstep * out_pack + (y * pc.outw + x) * out_pack +
                oc % out_pack;
  top.v[o] = STORE(activate(sum, act, p0, p1));
}
