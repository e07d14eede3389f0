// Global max or average pooling: one workgroup of 256 invocations per channel, each summing (or
// taking the max of) a stride of the channel's pixels, then a reduction in shared memory; the
// window is the whole input, without padding, every pixel counted. Input at pack 1 or 4, the
// output 1-D (c values at the same pack). Storage f32, or f16 with INFER_FP16_STORAGE
// (arithmetic in f32). Specialization constants: 0-2 workgroup size (256, 1, 1); 3 max (0) or
// average (1), 4 pack, 5 (f16 storage) the output is f32 (a squeeze-excitation block's pooled
// vector, which its products read in f32). Push constants: input w, h, c and channel step.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int average = 0;
layout(constant_id = 4) const int pack = 1;
layout(constant_id = 5) const int out_f32 = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 1) writeonly buffer Top32 { float v[]; } top32;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
} pc;

shared float partial[256];

void main() {
  const int ch = int(gl_WorkGroupID.x) + 65535 * int(gl_WorkGroupID.y);
  const int tid = int(gl_LocalInvocationID.x);
  const int pixels = pc.w * pc.h;
  const int base = (ch / pack) * pc.cstep * pack + ch % pack;
  float acc = average != 0 ? 0.0 : -1.0 / 0.0;
  if (ch < pc.c)
    for (int i = tid; i < pixels; i += 256) {
      const float v = float(bottom.v[base + i * pack]);
      acc = average != 0 ? acc + v : max(acc, v);
    }
  partial[tid] = acc;
  memoryBarrierShared();
  barrier();
  for (int s = 128; s > 0; s >>= 1) {
    if (tid < s)
      partial[tid] = average != 0 ? partial[tid] + partial[tid + s] : max(partial[tid], partial[tid + s]);
    memoryBarrierShared();
    barrier();
  }
  if (tid == 0 && ch < pc.c) {
    const float y = average != 0 ? partial[0] / float(pixels) : partial[0];
    if (out_f32 != 0)
      top32.v[ch] = y;
    else
      top.v[ch] = STORE(y);
  }
}
