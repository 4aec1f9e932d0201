/* The consumers' one check: "matmul 13x7x100 f32" (C = A.B, M 13, K 7, N 100)
 * made and run through the C API, against a naive loop. Returns 0 when every
 * element agrees, nonzero (after a message on stderr) otherwise. */
#ifndef AMARENA_TESTS_PACKAGING_CHECK_MATMUL_H_
#define AMARENA_TESTS_PACKAGING_CHECK_MATMUL_H_

#include <math.h>
#include <stdio.h>

#include "amarena/amarena.h"

static int amarena_check_matmul(void) {
  enum { M = 13, K = 7, N = 100 };
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 11) - 5.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 7) * 0.25f - 0.5f;
  for (int i = 0; i < M * N; ++i) c[i] = -1e30f; /* every element is written */

  amarena_kernel* k = NULL;
  if (amarena_kernel_get(NULL, "matmul 13x7x100 f32", &k) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_get: %s\n", amarena_last_error());
    return 1;
  }
  void* ops[3] = {a, b, c};
  if (amarena_kernel_run(k, ops) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_run: %s\n", amarena_last_error());
    amarena_kernel_release(k);
    return 1;
  }
  amarena_kernel_release(k);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int p = 0; p < K; ++p) want += a[i * K + p] * b[p * N + j];
      if (fabsf(c[i * N + j] - want) > 1e-4f * (1.0f + fabsf(want))) {
        fprintf(stderr, "c[%d][%d] = %g, want %g\n", i, j, c[i * N + j], want);
        return 1;
      }
    }
  }
  return 0;
}

#endif /* AMARENA_TESTS_PACKAGING_CHECK_MATMUL_H_ */
