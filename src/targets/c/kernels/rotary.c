/* tessel's Rotary: rows of `width` features, the first `rotary` embedded,
 * y = x * cos + rot(x) * sin with rot rotate_half (-x[j + h], then x[j - h])
 * or the interleaved pairs (-x[j + 1], x[j - 1]), the rest copied. X is
 * [d0, d1, d2, width]; cos and sin of `rotary` features at (a, b, c) of X's
 * row times their strides (0 where they broadcast). */
typedef struct {
  long d0, d1, d2, width, rotary;
  long cs[3], ss[3];
  int interleaved;
} tessel_rotary_t;

static void tessel_rotary(const tessel_rotary_t* p, const float* TESSEL_RESTRICT x,
                          const float* TESSEL_RESTRICT cos, const float* TESSEL_RESTRICT sin,
                          float* TESSEL_RESTRICT y) {
  const long half = p->rotary / 2;
  long a, b, c, j;
  for (a = 0; a < p->d0; ++a) {
    for (b = 0; b < p->d1; ++b) {
      for (c = 0; c < p->d2; ++c) {
        const long row = (a * p->d1 + b) * p->d2 + c;
        const float* xr = x + row * p->width;
        const float* cr = cos + a * p->cs[0] + b * p->cs[1] + c * p->cs[2];
        const float* sr = sin + a * p->ss[0] + b * p->ss[1] + c * p->ss[2];
        float* yr = y + row * p->width;
        for (j = 0; j < p->rotary; ++j) {
          float rot;
          if (p->interleaved) {
            rot = j % 2 == 0 ? -xr[j + 1] : xr[j - 1];
          } else {
            rot = j < half ? -xr[j + half] : xr[j - half];
          }
          yr[j] = xr[j] * cr[j] + rot * sr[j];
        }
        for (j = p->rotary; j < p->width; ++j) yr[j] = xr[j];
      }
    }
  }
}
