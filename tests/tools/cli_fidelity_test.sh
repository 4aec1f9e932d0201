#!/usr/bin/env bash
# `amarena fidelity` end to end on a tiny Spec with a short timing budget: it
# exits 0, prints rho and regret, writes well-formed JSON with one entry per
# tree, and the trees it reports replay with `amarena run --schedule`. Bad
# input is one line on stderr and exit status 2. Nothing here depends on the
# times measured.
set -u
amarena="$1"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$amarena" fidelity "matmul 8x8x8 f32" --trees 9 --k 3 --decisions 3 \
      --ms 0.2 --rounds 2 --slow 0 --seed 5 --confirm 3 --contenders 2 \
      --json "$tmp/f.json" 2>&1)
status=$?
if [ $status -ne 0 ] || ! grep -q "^rho:" <<<"$out" ||
   ! grep -q "^regret:" <<<"$out" || ! grep -q "^pick:" <<<"$out"; then
  echo "FAIL: fidelity exited $status: $out"
  fail=1
else
  echo "ok:   fidelity printed rho and regret"
fi

# The JSON: its fields, 9 distinct trees, the search's pick first, statistics
# that are numbers or null.
if ! python3 - "$tmp/f.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
for key in ("spec", "budget", "cpu", "isa", "mode", "rho", "rho_near",
            "regret", "rho_min", "regret_min", "pick", "fastest", "trees", "timed", "skipped", "wrong"):
    assert key in r, f"missing {key}"
assert r["spec"] == "matmul 8x8x8 f32", r["spec"]
assert r["mode"] == "warm"
trees = r["trees"]
assert len(trees) == 9, len(trees)
assert len({t["schedule"] for t in trees}) == 9, "trees not distinct"
assert trees[0]["origin"] == "best" and trees[0]["schedule"] == r["pick"]
assert min(t["cost"] for t in trees) == trees[0]["cost"], "pick not cheapest"
assert r["wrong"] == 0 and r["timed"] + r["skipped"] == 9
for t in trees:
    if t["status"] == "ok":
        assert t["median_ns"] > 0 and t["min_ns"] > 0 and t["rounds"] == 2, t
for key in ("rho", "rho_near", "regret", "rho_min", "regret_min"):
    v = r[key]
    assert v is None or isinstance(v, (int, float)), (key, v)
assert r["rho"] is None or -1 <= r["rho"] <= 1
assert r["regret"] is None or r["regret"] >= 0
# The head-to-head: the pick and the 2 fastest others by the rounds, timed
# 3 more times each; the regret and the fastest tree come from it.
assert r["confirm_rounds"] == 3, r["confirm_rounds"]
final = [t for t in trees if "confirm_median_ns" in t]
ok = sorted((t for t in trees[1:] if t["status"] == "ok"),
            key=lambda t: t["median_ns"])
assert final and final[0] is trees[0], "the pick is not in the head-to-head"
assert [t["schedule"] for t in final[1:]] == sorted(
    [t["schedule"] for t in ok[:2]],
    key=[t["schedule"] for t in trees].index), "not the 2 fastest others"
best = min(final, key=lambda t: t["confirm_median_ns"])
assert r["fastest"] == best["schedule"], "fastest is not the head-to-head's"
want = trees[0]["confirm_median_ns"] / best["confirm_median_ns"] - 1
assert abs(r["regret"] - want) < 1e-4, (r["regret"], want)  # 6 digits
assert r["regret_screen"] >= 0
PY
then
  echo "FAIL: the JSON report: $(cat "$tmp/f.json")"
  fail=1
else
  echo "ok:   the JSON report is well formed"
fi

# --confirm 0: no head-to-head; the regret is that of the rounds of all trees.
if ! "$amarena" fidelity "matmul 8x8x8 f32" --trees 5 --k 2 --decisions 2 \
     --ms 0.2 --rounds 2 --confirm 0 --seed 5 --json "$tmp/c.json" \
     >/dev/null 2>&1 ||
   ! python3 - "$tmp/c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["confirm_rounds"] == 0 and r["regret"] == r["regret_screen"], r
