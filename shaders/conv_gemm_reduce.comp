// The end of a split-K GEMM convolution (conv_gemm.comp with split = 1): top = act(bias + the
// sum of the splits' partial sums), one invocation per output value. partial is f32
// [split][outc][pixels]; top at pack 1 or 4.
// Specialization constants: 0-2 workgroup size; 3 output pack, 4 bias term, 5 activation, 6/7 its
// parameters, 8 the residual's pack (0: none; else added before the activation). Push constants:
// output channels, pixels, splits, output channel step, the residual's channel step.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int out_pack = 1;
layout(constant_id = 4) const int bias_term = 0;
layout(constant_id = 5) const int act = 0;
layout(constant_id = 6) const float p0 = 0.0;
layout(constant_id = 7) const float p1 = 0.0;
layout(constant_id = 8) const int res_pack = 0;

layout(binding = 0) readonly buffer Partial { float v[]; } partial;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 2) readonly buffer Bias { STORE v[]; } bias;
layout(binding = 3) readonly buffer Residual { STORE v[]; } residual;

layout(push_constant) uniform Push {
  int outc, pixels, splits, out_cstep, res_cstep;
} pc;

#include "activation.glsl"

void main() {
  const int q = int(gl_GlobalInvocationID.x);
  const int oc = int(gl_GlobalInvocationID.y);
  if (q >= pc.pixels || oc >= pc.outc) return;
  float sum = bias_term != 0 ? float(bias.v[oc]) : 0.0;
  if (res_pack != 0)
    sum += float(residual.v[(oc / res_pack) * pc.res_cstep * res_pack + q * res_pack + oc % res_pack]);
  // Eight parts' loads at a time, none waiting on another: the last part's index stands in past
  // the end, so that no load sits under a condition its sum then waits on.
  for (int s = 0; s < pc.splits; s += 8) {
    float t[8];
    [[unroll]] for (int u = 0; u < 8; ++u)
      t[u] = partial.v[(min(s + u, pc.splits - 1) * pc.outc + oc) * pc.pixels + q];
    [[unroll]] for (int u = 0; u < 8; ++u)
      if (s + u < pc.splits) sum += t[u];
  }
  top.v[(oc / out_pack) * pc.out_cstep * out_pack + q * out_pack + oc % out_pack] =
      STORE(activate(sum, act, p0, p1));
}
