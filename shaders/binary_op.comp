// Element-wise c = op(coeff_a * a, coeff_b * b), one invocation per output value, walked in the
// output's storage order. Each blob has its own pack (1 or 4) and is described, per output axis
// (x, y, z, c), by the packed elements between neighbours (0 where it is broadcast), which output
// axis runs along its packing axis (-1: broadcast along it) and the packed elements between its
// packing groups; that covers ncnn's BinaryOp broadcasting (the host computes the descriptions).
// An invocation reads its own element of a blob that is the output's memory before writing it, so
// c may be a (or a same-shape b). Storage f32, or f16 with INFER_FP16_STORAGE; arithmetic in f32.
// Specialization constants: 0-2 workgroup size; 3 op (ncnn's BinaryOp op_type 0-11); 4/5/6 packs
// of a, b and c; 7 with_scalar (b unread, the constant 8 instead); 8 that scalar; 9 an activation
// applied to the result (activation.glsl's kinds; 0 none), 10/11 its parameters.
// Push constants: output extents w, h, d, c; per blob (a, b, c) the steps along x, y, z, c; the
// blobs' packing axes; the count of output values; the blobs' group steps; coeff_a, coeff_b.
#version 450
#extension GL_GOOGLE_include_directive : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int op = 0;
layout(constant_id = 4) const int pack_a = 1;
layout(constant_id = 5) const int pack_b = 1;
layout(constant_id = 6) const int pack_c = 1;
layout(constant_id = 7) const int with_scalar = 0;
layout(constant_id = 8) const float scalar = 0.0;
layout(constant_id = 9) const int act = 0;
layout(constant_id = 10) const float p0 = 0.0;
layout(constant_id = 11) const float p1 = 0.0;

layout(binding = 0) readonly buffer A { STORE v[]; } a;
layout(binding = 1) readonly buffer B { STORE v[]; } b;
layout(binding = 2) writeonly buffer C { STORE v[]; } c;

layout(push_constant) uniform Push {
  ivec4 ext;
  ivec4 step_a, step_b, step_c;
  int axis_a, axis_b, axis_c, n;
  int group_a, group_b, group_c;
  float coeff_a, coeff_b;
} pc;

#include "activation.glsl"

// Where the blob keeps the value at output position p.
int at(ivec4 p, int pack, ivec4 step, int axis, int group) {
  const int o = axis < 0 ? 0 : p[axis];
  const ivec4 q = p * step;
  return ((o / pack) * group + q.x + q.y + q.z + q.w) * pack + o % pack;
}

// std::pow's results where GLSL's pow is undefined: a negative base with an integer exponent, and
// a zero base.
float pow_ieee(float x, float y) {
  if (x > 0.0) return pow(x, y);
  const bool odd = abs(mod(y, 2.0)) == 1.0;
  if (x == 0.0) {
    if (y == 0.0) return 1.0;
    if (y > 0.0) return odd ? x : 0.0;
    return odd ? 1.0 / x : 1.0 / 0.0;
  }
  if (y != floor(y)) return 0.0 / 0.0;
  const float r = pow(-x, y);
  return odd ? -r : r;
}

float apply(float x, float y) {
  if (op == 0) return x + y;
  if (op == 1) return x - y;
  if (op == 2) return x * y;
  if (op == 3) return x / y;
  if (op == 4) return x < y ? y : x;  // std::max: x when neither is greater
  if (op == 5) return y < x ? y : x;  // std::min
  if (op == 6) return pow_ieee(x, y);
  if (op == 7) return y - x;
  if (op == 8) return y / x;
  if (op == 9) return pow_ieee(y, x);
  if (op == 10) return atan(x, y);
  return atan(y, x);
}

void main() {
  // Large blobs dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const int i = int(gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                    gl_GlobalInvocationID.x);
  if (i >= pc.n) return;
  // The output's storage order: lane, then its other axes x to c, then its packing group.
  ivec4 e = pc.ext;
  e[pc.axis_c] = 1;
  int j = i / pack_c;
  ivec4 p;
  p.x = j % e.x;
  j /= e.x;
  p.y = j % e.y;
  j /= e.y;
  p.z = j % e.z;
  j /= e.z;
  p.w = j % e.w;
  j /= e.w;
  p[pc.axis_c] = j * pack_c + i % pack_c;

  const float x = float(a.v[at(p, pack_a, pc.step_a, pc.axis_a, pc.group_a)]);
  const float y = with_scalar != 0 ? scalar
                                   : float(b.v[at(p, pack_b, pc.step_b, pc.axis_b, pc.group_b)]);
  c.v[at(p, pack_c, pc.step_c, pc.axis_c, pc.group_c)] =
      STORE(activate(apply(pc.coeff_a * x, pc.coeff_b * y), act, p0, p1));
}
