#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (what CI runs):
# first the Release build, then the same suite built with AddressSanitizer +
# UndefinedBehaviorSanitizer (in build-asan; the valgrind tests are left to
# the Release run, since valgrind and ASan do not mix, and so are the packaging
# consumers and the benchmarks, which only rebuild what the first run checked;
# the 500-shape random sweeps check every 10th shape; -g1 keeps the line
# tables ASan reports need at a fraction of full debug info's build time).
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
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    AMARENA_TEST_SWEEP_STRIDE=10 \
    ctest --test-dir build-asan -j2 --output-on-failure -LE exhaustive \
    -E 'valgrind|packaging_consumers'
fi
