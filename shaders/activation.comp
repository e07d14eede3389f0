// One activation over a blob in place: every stored value (channel padding included), as the
// standalone activation layers and the epilogues compute it. Storage f32, or f16 with
// INFER_FP16_STORAGE (arithmetic in f32). Specialization constants: 0-2 the workgroup size,
// 3 the activation (ncnn's 1 ReLU/leaky, 2 leaky, 3 Clip, 4 Sigmoid, 5 Mish, 6 HardSwish; 7 Swish,
// 8 TanH, 9 HardSigmoid), 4 and 5 its two parameters. Push constant: the count of values.
#version 450
#extension GL_GOOGLE_include_directive : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int act = 1;
layout(constant_id = 4) const float p0 = 0.0;
layout(constant_id = 5) const float p1 = 0.0;

layout(binding = 0) buffer Blob { STORE v[]; } blob;
layout(push_constant) uniform Push { uint n; } pc;

#include "activation.glsl"

void main() {
  // Large blobs dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint i = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                 gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  blob.v[i] = STORE(activate(float(blob.v[i]), act, p0, p1));
}
