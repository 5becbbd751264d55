/* The stand-in model's entry function (see smoke.h). */
#include "smoke.h"

#include <math.h>
#include <stddef.h>

int tessel_smoke_run(const float *input, float *output, uint8_t *workspace) {
  if (input == NULL || output == NULL || workspace == NULL) return 1;
  float *restrict h = (float *)(void *)workspace;
  for (int i = 0; i < TESSEL_SMOKE_INPUT_SIZE; ++i) h[i] = input[i] * input[i];
  for (int j = 0; j < TESSEL_SMOKE_OUTPUT_SIZE; ++j) {
    float d = tessel_smoke_bias[j];
    for (int i = 0; i < TESSEL_SMOKE_INPUT_SIZE; ++i) d += tessel_smoke_weights[j][i] * h[i];
    output[j] = expf(d / 32.0f) * sqrtf(fabsf(d) + 1.0f);
  }
  return 0;
}
