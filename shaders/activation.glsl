// The activation functions of infer's shaders, in f32 (ncnn's numbering 1..6, then 7 Swish,
// 8 TanH, 9 HardSigmoid, 10 a scale by p0 (Dropout); p0 and p1 their parameters). Included by activation.comp and by every
// kernel that applies an activation in its epilogue, so one definition serves them all.
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
  return x;
}
