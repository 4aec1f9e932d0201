#!/usr/bin/env bash
# Generated code is visible to tools: AMARENA_JIT_PROFILE=perf appends a line per
# kernel to /tmp/perf-<pid>.map, AMARENA_JIT_DUMP=DIR writes each kernel's bytes,
# and `amarena explain --asm` disassembles them (Zydis).
set -u
amarena="$1"
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The perf map is named after the process: run in a subshell we know the pid of.
AMARENA_JIT_PROFILE=perf AMARENA_JIT_DUMP="$dir" "$amarena" run "matmul 13x7x20 f32" --reps 1 >/dev/null &
pid=$!
wait $pid || { echo "FAIL: run exited $?"; fail=1; }
map=/tmp/perf-$pid.map
if grep -qE '^[0-9a-f]+ [0-9a-f]+ amarena_matmul_13x7x20_f32' "$map" 2>/dev/null; then
  echo "ok:   $map names the kernel: $(head -1 "$map")"
else
  echo "FAIL: no kernel line in $map"; fail=1
fi
rm -f "$map"
bin=$(ls "$dir"/amarena_matmul_13x7x20_f32*.bin 2>/dev/null | head -1)
if [ -n "$bin" ] && [ -s "$bin" ]; then
  echo "ok:   dumped $(stat -c %s "$bin") bytes to $bin"
else
  echo "FAIL: nothing dumped in $dir"; fail=1
fi

asm=$("$amarena" explain "matmul 8x8x16 f32" --asm)
for want in "vfmadd231ps" "vzeroupper" "ret"; do
  if grep -q "$want" <<<"$asm"; then echo "ok:   --asm shows $want"; else echo "FAIL: --asm lacks $want"; fail=1; fi
done
exit $fail
