/* Gather along the middle axis of data [outer, axis, inner] by `count`
   indices (int32 or int64; negative ones count from the end): output
   [outer, count, inner], elements of `size` bytes. Returns 0, or 1 when an
   index is out of range (nothing past it is written). */
typedef struct {
  long outer, axis, inner, count, size;
  int index64;
} tessel_gather_t;

static int tessel_gather(const tessel_gather_t* p, const void* TESSEL_RESTRICT x,
                         const void* TESSEL_RESTRICT indices, void* TESSEL_RESTRICT y) {
  const unsigned char* xb = (const unsigned char*)x;
  unsigned char* yb = (unsigned char*)y;
  const long row = p->inner * p->size;
  long o, j;
  for (o = 0; o < p->outer; ++o) {
    for (j = 0; j < p->count; ++j) {
      int64_t k = p->index64 ? ((const int64_t*)indices)[j] : (int64_t)((const int32_t*)indices)[j];
      if (k < 0) k += p->axis;
      if (k < 0 || k >= p->axis) return 1;
      memcpy(yb + (o * p->count + j) * row, xb + (o * p->axis + k) * row, (size_t)row);
    }
  }
  return 0;
}
