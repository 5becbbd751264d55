/* ArgMax (max 1) and ArgMin over the middle axis of [outer, r, inner]: the
   first extreme index, or the last with select_last_index. */
typedef struct {
  long outer, r, inner;
  int max, last;
} tessel_arg_extreme_t;

static void tessel_arg_extreme(const tessel_arg_extreme_t* p, const float* TESSEL_RESTRICT x,
                               int64_t* TESSEL_RESTRICT y) {
  long o, i, j;
  for (o = 0; o < p->outer; ++o) {
    for (i = 0; i < p->inner; ++i) {
      const float* xs = x + o * p->r * p->inner + i;
      float best = xs[0];
      long index = 0;
      for (j = 1; j < p->r; ++j) {
        const float v = xs[j * p->inner];
        const int better = p->max ? (p->last ? v >= best : v > best)
                                  : (p->last ? v <= best : v < best);
        if (better) {
          best = v;
          index = j;
        }
      }
      y[o * p->inner + i] = index;
    }
  }
}
