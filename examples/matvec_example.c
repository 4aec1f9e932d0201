/* The README's gemma-style matrix-vector product, checked: f32 activations
 * times bf16 weights stored N x K (as checkpoints keep them), packed once with
 * amarena_kernel_pack_b_from. The function `matvec` is the README's, line for
 * line; main() makes data, runs it and compares with a double-precision loop. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amarena/amarena.h"

/* y = x·W for one token: x is 1×2048 f32, W 2048×16384 bf16 stored N×K. */
int matvec(const float* x, const uint16_t* w_nk, float* y) {
  amarena_kernel* k = NULL;
  if (amarena_kernel_get(NULL, "matmul 1x2048x16384 f32*bf16->f32 b=any", &k))
    return 1;  /* amarena_last_error() names the problem */
  size_t bytes = amarena_kernel_b_bytes(k);  /* pack once, at load time */
  void* w = aligned_alloc(64, (bytes + 63) / 64 * 64);
  amarena_status s = amarena_kernel_pack_b_from(k, w_nk, AMARENA_B_NXK, 2048, w, bytes);
  void* ops[3] = {(void*)x, w, y};
  if (s == AMARENA_OK) s = amarena_kernel_run(k, ops);  /* every token */
  amarena_kernel_release(k);
  free(w);
  return s != AMARENA_OK;
}

static uint16_t ToBf16(float f) {  /* truncation: the values are exact */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16);
}

static float FromBf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

int main(void) {
  enum { K = 2048, N = 16384 };
  float* x = malloc(sizeof(float) * K);
  uint16_t* w = malloc(sizeof(uint16_t) * (size_t)K * N);
  float* y = malloc(sizeof(float) * N);
  if (!x || !w || !y) return 2;
  for (int i = 0; i < K; ++i) x[i] = (float)((i * 7) % 13) / 16.0f - 0.375f;
  for (size_t i = 0; i < (size_t)K * N; ++i)
    w[i] = ToBf16((float)((i * 5) % 17) / 16.0f - 0.5f);
  if (matvec(x, w, y)) {
    fprintf(stderr, "matvec failed: %s\n", amarena_last_error());
    return 1;
  }
  double worst = 0;
  for (int n = 0; n < N; ++n) {
    double sum = 0;
    for (int k = 0; k < K; ++k) sum += (double)x[k] * FromBf16(w[(size_t)n * K + k]);
    const double err = fabs(sum - y[n]) / (1.0 + fabs(sum));
    if (!(err <= worst)) worst = err; /* NaN makes it fail too */
  }
  printf("matvec 1x2048x16384 f32*bf16->f32: worst relative error %.3g\n", worst);
  free(x);
  free(w);
  free(y);
  return worst < 1e-5 ? 0 : 1;
}
