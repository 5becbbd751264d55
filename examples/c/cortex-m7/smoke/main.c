/* Runs the stand-in model (smoke.h) on the board and checks it: the
 * workspace in external RAM (.psram_pool), the input in .sram_pool, the
 * constants in flash. Exits 0 when every output and placement is right,
 * 1 otherwise. -DSMOKE_EXPECT_WRONG corrupts one expected value, to show
 * that a wrong result fails the run through QEMU's exit code. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "smoke.h"

static uint8_t workspace[TESSEL_SMOKE_WORKSPACE_SIZE]
    __attribute__((section(".psram_pool"), aligned(16)));
static float input[TESSEL_SMOKE_INPUT_SIZE] __attribute__((section(".sram_pool"), aligned(16)));
static float output[TESSEL_SMOKE_OUTPUT_SIZE];

/* From the same formula in double precision (Python). */
static const double kExpected[TESSEL_SMOKE_OUTPUT_SIZE] = {1.59908659, 1.35175313, 1.32724909,
                                                           2.04509798};
static const double kRelativeTolerance = 1e-5;

static int InRange(const void *p, uintptr_t begin, uintptr_t size_bytes) {
  const uintptr_t a = (uintptr_t)p;
  return a >= begin && a - begin < size_bytes;
}

static int CheckPlacement(const char *what, const void *p, uintptr_t begin, uintptr_t size_bytes) {
  if (InRange(p, begin, size_bytes)) return 0;
  printf("FAIL: %s at %p, outside [0x%08lx, 0x%08lx)\n", what, p, (unsigned long)begin,
         (unsigned long)(begin + size_bytes));
  return 1;
}

int main(void) {
  int failures = 0;
  failures += CheckPlacement("workspace (.psram_pool)", workspace, 0x60000000u, 16u << 20);
  failures += CheckPlacement("input (.sram_pool)", input, 0x20000000u, 4u << 20);
  failures += CheckPlacement("weights (.rodata)", tessel_smoke_weights, 0x0u, 4u << 20);
  failures += CheckPlacement("bias (.flash_pool)", tessel_smoke_bias, 0x0u, 4u << 20);

  for (int i = 0; i < TESSEL_SMOKE_INPUT_SIZE; ++i) input[i] = (float)(i % 5) * 0.5f;
  if (tessel_smoke_run(input, output, workspace) != 0) {
    printf("FAIL: tessel_smoke_run returned an error\n");
    return 1;
  }
  for (int j = 0; j < TESSEL_SMOKE_OUTPUT_SIZE; ++j) {
    double expected = kExpected[j];
#ifdef SMOKE_EXPECT_WRONG
    if (j == 0) expected += 0.5;
#endif
    const double error = fabs((double)output[j] - expected) / fabs(expected);
    const int ok = error <= kRelativeTolerance;
    printf("%s: output[%d] = %.7f, expected %.7f\n", ok ? "ok" : "FAIL", j, (double)output[j],
           expected);
    failures += !ok;
  }
  printf("cortex-m7 smoke: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
