// Interp (resize), one invocation per output value (x, y, channel), in the CPU layer's arithmetic
// (layers::Interp): nearest reads input floor(o * ratio), clamped; bilinear and bicubic (Keys,
// a = -0.75, edge indices replicated) map output o to input (o + 0.5) * step - 0.5, or o * step
// when corners align, and sum along w first, then along h. Broadcast mode writes value c of a
// 1-D input over the whole of output channel c. Input and output at the same pack (1 or 4);
// storage f32, or f16 with INFER_FP16_STORAGE (arithmetic in f32).
// Specialization constants: 0-2 workgroup size; 3 resize type (1 nearest, 2 bilinear,
// 3 bicubic), 4 align corners, 5 pack, 6 broadcast (1-D input).
// Push constants: input w, h, c and channel step; output w, h and channel step; then floats:
// the nearest ratio along x and y, the step along x and y.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int resize_type = 2;
layout(constant_id = 4) const int align_corner = 0;
layout(constant_id = 5) const int pack = 1;
layout(constant_id = 6) const int broadcast = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, out_cstep;
  float ratio_x, ratio_y;
  float step_x, step_y;
} pc;

const int taps = resize_type == 1 ? 1 : resize_type == 2 ? 2 : 4;

// The input positions and weights of output position o along an axis of n inputs.
void axis_taps(int o, int n, float ratio, float step, out int index[4], out float weight[4]) {
  for (int t = 0; t < 4; ++t) {
    index[t] = 0;
    weight[t] = 0.0;
  }
  if (resize_type == 1) {
    index[0] = min(int(float(o) * ratio), n - 1);
    weight[0] = 1.0;
    return;
  }
  float f = align_corner != 0 ? float(o) * step : (float(o) + 0.5) * step - 0.5;
  int i0 = int(floor(f));
  f -= float(i0);
  if (resize_type == 2) {
    if (i0 < 0) {
      i0 = 0;
      f = 0.0;
    }
    if (i0 >= n - 1) {
      i0 = n - 2;
      f = 1.0;
    }
    index[0] = clamp(i0, 0, n - 1);
    index[1] = clamp(i0 + 1, 0, n - 1);
    weight[0] = 1.0 - f;
    weight[1] = f;
    return;
  }
  const float a = -0.75;
  const float f0 = f + 1.0, f1 = f, f2 = 1.0 - f;
  weight[0] = a * f0 * f0 * f0 - 5.0 * a * f0 * f0 + 8.0 * a * f0 - 4.0 * a;
  weight[1] = (a + 2.0) * f1 * f1 * f1 - (a + 3.0) * f1 * f1 + 1.0;
  weight[2] = (a + 2.0) * f2 * f2 * f2 - (a + 3.0) * f2 * f2 + 1.0;
  weight[3] = 1.0 - weight[0] - weight[1] - weight[2];
  for (int t = 0; t < 4; ++t) index[t] = clamp(i0 - 1 + t, 0, n - 1);
}

void main() {
  const int x = int(gl_GlobalInvocationID.x);
  const int y = int(gl_GlobalInvocationID.y);
  const int c = int(gl_GlobalInvocationID.z);
  if (x >= pc.outw || y >= pc.outh || c >= pc.c) return;

  const int o = (c / pack) * pc.out_cstep * pack + (y * pc.outw + x) * pack + c % pack;
  if (broadcast != 0) {  // a 1-D blob's value c sits at c whatever its pack
    top.v[o] = bottom.v[c];
    return;
  }
  int xi[4], yi[4];
  float xw[4], yw[4];
  axis_taps(x, pc.w, pc.ratio_x, pc.step_x, xi, xw);
  axis_taps(y, pc.h, pc.ratio_y, pc.step_y, yi, yw);
  const int base = (c / pack) * pc.cstep * pack + c % pack;
  float sum = 0.0;
  for (int ty = 0; ty < taps; ++ty) {
    const int row = base + yi[ty] * pc.w * pack;
    float acc = 0.0;
    for (int tx = 0; tx < taps; ++tx) acc += float(bottom.v[row + xi[tx] * pack]) * xw[tx];
    sum += acc * yw[ty];
  }
  top.v[o] = STORE(sum);
}
