// Moves values between two blobs by logical index, one invocation per value moved: reshape and
// flatten (any shapes of equal total), pack changes (any pack each side), storage conversion, a
// part of an axis (Concat writes one, Slice reads one) and ShuffleChannel's permutation. Invocation
// i stands for (q, a, r): outer position, step along the axis (extent `ext`), inner position (of
// `inner`); it reads logical value (q * src_ext + perm(a) + src_off) * inner + r of the source and
// writes (q * dst_ext + a + dst_off) * inner + r of the destination. A blob's logical value L sits
// in storage at (o / pack) * gstride * pack + r * pack + o % pack, o = L / ginner, r = L % ginner:
// o runs along the packed axis (w of 1-D, h of 2-D, c otherwise), gstride is its groups' distance.
// The f32 module moves f32 to f32; the f16 one (INFER_FP16_STORAGE) sees each buffer as f16 and as
// f32 (aliased bindings), so it converts either way. Specialization constants: 0-2 workgroup size;
// 3/4 source/destination pack; 5/6 source/destination is f16 (f16 module only).
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int src_pack = 1;
layout(constant_id = 4) const int dst_pack = 1;
layout(constant_id = 5) const int src_f16 = 0;
layout(constant_id = 6) const int dst_f16 = 0;

layout(binding = 0) readonly buffer Src { float v[]; } src;
layout(binding = 1) writeonly buffer Dst { float v[]; } dst;
#if INFER_FP16_STORAGE
layout(binding = 0) readonly buffer Src16 { float16_t v[]; } src16;
layout(binding = 1) writeonly buffer Dst16 { float16_t v[]; } dst16;
#endif

layout(push_constant) uniform Push {
  int n;                          // values to move
  int inner, ext;                 // per step along the axis; steps of the iterated part
  int src_ext, src_off;           // the source's extent along the axis and the part's start
  int dst_ext, dst_off;           // the same for the destination
  int rows, cols;                 // perm(a) = (a % rows) * cols + a / rows (rows 1: identity)
  int src_ginner, src_gstride;    // the source's values per packed-axis step; group distance
  int dst_ginner, dst_gstride;
} pc;

int storage_index(int l, int ginner, int gstride, int pack) {
  const int o = l / ginner, r = l - o * ginner;
  return (o / pack) * gstride * pack + r * pack + o % pack;
}

void main() {
  // Large moves dispatch rows of at most 65535 workgroups (the guaranteed limit).
  const uint id = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x +
                  gl_GlobalInvocationID.x;
  if (id >= uint(pc.n)) return;
  const int i = int(id);
  const int step = i / pc.inner, r = i - step * pc.inner;
  const int q = step / pc.ext, a = step - q * pc.ext;
  const int from = (a % pc.rows) * pc.cols + a / pc.rows;
  const int s = storage_index((q * pc.src_ext + from + pc.src_off) * pc.inner + r, pc.src_ginner,
                              pc.src_gstride, src_pack);
  const int d = storage_index((q * pc.dst_ext + a + pc.dst_off) * pc.inner + r, pc.dst_ginner,
                              pc.dst_gstride, dst_pack);
#if INFER_FP16_STORAGE
  const float value = src_f16 != 0 ? float(src16.v[s]) : src.v[s];
  if (dst_f16 != 0) {
    dst16.v[d] = float16_t(value);
  } else {
    dst.v[d] = value;
  }
#else
  dst.v[d] = src.v[s];
#endif
}