assert not any("confirm_median_ns" in t for t in r["trees"])
PY
then
  echo "FAIL: fidelity --confirm 0: $(cat "$tmp/c.json" 2>/dev/null)"
  fail=1
else
  echo "ok:   --confirm 0 reports the rounds' regret"
fi

# --slow: with a threshold far below 1, every tree but the pick counts as
# slow after the first round and keeps that round only; the pick keeps all.
if ! "$amarena" fidelity "matmul 8x8x8 f32" --trees 5 --k 2 --decisions 2 \
     --ms 0.2 --rounds 3 --slow 0.000001 --seed 5 --json "$tmp/s.json" \
     >/dev/null 2>&1 ||
   ! python3 - "$tmp/s.json" <<'PY'
import json, sys
trees = [t for t in json.load(open(sys.argv[1]))["trees"] if t["status"] == "ok"]
assert trees[0]["origin"] == "best" and trees[0]["rounds"] == 3, trees[0]
assert len(trees) > 1 and all(t["rounds"] == 1 for t in trees[1:]), trees
PY
then
  echo "FAIL: fidelity --slow: $(cat "$tmp/s.json" 2>/dev/null)"
  fail=1
else
  echo "ok:   --slow times far slower trees in one round, the pick in all"
fi

# The fastest tree's decisions replay (the point of printing them).
fastest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fastest"])' "$tmp/f.json")
if ! "$amarena" run "matmul 8x8x8 f32" --schedule "$fastest" --reps 2 >/dev/null 2>&1; then
  echo "FAIL: the fastest tree does not replay: $fastest"
  fail=1
else
  echo "ok:   the fastest tree replays with run --schedule"
fi

# --against: each other shipped table's pick is among the trees (the host's
# own when they agree), with its regret beside the host's.
if ! "$amarena" fidelity "matmul 24x40x40 f32" --trees 6 --k 2 --decisions 2 \
     --ms 0.2 --rounds 1 --against all --json "$tmp/a.json" >/dev/null 2>&1 ||
   ! python3 - "$tmp/a.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
trees, against = r["trees"], r["against"]
labels = [a["prices"] for a in against]
assert r["prices"] not in labels and len(labels) == len(set(labels)) >= 1, r
for a in against:
    t = trees[a["tree"]]
    assert t["origin"] in ("best", "pick " + a["prices"]), (a, t)
    assert t["cost"] == a["cost"] >= trees[0]["cost"], (a, t)
    assert a["regret"] is None or a["regret"] >= 0, a
PY
then
  echo "FAIL: fidelity --against: $(cat "$tmp/a.json" 2>/dev/null)"
  fail=1
else
  echo "ok:   --against times every other table's pick beside the host's"
fi

# Cold operands run too.
if ! "$amarena" fidelity "matmul 3x5x7 f32" --trees 3 --k 1 --decisions 1 \
     --ms 0.2 --rounds 1 --cold >/dev/null 2>&1; then
  echo "FAIL: fidelity --cold"
  fail=1
else
  echo "ok:   fidelity --cold"
fi

check_bad() {  # check_bad EXPECTED_SUBSTRING ARGS...
  err=$("$amarena" fidelity "${@:2}" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$1" <<<"$err"; then
    echo "FAIL: fidelity ${*:2} -> status $status, $lines lines: $err (wanted '$1')"
    fail=1
  else
    echo "ok:   fidelity ${*:2} -> $err"
  fi
}
check_bad "dimension M is 0" "matmul 0x5x5 f32"
check_bad "--trees" "matmul 4x4x4 f32" --trees 0
check_bad "excludes" "matmul 4x4x4 f32" --warm --cold
check_bad "no shipped price table 'nope'" "matmul 4x4x4 f32" --against nope
check_bad "cannot write" "matmul 2x2x2 f32" --trees 1 --ms 0.1 --rounds 1 \
  --json "$tmp/no/such/dir/f.json"
exit $fail
