// The device's arithmetic peak, for bench_gpu_conv to report fractions of. The coopmat variant:
// each subgroup runs `iterations` x 4 independent 16x16x16 fp16 products accumulated in f32 on
// the tensor cores; the f32 variant: each invocation 8 independent chains of vec4 FMAs. The
// results are stored so that nothing is optimised away. Constant 3: iterations.
// infer-variant: coopmat
#version 450
#extension GL_EXT_control_flow_attributes : require
#if INFER_COOPMAT
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int iterations = 1024;

layout(binding = 0) buffer Data { float v[]; } data;
#if INFER_COOPMAT
layout(binding = 0) buffer DataH { float16_t v[]; } data_h;
#endif

void main() {
#if INFER_COOPMAT
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a, b;
  coopMatLoadNV(a, data_h.v, 0, 16, false);
  coopMatLoadNV(b, data_h.v, 256, 16, false);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[4];
  [[unroll]] for (int i = 0; i < 4; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  for (int it = 0; it < iterations; ++it) {
    [[unroll]] for (int i = 0; i < 4; ++i) acc[i] = coopMatMulAddNV(a, b, acc[i]);
  }
  const uint sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  [[unroll]] for (int i = 0; i < 4; ++i)
    coopMatStoreNV(acc[i], data.v, 1024 + (sg * 4 + i) * 256, 16, false);
#else
  const uint id = gl_GlobalInvocationID.x;
  vec4 x[8];
  const vec4 y = vec4(data.v[0], data.v[1], data.v[2], data.v[3]);
  const vec4 z = vec4(data.v[4]);
  [[unroll]] for (int i = 0; i < 8; ++i) x[i] = vec4(float(i) + float(id & 7u));
  for (int it = 0; it < iterations; ++it) {
    [[unroll]] for (int i = 0; i < 8; ++i) x[i] = fma(x[i], y, z);
  }
  vec4 s = x[0];
  [[unroll]] for (int i = 1; i < 8; ++i) s += x[i];
  data.v[1024 + id] = s.x + s.y + s.z + s.w;
#endif
}
