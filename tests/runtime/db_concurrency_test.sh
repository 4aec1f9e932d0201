#!/usr/bin/env bash
# Eight processes creating one database; two processes x 8 threads against
# one search database, then a process killed
# with SIGKILL while it writes. Checks: every kernel matches the reference,
# PRAGMA integrity_check is ok, no duplicated rows, nothing lost (a third
# process finds all 200 Specs stored), and the killed process's database
# opens and serves the next one.
#   db_concurrency_test.sh path/to/db_stress path/to/amarena
set -euo pipefail
stress=$1
amarena=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/amarena.db

# Eight processes creating one new file at once: one makes the schema, none
# takes the half-made file for a foreign one.
fresh=$dir/fresh.db
pids=()
for i in $(seq 8); do
  "$stress" "$fresh" "$i" 3 1 > "$dir/creator$i.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || {
    rc=$?
    echo "FAIL: creator $((i + 1)) exited $rc:"
    cat "$dir/creator$((i + 1)).log"
    exit 1
  }
done
if ls "$fresh".bad-* > /dev/null 2>&1; then
  echo "FAIL: a new file was set aside"; ls "$dir"; exit 1
fi
echo "eight creators: ok"

"$stress" "$db" 7 200 8 > "$dir/p1.log" 2>&1 &
p1=$!
"$stress" "$db" 7 200 8 reverse > "$dir/p2.log" 2>&1 &
p2=$!
rc=0
wait $p1 || rc=1
wait $p2 || rc=1
cat "$dir/p1.log" "$dir/p2.log"
[ $rc = 0 ] || { echo "FAIL: a process reported errors"; exit 1; }

AMARENA_DB=$db "$amarena" db check | grep -q ': ok$' ||
  { echo "FAIL: integrity check"; AMARENA_DB=$db "$amarena" db check; exit 1; }
dups=$("$stress" "$db" --duplicates) || { echo "FAIL: $dups duplicated rows"; exit 1; }
"$stress" "$db" 7 200 8 expect-stored ||
  { echo "FAIL: rows were lost"; exit 1; }
echo "two processes: ok, $dups duplicated rows"

# SIGKILL while writing: a long run of new Specs, killed part way.
db2=$dir/killed.db
"$stress" "$db2" 8 20000 2 > /dev/null 2>&1 &
victim=$!
for _ in $(seq 100); do  # until it has written something
  sleep 0.1
  [ -s "$db2-wal" ] && break
done
sleep 0.5
kill -0 $victim || { echo "FAIL: the writer ended before it was killed"; exit 1; }
kill -9 $victim
wait $victim 2>/dev/null || true
"$stress" "$db2" 8 60 4 || { echo "FAIL: the next process could not use it"; exit 1; }
AMARENA_DB=$db2 "$amarena" db check | grep -q ': ok$' ||
  { echo "FAIL: integrity after SIGKILL"; exit 1; }
rows=$(AMARENA_DB=$db2 "$amarena" db stats --json | tail -1)
echo "after SIGKILL: ok, $rows"
