#!/usr/bin/env bash
# A wrong result stops its row: peer_benchmark, fed the deliberately wrong
# implementation ("wrong", which drops the last term of every dot product),
# reports each of its rows as an error and times none of them, while
# amarena's rows on the same shapes are timed. `amarena bench --vs wrong`
# names the error and exits with status 1.
set -u
bench="$1"
amarena="$2"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bench" --peers=amarena,wrong --shapes=small --threads=1 --limits=false \
  --latency=false --benchmark_min_time=0.01 --benchmark_format=json >"$out" ||
  { echo "FAIL: peer_benchmark exited with $?"; exit 1; }
/usr/bin/python3 - "$out" <<'PY' || exit 1
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
fail = 0
wrong = [r for r in rows if "/wrong/" in r["name"]]
ours = [r for r in rows if "/amarena/" in r["name"]]
if len(wrong) != 4 or len(ours) != 4:
    print("FAIL: expected 4 rows each, got", len(wrong), len(ours)); sys.exit(1)
for r in wrong:
    ok = (r.get("error_occurred") and
          r.get("error_message", "").startswith("error: wrong result") and
          "GFLOPS" not in r)
    print("ok:  " if ok else "FAIL:", r["name"], "->", r.get("error_message"))
    fail |= not ok
for r in ours:
    ok = not r.get("error_occurred") and r.get("GFLOPS", 0) > 0
    print("ok:  " if ok else "FAIL:", r["name"], "->", r.get("GFLOPS"))
    fail |= not ok
sys.exit(fail)
PY
msg=$("$amarena" bench "matmul 16x32x8 f32" --vs wrong --threads 1 2>&1)
status=$?
if [ "$status" -ne 1 ] || ! grep -q "wrong .*error: wrong result" <<<"$msg"; then
  echo "FAIL: amarena bench --vs wrong -> status $status: $msg"
  exit 1
fi
echo "ok:   amarena bench --vs wrong -> status 1"
