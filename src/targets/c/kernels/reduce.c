/* Reductions over the middle axis of [outer, r, inner] (a reduction of
   adjacent axes, GlobalAveragePool and GlobalMaxPool too), by kind:
   0 sum, 1 mean, 2 max, 3 min, 4 sum of squares, 5 product, 6 L1, 7 L2,
   8 log of the sum, 9 log of the sum of exponentials (after the maximum). */
typedef struct {
  long outer, r, inner;
  int kind;
} tessel_reduce_t;

static void tessel_reduce(const tessel_reduce_t* p, const float* TESSEL_RESTRICT x,
                          float* TESSEL_RESTRICT y) {
  long o, j, i;
  for (o = 0; o < p->outer; ++o) {
    float* yr = y + o * p->inner;
    const float* xo = x + o * p->r * p->inner;
    const int max_first = p->kind == 2 || p->kind == 9;
    const float init = max_first ? -INFINITY : p->kind == 3 ? INFINITY : p->kind == 5 ? 1.0f : 0.0f;
    for (i = 0; i < p->inner; ++i) yr[i] = init;
    for (j = 0; j < p->r; ++j) {
      const float* xr = xo + j * p->inner;
      switch (max_first ? 2 : p->kind) {
        case 2:
          for (i = 0; i < p->inner; ++i) yr[i] = xr[i] > yr[i] || xr[i] != xr[i] ? xr[i] : yr[i];
          break;
        case 3:
          for (i = 0; i < p->inner; ++i) yr[i] = xr[i] < yr[i] || xr[i] != xr[i] ? xr[i] : yr[i];
          break;
        case 4:
        case 7:
          for (i = 0; i < p->inner; ++i) yr[i] += xr[i] * xr[i];
          break;
        case 5:
          for (i = 0; i < p->inner; ++i) yr[i] *= xr[i];
          break;
        case 6:
          for (i = 0; i < p->inner; ++i) yr[i] += fabsf(xr[i]);
          break;
        default:
          for (i = 0; i < p->inner; ++i) yr[i] += xr[i];
          break;
      }
    }
    if (p->kind == 9) {
      /* log(sum(exp(x))) = m + log(sum(exp(x - m))), m the maximum. */
      for (i = 0; i < p->inner; ++i) {
        const float m = yr[i];
        float sum = 0.0f;
        if (m == INFINITY || m == -INFINITY || m != m) continue;
        for (j = 0; j < p->r; ++j) sum += expf(xo[j * p->inner + i] - m);
        yr[i] = m + logf(sum);
      }
    }
    for (i = 0; i < p->inner; ++i) {
      if (p->kind == 1 && p->r > 0) yr[i] /= (float)p->r;
      if (p->kind == 7) yr[i] = sqrtf(yr[i]);
      if (p->kind == 8) yr[i] = logf(yr[i]);
    }
  }
}
