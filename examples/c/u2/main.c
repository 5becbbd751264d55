/* U2: two models share one workspace buffer (issue 36; docs/c-target.md).
   Both were compiled with --workspace-pool name=sram, so each has one pool
   named sram; they never run at once, so one buffer of the larger size
   serves both. The check: every run through the shared buffer gives the
   same outputs as a run through a buffer of the model's own, whatever ran
   there before. */
#include <stdio.h>
#include <string.h>

#include "big.h"
#include "small.h"

#define SHARED_SIZE                                                                      \
  (TESSEL_BIG_SRAM_WORKSPACE_SIZE > TESSEL_SMALL_SRAM_WORKSPACE_SIZE                     \
       ? TESSEL_BIG_SRAM_WORKSPACE_SIZE                                                  \
       : TESSEL_SMALL_SRAM_WORKSPACE_SIZE)

static uint8_t shared[SHARED_SIZE] __attribute__((aligned(16)));
static uint8_t own_big[TESSEL_BIG_SRAM_WORKSPACE_SIZE] __attribute__((aligned(16)));
static uint8_t own_small[TESSEL_SMALL_SRAM_WORKSPACE_SIZE] __attribute__((aligned(16)));

static float big_in[TESSEL_BIG_IMAGE_ELEMENTS], big_out[2][TESSEL_BIG_LOGITS_ELEMENTS];
static float small_in[TESSEL_SMALL_IMAGE_ELEMENTS], small_out[2][TESSEL_SMALL_LOGITS_ELEMENTS];

static int run_big(uint8_t* pool, float* out) {
  tessel_big_inputs_t in;
  tessel_big_outputs_t outs;
  tessel_big_workspaces_t ws;
  in.image = big_in;
  outs.logits = out;
  ws.sram = pool;
  return tessel_big_run(&in, &outs, &ws);
}

static int run_small(uint8_t* pool, float* out) {
  tessel_small_inputs_t in;
  tessel_small_outputs_t outs;
  tessel_small_workspaces_t ws;
  in.image = small_in;
  outs.logits = out;
  ws.sram = pool;
  return tessel_small_run(&in, &outs, &ws);
}

int main(void) {
  long i;
  int round;
  for (i = 0; i < TESSEL_BIG_IMAGE_ELEMENTS; ++i) big_in[i] = (float)(i % 17) / 17.0f - 0.5f;
  for (i = 0; i < TESSEL_SMALL_IMAGE_ELEMENTS; ++i) small_in[i] = (float)(i % 13) / 13.0f - 0.5f;
  if (run_big(own_big, big_out[0]) || run_small(own_small, small_out[0])) return 2;
  printf("shared sram workspace: %ld bytes (big %ld, small %ld; apart %ld)\n", (long)SHARED_SIZE,
         (long)TESSEL_BIG_SRAM_WORKSPACE_SIZE, (long)TESSEL_SMALL_SRAM_WORKSPACE_SIZE,
         (long)(TESSEL_BIG_SRAM_WORKSPACE_SIZE + TESSEL_SMALL_SRAM_WORKSPACE_SIZE));
  for (round = 0; round < 2; ++round) {
    if (run_big(shared, big_out[1]) || run_small(shared, small_out[1])) return 2;
    if (memcmp(big_out[0], big_out[1], sizeof big_out[0]) != 0 ||
        memcmp(small_out[0], small_out[1], sizeof small_out[0]) != 0) {
      printf("FAIL: a run through the shared workspace differs\n");
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
