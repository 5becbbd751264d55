/* Conv (and tessel's FusedConv) over NCHW float32: groups, strides,
   dilations and pads, then bias, residual z and the activation. Each output
   row accumulates one weight tap at a time over the output columns whose tap
   lies inside the input, a unit-stride loop when the stride is 1. */
typedef struct {
  long n, c, h, w;    /* input */
  long oc, oh, ow;    /* output */
  long kh, kw;        /* kernel */
  long sh, sw;        /* strides */
  long dh, dw;        /* dilations */
  long ph, pw;        /* pads before (top, left) */
  long group;
  int activation;
  float alpha, beta;
} tessel_conv2d_t;

static void tessel_conv2d(const tessel_conv2d_t* p, const float* TESSEL_RESTRICT x,
                          const float* TESSEL_RESTRICT w, const float* TESSEL_RESTRICT b,
                          const float* z, float* TESSEL_RESTRICT y) {
  const long cg = p->c / p->group, og = p->oc / p->group;
  const long plane = p->oh * p->ow, in_plane = p->h * p->w;
  const int pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 &&
                        p->pw == 0 && p->oh == p->h && p->ow == p->w;
  long n, g, m, ci, ky, kx, oy, ox, i;
  for (n = 0; n < p->n; ++n) {
    for (g = 0; g < p->group; ++g) {
      for (m = 0; m < og; ++m) {
        const long o = g * og + m;
        float* yp = y + (n * p->oc + o) * plane;
        const float bias = b ? b[o] : 0.0f;
        for (i = 0; i < plane; ++i) yp[i] = bias;
        for (ci = 0; ci < cg; ++ci) {
          const float* xp = x + (n * p->c + g * cg + ci) * in_plane;
          const float* wp = w + (o * cg + ci) * p->kh * p->kw;
          if (pointwise) {
            const float wv = wp[0];
            for (i = 0; i < plane; ++i) yp[i] += wv * xp[i];
            continue;
          }
          for (ky = 0; ky < p->kh; ++ky) {
            for (kx = 0; kx < p->kw; ++kx) {
              const float wv = wp[ky * p->kw + kx];
              /* Column ox reads input column ox * sw + off: keep 0 <= it < w. */
              const long off = kx * p->dw - p->pw;
              const long x0 = off < 0 ? (-off + p->sw - 1) / p->sw : 0;
              long x1 = p->w - off <= 0 ? 0 : (p->w - off + p->sw - 1) / p->sw;
              if (x1 > p->ow) x1 = p->ow;
              for (oy = 0; oy < p->oh; ++oy) {
                const long iy = oy * p->sh + ky * p->dh - p->ph;
                float* yr;
                const float* xr;
                if (iy < 0 || iy >= p->h) continue;
                yr = yp + oy * p->ow;
                xr = xp + iy * p->w;
                if (p->sw == 1) {
                  for (ox = x0; ox < x1; ++ox) yr[ox] += wv * xr[ox + off];
                } else {
                  for (ox = x0; ox < x1; ++ox) yr[ox] += wv * xr[ox * p->sw + off];
                }
              }
            }
          }
        }
        tessel_epilogue(yp, z ? z + (n * p->oc + o) * plane : 0, plane, p->activation, p->alpha,
                        p->beta);
      }
    }
  }
}
