// The timed loops `amarena calibrate` runs (runtime/calibrate.cc): register
// adds for the clock, FMA chains, L1 loads and stores, and reads of a buffer
// dense, down column panels and as runs of rows. Each reads or computes
// something it then sinks into a volatile, so the compiler keeps the work.
// Internal to the runtime's calibration.
#ifndef AMARENA_RUNTIME_CALIBRATE_LOOPS_H_
#define AMARENA_RUNTIME_CALIBRATE_LOOPS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace amarena::calibrate_loops {

// The calling thread's CPU time: what it ran, not what other processes ran
// while it waited for the core (the machines this runs on are often shared;
// short runs timed this way mostly fall between two preemptions, and the
// figures keep the typical or the fastest runs). Cache and memory
// contention still show.
int64_t ThreadNs();
// The median of `v` (not empty).
double Median(std::vector<double> v);

inline constexpr size_t kLine = 64;
inline constexpr size_t kFloatsPerLine = kLine / sizeof(float);
inline constexpr size_t kPitchFloats = 1024;  // 4096-byte rows: the strided pitch
inline constexpr size_t kPanelsPerRow = kPitchFloats / kFloatsPerLine;
inline constexpr size_t kPanelRows = 256;
inline constexpr int kYmmChains = 12;  // > 2 pipes x 4-5 cycles of latency
inline constexpr int kZmmChains = 16;
inline constexpr int kAddsPerIter = 32;  // AddChain: cycles a round
inline constexpr int kOpsPerIter = 32;   // L1Loads, L1Stores: vmovups a round

// `iters` rounds of kAddsPerIter dependent register adds.
void AddChain(int64_t iters);
// `iters` rounds of kYmmChains independent ymm FMAs; one dependent chain of
// `iters`; `iters` rounds of kZmmChains zmm FMAs (only where AVX-512F is).
void YmmFmas(int64_t iters);
void YmmFmaChain(int64_t iters);
void ZmmFmas(int64_t iters);
// `passes` sequential reads of lines * 64 bytes at `buf` (lines a multiple
// of 4).
void DensePasses(const float* buf, size_t lines, int64_t passes);
// `passes` column-panel reads of a matrix of `bands` * kPanelRows rows of
// kPitchFloats, `panels` 64-byte panels per band, each read top to bottom.
void StridedPasses(const float* mat, size_t bands, size_t panels,
                   int64_t passes);
// Reads a rows x pitch-float matrix as runs of `run` floats: for each band
// of columns, each row's run in turn.
void RunPass(const float* m, size_t rows, size_t pitch, size_t run);
// Reads a rows x pitch-float matrix as the vector-matrix kernels read a
// plain B: blocks of kBlockRows rows, each block swept across its columns
// `run` floats at a time, a run of every row of the block in turn. With
// `prefetch` (a CostParams::stream_prefetch value) each line read is also
// prefetched kBlockRows rows ahead as the broadcast kernel prefetches
// (core/kernels.h): 1, prefetcht0 of the same columns; kStreamPrefetchL2,
// prefetcht1 a line further along.
inline constexpr size_t kBlockRows = 8;
void BlockPass(const float* m, size_t rows, size_t pitch, size_t run,
               int prefetch);
// `iters` rounds of kOpsPerIter ymm loads from, or stores to, the KiB at `p`.
void L1Loads(const float* p, int64_t iters);
void L1Stores(float* p, int64_t iters);
// The same with zmm, over 2 KiB (only where AVX-512F is).
void ZmmL1Loads(const float* p, int64_t iters);
void ZmmL1Stores(float* p, int64_t iters);
// `iters` passes of kMixSteps k steps of a 3x32 register tile of ymm as the
// JIT runs it, two 3x16 broadcast kernels a step: per kernel, two B vectors
// and three broadcasts of A, each followed by its two FMAs (kMixLoads loads,
// kMixFmas FMAs into 12 accumulators), walking A's three rows (8 KiB apart,
// 4 bytes a step) and a 32-column B panel (128 bytes a step, from 32 KiB
// past `p`) as a k loop does; both fit L1 (512 bytes of each row of A, 16
// KiB of B a pass). Loads issued among FMAs this way go slower than alone:
// on the Intel Xeon guest a step took 6.5 cycles where a 6x16 tile's (8
// loads) took 6.0, the FMAs' bound; with the pointers standing still both
// took 6.0.
inline constexpr int kMixLoads = 10;
inline constexpr int kMixFmas = 12;
inline constexpr int kMixSteps = 128;
void LoadsBesideFmas(const float* p, int64_t iters);

}  // namespace amarena::calibrate_loops

#endif  // AMARENA_RUNTIME_CALIBRATE_LOOPS_H_
