// Convolution as an implicit GEMM on the tensor cores (GL_NV_cooperative_matrix): the same
// product as conv_gemm.comp (per group g, top[M x N] = W[M x K] * im2col(bottom)[K x N]) for f16
// storage on devices with 16x16x16 fp16 cooperative matrices and 32-wide subgroups, accumulated
// in f32.
//
// A workgroup of sg_m x sg_n subgroups computes a (16 wt_m sg_m) x (16 wt_n sg_n) tile of the
// output, each subgroup 16 wt_m x 16 wt_n of it as wt_m x wt_n products (2 x 4, or smaller for
// small layers: fewer products in sequence on a subgroup, more subgroups over the same output);
// the host picks wt_m (1 or 2), wt_n (2 or 4), sg_m, sg_n (1, 2 or 4) and the K step
// BK (32 or 64: a longer step has more loads in flight per invocation and half the barriers per
// k) from the group's M, the pixel count N and K (conv_gemm_tc_tile): the workgroup copies the
// weight tile [rows][BK k] and the gathered input tile [pixels][BK k] into shared memory as
// 16-byte units (eight k), rows padded by one unit so that the matrix loads of eight rows hit
// distinct banks,
// and fetches the next step's units into registers while the subgroups multiply. The input gather
// keeps each of its k positions as (tap, channel) and moves them on by a step's taps and channels:
// no division in the steps.
// Pack-4 inputs whose group channels are a multiple of 4 load four channels of one pixel at once;
// other inputs gather value by value. A squeeze-excitation gate fused in (gated) scales each
// input channel, and the multiply's activation applies, where a unit reaches the shared tile.
//
// Each subgroup then writes its products 16 channels x 64 pixels at a time to its own shared
// scratch (reusing the tiles' memory), from where its invocations apply bias (staged in shared
// memory at the start), residual and activation and store four channels of one pixel each
// (conv_gemm_common.glsl), or the partial sums of a split K.
// Weights: conv_gemm_weights' layout, [output channel][K_pad], rows 16-byte aligned.
// Specialization constants: 0-2 workgroup size (32 sg_m sg_n, 1, 1); 3-18 as conv_gemm.comp;
// 19 sg_m, 20 sg_n, 21 bk (32 or 64), 22 vec_gather, 23-26 the gate, 27 wt_m, 28 wt_n. Push
// constants as conv_gemm.comp; k_split a multiple of bk.
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
layout(constant_id = 19) const int sg_m = 2;
layout(constant_id = 20) const int sg_n = 2;
layout(constant_id = 21) const int bk = 32;
// 1: pack-4 input with a multiple of 4 channels a group, gathered four channels at a time. A
// constant, so that the pipeline holds one gather path and its registers, not both.
layout(constant_id = 22) const int vec_gather = 0;
// 1: a squeeze-excitation gate fused in (binding 6, a value per input channel), the multiply's
// activation gate_act (p0, p1 its parameters) applied after it.
layout(constant_id = 23) const int gated = 0;
layout(constant_id = 24) const int gate_act = 0;
layout(constant_id = 25) const float gate_p0 = 0.0;
layout(constant_id = 26) const float gate_p1 = 0.0;
// A subgroup's products: wt_m (1 or 2) of 16 output channels by wt_n (2 or 4) of 16 pixels.
layout(constant_id = 27) const int wt_m = 2;
layout(constant_id = 28) const int wt_n = 4;

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
const int BM = 16 * wt_m * sg_m;
const int BN = 16 * wt_n * sg_n;
const int BK = bk;
const int KU = BK / 8;              // 16-byte units of a row per step
const int ROW = KU + 1;             // units per shared row: KU of data, 1 of padding
const int A_UNITS = BM * KU / THREADS;  // weight units each invocation copies per step
const int B_UNITS = BN * KU / THREADS;  // input units each invocation copies per step
const int RSTEP = THREADS / KU;     // rows between an invocation's units
const int C_COL = 5;                // units per pixel column of the epilogue's scratch: 4 + 1
const int AB_UNITS = (BM + BN) * ROW;
const int C_UNITS = sg_m * sg_n * 16 * wt_n * C_COL;

// The steps' tiles, As = S[0, BM ROW) as [row m][k / 8] and Bs = S[BM ROW, ...) as
// [pixel n][k / 8] (B column-major); after the last step, each subgroup's epilogue scratch.
shared uvec4 S[AB_UNITS > C_UNITS ? AB_UNITS : C_UNITS];
shared float bias_s[BM];

