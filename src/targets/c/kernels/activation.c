/* The activation of a fused node (ops/fused_activation.h), by its code:
   0 none, 1 Relu, 2 Clip (alpha min, beta max), 3 LeakyRelu (alpha slope),
   4 Sigmoid, 5 HardSigmoid (max(0, min(1, alpha v + beta))), 6 HardSwish,
   7 Swish (v Sigmoid(v)). */
static float tessel_sigmoid(float v) {
  return v >= 0.0f ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
}

static float tessel_activate(float v, int kind, float alpha, float beta) {
  switch (kind) {
    case 1:
      return v < 0.0f ? 0.0f : v;
    case 2:
      return v < alpha ? alpha : (v > beta ? beta : v);
    case 3:
      return v < 0.0f ? alpha * v : v;
    case 4:
      return tessel_sigmoid(v);
    case 5: {
      const float h = alpha * v + beta;
      return h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
    }
    case 6: {
      const float h = (v + 3.0f) / 6.0f;
      return v * (h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h));
    }
    case 7:
      return v * tessel_sigmoid(v);
    default:
      return v;
  }
}

/* y[i] = activate(y[i] + z[i]) over n elements; z may be null. */
static void tessel_epilogue(float* y, const float* z, long n, int kind, float alpha, float beta) {
  long i;
  if (z) {
    for (i = 0; i < n; ++i) y[i] += z[i];
  }
  if (kind == 0) return;
  if (kind == 1) {
    for (i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
    return;
  }
  if (kind == 2) {
    for (i = 0; i < n; ++i) y[i] = y[i] < alpha ? alpha : (y[i] > beta ? beta : y[i]);
    return;
  }
  for (i = 0; i < n; ++i) y[i] = tessel_activate(y[i], kind, alpha, beta);
}
