// What the GEMM convolutions (conv_gemm.comp, conv_gemm_tc.comp) share: the value-by-value input
// read of their gather with its gate, and their store. The including shader declares the blobs
// (bottom, top, top4, bias, partial, residual, gate), the push constants and the specialization
// constants read here.

// A squeeze-excitation gate the composer fused into the convolution (gated != 0): input
// channel ic is read as activate(x * gate[ic]) (the multiply's own activation, gate_act), before
// the window's products. The pad value is the convolution's and is not gated.
float gated_value(float x, int ic) {
  return gated != 0 ? activate(x * float(gate.v[ic]), gate_act, gate_p0, gate_p1) : x;
}

// Four consecutive channels ic..ic+3 of one pixel, gated by the gate's values g.
vec4 gated_quad(vec4 x, vec4 g) {
  vec4 y = x * g;
  [[unroll]] for (int e = 0; e < 4; ++e) y[e] = activate(y[e], gate_act, gate_p0, gate_p1);
  return y;
}

// The input value at input channel ic (of the whole blob) and input pixel (iy, ix), gated: the
// pad value outside the input.
float input_at(int ic, int iy, int ix) {
  if (iy < 0 || iy >= pc.h || ix < 0 || ix >= pc.w) return pad_value;
  return gated_value(float(bottom.v[(ic / in_pack) * pc.cstep * in_pack +
                                    (iy * pc.w + ix) * in_pack + ic % in_pack]),
                     ic);
}

// The store: four consecutive output channels m..m+3 of group g (m a multiple of 4 within the
// group's M) at output pixel q, summed over split `part` of K. With split != 0 the sums go to
// `partial` in f32 for conv_gemm_reduce.comp; else the bias `b` (bias_quad's), the residual
// (res_pack != 0) and the activation are applied and the values stored at the output's pack.

void store_quad(int g, int M, int N, int part, int m, int q, vec4 v, vec4 b) {
  if (q >= N || m >= M) return;
  const int oc = g * M + m;
  if (split != 0) {
    [[unroll]] for (int e = 0; e < 4; ++e)
      if (m + e < M) partial.v[(part * pc.outc + oc + e) * N + q] = v[e];
    return;
  }
  [[unroll]] for (int e = 0; e < 4; ++e) {
    if (m + e >= M) break;
    const int o = oc + e;
    float x = v[e] + b[e];
    if (res_pack != 0)
      x += float(residual.v[(o / res_pack) * pc.res_cstep * res_pack + q * res_pack + o % res_pack]);
    v[e] = activate(x, act, p0, p1);
  }
  if (out_pack == 4 && M % 4 == 0) {
    top4.v[(oc / 4) * pc.out_cstep + q] = STORE4(v);
  } else {
    for (int e = 0; e < 4 && m + e < M; ++e) {
      const int o = oc + e;
      top.v[(o / out_pack) * pc.out_cstep * out_pack + q * out_pack + o % out_pack] = STORE(v[e]);
    }
  }
}