uvec2 halves4(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int g = int(gl_WorkGroupID.z) % group;
  const int part = int(gl_WorkGroupID.z) / group;
  const int k_begin = part * pc.k_split;
  const int k_end = min(pc.K_pad, k_begin + pc.k_split);
  const int M = pc.outc / group;
  const int cin = pc.c / group;
  const int N = pc.outw * pc.outh;
  const int m0 = int(gl_WorkGroupID.y) * BM;
  const int n0 = int(gl_WorkGroupID.x) * BN;
  const bool vec_in = vec_gather != 0;
  const uvec2 pad2 = halves4(vec4(pad_value));

  // The unit of eight k this invocation copies (the same for its A and B units), and the input
  // pixels of its B units.
  const int kq = tid % KU;
  int iy0[B_UNITS], ix0[B_UNITS];
  bool p_ok[B_UNITS];
  [[unroll]] for (int j = 0; j < B_UNITS; ++j) {
    const int p = n0 + tid / KU + j * RSTEP;
    p_ok[j] = p < N;
    const int oy = p_ok[j] ? p / pc.outw : 0;
    iy0[j] = oy * stride_h - pc.pad_top;
    ix0[j] = (p_ok[j] ? p - oy * pc.outw : 0) * stride_w - pc.pad_left;
  }
  // A step's units as loaded, and what stands in for them when they reach the shared tiles:
  // a_ok false, zeros; b_code per half (bits 0-1 the first, 2-3 the second), 1 zeros, 2 the pad
  // value. Every load reads a valid address and nothing uses its value before the next step's
  // stores, so that the loads stay in flight while the subgroups multiply (a load chosen by a
  // condition was waited for where the condition's two sides met, before the products).
  uvec4 a_reg[A_UNITS], b_reg[B_UNITS];
  bool a_ok[A_UNITS];
  uint b_code[B_UNITS];
  // A fused gate's values for the step's two four-channel halves (the four-channel gather; the
  // value gather gates as it reads), applied where the units reach the shared tiles.
  uvec2 g_reg[2] = {uvec2(0), uvec2(0)};
  // The tile's bias, read by the epilogue after the steps' barriers.
  for (int i = tid; i < BM; i += THREADS)
    bias_s[i] = bias_term != 0 && m0 + i < M ? float(bias.v[g * M + m0 + i]) : 0.0;

  // Where this invocation's weight units start (at k = 0), and whether their rows exist.
  int a_at[A_UNITS];
  bool a_row[A_UNITS];
  [[unroll]] for (int i = 0; i < A_UNITS; ++i) {
    const int am = m0 + tid / KU + i * RSTEP;
    a_row[i] = am < M;
    a_at[i] = (g * M + am) * (pc.K_pad / 8) + kq;
  }
  // Its k positions as (tap, channel within the group), for the next step to fetch: kept up to
  // date by adding BK = step_taps taps + step_c channels at each step, so that no step divides
  // (a workgroup alone on its unit runs its address arithmetic without other work to hide it).
  // Four-channel gathers need the unit's two halves, value gathers all eight values.
  const int step_taps = BK / cin, step_c = BK - step_taps * cin;
  int tap[8], ch[8];
  [[unroll]] for (int e = 0; e < 8; ++e) {
    const int k = k_begin + kq * 8 + (vec_in ? 4 * (e % 2) : e);
    tap[e] = k / cin;
    ch[e] = k - tap[e] * cin;
  }
  const int n_state = vec_in ? 2 : 8;

  // Loads step k0's units into a_reg, b_reg, then moves the k positions on by a step.
#define FETCH(k0)                                                                              \
  {                                                                                            \
    [[unroll]] for (int i = 0; i < A_UNITS; ++i) {                                             \
      a_ok[i] = a_row[i] && (k0) + 8 * kq < pc.K_pad;                                          \
      a_reg[i] = weights_raw.v[a_ok[i] ? a_at[i] + (k0) / 8 : 0];                              \
    }                                                                                          \
    const int kb = (k0) + kq * 8;                                                              \
    if (vec_in) {                                                                              \
      int off[2], dy[2], dx[2];                                                                \
      bool k_ok[2];                                                                            \
      [[unroll]] for (int hh = 0; hh < 2; ++hh) {                                              \
        k_ok[hh] = kb + 4 * hh < pc.K;                                                         \
        const int ky = tap[hh] / kernel_w;                                                     \
        dy[hh] = ky * dilation_h;                                                              \
        dx[hh] = (tap[hh] - ky * kernel_w) * dilation_w;                                       \
        off[hh] = ((g * cin + ch[hh]) / 4) * pc.cstep;                                         \
        if (gated != 0) g_reg[hh] = gate_raw.v[(g * cin + ch[hh]) / 4];                        \
      }                                                                                        \
      [[unroll]] for (int j = 0; j < B_UNITS; ++j) {                                           \
        uvec2 q[2];                                                                            \
        uint code = 0u;                                                                        \
        [[unroll]] for (int hh = 0; hh < 2; ++hh) {                                            \
          const int iy = iy0[j] + dy[hh], ix = ix0[j] + dx[hh];                                \
          const uint c = !p_ok[j] || !k_ok[hh]                                   ? 1u          \
                         : iy < 0 || iy >= pc.h || ix < 0 || ix >= pc.w ? 2u                   \
                                                                         : 0u;                 \
          code |= c << (2 * hh);                                                               \
          q[hh] = bottom_raw.v[c == 0u ? off[hh] + iy * pc.w + ix : 0];                        \
        }                                                                                      \
        b_code[j] = code;                                                                      \
        b_reg[j] = uvec4(q[0], q[1]);                                                          \
      }                                                                                        \
    } else {                                                                                   \
      int ic_of[8], dy[8], dx[8];                                                              \
      bool k_ok[8];                                                                            \
      [[unroll]] for (int e = 0; e < 8; ++e) {                                                 \
        k_ok[e] = kb + e < pc.K;                                                               \
        const int ky = tap[e] / kernel_w;                                                      \
        dy[e] = ky * dilation_h;                                                               \
        dx[e] = (tap[e] - ky * kernel_w) * dilation_w;                                         \
        ic_of[e] = g * cin + ch[e];                                                            \
      }                                                                                        \
      [[unroll]] for (int j = 0; j < B_UNITS; ++j) {                                           \
        vec4 v[2] = {vec4(0.0), vec4(0.0)};                                                    \
        [[unroll]] for (int e = 0; e < 8; ++e) {                                               \
          if (p_ok[j] && k_ok[e])                                                              \
            v[e / 4][e % 4] = input_at(ic_of[e], iy0[j] + dy[e], ix0[j] + dx[e]);              \
        }                                                                                      \
        b_reg[j] = uvec4(halves4(v[0]), halves4(v[1]));                                        \
        b_code[j] = 0u;                                                                        \
      }                                                                                        \
    }                                                                                          \
    [[unroll]] for (int e = 0; e < 8; ++e) {                                                   \
      if (e < n_state) {                                                                       \
        ch[e] += step_c;                                                                       \
        tap[e] += step_taps;                                                                   \
        if (ch[e] >= cin) ch[e] -= cin, ++tap[e];                                              \
      }                                                                                        \
    }                                                                                          \
  }

  const int sg = int(gl_SubgroupID);
  const int wm = (sg % sg_m) * 16 * wt_m, wn = (sg / sg_m) * 16 * wt_n;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[wt_m][wt_n];
  [[unroll]] for (int i = 0; i < wt_m; ++i)
    [[unroll]] for (int j = 0; j < wt_n; ++j)
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  FETCH(k_begin)
  for (int k0 = k_begin; k0 < k_end; k0 += BK) {
    barrier();
    [[unroll]] for (int i = 0; i < A_UNITS; ++i)
      S[(tid / KU + i * RSTEP) * ROW + kq] = a_ok[i] ? a_reg[i] : uvec4(0);
    [[unroll]] for (int j = 0; j < B_UNITS; ++j) {
      uvec2 q[2] = {b_reg[j].xy, b_reg[j].zw};
      [[unroll]] for (int hh = 0; hh < 2; ++hh) {
        const uint c = (b_code[j] >> (2 * hh)) & 3u;
        if (vec_in && gated != 0 && c == 0u) {
          const vec4 x = vec4(unpackHalf2x16(q[hh].x), unpackHalf2x16(q[hh].y));
          const vec4 gv = vec4(unpackHalf2x16(g_reg[hh].x), unpackHalf2x16(g_reg[hh].y));
          q[hh] = halves4(gated_quad(x, gv));
        }
        if (c != 0u) q[hh] = c == 1u ? uvec2(0) : pad2;
      }
      S[(BM + tid / KU + j * RSTEP) * ROW + kq] = uvec4(q[0], q[1]);
    }
    barrier();
    if (k0 + BK < k_end) FETCH(k0 + BK)
    [[unroll]] for (int kk = 0; kk < BK / 16; ++kk) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[wt_m], b;
      [[unroll]] for (int i = 0; i < wt_m; ++i)
        coopMatLoadNV(a[i], S, (wm + 16 * i) * ROW + 2 * kk, ROW, false);
      [[unroll]] for (int j = 0; j < wt_n; ++j) {
        coopMatLoadNV(b, S, (BM + wn + 16 * j) * ROW + 2 * kk, ROW, true);
        [[unroll]] for (int i = 0; i < wt_m; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
      }
    }
  }

  // Epilogue, 16 rows (channels) x 16 wt_n pixels at a time through the subgroup's scratch,
  // stored column-major so that four channels of a pixel are one unit: invocation l takes pixels
  // l (and l + 32 where wt_n is 4), each channel quad. No barrier between a round's stores, so
  // their residual reads can all be in flight together.
  barrier();  // every subgroup is done with the tiles the scratch reuses
  const int lane = int(gl_SubgroupInvocationID);
  const int cs = sg * 16 * wt_n * C_COL;
  [[unroll]] for (int i = 0; i < wt_m; ++i) {
    [[unroll]] for (int j = 0; j < wt_n; ++j)
      coopMatStoreNV(acc[i][j], S, cs + 16 * j * C_COL, C_COL, true);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (int r = 0; r < 4; ++r) {
      const int ml = wm + 16 * i + 4 * r;
      const vec4 b = vec4(bias_s[ml], bias_s[ml + 1], bias_s[ml + 2], bias_s[ml + 3]);
      [[unroll]] for (int t = 0; t < wt_n / 2; ++t) {
        const int n = lane + 32 * t;
        store_quad(g, M, N, part, m0 + ml, n0 + wn + n, uintBitsToFloat(S[cs + n * C_COL + r]), b);
      }
    }
    subgroupBarrier();
  }
}
