// Convolution at stride 1 with a window of 2 to 9 taps (3x3, 3x1, 2x2, dilated or not) on the
// tensor cores (GL_NV_cooperative_matrix), reading each input value once a step: the product of
// conv_gemm_tc.comp (top[M x N] = W[M x K] * im2col(bottom)[K x N], per group) with K walked as
// channel chunks of 16, each chunk's taps taken from one tile of the input in shared memory.
//
// A workgroup of sg_m x sg_n subgroups computes 32 sg_m output channels over a block of output
// pixels 16 columns wide and 4 sg_n rows high; each subgroup 32 channels x 4 rows, as 2 x 4
// products of 16 x 16 (one row of 16 pixels each). A step copies into shared memory
// - the weights of a chunk for every tap, [tap][row m][16 channels], and
// - the chunk's input over the block and its halo ((4 sg_n + (kernel_h - 1) dilation_h) rows x
//   (16 + (kernel_w - 1) dilation_w) columns x 16 channels, the pad value outside the input),
// as 16-byte units (eight channels), rows padded by one unit so that the matrix loads of eight
// rows hit distinct banks. Tap (ky, kx) of output row r is then the halo's row r + ky dilation_h
// from column kx dilation_w: one matrix load at a constant offset, no gather, no division. The
// im2col kernel gathers each input value once per tap instead (nine times on a 3x3 window), with
// the address arithmetic and bounds tests that go with it.
// The next step's units are fetched into registers while the subgroups multiply. A fused
// squeeze-excitation gate scales each input channel (then the multiply's activation) where a unit
// reaches shared memory. The epilogue is conv_gemm_tc.comp's (bias, residual, activation, or the
// partial sums of a split K, through conv_gemm_common.glsl's store_quad).
//
// Input: pack 4, a multiple of 8 channels a group (a unit is two four-channel halves of one
// pixel). Weights: conv_gemm_weights' layout, [output channel][K_pad], k = tap * cin + channel
// (a chunk's eight channels of one tap are one aligned unit).
// Specialization constants: 0-2 workgroup size (32 sg_m sg_n, 1, 1); 3-18 as conv_gemm.comp
// (strides 1); 19 sg_m (1 or 2), 20 sg_n (1, 2 or 4); 23-26 the gate as conv_gemm_tc.comp.
// Push constants as conv_gemm.comp, with k_split the channels of a part (a multiple of 16).
// infer-variants: coopmat
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define STORE float16_t
#define STORE4 f16vec4

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 3) const int kernel_w = 3;
layout(constant_id = 4) const int kernel_h = 3;
layout(constant_id = 5) const int dilation_w = 1;
layout(constant_id = 6) const int dilation_h = 1;
layout(constant_id = 7) const int stride_w = 1;
layout(constant_id = 8) const int stride_h = 1;
layout(constant_id = 9) const int group = 1;
layout(constant_id = 10) const int in_pack = 4;
layout(constant_id = 11) const int out_pack = 1;
layout(constant_id = 12) const int bias_term = 0;
layout(constant_id = 13) const int act = 0;
layout(constant_id = 14) const float p0 = 0.0;
layout(constant_id = 15) const float p1 = 0.0;
layout(constant_id = 16) const float pad_value = 0.0;
layout(constant_id = 17) const int split = 0;
layout(constant_id = 18) const int res_pack = 0;
layout(constant_id = 19) const int sg_m = 2;
layout(constant_id = 20) const int sg_n = 4;
layout(constant_id = 23) const int gated = 0;
layout(constant_id = 24) const int gate_act = 0;
layout(constant_id = 25) const float gate_p0 = 0.0;
layout(constant_id = 26) const float gate_p1 = 0.0;

layout(binding = 0) readonly buffer Bottom { STORE v[]; } bottom;
layout(binding = 0) readonly buffer BottomRaw { uvec2 v[]; } bottom_raw;  // 4 halves
layout(binding = 1) writeonly buffer Top { STORE v[]; } top;
layout(binding = 1) writeonly buffer Top4 { STORE4 v[]; } top4;
layout(binding = 2) readonly buffer WeightsRaw { uvec4 v[]; } weights_raw;  // 8 halves
layout(binding = 3) readonly buffer Bias { STORE v[]; } bias;
layout(binding = 4) writeonly buffer Partial { float v[]; } partial;
layout(binding = 5) readonly buffer Residual { STORE v[]; } residual;
layout(binding = 6) readonly buffer Gate { STORE v[]; } gate;
layout(binding = 6) readonly buffer GateRaw { uvec2 v[]; } gate_raw;  // 4 halves

layout(push_constant) uniform Push {
  int w, h, c, cstep;
  int outw, outh, outc, out_cstep;
  int pad_left, pad_top;
  int K, K_pad, k_split;
  int res_cstep;
} pc;

