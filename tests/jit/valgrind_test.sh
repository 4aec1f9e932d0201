#!/usr/bin/env bash
# Generated code never reads or writes outside its operands: run kernels for odd
# shapes, layouts and accumulation under valgrind's memcheck (which sees JIT'd loads
# and stores too, as long as they are AVX2: valgrind does not decode AVX-512).
set -u
amarena="$1"
fail=0
for spec in "matmul 13x7x20 f32" "matmul 37x19x41 f32 a=col c=col" \
            "matmul 100x37x70 f32 accum" "matmul 1x300x17 f32 b=col" "zero 13x29 f32"; do
  if ! AMARENA_MAX_ISA=avx2 valgrind --error-exitcode=9 -q "$amarena" run "$spec" --reps 1 >/dev/null 2>/tmp/amarena_vg.$$; then
    echo "FAIL: $spec"; cat /tmp/amarena_vg.$$; fail=1
  else
    echo "ok:   $spec"
  fi
done
rm -f /tmp/amarena_vg.$$
exit $fail
