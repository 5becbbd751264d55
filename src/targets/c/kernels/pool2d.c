/* MaxPool and AveragePool over NCHW float32 planes. AveragePool divides by
   the taps inside the input, or with count_include_pad by those inside the
   padded input (pads before and after). */
typedef struct {
  long planes, h, w, oh, ow;
  long kh, kw, sh, sw, dh, dw;
  long ph, pw, ph_end, pw_end;
  int max, count_include_pad;
} tessel_pool2d_t;

static void tessel_pool2d(const tessel_pool2d_t* p, const float* TESSEL_RESTRICT x,
                          float* TESSEL_RESTRICT y) {
  long c, oy, ox, ky, kx;
  for (c = 0; c < p->planes; ++c) {
    const float* xp = x + c * p->h * p->w;
    float* yp = y + c * p->oh * p->ow;
    for (oy = 0; oy < p->oh; ++oy) {
      for (ox = 0; ox < p->ow; ++ox) {
        float acc = p->max ? -INFINITY : 0.0f;
        long inside = 0, padded_y = 0, padded_x = 0;
        for (ky = 0; ky < p->kh; ++ky) {
          const long iy = oy * p->sh + ky * p->dh - p->ph;
          if (iy >= -p->ph && iy < p->h + p->ph_end) ++padded_y;
          if (iy < 0 || iy >= p->h) continue;
          for (kx = 0; kx < p->kw; ++kx) {
            const long ix = ox * p->sw + kx * p->dw - p->pw;
            float v;
            if (ix < 0 || ix >= p->w) continue;
            v = xp[iy * p->w + ix];
            if (p->max) {
              if (v > acc || v != v) acc = v;
            } else {
              acc += v;
            }
            ++inside;
          }
        }
        if (!p->max) {
          long divisor = inside;
          if (p->count_include_pad) {
            for (kx = 0; kx < p->kw; ++kx) {
              const long ix = ox * p->sw + kx * p->dw - p->pw;
              if (ix >= -p->pw && ix < p->w + p->pw_end) ++padded_x;
            }
            divisor = padded_y * padded_x;
          }
          acc = divisor > 0 ? acc / (float)divisor : 0.0f;
        }
        yp[oy * p->ow + ox] = acc;
      }
    }
  }
}
