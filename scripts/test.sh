#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (what CI runs):
# first the Release build, then the library's own code under AddressSanitizer +
# UndefinedBehaviorSanitizer (in build-asan, -O2 -g1).
#
# The sanitizer run instruments the C++ (parsing, search, runtime, database,
# C API), not the code the JIT emits, which the Release run's guard-page
# sweeps check. So it samples the long sweeps (every 10th Spec, a tenth of the
# fuzz strings) and leaves to the Release run what it would only repeat more
# slowly: valgrind (which does not mix with ASan), the packaging consumers
# (rebuilds), the multi-process database tests (timing-sensitive, several
# times slower instrumented), the search's exhaustive cross-checks and the
# JIT-only known-case and kernel-edge sweeps.
# SKIP_SANITIZE=1 skips the second run.
# Tests labelled `exhaustive` are long sweeps kept out of CI: run them with
#   ctest --test-dir build -L exhaustive
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j2 --output-on-failure -LE exhaustive
if [ "${SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DAMARENA_SANITIZE=ON -DAMARENA_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$(nproc)"
  sanitize_skip='valgrind|packaging_consumers|db_concurrency|db_lock|db_checkpoints'
  sanitize_skip+='|GreedyTest|LowerBoundNeverExceedsTheBestCost|GoldenSchedules'
  sanitize_skip+='|KnownCases|KernelEdges'
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    AMARENA_TEST_SWEEP_STRIDE=10 \
    ctest --test-dir build-asan -j2 --output-on-failure -LE exhaustive \
    -E "$sanitize_skip"
fi
