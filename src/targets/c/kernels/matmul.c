/* MatMul (and tessel's FusedMatMul): y[b] = A[b] B[b] (+ bias along the last
   axis, + z), over up to four broadcast batch dims whose strides are 0 where
   an operand is broadcast. */
typedef struct {
  long m, n, k;
  int batch_rank;
  long batch[4];
  long a_stride[4], b_stride[4]; /* elements per batch index; 0: broadcast */
} tessel_matmul_t;

static void tessel_matmul(const tessel_matmul_t* p, const float* TESSEL_RESTRICT a,
                          const float* TESSEL_RESTRICT b, const float* TESSEL_RESTRICT bias,
                          const float* z, float* TESSEL_RESTRICT y) {
  long total = 1, t, i, j, kk;
  int d;
  for (d = 0; d < p->batch_rank; ++d) total *= p->batch[d];
  for (t = 0; t < total; ++t) {
    long rest = t, ao = 0, bo = 0;
    float* yb = y + t * p->m * p->n;
    for (d = p->batch_rank - 1; d >= 0; --d) {
      const long idx = rest % p->batch[d];
      rest /= p->batch[d];
      ao += idx * p->a_stride[d];
      bo += idx * p->b_stride[d];
    }
    for (i = 0; i < p->m; ++i) {
      float* yr = yb + i * p->n;
      const float* ar = a + ao + i * p->k;
      for (j = 0; j < p->n; ++j) yr[j] = 0.0f;
      for (kk = 0; kk < p->k; ++kk) {
        const float av = ar[kk];
        const float* br = b + bo + kk * p->n;
        for (j = 0; j < p->n; ++j) yr[j] += av * br[j];
      }
      if (bias) {
        for (j = 0; j < p->n; ++j) yr[j] += bias[j];
      }
      if (z) {
        const float* zr = z + t * p->m * p->n + i * p->n;
        for (j = 0; j < p->n; ++j) yr[j] += zr[j];
      }
    }
  }
}
