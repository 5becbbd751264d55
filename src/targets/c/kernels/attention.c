/* tessel's FusedAttention: y = softmax(scale q k^T + bias) v, a query row at
 * a time, with an online softmax key by key (the running maximum and sum;
 * the row of y rescaled when the maximum grows): no scores in memory.
 * q [batch, q_heads, q_len, d], k [batch, kv_heads, kv_len, d], v likewise
 * with dv, y [batch, q_heads, q_len, dv]; query head h reads key/value head
 * h / reps; the bias at b * bs[0] + h * bs[1] + i * bs[2] + j * bs[3]. A row
 * whose scores are all -inf gives zeros (zero_masked) or NaN (softmax's). */
typedef struct {
  long batch, q_heads, reps, q_len, kv_len, d, dv;
  long bs[4];
  float scale;
  int zero_masked;
} tessel_attention_t;

static void tessel_attention(const tessel_attention_t* p, const float* TESSEL_RESTRICT q,
                             const float* TESSEL_RESTRICT k, const float* TESSEL_RESTRICT v,
                             const float* TESSEL_RESTRICT bias, float* TESSEL_RESTRICT y) {
  long b, h, i, j, e;
  for (b = 0; b < p->batch; ++b) {
    for (h = 0; h < p->q_heads; ++h) {
      const long kv = b * (p->q_heads / p->reps) + h / p->reps;
      const float* kh = k + kv * p->kv_len * p->d;
      const float* vh = v + kv * p->kv_len * p->dv;
      for (i = 0; i < p->q_len; ++i) {
        const long row = (b * p->q_heads + h) * p->q_len + i;
        const float* qi = q + row * p->d;
        float* yi = y + row * p->dv;
        float max = -INFINITY, sum = 0.0f;
        for (e = 0; e < p->dv; ++e) yi[e] = 0.0f;
        for (j = 0; j < p->kv_len; ++j) {
          float s = 0.0f, w;
          for (e = 0; e < p->d; ++e) s += qi[e] * kh[j * p->d + e];
          s *= p->scale;
          if (bias) s += bias[b * p->bs[0] + h * p->bs[1] + i * p->bs[2] + j * p->bs[3]];
          if (s == -INFINITY) continue;
          if (s > max) {
            const float alpha = max == -INFINITY ? 0.0f : expf(max - s);
            sum *= alpha;
            for (e = 0; e < p->dv; ++e) yi[e] *= alpha;
            max = s;
          }
          w = expf(s - max);
          sum += w;
          for (e = 0; e < p->dv; ++e) yi[e] += w * vh[j * p->dv + e];
        }
        if (sum == 0.0f) {
          for (e = 0; e < p->dv; ++e) yi[e] = p->zero_masked ? 0.0f : NAN;
        } else {
          for (e = 0; e < p->dv; ++e) yi[e] /= sum;
        }
      }
    }
  }
}
