#!/usr/bin/env bash
# Installs dependencies, builds, and runs the test suite CI runs (.ci/run):
#  1. scripts/setup.sh: apt packages and the Release build of everything (the
#     README's build), then every test not labelled `exhaustive` (ctest -j2).
#     The random sweeps run their CI sizes (docs/testing.md lists them).
#  2. The library's own code under AddressSanitizer + UndefinedBehaviorSanitizer
#     in build-asan (-O2 -g1; benchmarks off; the tests' own code and the Eigen
#     peer uninstrumented, see tests/CMakeLists.txt).
# The sanitizer run instruments the C++ (parsing, search, runtime, database,
# C API, CLI), not the code the JIT emits, which the Release run's guard-page
# sweeps check. So it samples the long sweeps (every 10th Spec, a tenth of
# 10 000 fuzz strings) and leaves to the Release run what it would only repeat
# more slowly: valgrind (which does not mix with ASan), the packaging
# consumers (rebuilds), the multi-process database tests (timing-sensitive,
# several times slower instrumented), the search's exhaustive cross-checks,
# and the JIT's fixed lists of shapes (kernel edges, grids, issue and chosen
# shapes, the kernel catalogue), which check emitted code on the same host
# paths the sampled sweeps take.
# SKIP_SANITIZE=1 skips the second run.
# Tests labelled `exhaustive` are the long versions of the sweeps, kept out
# of CI: run them with
#   ctest --test-dir build -L exhaustive
set -euo pipefail
cd "$(dirname "$0")/.."
phase() { echo "test.sh: $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
phase_start=$SECONDS
./scripts/setup.sh
phase "setup.sh (apt and the Release build)"
ctest --test-dir build -j2 --output-on-failure -LE exhaustive
phase "Release tests"
if [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DAMARENA_SANITIZE=ON -DAMARENA_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$(nproc)"
  phase "sanitizer build"
  sanitize_skip='valgrind|packaging_consumers|db_concurrency|db_lock|db_checkpoints'
  sanitize_skip+='|GreedyTest|LowerBoundNeverExceedsTheBestCost|GoldenSchedules'
  sanitize_skip+='|LowerBoundIsAtMostTheBestCost|WithTwoWorkersTheBoundHolds'
  sanitize_skip+='|KnownCases|KernelEdges|Bf16Grid|PairGrid|GridMatchesTheReference'
  sanitize_skip+='|IssueShapes|EngineShapes|ChosenShapes|KernelCatalogue|SearchBoundsTest'
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    AMARENA_TEST_SWEEP_STRIDE=10 \
    ctest --test-dir build-asan -j2 --output-on-failure -LE exhaustive \
    -E "$sanitize_skip"
  phase "sanitizer tests"
fi
