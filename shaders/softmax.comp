// Softmax along one axis, one invocation per softmax row (every position of the other axes): it
// finds the row's max, sums exp(x - max), then writes exp(x - max) / sum. Row id stands for
// (q, r), outer and inner position; its value j is logical value (q * len + j) * inner + r, which
// sits in storage at (o / pack) * gstride * pack + k * pack + o % pack, o = L / ginner,
// k = L % ginner (o along the packed axis: w of 1-D, h of 2-D, c otherwise). Input and output at
// the same shape and pack, possibly the same memory; storage f32, or f16 with INFER_FP16_STORAGE
// (arithmetic in f32). Specialization constants: 0-2 workgroup size, 3 pack. Push constants: rows,
// inner, len, ginner, gstride.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int pack = 1;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;

layout(push_constant) uniform Push {
  int rows, inner, len;
  int ginner, gstride;
} pc;

int storage_index(int l) {
  const int o = l / pc.ginner, k = l - o * pc.ginner;
  return (o / pack) * pc.gstride * pack + k * pack + o % pack;
}

void main() {
  // Many rows dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint id = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                  gl_GlobalInvocationID.x;
  if (id >= uint(pc.rows)) return;
  const int q = int(id) / pc.inner, r = int(id) - q * pc.inner;
  const int first = q * pc.len * pc.inner + r;
  float m = -1.0 / 0.0;
  for (int j = 0; j < pc.len; ++j)
    m = max(m, float(bottom.v[storage_index(first + j * pc.inner)]));
  float sum = 0.0;
  for (int j = 0; j < pc.len; ++j)
    sum += exp(float(bottom.v[storage_index(first + j * pc.inner)]) - m);
  for (int j = 0; j < pc.len; ++j) {
    const int at = storage_index(first + j * pc.inner);
    top.v[at] = STORE(exp(float(bottom.v[at]) - m) / sum);
  }
}
