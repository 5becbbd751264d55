/* A hand-written stand-in for a model that `tessel compile --target c`
 * generates, shaped like one: a header with the pool size and an entry
 * function, a .c with the operators, the constants in a file apart. It
 * checks the bare-metal build (startup, linker sections, FPU, semihosting)
 * before the C emitter exists; it is not generated.
 *
 * The "model": h = x * x (in the workspace), d = W h + b,
 * y = expf(d / 32) * sqrtf(|d| + 1), with W [4][64] and b [4] constant. */
#ifndef TESSEL_SMOKE_H_
#define TESSEL_SMOKE_H_

#include <stdint.h>

#define TESSEL_SMOKE_INPUT_SIZE 64
#define TESSEL_SMOKE_OUTPUT_SIZE 4
/* Bytes of the workspace pool, which the application provides (16-byte
 * aligned) and may place in any RAM. */
#define TESSEL_SMOKE_WORKSPACE_SIZE 256

/* Returns 0 on success, nonzero when an argument is null. */
int tessel_smoke_run(const float *input, float *output, uint8_t *workspace);

/* For the application's placement check only: the constants' addresses. */
extern const float tessel_smoke_weights[4][64];
extern const float tessel_smoke_bias[4];

#endif /* TESSEL_SMOKE_H_ */
