/* BatchNormalization at inference over [n, c, plane]:
   (x - mean) / sqrt(var + epsilon) * scale + bias, per channel. */
typedef struct {
  long n, c, plane;
  float epsilon;
} tessel_batch_norm_t;

static void tessel_batch_norm(const tessel_batch_norm_t* p, const float* TESSEL_RESTRICT x,
                              const float* TESSEL_RESTRICT scale, const float* TESSEL_RESTRICT bias,
                              const float* TESSEL_RESTRICT mean, const float* TESSEL_RESTRICT var,
                              float* TESSEL_RESTRICT y) {
  long n, c, i;
  for (n = 0; n < p->n; ++n) {
    for (c = 0; c < p->c; ++c) {
      const float k = scale[c] / sqrtf(var[c] + p->epsilon);
      const float* xp = x + (n * p->c + c) * p->plane;
      float* yp = y + (n * p->c + c) * p->plane;
      for (i = 0; i < p->plane; ++i) yp[i] = (xp[i] - mean[c]) * k + bias[c];
    }
  }
}
