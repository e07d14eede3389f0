// The activation functions of infer's shaders, in f32 (ncnn's numbering 1..6, then 7 Swish,
// 8 TanH, 9 HardSigmoid, 10 a scale by p0 (Dropout), 11 ELU (alpha p0), 12 GELU (p0 = 1: the
// tanh approximation, else erf); p0 and p1 their parameters). Included by activation.comp and by
// every kernel that applies an activation in its epilogue, so one definition serves them all.

// erf to about 1.2e-7 (Numerical Recipes' erfc by a Chebyshev fit), which GLSL lacks.
float erf_approx(float x) {
  const float z = abs(x);
  const float t = 1.0 / (1.0 + 0.5 * z);
  const float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
      t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 +
      t * 0.17087277)))))))));
  return x >= 0.0 ? 1.0 - r : r - 1.0;
}

float activate(float x, int act, float p0, float p1) {
  if (act == 1) return x > 0.0 ? x : x * p0;
  if (act == 2) return x > 0.0 ? x : x * p0;
  if (act == 3) return clamp(x, p0, p1);
  if (act == 4) return 1.0 / (1.0 + exp(-x));
  if (act == 5) return x * tanh(log(1.0 + exp(x)));
  if (act == 6) return x * clamp(x * p0 + p1, 0.0, 1.0);
  if (act == 7) return x / (1.0 + exp(-x));
  if (act == 8) return tanh(x);
  if (act == 9) return clamp(x * p0 + p1, 0.0, 1.0);
  if (act == 10) return x * p0;
  if (act == 11) return x < 0.0 ? p0 * (exp(x) - 1.0) : x;
  if (act == 12) {
    if (p0 != 0.0) return 0.5 * x * (1.0 + tanh(0.79788456 * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1.0 + erf_approx(x * 0.70710678));
  }
  return x;
}
