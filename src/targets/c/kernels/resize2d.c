/* Resize (and Upsample) of [planes, h, w] to [planes, oh, ow], separable:
   output (oy, ox) is the sum over taps of wy * wx * x[iy][ix], the indices
   and weights per output row and column tabulated at compile time
   (ops::PlanResizeNode: nearest is one tap of weight 1, an exact copy). */
typedef struct {
  long planes, h, w, oh, ow;
  int ty, tx; /* taps per row and per column */
  const long* iy;
  const float* wy;
  const long* ix;
  const float* wx;
} tessel_resize2d_t;

static void tessel_resize2d(const tessel_resize2d_t* p, const float* TESSEL_RESTRICT x,
                            float* TESSEL_RESTRICT y) {
  long c, oy, ox;
  int a, b;
  for (c = 0; c < p->planes; ++c) {
    const float* xp = x + c * p->h * p->w;
    float* yp = y + c * p->oh * p->ow;
    for (oy = 0; oy < p->oh; ++oy) {
      for (ox = 0; ox < p->ow; ++ox) {
        float acc = 0.0f;
        for (a = 0; a < p->ty; ++a) {
          const float* row = xp + p->iy[oy * p->ty + a] * p->w;
          float racc = 0.0f;
          for (b = 0; b < p->tx; ++b) racc += p->wx[ox * p->tx + b] * row[p->ix[ox * p->tx + b]];
          acc += p->wy[oy * p->ty + a] * racc;
        }
        yp[oy * p->ow + ox] = acc;
      }
    }
  }
}
