// InnerProduct over one sample: top[o] = act(bias[o] + sum_k W[o][k] x[k]), a matrix-vector
// product bound by the weights' bandwidth. A workgroup of 32 x 8 invocations takes 8 rows. K goes
// in chunks of 1024: the workgroup first gathers the chunk of x into shared memory (one index
// decomposition per value for all 8 rows, not one per weight), then the 32 of a row read four
// consecutive weights at a time (K a multiple of 4; else one), contiguous across the invocations,
// the chunk's loads unrolled so that eight of them are in flight and issued before the gather of
// x, and sum their partials in shared memory at the end.
// x is the input blob read in ncnn's order (channel, y, x) whatever its pack: k = (c * h + y) * w
// + x, at (c / pack) * cstep * pack + (y * w + x) * pack + c % pack (a 1-D blob: cstep 1, h 1).
// Weights in ncnn's order [output][k]. The output is 1-D (contiguous at any pack).
// Specialization constants: 0-2 workgroup size (32, 8, 1); 3 input pack, 4 bias term,
// 5 activation, 6/7 its parameters; with f16 storage, 8 / 9: the input / output is f32 instead
// (a squeeze-excitation block's pooled vector and its first product keep f32 between the f16
// weights' products: the gates they make amplify rounding).
// Push constants: the input's w, h, channel step (packed elements); K; the outputs.
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
layout(constant_id = 3) const int in_pack = 1;
layout(constant_id = 4) const int bias_term = 0;
layout(constant_id = 5) const int act = 0;
layout(constant_id = 6) const float p0 = 0.0;
layout(constant_id = 7) const float p1 = 0.0;
layout(constant_id = 8) const int in_f32 = 0;
layout(constant_id = 9) const int out_f32 = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 0) readonly buffer Bottom32 { float v[]; } bottom32;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 1) writeonly buffer Top32 { float v[]; } top32;
layout(binding = 2) readonly buffer Weights { STORE v[]; } weights;
layout(binding = 2) readonly buffer Weights4 { STORE4 v[]; } weights4;
layout(binding = 3) readonly buffer Bias { STORE v[]; } bias;

layout(push_constant) uniform Push {
  int w, h, cstep, K, outputs;
} pc;

#include "activation.glsl"

const int CHUNK = 1024;
shared float xs[CHUNK];
shared float partial[8][33];

float x_at(int k) {
  const int hw = pc.w * pc.h;
  const int c = k / hw, s = k - c * hw;
  const int at = (c / in_pack) * pc.cstep * in_pack + s * in_pack + c % in_pack;
  return in_f32 != 0 ? bottom32.v[at] : float(bottom.v[at]);
}

void main() {
  const int lane = int(gl_LocalInvocationID.x);
  const int r = int(gl_LocalInvocationID.y);
  const int tid = r * 32 + lane;
  const int o = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 8 + r;
  const bool live = o < pc.outputs;
  const bool by4 = pc.K % 4 == 0;
  float sum = 0.0;
  for (int k0 = 0; k0 < pc.K; k0 += CHUNK) {
    const int n = min(CHUNK, pc.K - k0);
    // The chunk's weight loads go out first, before the gather of x and its barrier, so that
    // the two waits on memory overlap instead of following each other (a squeeze-excitation
    // block's small products are little else). Each load reads a valid address (the row's last
    // unit past its end); the products skip the units past the chunk.
    vec4 wv[CHUNK / 128];
    if (live && by4) {
      const int row = (o * pc.K + k0) / 4;
      const int last = (o * pc.K + pc.K) / 4 - 1;
      [[unroll]] for (int u = 0; u < CHUNK / 128; ++u)
        wv[u] = vec4(weights4.v[min(row + lane + 32 * u, last)]);
    }
    barrier();  // the previous chunk's reads are done
    for (int i = tid; i < n; i += 256) xs[i] = x_at(k0 + i);
    memoryBarrierShared();
    barrier();
    if (live && by4) {
      [[unroll]] for (int u = 0; u < CHUNK / 128; ++u) {
        const int k = 4 * (lane + 32 * u);
        if (k < n) sum += dot(wv[u], vec4(xs[k], xs[k + 1], xs[k + 2], xs[k + 3]));
      }
    } else if (live) {
      for (int k = lane; k < n; k += 32) sum += float(weights.v[o * pc.K + k0 + k]) * xs[k];
    }
  }
  partial[r][lane] = sum;
  memoryBarrierShared();
  barrier();
  for (int step = 16; step > 0; step /= 2) {
    if (lane < step) partial[r][lane] += partial[r][lane + step];
    memoryBarrierShared();
    barrier();
  }
  if (lane == 0 && live) {
    const float b = bias_term != 0 ? float(bias.v[o]) : 0.0;
    const float y = activate(partial[r][0] + b, act, p0, p1);
    if (out_f32 != 0)
      top32.v[o] = y;
    else
      top.v[o] = STORE(y);
  }
}
