// Softmax along one axis, one invocation per softmax row (every position of the other axes), or,
// for long rows (wide = 1), one workgroup per row reducing in shared memory: its invocations
// read the row once into registers (up to CACHE values each; longer rows read the rest again),
// find the row's max, sum exp(x - max), then write exp(x - max) / sum. Row id stands for
// (q, r), outer and inner position; its value j is logical value (q * len + j) * inner + r, which
// sits in storage at (o / pack) * gstride * pack + k * pack + o % pack, o = L / ginner,
// k = L % ginner (o along the packed axis: w of 1-D, h of 2-D, c otherwise). Input and output at
// the same shape and pack, possibly the same memory; storage f32, or f16 with INFER_FP16_STORAGE
// (arithmetic in f32). Specialization constants: 0-2 workgroup size, 3 pack, 4 wide. Push constants: rows,
// inner, len, ginner, gstride.
#version 450
#extension GL_EXT_control_flow_attributes : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int pack = 1;
layout(constant_id = 4) const int wide = 0;  // 1: a workgroup per row (long rows)

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

const int CACHE = 8;
shared float red[256];

// The sum (op 0) or max (op 1) of every invocation's v over the workgroup (a power of two).
float workgroup_reduce(float v, int op) {
  const int lane = int(gl_LocalInvocationID.x);
  red[lane] = v;
  memoryBarrierShared();
  barrier();
  for (int step = int(gl_WorkGroupSize.x) / 2; step > 0; step /= 2) {
    if (lane < step) red[lane] = op == 0 ? red[lane] + red[lane + step] : max(red[lane], red[lane + step]);
    memoryBarrierShared();
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}

void main() {
  if (wide != 0) {
    // A workgroup per row: its invocations stride along the row, value j of lane l at
    // j = l + t * lanes; the first CACHE of each lane stay in registers.
    const int id = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    if (id >= pc.rows) return;  // the whole workgroup: barriers stay uniform
    const int lanes = int(gl_WorkGroupSize.x);
    const int lane = int(gl_LocalInvocationID.x);
    const int q = id / pc.inner, r = id - q * pc.inner;
    const int first = q * pc.len * pc.inner + r;
    float v[CACHE];
    float m = -1.0 / 0.0;
    [[unroll]] for (int t = 0; t < CACHE; ++t) {
      const int j = lane + t * lanes;
      v[t] = j < pc.len ? float(bottom.v[storage_index(first + j * pc.inner)]) : -1.0 / 0.0;
      m = max(m, v[t]);
    }
    for (int j = lane + CACHE * lanes; j < pc.len; j += lanes)
      m = max(m, float(bottom.v[storage_index(first + j * pc.inner)]));
    m = workgroup_reduce(m, 1);
    float sum = 0.0;
    [[unroll]] for (int t = 0; t < CACHE; ++t) {
      if (lane + t * lanes < pc.len) {
        v[t] = exp(v[t] - m);
        sum += v[t];
      }
    }
    for (int j = lane + CACHE * lanes; j < pc.len; j += lanes)
      sum += exp(float(bottom.v[storage_index(first + j * pc.inner)]) - m);
    sum = workgroup_reduce(sum, 0);
    [[unroll]] for (int t = 0; t < CACHE; ++t) {
      const int j = lane + t * lanes;
      if (j < pc.len) top.v[storage_index(first + j * pc.inner)] = STORE(v[t] / sum);
    }
    for (int j = lane + CACHE * lanes; j < pc.len; j += lanes) {
      const int at = storage_index(first + j * pc.inner);
      top.v[at] = STORE(exp(float(bottom.v[at]) - m) / sum);
    }
    return;
  }
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