#include "activation.glsl"
#include "conv_gemm_common.glsl"

const int THREADS = 32 * sg_m * sg_n;
const int BM = 32 * sg_m;                                 // output channels of the tile
const int TR = 4 * sg_n;                                  // output rows of the tile
const int TC = 16;                                        // output columns of the tile
const int CK = 16;                                        // channels a step
const int U = CK / 8;                                     // 16-byte units of a row per step
const int ROW = U + 1;                                    // units per shared row, 1 of padding
const int TAPS = kernel_w * kernel_h;
const int HR = TR + (kernel_h - 1) * dilation_h;          // halo rows
const int HC = TC + (kernel_w - 1) * dilation_w;          // halo columns
const int A_TOTAL = TAPS * BM * U;                        // weight units a step
const int H_TOTAL = HR * HC * U;                          // input units a step
const int A_PER = (A_TOTAL + THREADS - 1) / THREADS;      // each invocation's weight units
const int H_PER = (H_TOTAL + THREADS - 1) / THREADS;      // each invocation's input units
const int H_BASE = TAPS * BM * ROW;                       // where the halo starts in S
const int AB_UNITS = H_BASE + HR * HC * ROW;
const int C_COL = 5;  // units per pixel column of the epilogue's scratch: 4 + 1
const int C_UNITS = sg_m * sg_n * 64 * C_COL;

// A step's tiles, the weights S[0, H_BASE) as [tap][row m][unit] and the halo S[H_BASE, ...) as
// [halo pixel][unit]; after the last step, each subgroup's epilogue scratch.
shared uvec4 S[AB_UNITS > C_UNITS ? AB_UNITS : C_UNITS];
shared float bias_s[BM];

