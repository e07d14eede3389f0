// Convolution as an implicit GEMM with fp32 FMAs, the portable fast path for every convolution
// with more than one input channel per group (conv_gemm_tc.comp is the tensor-core form): per
// group g, top[M x N] = W[M x K] * im2col(bottom)[K x N], M the group's output channels, N the
// output pixels, K = (input channels per group) x kernel_h x kernel_w. The im2col matrix is never
// stored: each workgroup gathers its K x N tile from the input blob (taps outside the input read
// the pad value) into shared memory.
//
// A workgroup of 128 invocations computes a 64 x 64 tile of the output, stepping K by 32, each
// invocation 8 output channels x 4 pixels; then bias, residual and activation in f32 and the
// store (pack 1 or 4). Where the output has too few tiles to fill the device, K is split:
// workgroup z = split * group + g sums its k_split of K and stores the partial sums in f32 to
// `partial` ([split][outc][pixels]), and conv_gemm_reduce.comp adds them up and applies the
// epilogue.
//
// Weights are laid out at load for this kernel: [output channel][K_pad], K ordered (ky, kx,
// input channel) so that four consecutive k of a pack-4 input are one load, each row zero-padded
// to K_pad (a multiple of 32) so that the weight tile needs no bound on k.
// Specialization constants: 0-2 workgroup size (128, 1, 1); 3/4 kernel w/h, 5/6 dilation w/h,
// 7/8 stride w/h, 9 group, 10 input pack, 11 output pack, 12 bias term, 13 activation, 14/15 its
// parameters, 16 pad value, 17 split (1: store partial sums), 18 the residual's pack (0: none;
// else a blob of the output's shape added before the activation), 22 vec_gather (1: a pack-4
// input whose group channels start and end on packs, read four k a load; the host decides it for
// this kernel and conv_gemm_tc.comp alike), 23 gated (1: binding 6 holds a squeeze-excitation
// gate, a value per input channel, that multiplies the input as it is gathered), 24 the
// multiply's activation, applied after it, 25/26 its parameters.
// Push constants: input w, h, c, channel step (packed elements); the same of the output; left and
// top padding; K, K_pad and k_split (a multiple of 32); the residual's channel step.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if INFER_FP16_STORAGE
#extension GL_EXT_shader_16bit_storage : require
#define STORE float16_t
#define STORE4 f16vec4
#else
#define STORE float
#define STORE4 vec4
#endif

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int kernel_w = 1;
layout(constant_id = 4) const int kernel_h = 1;
layout(constant_id = 5) const int dilation_w = 1;
layout(constant_id = 6) const int dilation_h = 1;
layout(constant_id = 7) const int stride_w = 1;
layout(constant_id = 8) const int stride_h = 1;
layout(constant_id = 9) const int group = 1;
layout(constant_id = 10) const int in_pack = 1;
layout(constant_id = 11) const int out_pack = 1;
layout(constant_id = 12) const int bias_term = 0;
layout(constant_id = 13) const int act = 0;
layout(constant_id = 14) const float p0 = 0.0;
layout(constant_id = 15) const float p1 = 0.0;
layout(constant_id = 16) const float pad_value = 0.0;
layout(constant_id = 17) const int split = 0;
layout(constant_id = 18) const int res_pack = 0;
layout(constant_id = 22) const int vec_gather = 0;
// 1: a squeeze-excitation gate fused in (binding 6, a value per input channel), the multiply's
// activation gate_act (p0, p1 its parameters) applied after it.
layout(constant_id = 23) const int gated = 0;
layout(constant_id = 24) const int gate_act = 0;
layout(constant_id = 25) const float gate_p0 = 0.0;
layout(constant_id = 26) const float gate_p1 = 0.0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 0) readonly buffer Bottom4 { STORE4 v[]; } bottom4;
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 1) writeonly buffer Top4 { STORE4 v[]; } top4;
layout(binding = 2) readonly buffer Weights4 { STORE4 v[]; } weights4;
layout(binding = 3) readonly buffer Bias { STORE v[]; } bias;
layout(binding = 4) writeonly buffer Partial { float v[]; } partial;
layout(binding = 5) readonly buffer Residual { STORE v[]; } residual;
layout(binding = 6) readonly buffer Gate { STORE v[]; } gate;

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, outc, out_cstep;
  int pad_left, pad_top;
  int K, K_pad, k_split;
  int res_cstep;
} pc;

#include "activation.glsl"
#include "conv_gemm_common.glsl"

// The bias of output channels m..m+3 of group g (0 past M or without a bias term).
vec4 bias_quad(int g, int M, int m) {
  vec4 b = vec4(0.0);
  if (bias_term != 0)
    [[unroll]] for (int e = 0; e < 4; ++e)
      if (m + e < M) b[e] = float(bias.v[g * M + m + e]);
  return b;
}

#define BM 64
#define BN 64
#define BK 32
#define THREADS 128

