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
 *
 * Rules for running a kernel (docs/api.md has the details):
 * - Floating point: every thread of a run uses the calling thread's MXCSR
 *   (rounding, flush-to-zero, denormals-are-zero), so the thread count does
 *   not change how subnormals are treated: they are flushed only if the
 *   caller's MXCSR says so.
 * - Aliasing: C must not overlap A or B (A and B may overlap each other);
 *   runs check it and return AMARENA_INVALID_ARGUMENT.
 * - Sizes: operand i spans amarena_kernel_operand_bytes(k, i) bytes (with a
 *   leading dimension, from its first element to the end of its last row);
 *   amarena_kernel_run_sized checks the caller's buffer sizes against it.
 * - Lifetime: release a runtime's kernels before amarena_runtime_destroy; a
 *   kernel run after its runtime is destroyed returns
 *   AMARENA_FAILED_PRECONDITION.
 */
#ifndef AMARENA_AMARENA_H_
#define AMARENA_AMARENA_H_

#include <stddef.h>
#include <stdint.h>

#include "amarena/version.h"

/* Every declaration below is exported from the shared library (which is built
 * with hidden visibility, so nothing else is). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum amarena_status {
  AMARENA_OK = 0,
  AMARENA_INVALID_ARGUMENT = 1,    /* bad Spec text, null or misaligned data */
  AMARENA_UNIMPLEMENTED = 2,       /* valid Spec the generator cannot do yet */
  AMARENA_FAILED_PRECONDITION = 3, /* e.g. a CPU without AVX2+FMA, or a
                                      kernel whose runtime is destroyed */
  AMARENA_RESOURCE_EXHAUSTED = 4,  /* out of memory for code or data */
  AMARENA_INTERNAL = 5             /* a bug in amarena: please report it */
} amarena_status;

typedef struct amarena_runtime amarena_runtime;
typedef struct amarena_kernel amarena_kernel;

/* The library's version, "MAJOR.MINOR.PATCH" (AMARENA_VERSION_STRING of the
 * header it was built with). */
const char* amarena_version(void);

/* The message of the calling thread's last failed call ("" if none). Valid
 * until that thread's next amarena call. */
const char* amarena_last_error(void);

/* A runtime of its own (its own kernel cache and search memo) for the host
 * CPU, with `threads` threads for parallel loops (0: as AMARENA_NUM_THREADS
 * or every CPU). Destroy it with amarena_runtime_destroy once its kernels are
 * released: running a kernel after that is AMARENA_FAILED_PRECONDITION
 * (releasing it, and its name, ISA and Spec, still work). */
amarena_status amarena_runtime_create(int threads, amarena_runtime** out);
void amarena_runtime_destroy(amarena_runtime* rt);

/* Levels a log callback receives. */
#define AMARENA_LOG_WARNING 1 /* something to fix; the library carries on */
#define AMARENA_LOG_INFO 2    /* a line per kernel created, and the like */

/* What amarena_runtime_create_with_options makes. Fill it with
 * amarena_runtime_options_init, then change what you need: fields added in
 * later versions go at the end, and struct_size tells the library which of
 * them the caller knows. */
typedef struct amarena_runtime_options {
  size_t struct_size; /* sizeof(amarena_runtime_options), set by _init */
  /* Threads for parallel loops (0: AMARENA_NUM_THREADS or every CPU). With
   * parallel_for: how many threads it runs tasks on (at least 1). */
  int threads;
  /* The search database: a file path, "off" for none, or NULL (or "") for
   * the default (AMARENA_DB, else the XDG cache directory). */
  const char* db;
  /* The widest ISA kernels may use: "avx2", "avx512", or NULL (or "") for
   * AMARENA_MAX_ISA, else the best the CPU has. A cap, not a demand. */
  const char* max_isa;
  /* 0: nothing; 1: warnings; 2: also a line per kernel created; -1 (the
   * default): 2 if AMARENA_VERBOSE is set and not "0", else 1. */
  int verbosity;
  /* Receives each message at or below `verbosity` (NULL: stderr). With a
   * callback the library writes nothing to stderr. May be called from any
   * thread, and from several at once. */
  void (*log)(void* ctx, int level, const char* msg);
  void* log_ctx;
  /* The engine's own parallel loop (NULL: a pool of the runtime's own):
   * calls task(task_ctx, i) once for every i < n, on any threads, and
   * returns when all have returned. Kernels' parallel loops and weight
   * packing run on it. It must stay usable while any kernel of the runtime
   * is. */
  void (*parallel_for)(void* ctx, void (*task)(void* task_ctx, size_t i),
                       void* task_ctx, size_t n);
  void* parallel_for_ctx;
} amarena_runtime_options;

/* The defaults: threads 0, db NULL, max_isa NULL, verbosity -1, no
 * callbacks; struct_size set. */
void amarena_runtime_options_init(amarena_runtime_options* options);

/* A runtime as amarena_runtime_create makes, as `options` say.
 * AMARENA_INVALID_ARGUMENT names a field out of range (a struct_size smaller
 * than this header's first version, threads outside 0-1024 or 0 with a
 * parallel_for, an unknown max_isa, verbosity outside -1 to 2). */
amarena_status amarena_runtime_create_with_options(
    const amarena_runtime_options* options, amarena_runtime** out);

