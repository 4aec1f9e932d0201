/* amarena's C API: create and run JIT kernels for tensor-operation Specs.
 *
 *   amarena_kernel* k = NULL;
 *   if (amarena_kernel_get(NULL, "matmul 64x64x64 f32", &k) != AMARENA_OK) {
 *     fprintf(stderr, "%s\n", amarena_last_error());   // names the problem
 *     return 1;
 *   }
 *   void* ops[3] = {a, b, c};                          // C = A.B, row-major
 *   amarena_kernel_run(k, ops);
 *   amarena_kernel_release(k);
 *
 * Every function returns a status code; on failure, amarena_last_error()
 * gives a one-line message for the calling thread. No C++ exception and no
 * abort crosses this interface for bad input. Kernels are cached by the
 * runtime (a process-wide default when `rt` is NULL) and are safe to run from
 * many threads at once.
 */
#ifndef AMARENA_RUNTIME_AMARENA_H_
#define AMARENA_RUNTIME_AMARENA_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum amarena_status {
  AMARENA_OK = 0,
  AMARENA_INVALID_ARGUMENT = 1,    /* bad Spec text, null or misaligned data */
  AMARENA_UNIMPLEMENTED = 2,       /* valid Spec the generator cannot do yet */
  AMARENA_FAILED_PRECONDITION = 3, /* e.g. a CPU without AVX2+FMA */
  AMARENA_RESOURCE_EXHAUSTED = 4,  /* out of memory for code or data */
  AMARENA_INTERNAL = 5             /* a bug in amarena: please report it */
} amarena_status;

typedef struct amarena_runtime amarena_runtime;
typedef struct amarena_kernel amarena_kernel;

/* The message of the calling thread's last failed call ("" if none). Valid
 * until that thread's next amarena call. */
const char* amarena_last_error(void);

/* A runtime of its own (its own kernel cache and search memo) for the host
 * CPU, with `threads` threads for parallel loops (0: as AMARENA_NUM_THREADS
 * or every CPU). Destroy it with amarena_runtime_destroy once its kernels are
 * released. */
amarena_status amarena_runtime_create(int threads, amarena_runtime** out);
void amarena_runtime_destroy(amarena_runtime* rt);

/* A kernel for `spec` (the text notation, e.g. "matmul 64x64x64 f32") from
 * `rt`, or from the process-wide runtime when `rt` is NULL. *out is a new
 * reference: release it with amarena_kernel_release. */
amarena_status amarena_kernel_get(amarena_runtime* rt, const char* spec,
                                  amarena_kernel** out);

/* As amarena_kernel_get, with a search deadline `search_us` microseconds
 * from now (>= 0). A Spec the cache and the search database cannot answer in
 * time gets a quickly searched, valid kernel (amarena_kernel_source says
 * "provisional"); the exact search goes on in the background, is stored in
 * the database, and answers later requests. */
amarena_status amarena_kernel_get_within(amarena_runtime* rt, const char* spec,
                                         int64_t search_us,
                                         amarena_kernel** out);

/* Runs `k`: operands[i] points at operand i (matmul: A, B, C), dense, in
 * the Spec's layouts, each 4-byte aligned. */
amarena_status amarena_kernel_run(const amarena_kernel* k,
                                  void* const* operands);

/* The kernel's name ("amarena_matmul_64x64x64_f32_..."), its ISA ("avx2",
 * "avx512") and its canonical Spec text; NULL for a NULL kernel. Valid while
 * the kernel is. */
const char* amarena_kernel_name(const amarena_kernel* k);
const char* amarena_kernel_isa(const amarena_kernel* k);
const char* amarena_kernel_spec(const amarena_kernel* k);

/* A matmul's B as `k` reads it: amarena_kernel_b_bytes is its size in bytes
 * (a pre-packed B's panels and padding included; 0 for a NULL kernel or one
 * that is not a matmul), and amarena_kernel_pack_b lays out `b`, the plain
 * row-major K x N matrix of the Spec's dtype, into `out` (`out_bytes` of
 * room) in the kernel's layout of B: once, for weights requested with
 * "b=any" or "b=pP". With a plain row-major B it is a copy. */
size_t amarena_kernel_b_bytes(const amarena_kernel* k);
amarena_status amarena_kernel_pack_b(const amarena_kernel* k, const void* b,
                                     void* out, size_t out_bytes);

/* Where the kernel's program came from: "search", "database" (searched
 * earlier, by any process) or "provisional" (a missed deadline). NULL for a
 * NULL kernel. */
const char* amarena_kernel_source(const amarena_kernel* k);

/* What a runtime's kernel cache has done (`rt` NULL: the process-wide one). */
typedef struct amarena_cache_stats {
  int64_t hits;          /* requests answered from the cache */
  int64_t misses;        /* requests that created a kernel */
  int64_t evictions;     /* kernels dropped to stay within the capacity */
  int64_t entries;       /* kernels cached now */
  int64_t from_database; /* misses answered by the search database */
  int64_t provisional;   /* misses answered quickly for a deadline */
  double search_ms;      /* total time misses spent finding programs */
  double jit_us;         /* total time misses spent in the JIT */
} amarena_cache_stats;
amarena_status amarena_get_cache_stats(amarena_runtime* rt,
                                       amarena_cache_stats* out);

/* Drops a reference from amarena_kernel_get (NULL is fine). */
void amarena_kernel_release(amarena_kernel* k);

#ifdef __cplusplus
}
#endif

#endif /* AMARENA_RUNTIME_AMARENA_H_ */