#define SH_ROW 9
shared vec4 As[BM * SH_ROW];  // [row m][k / 4]
shared vec4 Bs[BN * SH_ROW];  // [pixel n][k / 4]: B column-major

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int g = int(gl_WorkGroupID.z) % group;
  const int part = int(gl_WorkGroupID.z) / group;
  const int k_begin = part * pc.k_split;
  const int k_end = min(pc.K_pad, k_begin + pc.k_split);
  const int M = pc.outc / group;        // output channels of the group
  const int cin = pc.c / group;         // input channels of the group
  const int N = pc.outw * pc.outh;
  const int m0 = int(gl_WorkGroupID.y) * BM;
  const int n0 = int(gl_WorkGroupID.x) * BN;
  // Four k at once from one pack-4 load when the group's channels start and end on packs.
  const bool vec_in = vec_gather != 0;

  // This invocation's pixel of the B tile (the same for every chunk) and its A rows.
  const int bn = tid % BN;
  const int p = n0 + bn;
  const bool p_ok = p < N;
  const int oy = p_ok ? p / pc.outw : 0;
  const int iy0 = oy * stride_h - pc.pad_top;
  const int ix0 = (p_ok ? p - oy * pc.outw : 0) * stride_w - pc.pad_left;
  const int row_k4 = pc.K_pad / 4;

  vec4 a_reg[4], b_reg[4];

#define FETCH(k0)                                                                            \
  [[unroll]] for (int i = 0; i < 4; ++i) {                                                              \
    const int u = tid + THREADS * i;                                                         \
    const int am = m0 + u / 8;                                                               \
    const int ak4 = (k0) / 4 + u % 8;                                                        \
    FETCH_A(am < M, (g * M + am) * row_k4 + ak4, a_reg[i]);                                  \
    const int k = (k0) + 4 * (tid / BN + 2 * i);                                             \
    if (!p_ok || k >= pc.K) {                                                                \
      b_reg[i] = vec4(0.0);                                                           \
    } else if (vec_in) {                                                                     \
      const int tap = k / cin;                                                               \
      const int ky = tap / kernel_w;                                                         \
      const int iy = iy0 + ky * dilation_h;                                                  \
      const int ix = ix0 + (tap - ky * kernel_w) * dilation_w;                               \
      const int ic = g * cin + (k - tap * cin);                                              \
      if (iy < 0 || iy >= pc.h || ix < 0 || ix >= pc.w)                                      \
        b_reg[i] = vec4(pad_value);                                                   \
      else {                                                                                 \
        FETCH_B((ic / 4) * pc.cstep + iy * pc.w + ix, b_reg[i]);                             \
        if (gated != 0)                                                                      \
          b_reg[i] = gated_quad(b_reg[i], vec4(gate.v[ic], gate.v[ic + 1], gate.v[ic + 2],   \
                                               gate.v[ic + 3]));                             \
      }                                                                                      \
    } else {                                                                                 \
      vec4 v = vec4(0.0);                                                                    \
      [[unroll]] for (int j = 0; j < 4; ++j) {                                                          \
        const int kk = k + j;                                                                \
        if (kk < pc.K) {                                                                     \
          const int tap = kk / cin;                                                          \
          const int ky = tap / kernel_w;                                                     \
          v[j] = input_at(g * cin + (kk - tap * cin), iy0 + ky * dilation_h,                 \
                          ix0 + (tap - ky * kernel_w) * dilation_w);                         \
        }                                                                                    \
      }                                                                                      \
      b_reg[i] = v;                                                                   \
    }                                                                                        \
  }

#define FETCH_A(ok, index, dst) dst = (ok) ? vec4(weights4.v[index]) : vec4(0.0)
#define FETCH_B(index, dst) dst = vec4(bottom4.v[index])
  const int tx = tid % 16, ty = tid / 16;
  float acc[8][4];
  [[unroll]] for (int i = 0; i < 8; ++i)
    [[unroll]] for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;

  FETCH(k_begin)
  for (int k0 = k_begin; k0 < k_end; k0 += BK) {
    barrier();
    [[unroll]] for (int i = 0; i < 4; ++i) {
      const int u = tid + THREADS * i;
      As[(u / 8) * SH_ROW + u % 8] = a_reg[i];
      Bs[bn * SH_ROW + tid / BN + 2 * i] = b_reg[i];
    }
    memoryBarrierShared();
    barrier();
    if (k0 + BK < k_end) {
      FETCH(k0 + BK)
    }
    [[unroll]] for (int k4 = 0; k4 < BK / 4; ++k4) {
      vec4 a[8], b[4];
      [[unroll]] for (int i = 0; i < 8; ++i) a[i] = As[(ty * 8 + i) * SH_ROW + k4];
      [[unroll]] for (int j = 0; j < 4; ++j) b[j] = Bs[(tx + 16 * j) * SH_ROW + k4];
      [[unroll]] for (int i = 0; i < 8; ++i)
        [[unroll]] for (int j = 0; j < 4; ++j) acc[i][j] += dot(a[i], b[j]);
    }
  }

  // Epilogue: four consecutive output channels of the group at one pixel of the tile.
  [[unroll]] for (int r = 0; r < 2; ++r) {
    const vec4 b = bias_quad(g, M, m0 + ty * 8 + 4 * r);
    [[unroll]] for (int j = 0; j < 4; ++j)
      store_quad(g, M, N, part, m0 + ty * 8 + 4 * r, n0 + tx + 16 * j,
                 vec4(acc[4 * r][j], acc[4 * r + 1][j], acc[4 * r + 2][j], acc[4 * r + 3][j]), b);
  }
}
