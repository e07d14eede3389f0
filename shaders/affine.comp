// y = x * a[i] + b[i], i the position along the blob's packing axis (w of 1-D, h of 2-D, c of
// 3-D/4-D): BatchNorm, Scale and Bias on the GPU. One invocation per value, walked in storage
// order: packing group g holds `plane` packed elements, groups `gstride` packed elements apart, so
// the value r of group g sits at g * gstride * pack + r and has i = g * pack + r % pack. An
// invocation reads only its own value before writing it: top may be bottom's memory. Storage f32,
// or f16 with INFER_FP16_STORAGE (arithmetic in f32). Specialization constants: 0-2 workgroup
// size; 3 pack, 4 has a (else 1), 5 has b (else 0). Push constants: values n, plane, gstride.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int pack = 1;
layout(constant_id = 4) const int has_a = 1;
layout(constant_id = 5) const int has_b = 1;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 2) readonly buffer A { STORE v[]; } a;
layout(binding = 3) readonly buffer B { STORE v[]; } b;

layout(push_constant) uniform Push {
  int n, plane, gstride;
} pc;

void main() {
  // Many values dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint id = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                  gl_GlobalInvocationID.x;
  if (id >= uint(pc.n)) return;
  const int per_group = pc.plane * pack;
  const int g = int(id) / per_group, r = int(id) - g * per_group;
  const int i = g * pack + r % pack, at = g * pc.gstride * pack + r;
  const float scale = has_a != 0 ? float(a.v[i]) : 1.0;
  const float shift = has_b != 0 ? float(b.v[i]) : 0.0;
  top.v[at] = STORE(float(bottom.v[at]) * scale + shift);
}
