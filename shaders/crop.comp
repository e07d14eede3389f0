// ncnn's Crop, one invocation per output value: along each of four axes (outermost first; a blob
// of fewer dims has trailing extents of 1), output position x reads input position x + offset.
// Values move as stored, so a move is exact. Input and output each at pack 1 or 4, both f32 or
// (INFER_FP16_STORAGE) both f16. A blob's logical value L sits in storage at
// (o / pack) * gstride * pack + r * pack + o % pack, o = L / ginner, r = L % ginner (as in
// relayout.comp). Specialization constants: 0-2 workgroup size; 3/4 input/output pack. Push
// constants as below.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int src_pack = 1;
layout(constant_id = 4) const int dst_pack = 1;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;

layout(push_constant) uniform Push {
  int n;                          // output values
  int out_e1, out_e2, out_e3;     // output extents of axes 1-3
  int in_e1, in_e2, in_e3;        // input extents of axes 1-3
  int o0, o1, o2, o3;             // the crop's offset along each axis
  int src_ginner, src_gstride;    // the input's values per packed-axis step; group distance
  int dst_ginner, dst_gstride;
} pc;

int storage_index(int l, int ginner, int gstride, int pack) {
  const int o = l / ginner, r = l - o * ginner;
  return (o / pack) * gstride * pack + r * pack + o % pack;
}

void main() {
  // Large outputs dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint id = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                  gl_GlobalInvocationID.x;
  if (id >= uint(pc.n)) return;
  const int i = int(id);
  int t = i;
  const int x3 = t % pc.out_e3;
  t /= pc.out_e3;
  const int x2 = t % pc.out_e2;
  t /= pc.out_e2;
  const int x1 = t % pc.out_e1;
  const int x0 = t / pc.out_e1;
  const int l = (((x0 + pc.o0) * pc.in_e1 + x1 + pc.o1) * pc.in_e2 + x2 + pc.o2) * pc.in_e3 +
                x3 + pc.o3;
  top.v[storage_index(i, pc.dst_ginner, pc.dst_gstride, dst_pack)] =
      bottom.v[storage_index(l, pc.src_ginner, pc.src_gstride, src_pack)];
}
