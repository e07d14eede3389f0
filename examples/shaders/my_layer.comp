// examples/custom_layer.cpp's MyLayer on the GPU, as a user brings a layer's kernel: built by
// infer_add_shaders() into <infer_shaders/my_layer_f32.hpp> and _f16.hpp. In place over every
// stored value: y = x / sqrt(x * x + eps) * gamma[channel]. Specialization constants: 0-2 the
// workgroup size (infer's convention), 3 eps, 4 the pack. Push constants: the count of stored
// values and the channel step (packed elements between channel groups).
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const float eps = 0.001;
layout(constant_id = 4) const int pack = 1;

layout(binding = 0) buffer Blob { STORE v[]; } blob;
layout(binding = 1) readonly buffer Gamma { STORE v[]; } gamma;
layout(push_constant) uniform Push { uint n; uint cstep; } pc;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  // Value i is lane i % pack of channel group i / (cstep * pack).
  const uint channel = (i / (pc.cstep * uint(pack))) * uint(pack) + i % uint(pack);
  const float x = float(blob.v[i]);
  blob.v[i] = STORE(x / sqrt(x * x + eps) * float(gamma.v[channel]));
}
