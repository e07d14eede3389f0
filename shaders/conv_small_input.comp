// Direct convolution of an input with few channels (at most 4, one group: a network's first layer
// on an image), where the implicit GEMM's K (channels x taps, 27 for RGB 3x3) is too short to fill
// its tiles and its gather of single values dominates. A workgroup of 64 x 4 invocations takes 64
// output pixels and 32 output channels: it first copies those channels' weights (at most 200 per
// channel; the array sized by the layer's K, so that as many workgroups fit on a compute unit as
// its shared memory allows) and biases into shared memory as f32, laid out [k][channel]; then
// each invocation reads its pixel's window once, channel by channel, and multiplies every value
// into 8 output channels, their weights read as two vec4 (every invocation of a subgroup reads the
// same ones), and stores whole channel quads at output pack 4. Any window, stride, dilation and
// padding (taps outside the input read the pad value); input at pack 1 or 4, output at pack 1 or
// 4; bias, residual and activation applied before the store. Storage f32, or f16 with
// INFER_FP16_STORAGE (arithmetic in f32). Weights in ncnn's order [out channel][in channel][ky][kx].
// Specialization constants: 0-2 workgroup size (64, 4, 1); 3-17 as convolution.comp (9, the
// group, is 1); 18 the input channels. Push constants as convolution.comp. Workgroups: x + 65535 z
// counts the tiles of 64 pixels, y the blocks of 32 output channels.
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
layout(constant_id = 9) const int group = 1;
layout(constant_id = 10) const int in_pack = 1;
layout(constant_id = 11) const int out_pack = 1;
layout(constant_id = 12) const int bias_term = 0;
layout(constant_id = 13) const int act = 0;
layout(constant_id = 14) const float p0 = 0.0;
layout(constant_id = 15) const float p1 = 0.0;
layout(constant_id = 16) const float pad_value = 0.0;
layout(constant_id = 17) const int res_pack = 0;
layout(constant_id = 18) const int in_c = 1;  // input channels (1 to 4): the loops unroll

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
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

const int CO = 8;        // output channels an invocation computes
const int BLOCK = 32;    // output channels a workgroup computes: 4 rows of CO
const int K = in_c * kernel_h * kernel_w;  // weights per output channel, at most 200
shared vec4 ws[K * (BLOCK / 4)];  // [k][channel quad of the block], k in ncnn's order
shared float bs[BLOCK];

void main() {
  const int tid = int(gl_LocalInvocationID.y) * 64 + int(gl_LocalInvocationID.x);
  const int oc0 = int(gl_WorkGroupID.y) * BLOCK;
  const int in_block = min(BLOCK, pc.outc - oc0);
  for (int i = tid; i < BLOCK * K; i += 256) {  // i in shared memory's order: [k][channel]
    const int k = i / BLOCK, j = i - k * BLOCK;
    ws[i / 4][i % 4] = j < in_block ? float(weights.v[(oc0 + j) * K + k]) : 0.0;
  }
  if (tid < BLOCK) bs[tid] = bias_term != 0 && tid < in_block ? float(bias.v[oc0 + tid]) : 0.0;
  barrier();

  const int p = (int(gl_WorkGroupID.x) + 65535 * int(gl_WorkGroupID.z)) * 64 +
                int(gl_LocalInvocationID.x);
  const int cb = int(gl_LocalInvocationID.y) * CO;  // the invocation's first channel in the block
  if (p >= pc.outw * pc.outh || cb >= in_block) return;
  const int y = p / pc.outw, x = p - y * pc.outw;
  const int x0 = x * stride_w - pc.pad_left, y0 = y * stride_h - pc.pad_top;

  float acc[CO];
  [[unroll]] for (int i = 0; i < CO; ++i) acc[i] = bs[cb + i];
  const int taps = kernel_h * kernel_w;
  [[unroll]] for (int ky = 0; ky < kernel_h; ++ky) {
    const int iy = y0 + ky * dilation_h;
    [[unroll]] for (int kx = 0; kx < kernel_w; ++kx) {
      const int ix = x0 + kx * dilation_w;
      const bool inside = iy >= 0 && iy < pc.h && ix >= 0 && ix < pc.w;
      const int at = (iy * pc.w + ix) * in_pack;
      [[unroll]] for (int ic = 0; ic < in_c; ++ic) {
        const float v =
            inside ? float(bottom.v[(ic / in_pack) * pc.cstep * in_pack + at + ic % in_pack])
                   : pad_value;
        const int k = ic * taps + ky * kernel_w + kx;
        const vec4 w0 = ws[k * (BLOCK / 4) + cb / 4], w1 = ws[k * (BLOCK / 4) + cb / 4 + 1];
        [[unroll]] for (int i = 0; i < 4; ++i) {
          acc[i] += v * w0[i];
          acc[4 + i] += v * w1[i];
        }
      }
    }
  }
  [[unroll]] for (int i = 0; i < CO; ++i) {
    const int oc = oc0 + cb + i;
    if (res_pack != 0 && oc < pc.outc)
      acc[i] += float(residual.v[(oc / res_pack) * pc.res_cstep * res_pack + p * res_pack +
                                 oc % res_pack]);
    acc[i] = activate(acc[i], act, p0, p1);
  }
  if (out_pack == 4) {  // whole quads (the output's channels are a multiple of 4): one store each
    const int q = (oc0 + cb) / 4;
    top4.v[q * pc.out_cstep + p] = STORE4(vec4(acc[0], acc[1], acc[2], acc[3]));
    if (cb + 4 < in_block)
      top4.v[(q + 1) * pc.out_cstep + p] = STORE4(vec4(acc[4], acc[5], acc[6], acc[7]));
  } else {
    [[unroll]] for (int i = 0; i < CO; ++i)
      if (cb + i < in_block) top.v[(oc0 + cb + i) * pc.out_cstep + p] = STORE(acc[i]);
  }
}
