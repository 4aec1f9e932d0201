#!/usr/bin/env bash
# Bad Spec text given to `amarena run` exits with status 2 and one line on stderr that
# names the problem; nothing crashes.
set -u
amarena="$1"
fail=0
check() {  # check SPEC EXPECTED_SUBSTRING [more arguments to run]
  err=$("$amarena" run "$1" "${@:3}" 2>&1 >/dev/null)
  status=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$2" <<<"$err"; then
    echo "FAIL: '$1' -> status $status, $lines lines: $err (wanted '$2')"
    fail=1
  else
    echo "ok:   '$1' -> $err"
  fi
}
check "matmul 0x5x5 f32" "dimension M is 0, must be at least 1"
check "matmul 5x5 f32" "has 2 dimensions, must have 3"
check "conv 3x3 f32" "operation 'conv' is unknown"
check "matmul 5x5x5 f64" "dtype 'f64' is unknown"
check "matmul 2000000000x2000000000x1 f32" "bytes, must need at most"
check "matmul 99999999999999999999x1x1 f32" "dimension M is 99999999999999999999"
check "" "text is empty"
check "matmul 4x4x4 bf16*f32->bf16" "dtypes are bf16*f32->bf16, must be f32, bf16*bf16->f32, f32*bf16->f32 or any of those with a bf16 output"
check "matmul 4x4x4 bf16*f32->f32" "dtypes are bf16*f32->f32, must be f32, bf16*bf16->f32, f32*bf16->f32 or any of those with a bf16 output"
check "matmul 4x4x4 f32 alpha=inf" "alpha is 'inf', must be a finite number"
check "zero 4x4 f32 alpha=2" "option alpha is only valid for matmul"
check "matmul 4x4x4 f32 frobnicate" "option 'frobnicate' is unknown"
check "matmul 4x4x4 f32 a=p16" "operand a is packed"
check "matmul 4x4x4 f32 b=p24" "must be in panels of a power of two"
check "matmul 16x16x16 f32 b=way512" "operand b has a way offset (way512), which only the search's tiles carry"
check "matmul 16x16x16 f32 b=way3" "way offset is '3', must be an even number of bytes from 0 to 4094"
check "matmul 16x16x16 f32 b=p32,way512" "operand b is packed and has a way offset"
check "matmul 16x16x16 f32 b=unaligned" "operand b says its rows' alignment (unaligned), which only the search's tiles carry"
check "matmul 16x16x16 f32 b=p32,aligned" "operand b is packed and says its rows' alignment"
check "matmul 4x4x4 f32 b=any b=col" "must be b=any alone"
check "matmul 4x4x4 f32 b=any,col" "property 'any' of operand b"
check "matmul 4x4x4 f32 b=any" "property 'any' of operand b" --schedule "tile m 2"
# So is a schedule that does not fit the Spec.
check "matmul 8x8x8 f32" "'tile q 4' is malformed" --schedule "tile q 4"
check "matmul 8x8x8 f32" "does not apply" --schedule "tile m 3;select broadcast_fma"
# A bad environment is bad input too.
AMARENA_MAX_ISA=sse check "matmul 4x4x4 f32" "AMARENA_MAX_ISA is 'sse', must be avx2 or avx512"
# b=any is good input: explain lists the layouts of B it searched and the one
# it chose.
out=$("$amarena" explain "matmul 3x100x7 bf16*bf16->f32 b=any" 2>&1)
if [ $? -ne 0 ] || ! grep -q "^b layout: row .*cost=" <<<"$out" ||
   [ "$(grep -c '(chosen)' <<<"$out")" -ne 1 ]; then
  echo "FAIL: explain b=any: $out"
  fail=1
else
  echo "ok:   explain b=any -> $(grep '(chosen)' <<<"$out")"
fi
# explain --isa: an unknown ISA is bad input; avx512 compiles (never runs) on
# any host and reports the code size.
err=$("$amarena" explain "matmul 4x4x4 f32" --isa sse 2>&1 >/dev/null)
if [ $? -ne 2 ] || ! grep -qF -- "--isa is 'sse', must be avx2 or avx512" <<<"$err"; then
  echo "FAIL: explain --isa sse: $err"
  fail=1
else
  echo "ok:   explain --isa sse -> $err"
fi
out=$("$amarena" explain "matmul 64x64x64 f32" --isa avx512 --code-size 2>&1)
if [ $? -ne 0 ] || ! grep -q "^code: [1-9][0-9]* bytes (avx512" <<<"$out"; then
  echo "FAIL: explain --isa avx512 --code-size: $out"
  fail=1
else
  echo "ok:   explain --isa avx512 --code-size -> $(grep '^code:' <<<"$out")"
fi
exit $fail
