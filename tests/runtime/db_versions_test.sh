#!/usr/bin/env bash
# Two versions of amarena share one database file: processes posing as two
# generator versions (AMARENA_TESTING_GENERATOR_VERSION) take turns, 10 rounds
# each, on one file. Nothing is set aside (no PATH.bad-*), and from its second
# run on each version finds its own rows ("stored"), never the other's.
#   db_versions_test.sh path/to/amarena
set -uo pipefail
ulimit -f 262144  # a runaway write fails (256 MB) instead of filling the disk
amarena=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/a.db
spec="matmul 24x40x56 f32"
status=0
for round in $(seq 10); do
  for version in 1001 1002; do
    out=$(AMARENA_DB=$db AMARENA_TESTING_GENERATOR_VERSION=$version \
      "$amarena" precompute "$spec" 2> "$dir/err") ||
      { echo "FAIL: round $round, version $version: $(cat "$dir/err")"; status=1; }
    want=stored
    [ "$round" = 1 ] && want=searched
    case "$out" in
      "$want "*) ;;
      *) echo "FAIL: round $round, version $version: want $want, got: $out"
         status=1 ;;
    esac
    if [ -s "$dir/err" ]; then
      echo "FAIL: round $round, version $version warned: $(cat "$dir/err")"
      status=1
    fi
  done
done
if ls "$dir" | grep -q '\.bad-'; then
  echo "FAIL: a file was set aside: $(ls "$dir")"
  status=1
fi
[ $status = 0 ] && echo "two versions, 10 rounds each, one file: ok" || echo "FAIL"
exit $status
