/* Softmax and LogSoftmax over the middle axis of [outer, r, inner]. */
typedef struct {
  long outer, r, inner;
  int log;
} tessel_softmax_t;

static void tessel_softmax(const tessel_softmax_t* p, const float* TESSEL_RESTRICT x,
                           float* TESSEL_RESTRICT y) {
  long o, i, j;
  for (o = 0; o < p->outer; ++o) {
    for (i = 0; i < p->inner; ++i) {
      const float* xs = x + o * p->r * p->inner + i;
      float* ys = y + o * p->r * p->inner + i;
      float max = -INFINITY, sum = 0.0f;
      for (j = 0; j < p->r; ++j) max = xs[j * p->inner] > max ? xs[j * p->inner] : max;
      for (j = 0; j < p->r; ++j) {
        const float e = expf(xs[j * p->inner] - max);
        ys[j * p->inner] = e;
        sum += e;
      }
      if (p->log) {
        const float l = logf(sum);
        for (j = 0; j < p->r; ++j) ys[j * p->inner] = xs[j * p->inner] - max - l;
      } else {
        for (j = 0; j < p->r; ++j) ys[j * p->inner] /= sum;
      }
    }
  }
}
