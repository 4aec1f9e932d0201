/* Uses only amarena/amarena.h: creates and runs a kernel, checks it against a
 * naive loop, does the same with B laid out once as amarena chooses (b=any),
 * and shows that a malformed Spec, a null operand, a buffer too small and an
 * output overlapping an input come back as status codes with messages. Exit
 * status 0 when all of that holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "amarena/amarena.h"

enum { M = 7, K = 13, N = 20 };

int main(void) {
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)(i % 5) * 0.5f;

  amarena_kernel* k = NULL;
  if (amarena_kernel_get(NULL, "matmul 7x13x20 f32", &k) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_get: %s\n", amarena_last_error());
    return 1;
  }
  void* ops[3] = {a, b, c};
  if (amarena_kernel_run(k, ops) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_run: %s\n", amarena_last_error());
    return 1;
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float want = 0;
      for (int p = 0; p < K; ++p) want += a[i * K + p] * b[p * N + j];
      if (fabsf(c[i * N + j] - want) > 1e-4f * (1.0f + fabsf(want))) {
        fprintf(stderr, "c[%d][%d] = %g, want %g\n", i, j, c[i * N + j], want);
        return 1;
      }
    }
  printf("ran %s (%s): %s\n", amarena_kernel_name(k), amarena_kernel_isa(k),
         amarena_kernel_spec(k));

  /* Weights laid out once in the layout amarena chooses for them (b=any),
   * then used by every call. */
  amarena_kernel* w = NULL;
  if (amarena_kernel_get(NULL, "matmul 7x13x20 f32 b=any", &w) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_get b=any: %s\n", amarena_last_error());
    return 1;
  }
  void* packed = malloc(amarena_kernel_b_bytes(w));
  if (packed == NULL ||
      amarena_kernel_pack_b(w, b, packed, amarena_kernel_b_bytes(w)) !=
          AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_pack_b: %s\n", amarena_last_error());
    return 1;
  }
  static float c2[M * N];
  void* ops2[3] = {a, packed, c2};
  if (amarena_kernel_run(w, ops2) != AMARENA_OK) {
    fprintf(stderr, "amarena_kernel_run b=any: %s\n", amarena_last_error());
    return 1;
  }
  for (int i = 0; i < M * N; ++i)
    if (fabsf(c2[i] - c[i]) > 1e-4f * (1.0f + fabsf(c[i]))) {
      fprintf(stderr, "b=any: c[%d] = %g, want %g\n", i, c2[i], c[i]);
      return 1;
    }
  printf("ran %s with B packed once (%zu bytes)\n", amarena_kernel_spec(w),
         amarena_kernel_b_bytes(w));
  /* Too little room is an error, not an overrun. */
  if (amarena_kernel_pack_b(w, b, packed, 4) != AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "pack_b into 4 bytes did not fail\n");
    return 1;
  }
  free(packed);
  amarena_kernel_release(w);

  /* A malformed Spec: a status code and a message, no crash. */
  amarena_kernel* bad = NULL;
  amarena_status s = amarena_kernel_get(NULL, "matmul 0x5x5 f32", &bad);
  if (s != AMARENA_INVALID_ARGUMENT || bad != NULL) {
    fprintf(stderr, "malformed Spec gave status %d\n", (int)s);
    return 1;
  }
  printf("malformed Spec -> %d: %s\n", (int)s, amarena_last_error());

  /* A null operand. */
  void* null_ops[3] = {a, NULL, c};
  s = amarena_kernel_run(k, null_ops);
  if (s != AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "null operand gave status %d\n", (int)s);
    return 1;
  }
  printf("null operand -> %d: %s\n", (int)s, amarena_last_error());

  /* A misaligned one. */
  void* odd_ops[3] = {(char*)a + 1, b, c};
  s = amarena_kernel_run(k, odd_ops);
  if (s != AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "misaligned operand gave status %d\n", (int)s);
    return 1;
  }
  printf("misaligned operand -> %d: %s\n", (int)s, amarena_last_error());

  /* The sized run checks each buffer against what the kernel touches. */
  size_t sizes[3] = {sizeof a, sizeof b, sizeof c};
  if (amarena_kernel_operand_bytes(k, 1) != sizeof b ||
      amarena_kernel_run_sized(k, ops, sizes) != AMARENA_OK) {
    fprintf(stderr, "sized run: %s\n", amarena_last_error());
    return 1;
  }
  sizes[1] = sizeof b - 4;
  s = amarena_kernel_run_sized(k, ops, sizes);
  if (s != AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "short B gave status %d\n", (int)s);
    return 1;
  }
  printf("short B -> %d: %s\n", (int)s, amarena_last_error());

  /* C must not overlap A or B. */
  void* alias_ops[3] = {a, b, a};
  s = amarena_kernel_run(k, alias_ops);
  if (s != AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "C on A gave status %d\n", (int)s);
    return 1;
  }
  printf("C on A -> %d: %s\n", (int)s, amarena_last_error());

  amarena_kernel_release(k);

  /* A runtime of its own, one thread. */
  amarena_runtime* rt = NULL;
  if (amarena_runtime_create(1, &rt) != AMARENA_OK ||
      amarena_kernel_get(rt, "matmul 7x13x20 f32", &k) != AMARENA_OK ||
      amarena_kernel_run(k, ops) != AMARENA_OK) {
    fprintf(stderr, "own runtime: %s\n", amarena_last_error());
    return 1;
  }
  amarena_kernel_release(k);

  /* A search deadline: 0 us means "answer now"; the exact program follows in
   * the background. Then the cache's counters. */
  if (amarena_kernel_get_within(rt, "matmul 300x200x100 f32", 0, &k) !=
      AMARENA_OK) {
    fprintf(stderr, "deadline: %s\n", amarena_last_error());
    return 1;
  }
  printf("with a deadline: %s program\n", amarena_kernel_source(k));
  amarena_kernel_release(k);
  amarena_cache_stats stats;
  if (amarena_get_cache_stats(rt, &stats) != AMARENA_OK || stats.misses != 2 ||
      stats.entries != 2) {
    fprintf(stderr, "cache stats: %s\n", amarena_last_error());
    return 1;
  }
  printf("cache: %lld hits, %lld misses, %.1f ms searching\n",
         (long long)stats.hits, (long long)stats.misses, stats.search_ms);
  if (amarena_get_cache_stats(rt, NULL) != AMARENA_INVALID_ARGUMENT ||
      amarena_kernel_get_within(rt, "matmul 8x8x8 f32", -1, &k) !=
          AMARENA_INVALID_ARGUMENT) {
    fprintf(stderr, "bad arguments were not refused\n");
    return 1;
  }
  amarena_runtime_destroy(rt);
  return 0;
}