/* A kernel for `spec` (the text notation, e.g. "matmul 64x64x64 f32") from
 * `rt`, or from the process-wide runtime when `rt` is NULL. *out is a new
 * reference: release it with amarena_kernel_release. The text may scale the
 * product ("matmul 64x64x64 f32 alpha=0.5": C = 0.5*A.B) and ask for a bf16
 * C ("bf16*bf16->bf16", "f32*bf16->bf16": summed in f32, rounded once to
 * nearest even); docs/api.md has the rules. */
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

/* Runs `k`: operands[i] points at operand i (matmul: A, B, C), dense or
 * with the Spec's leading dimensions (lda=, ldb=, ldc=), in the Spec's
 * layouts, aligned to its element (4 bytes for f32, 2 for bf16),
 * spanning amarena_kernel_operand_bytes(k, i) bytes. The output (C) must not
 * overlap an input; inputs may overlap each other. AMARENA_INVALID_ARGUMENT
 * names the operand that is null, misaligned or overlapping;
 * AMARENA_RESOURCE_EXHAUSTED when a thread's packing scratch cannot be
 * allocated (the output is then partly written). Every thread of the run
 * uses the caller's MXCSR (FTZ/DAZ and rounding). */
amarena_status amarena_kernel_run(const amarena_kernel* k,
                                  void* const* operands);

/* As amarena_kernel_run, and operand_bytes[i] is the size in bytes of the
 * buffer operands[i] points at: AMARENA_INVALID_ARGUMENT, naming the operand,
 * if one is smaller than amarena_kernel_operand_bytes(k, i). */
amarena_status amarena_kernel_run_sized(const amarena_kernel* k,
                                        void* const* operands,
                                        const size_t* operand_bytes);

/* Bytes operand i (matmul: 0 A, 1 B, 2 C) of `k` spans: what the kernel
 * reads or writes from its pointer, panel padding included; for a batched
 * matmul ("matmul BxMxKxN"), from its first matrix to the end of its last
 * ((B - 1) batch strides and one matrix; one matrix when the batch shares
 * it). 0 for a NULL kernel or an `i` it does not have. */
size_t amarena_kernel_operand_bytes(const amarena_kernel* k, int i);

/* A matmul's batch B (1 when unbatched; 0 for a NULL kernel), and the bytes
 * from operand i's matrix for batch element q to its matrix for q + 1 (the
 * Spec's sa=, sb=, sc=, or the dense stride): batch element q reads
 * operands[i] + q * amarena_kernel_batch_stride_bytes(k, i). 0 for an operand
 * the batch shares (sb=0), for a kernel of batch 1, a NULL kernel or an `i`
 * it does not have. */
int64_t amarena_kernel_batch(const amarena_kernel* k);
size_t amarena_kernel_batch_stride_bytes(const amarena_kernel* k, int i);

/* The kernel's name ("amarena_matmul_64x64x64_f32_..."), its ISA ("avx2",
 * "avx512") and its canonical Spec text; NULL for a NULL kernel. Valid while
 * the kernel is. */
const char* amarena_kernel_name(const amarena_kernel* k);
const char* amarena_kernel_isa(const amarena_kernel* k);
const char* amarena_kernel_spec(const amarena_kernel* k);

/* A matmul's B as `k` reads it: amarena_kernel_b_bytes is its size in bytes
 * (amarena_kernel_operand_bytes(k, 1): a pre-packed B's panels and padding
 * included; 0 for a NULL kernel or one that is not a matmul), and
 * amarena_kernel_pack_b lays out `b`, the plain row-major K x N matrix of the
 * Spec's dtype, into `out` (`out_bytes` of room) in the kernel's layout of B:
 * once, for weights requested with "b=any" or "b=pP". With a plain row-major B
 * it is a copy. A batched kernel's B is packed only when the batch shares it
 * (sb=0); a B per batch element is AMARENA_INVALID_ARGUMENT (not
 * implemented). */
size_t amarena_kernel_b_bytes(const amarena_kernel* k);
amarena_status amarena_kernel_pack_b(const amarena_kernel* k, const void* b,
                                     void* out, size_t out_bytes);

/* How a source of B holds it: as B, K x N row-major, or as B transposed,
 * N x K row-major (how checkpoints store weights). */
typedef enum amarena_b_source {
  AMARENA_B_KXN = 0, /* element (k, n) at src[k * src_ld + n] */
  AMARENA_B_NXK = 1  /* element (k, n) at src[n * src_ld + k] */
} amarena_b_source;

/* As amarena_kernel_pack_b, from a source in either orientation with
 * `src_ld` elements between its rows (at least N for AMARENA_B_KXN, K for
 * AMARENA_B_NXK). Cache-blocked, vectorized where the CPU allows and spread
 * over the runtime's threads: tens of milliseconds for 64 MiB rather than a
 * second. AMARENA_INVALID_ARGUMENT names a null pointer, a src_ld too small,
 * an `out` too small or overlapping `src`, or a kernel without a B.
 * amarena_kernel_pack_b(k, b, out, n) is
 * amarena_kernel_pack_b_from(k, b, AMARENA_B_KXN, N, out, n). */
amarena_status amarena_kernel_pack_b_from(const amarena_kernel* k,
                                          const void* src,
                                          amarena_b_source source,
                                          size_t src_ld, void* out,
                                          size_t out_bytes);

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

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* AMARENA_AMARENA_H_ */
