// ncnn LRN of a 3-D blob: y = x * (bias + k * sum)^-beta, sum the squares of a window, zeros
// outside the blob. Across channels (region 0) one invocation per pixel walks the channels,
// keeping the window's original values in a ring, so that it never reads what it wrote: the
// kernel runs in place too. Within a channel (region 1) one invocation per value sums a
// local_size x local_size window starting local_size / 2 before it (out of place only: it reads
// neighbours other invocations write). Channel j of pixel p sits at
// (j / pack) * cstep * pack + p * pack + j % pack. Storage f32, or f16 with INFER_FP16_STORAGE
// (arithmetic in f32). Specialization constants: 0-2 workgroup size; 3 region type, 4 pack,
// 5 local_size (region 1's window), 6 the ring's length 2r + 1 (region 0's window, r clamped to
// c - 1). Push constants: w, h, c, cstep, k (alpha / n), bias, beta.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int region = 0;
layout(constant_id = 4) const int pack = 1;
layout(constant_id = 5) const int local_size = 1;
layout(constant_id = 6) const int taps = 1;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  float k, bias, beta;
} pc;

int storage_index(int j, int p) { return (j / pack) * pc.cstep * pack + p * pack + j % pack; }

float scale(float sum) { return pow(pc.bias + pc.k * sum, -pc.beta); }

void across(int p) {
  const int r = (taps - 1) / 2;
  // Channel j's value in ring[(j + r) % taps]; the window of channel ch is ch - r .. ch + r.
  float ring[taps];
  for (int t = 0; t < taps; ++t) ring[t] = 0.0;
  for (int j = 0; j < min(r, pc.c); ++j)
    ring[(j + r) % taps] = float(bottom.v[storage_index(j, p)]);
  for (int ch = 0; ch < pc.c; ++ch) {
    const int ahead = ch + r;
    ring[(ahead + r) % taps] = ahead < pc.c ? float(bottom.v[storage_index(ahead, p)]) : 0.0;
    float sum = 0.0;
    for (int t = 0; t < taps; ++t) sum += ring[t] * ring[t];
    top.v[storage_index(ch, p)] = STORE(ring[(ch + r) % taps] * scale(sum));
  }
}

void within(int i) {
  const int plane = pc.w * pc.h;
  const int g = i / (plane * pack), rest = i - g * plane * pack;
  const int p = rest / pack, ch = g * pack + rest % pack;
  const int x = p % pc.w, y = p / pc.w, pad = local_size / 2;
  const int x0 = max(x - pad, 0), x1 = min(x - pad + local_size, pc.w);
  const int y0 = max(y - pad, 0), y1 = min(y - pad + local_size, pc.h);
  float sum = 0.0;
  for (int sy = y0; sy < y1; ++sy)
    for (int sx = x0; sx < x1; ++sx) {
      const float v = float(bottom.v[storage_index(ch, sy * pc.w + sx)]);
      sum += v * v;
    }
  const int at = storage_index(ch, p);
  top.v[at] = STORE(float(bottom.v[at]) * scale(sum));
}

void main() {
  // Many invocations dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint id = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                  gl_GlobalInvocationID.x;
  const int plane = pc.w * pc.h;
  if (region == 0) {
    if (id < uint(plane)) across(int(id));
  } else {
    if (id < uint(plane * pc.c)) within(int(id));
  }
}