uvec2 halves4(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int g = int(gl_WorkGroupID.z) % group;
  const int part = int(gl_WorkGroupID.z) / group;
  const int M = pc.outc / group;
  const int cin = pc.c / group;
  const int N = pc.outw * pc.outh;
  const int c_begin = part * pc.k_split;
  const int c_end = min(cin, c_begin + pc.k_split);
  const int tiles_x = (pc.outw + TC - 1) / TC;
  const int tx0 = (int(gl_WorkGroupID.x) % tiles_x) * TC;
  const int ty0 = (int(gl_WorkGroupID.x) / tiles_x) * TR;
  const int m0 = int(gl_WorkGroupID.y) * BM;
  const uvec2 pad2 = halves4(vec4(pad_value));

  for (int i = tid; i < BM; i += THREADS)
    bias_s[i] = bias_term != 0 && m0 + i < M ? float(bias.v[g * M + m0 + i]) : 0.0;

  // This invocation's weight units, e = tid + i THREADS over [tap][row][unit]: where each starts
  // (chunk 0), where it goes, its unit within the chunk, whether its row exists.
  int a_at[A_PER], a_dst[A_PER], a_u[A_PER];
  bool a_row[A_PER];
  [[unroll]] for (int i = 0; i < A_PER; ++i) {
    const int e = tid + i * THREADS;
    const int u = e % U, m = (e / U) % BM, t = e / (U * BM);
    a_row[i] = e < A_TOTAL && m0 + m < M;
    a_at[i] = (g * M + m0 + m) * (pc.K_pad / 8) + (t * cin) / 8 + u;
    a_dst[i] = e < A_TOTAL ? (t * BM + m) * ROW + u : -1;
    a_u[i] = u;
  }
  // Its input units, e over [halo pixel][unit]: the pixel's offset in a channel plane (-1 outside
  // the input: the pad value), where it goes, its unit.
  int h_pix[H_PER], h_dst[H_PER], h_u[H_PER];
  [[unroll]] for (int j = 0; j < H_PER; ++j) {
    const int e = tid + j * THREADS;
    const int hp = e / U, hy = hp / HC, hx = hp - hy * HC;
    const int iy = ty0 - pc.pad_top + hy, ix = tx0 - pc.pad_left + hx;
    h_pix[j] = iy >= 0 && iy < pc.h && ix >= 0 && ix < pc.w ? iy * pc.w + ix : -1;
    h_dst[j] = e < H_TOTAL ? H_BASE + hp * ROW + e % U : -1;
    h_u[j] = e % U;
  }

  // A step's units as loaded. Every load reads a valid address and nothing uses its value before
  // the next step's stores, so the loads stay in flight while the subgroups multiply.
  // h_code per unit: 0 the input, 1 zeros (channels past the group's), 2 the pad value.
  uvec4 a_reg[A_PER], h_reg[H_PER];
  bool a_ok[A_PER];
  uint h_code[H_PER];
  uvec4 g_reg[H_PER];  // a fused gate's values for the unit's eight channels

#define FETCH(c0)                                                                              \
  {                                                                                            \
    [[unroll]] for (int i = 0; i < A_PER; ++i) {                                               \
      a_ok[i] = a_row[i] && (c0) + 8 * a_u[i] < cin;                                           \
      a_reg[i] = weights_raw.v[a_ok[i] ? a_at[i] + (c0) / 8 : 0];                              \
    }                                                                                          \
    [[unroll]] for (int j = 0; j < H_PER; ++j) {                                               \
      const int cc = (c0) + 8 * h_u[j];                                                        \
      const int quad = (g * cin + cc) / 4;                                                     \
      h_code[j] = cc >= cin ? 1u : h_pix[j] < 0 ? 2u : 0u;                                     \
      const bool live = h_code[j] == 0u;                                                       \
      h_reg[j] = uvec4(bottom_raw.v[live ? quad * pc.cstep + h_pix[j] : 0],                    \
                       bottom_raw.v[live ? (quad + 1) * pc.cstep + h_pix[j] : 0]);             \
      if (gated != 0)                                                                          \
        g_reg[j] = uvec4(gate_raw.v[live ? quad : 0], gate_raw.v[live ? quad + 1 : 0]);        \
    }                                                                                          \
  }

  const int sg = int(gl_SubgroupID);
  const int wm = (sg % sg_m) * 32, wr = (sg / sg_m) * 4;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2][4];
  [[unroll]] for (int i = 0; i < 2; ++i)
    [[unroll]] for (int j = 0; j < 4; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  FETCH(c_begin)
  for (int c0 = c_begin; c0 < c_end; c0 += CK) {
    barrier();
    [[unroll]] for (int i = 0; i < A_PER; ++i)
      if (a_dst[i] >= 0) S[a_dst[i]] = a_ok[i] ? a_reg[i] : uvec4(0);
    [[unroll]] for (int j = 0; j < H_PER; ++j) {
      if (h_dst[j] < 0) continue;
      uvec4 q = h_reg[j];
      if (gated != 0 && h_code[j] == 0u) {
        const vec4 lo = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
        const vec4 hi = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
        const uvec4 gv = g_reg[j];
        q = uvec4(halves4(gated_quad(lo, vec4(unpackHalf2x16(gv.x), unpackHalf2x16(gv.y)))),
                  halves4(gated_quad(hi, vec4(unpackHalf2x16(gv.z), unpackHalf2x16(gv.w)))));
      }
      if (h_code[j] != 0u) q = h_code[j] == 1u ? uvec4(0) : uvec4(pad2, pad2);
      S[h_dst[j]] = q;
    }
    barrier();
    if (c0 + CK < c_end) FETCH(c0 + CK)
    [[unroll]] for (int t = 0; t < TAPS; ++t) {
      const int ky = t / kernel_w, kx = t - ky * kernel_w;
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[2], b;
      [[unroll]] for (int i = 0; i < 2; ++i)
        coopMatLoadNV(a[i], S, (t * BM + wm + 16 * i) * ROW, ROW, false);
      [[unroll]] for (int j = 0; j < 4; ++j) {
        const int hp = (wr + j + ky * dilation_h) * HC + kx * dilation_w;
        coopMatLoadNV(b, S, H_BASE + hp * ROW, ROW, true);
        [[unroll]] for (int i = 0; i < 2; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
      }
    }
  }

  // Epilogue, 16 channels x 64 pixels (the subgroup's four rows of 16) at a time through the
  // subgroup's scratch, column-major so that four channels of a pixel are one unit: invocation l
  // takes pixels l and l + 32 of the four rows, each channel quad; columns past the output's
  // width and rows past its height are not stored.
  barrier();  // every subgroup is done with the tiles the scratch reuses
  const int lane = int(gl_SubgroupInvocationID);
  const int cs = sg * 64 * C_COL;
  [[unroll]] for (int i = 0; i < 2; ++i) {
    [[unroll]] for (int j = 0; j < 4; ++j)
      coopMatStoreNV(acc[i][j], S, cs + 16 * j * C_COL, C_COL, true);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (int r = 0; r < 4; ++r) {
      const int ml = wm + 16 * i + 4 * r;
      const vec4 b = vec4(bias_s[ml], bias_s[ml + 1], bias_s[ml + 2], bias_s[ml + 3]);
      [[unroll]] for (int t = 0; t < 2; ++t) {
        const int n = lane + 32 * t;
        const int oy = ty0 + wr + n / 16, ox = tx0 + n % 16;
        const int q = oy < pc.outh && ox < pc.outw ? oy * pc.outw + ox : N;
        store_quad(g, M, N, part, m0 + ml, q, uintBitsToFloat(S[cs + n * C_COL + r]), b);
      }
    }
    subgroupBarrier();
  }
}
