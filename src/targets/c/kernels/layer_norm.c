/* LayerNormalization over the last `size` elements of each of `outer` rows:
   (x - mean) / sqrt(variance + epsilon) * scale (+ bias); each row's mean and
   1 / sqrt(variance + epsilon) also go to `mean` and `inv_std` when given. */
typedef struct {
  long outer, size;
  float epsilon;
} tessel_layer_norm_t;

static void tessel_layer_norm(const tessel_layer_norm_t* p, const float* TESSEL_RESTRICT x,
                              const float* TESSEL_RESTRICT scale, const float* TESSEL_RESTRICT bias,
                              float* TESSEL_RESTRICT y, float* TESSEL_RESTRICT mean_out,
                              float* TESSEL_RESTRICT inv_std_out) {
  long o, i;
  for (o = 0; o < p->outer; ++o) {
    const float* xr = x + o * p->size;
    float* yr = y + o * p->size;
    float mean = 0.0f, var = 0.0f, inv;
    for (i = 0; i < p->size; ++i) mean += xr[i];
    mean /= (float)p->size;
    for (i = 0; i < p->size; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= (float)p->size;
    inv = 1.0f / sqrtf(var + p->epsilon);
    if (mean_out) mean_out[o] = mean;
    if (inv_std_out) inv_std_out[o] = inv;
    for (i = 0; i < p->size; ++i) yr[i] = (xr[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.0f);
  }
}
