#!/usr/bin/env bash
# A process holding the database's write lock for HOLD seconds (BEGIN
# IMMEDIATE, db_stress --hold-lock) stalls nobody: another process opens the
# database, gets a stored Spec, gets a new Spec (its store waits 50 ms, is
# skipped and counted), and gets a stored Spec on another thread while that
# store waits, each within MAX_MS of what it takes without the lock -- once
# just after the lock is taken and once near the end of the hold. MAX_MS is a
# bound 100x above the normal figures, not a speed measurement; the figures
# are printed.
#   db_lock_test.sh path/to/db_stress path/to/amarena [HOLD [MAX_MS]]
set -uo pipefail
ulimit -f 262144  # a runaway write fails (256 MB) instead of filling the disk
stress=$1
amarena=$2
hold=${3:-8}
max_ms=${4:-2000}
dir=$(mktemp -d)
holder=
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
db=$dir/a.db
stored1="matmul 64x64x64 f32"
stored2="matmul 32x48x16 f32"
AMARENA_DB=$db "$amarena" precompute "$stored1" "$stored2" > /dev/null ||
  { echo "FAIL: precompute"; exit 1; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(now_ms)
"$stress" "$db" --hold-lock "$hold" "$dir/locked" &
holder=$!
for _ in $(seq 200); do
  [ -e "$dir/locked" ] && break
  sleep 0.05
done
[ -e "$dir/locked" ] || { echo "FAIL: the lock was never taken"; exit 1; }

status=0
echo "-- just after the lock was taken"
"$stress" "$db" --timed-gets "$max_ms" "matmul 100x90x80 f32" "$stored1" \
  "$stored2" 2> "$dir/err1" || status=1
# Near the end of the hold (a second before it ends).
while [ $(($(now_ms) - start)) -lt $((hold * 1000 - 1000)) ]; do sleep 0.2; done
if kill -0 "$holder" 2>/dev/null; then
  echo "-- $(($(now_ms) - start)) ms into the hold"
  "$stress" "$db" --timed-gets "$max_ms" "matmul 101x90x80 f32" "$stored1" \
    "$stored2" 2> "$dir/err2" || status=1
fi
wait "$holder" || { echo "FAIL: the lock holder failed"; status=1; }
holder=
grep -q "another process held its write lock for over 50 ms" "$dir/err1" ||
  { echo "FAIL: the skipped store was not reported: $(cat "$dir/err1")"; status=1; }
[ $status = 0 ] && echo "lock held for $hold s: ok" || echo "FAIL"
exit $status
