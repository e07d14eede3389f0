// ncnn's Padding, one invocation per output value: along each of four axes (outermost first; a
// blob of fewer dims has trailing extents of 1), output position x reads input position
// x - before, or, outside the input, the constant (type 0: `fill`, or the output channel's value
// from binding 2), the nearest edge (type 1, replicate) or the mirror without the edge (type 2,
// reflect). Values move as stored, never through arithmetic, so a move is exact. Input and output
// each at pack 1 or 4, both f32 or (INFER_FP16_STORAGE) both f16. A blob's logical value L sits in
// storage at (o / pack) * gstride * pack + r * pack + o % pack, o = L / ginner, r = L % ginner (as
// in relayout.comp). Specialization constants: 0-2 workgroup size; 3 type; 4/5 input/output
// pack; 6 per-channel constants (binding 2, indexed by output axis 0). Push constants as below.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int type = 0;
layout(constant_id = 4) const int src_pack = 1;
layout(constant_id = 5) const int dst_pack = 1;
layout(constant_id = 6) const int per_channel = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 2) readonly buffer Fill { STORE v[]; } fill;

layout(push_constant) uniform Push {
  int n;                          // output values
  int out_e1, out_e2, out_e3;     // output extents of axes 1-3
  int in_e0, in_e1, in_e2, in_e3; // input extents
  int b0, b1, b2, b3;             // pads before each axis
  int src_ginner, src_gstride;    // the input's values per packed-axis step; group distance
  int dst_ginner, dst_gstride;
  float value;                    // the constant (already a value of the storage type)
} pc;

int storage_index(int l, int ginner, int gstride, int pack) {
  const int o = l / ginner, r = l - o * ginner;
  return (o / pack) * gstride * pack + r * pack + o % pack;
}

// The input position output position x - before = j reads along an axis of extent n, or -1 for
// the constant.
int source(int j, int n) {
  if (j >= 0 && j < n) return j;
  if (type == 1) return clamp(j, 0, n - 1);
  if (type == 2) return j < 0 ? -j : 2 * (n - 1) - j;
  return -1;
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
  const int j0 = source(x0 - pc.b0, pc.in_e0), j1 = source(x1 - pc.b1, pc.in_e1);
  const int j2 = source(x2 - pc.b2, pc.in_e2), j3 = source(x3 - pc.b3, pc.in_e3);
  const int d = storage_index(i, pc.dst_ginner, pc.dst_gstride, dst_pack);
  // Separate stores, no select: a 16-bit value chosen by arithmetic would need the Float16
  // capability, which 16-bit storage alone does not give.
  if (j0 >= 0 && j1 >= 0 && j2 >= 0 && j3 >= 0) {
    const int l = ((j0 * pc.in_e1 + j1) * pc.in_e2 + j2) * pc.in_e3 + j3;
    top.v[d] = bottom.v[storage_index(l, pc.src_ginner, pc.src_gstride, src_pack)];
  } else if (per_channel != 0) {
    top.v[d] = fill.v[x0];
  } else {
    top.v[d] = STORE(pc.value);
  }
}
