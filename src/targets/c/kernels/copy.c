/* A strided copy over six dims (ops/movement_plan.h): element d of the
   row-major index space goes from x[sum d[i] xs[i]] to y[sum d[i] ys[i]].
   Strides count elements of `size` bytes; a contiguous innermost axis is
   copied as one run. */
typedef struct {
  long dims[6];
  long xs[6], ys[6];
  long size;
} tessel_copy_t;

static void tessel_copy(const tessel_copy_t* p, const void* TESSEL_RESTRICT x,
                        void* TESSEL_RESTRICT y) {
  const unsigned char* xb = (const unsigned char*)x;
  unsigned char* yb = (unsigned char*)y;
  const int run = p->xs[5] == 1 && p->ys[5] == 1;
  long d0, d1, d2, d3, d4, d5;
  for (d0 = 0; d0 < p->dims[0]; ++d0)
    for (d1 = 0; d1 < p->dims[1]; ++d1)
      for (d2 = 0; d2 < p->dims[2]; ++d2)
        for (d3 = 0; d3 < p->dims[3]; ++d3)
          for (d4 = 0; d4 < p->dims[4]; ++d4) {
            const long xo = d0 * p->xs[0] + d1 * p->xs[1] + d2 * p->xs[2] + d3 * p->xs[3] + d4 * p->xs[4];
            const long yo = d0 * p->ys[0] + d1 * p->ys[1] + d2 * p->ys[2] + d3 * p->ys[3] + d4 * p->ys[4];
            if (run) {
              memcpy(yb + yo * p->size, xb + xo * p->size, (size_t)(p->dims[5] * p->size));
              continue;
            }
            for (d5 = 0; d5 < p->dims[5]; ++d5) {
              memcpy(yb + (yo + d5 * p->ys[5]) * p->size, xb + (xo + d5 * p->xs[5]) * p->size,
                     (size_t)p->size);
            }
          }
}
