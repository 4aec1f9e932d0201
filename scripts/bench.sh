#!/usr/bin/env bash
# Runs amarena against the peer libraries (OpenBLAS, BLIS, oneDNN, libxsmm,
# Eigen, XNNPACK) on the benchmark Specs and 20 seeded random shapes, one and
# two threads, AVX2-capped (where the CPU has AVX-512) and best ISA, and writes
# bench/results/<vendor>-family<F>-model<M>/ (the host's CPU; BENCH_OUT
# overrides): results.md (tables), peers_*.png (plots), peers_*.json (raw
# Google Benchmark output) and peers_*.log (console output, with each
# library's CPU choice).
#   scripts/bench.sh                  # install peers, build, run (~10 min)
#   SKIP_SETUP=1 scripts/bench.sh     # reuse the existing build
#   BENCH_ARGS="--shapes=small --threads=1" scripts/bench.sh   # a quick subset
#   BENCH_RANDOM=20:7 scripts/bench.sh  # 20 random shapes from seed 7 (the
#                                       # default is 20:1; 0:0 for none)
# Not part of the test suite: benchmarks are not tests. Close other work first;
# two-thread figures on a 2-core machine suffer most from anything else running.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_SETUP:-0}" != 1 ]; then
  ./scripts/setup.sh
fi
cmake --build build -j"$(nproc)" --target peer_benchmark amarena_cli
# amarena's kernel-creation rows measure a cold search: no search database.
export AMARENA_DB=off
host=$(./build/tools/amarena cpu | sed -n 's/^identity: *\([^ ]*\) family \([0-9]*\) model \([0-9]*\).*/\1-family\2-model\3/p')
out=${BENCH_OUT:-bench/results/${host:-unknown-cpu}}
mkdir -p "$out"
# Without AVX-512 the AVX2 cap changes nothing but leaves out the peers that
# cannot be capped (XNNPACK): only the best-ISA half runs.
isas=best
if ./build/tools/amarena cpu | grep -q '^features:.*avx512f'; then
  isas="avx2 best"
fi

# Percent of CPU time idle over the next two seconds, all CPUs together.
idle_pct() {
  local a b
  read -r -a a < <(head -1 /proc/stat)
  sleep 2
  read -r -a b < <(head -1 /proc/stat)
  local total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  echo $(( total > 0 ? 100 * (b[4] - a[4] + b[5] - a[5]) / total : 0 ))
}
# Waits (up to BENCH_QUIET_WAIT seconds, default 900) for the machine to be
# at least 90 % idle, so other work does not steal the cores being measured;
# records what it found either way.
wait_quiet() {
  local waited=0 idle
  idle=$(idle_pct)
  while [ "$idle" -lt 90 ] && [ "$waited" -lt "${BENCH_QUIET_WAIT:-900}" ]; do
    echo "bench.sh: machine ${idle}% idle, waiting for >= 90%" >&2
    sleep 8
    waited=$((waited + 10))
    idle=$(idle_pct)
  done
  echo "$idle"
}
# Three repetitions of at least 0.1 s each; the report uses their medians.
# The repetitions of all rows run in a random order, so every library's are
# spread over the whole run: on a shared machine, the neighbours' load then
# falls on all libraries alike instead of on whichever ran during a busy
# minute. ISA caps are per process (OpenBLAS, BLIS and oneDNN fix theirs at
# load).
for isa in $isas; do
  idle=$(wait_quiet)
  echo "$isa: machine ${idle}% idle at the start ($(date -u +%FT%TZ))" \
    >"$out/conditions_$isa.txt"
  # shellcheck disable=SC2086
  ./build/bench/peer_benchmark --isa="$isa" \
    --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out="$out/peers_$isa.json" --benchmark_out_format=json \
    --random="${BENCH_RANDOM:-20:1}" ${BENCH_ARGS:-} 2>&1 | tee "$out/peers_$isa.log"
done
/usr/bin/python3 scripts/bench_report.py "$out"
