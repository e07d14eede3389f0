// Max and average pooling, one invocation per output value (x, y, channel), windows as infer's
// CPU kernel takes them (kernels::PoolAxis): sliding (kernel, stride, padding before) or adaptive
// (even windows over the input), an average reading and counting only positions in
// [count_begin, count_end) per axis; a max window that reaches into the padding also sees the pad
// value (the lowest float). Input and output at the same pack (1 or 4); storage f32, or f16 with
// INFER_FP16_STORAGE (arithmetic in f32). Specialization constants: 0-2 workgroup size; 3 max (0)
// or average (1), 4 pack, 5/6 kernel w/h, 7/8 stride w/h, 9 adaptive. Push constants: input w, h,
// c and channel step; output w, h and channel step; pads left and top; count bounds x then y.
#version 450
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#else
#define STORE float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int average = 0;
layout(constant_id = 4) const int pack = 1;
layout(constant_id = 5) const int kernel_w = 1;
layout(constant_id = 6) const int kernel_h = 1;
layout(constant_id = 7) const int stride_w = 1;
layout(constant_id = 8) const int stride_h = 1;
layout(constant_id = 9) const int adaptive = 0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, out_cstep;
  int pad_left, pad_top;
  int count_begin_x, count_end_x, count_begin_y, count_end_y;
} pc;

// Window o along an axis: x = first position read, y = one past the last, z = positions counted,
// w = 1 when it reaches into the padding.
ivec4 window(int o, int n, int out_n, int kernel, int stride, int pad, int cb, int ce) {
  if (adaptive != 0) {
    const int b = o * n / out_n;
    const int e = ((o + 1) * n + out_n - 1) / out_n;
    return ivec4(b, e, e - b, 0);
  }
  const int w0 = o * stride - pad, w1 = w0 + kernel;
  const int lo = max(cb, 0), hi = min(ce, n);
  const int c0 = max(w0, cb), c1 = min(w1, ce);
  return ivec4(max(w0, lo), min(w1, hi), max(c1 - c0, 0), (w0 < 0 || w1 > n) ? 1 : 0);
}

void main() {
  const int x = int(gl_GlobalInvocationID.x);
  const int y = int(gl_GlobalInvocationID.y);
  const int ch = int(gl_GlobalInvocationID.z);
  if (x >= pc.outw || y >= pc.outh || ch >= pc.c) return;
  const ivec4 wx = window(x, pc.w, pc.outw, kernel_w, stride_w, pc.pad_left, pc.count_begin_x,
                          pc.count_end_x);
  const ivec4 wy = window(y, pc.h, pc.outh, kernel_h, stride_h, pc.pad_top, pc.count_begin_y,
                          pc.count_end_y);
  const int base = (ch / pack) * pc.cstep * pack + ch % pack;
  float acc = average != 0 ? 0.0 : -1.0 / 0.0;
  for (int iy = wy.x; iy < wy.y; ++iy)
    for (int ix = wx.x; ix < wx.y; ++ix) {
      const float v = float(bottom.v[base + (iy * pc.w + ix) * pack]);
      acc = average != 0 ? acc + v : max(acc, v);
    }
  float result;
  if (average != 0) {
    result = acc / float(wx.z * wy.z);
  } else {
    result = (wx.w != 0 || wy.w != 0) ? max(acc, -3.402823466e38) : acc;
  }
  top.v[(ch / pack) * pc.out_cstep * pack + (y * pc.outw + x) * pack + ch % pack] = STORE(result);
}
