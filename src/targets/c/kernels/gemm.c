/* Gemm: y = alpha A'B' + beta C (A' = A or its transpose, likewise B'), C
   broadcast by its strides (0 along a broadcast axis). */
typedef struct {
  long m, n, k;
  int trans_a, trans_b;
  float alpha, beta;
  long c_row_stride, c_col_stride;
} tessel_gemm_t;

static void tessel_gemm(const tessel_gemm_t* p, const float* TESSEL_RESTRICT a,
                        const float* TESSEL_RESTRICT b, const float* TESSEL_RESTRICT c,
                        float* TESSEL_RESTRICT y) {
  long i, j, kk;
  for (i = 0; i < p->m; ++i) {
    float* yr = y + i * p->n;
    for (j = 0; j < p->n; ++j) yr[j] = 0.0f;
    if (p->trans_b) {
      for (j = 0; j < p->n; ++j) {
        const float* br = b + j * p->k;
        float acc = 0.0f;
        for (kk = 0; kk < p->k; ++kk) acc += (p->trans_a ? a[kk * p->m + i] : a[i * p->k + kk]) * br[kk];
        yr[j] = acc;
      }
    } else {
      for (kk = 0; kk < p->k; ++kk) {
        const float av = p->trans_a ? a[kk * p->m + i] : a[i * p->k + kk];
        const float* br = b + kk * p->n;
        for (j = 0; j < p->n; ++j) yr[j] += av * br[j];
      }
    }
    for (j = 0; j < p->n; ++j) {
      yr[j] = p->alpha * yr[j];
      if (c) yr[j] += p->beta * c[i * p->c_row_stride + j * p->c_col_stride];
    }
  }
}
