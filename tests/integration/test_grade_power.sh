#!/usr/bin/env bash
# Contracts keep their power over their whole precondition (issue 14):
# kcs grade --shape on the accumulator catalogue plugins (tests/plugin/
# acc_plugin.c, all declaring fp32 accumulation) and on the CPU backend's
# own kernels, at m = n = 8 and k = 2^18 (C-PRC-01), k = 65536 (C-PRC-03)
# and k = 2^20 (C-ORD-01): conforming accumulation (sequential, pairwise,
# split-K, round toward zero, fp64) PASSES, narrow accumulators, TF32
# coercion and bf16 block partials FAIL; a shape outside the precondition
# is refused with exit 2 naming the range.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"

grade() { grade_verdict "$@"; } # EXPECT LABEL ARGS...

# C-PRC-01 at k = 2^18 through plugins
for m in seq pairwise rz; do
  grade PASS "prc01 $m" "$P/libkcs_acc_$m.so" C-PRC-01 --shape 8x8x262144
done
for m in splitk fp64; do
  grade PASS "prc01 $m" "$P/libkcs_acc_$m.so" C-PRC-01 --shape 8x8x16384
done
for m in bf16 fp16 bits14; do
  grade FAIL "prc01 $m" "$P/libkcs_acc_$m.so" C-PRC-01 --shape 8x8x262144
  grep -q 'accumulator-narrower-than-declared\|nonfinite-output' "$T/out.txt" \
    || fail "prc01 $m: no accumulator signature"
done
# ... and through the CPU backend's own kernels (gemm: attention at k = 2^18 is slow)
grade PASS "prc01 cpu own fp32:rz pairwise" --backend cpu --variant own --acc fp32:rz \
  --schedule pairwise --ops gemm C-PRC-01 --shape 8x8x262144
grade FAIL "prc01 cpu own bits:14" --backend cpu --variant own --acc bits:14 --ops gemm \
  C-PRC-01 --shape 8x8x262144

# Every admitted input format is graded by default: a GEMM that keeps a bf16
# running sum for bf16 inputs only fails C-PRC-01 at the contract's own shapes
grade FAIL "prc01 bf16-inputs-only" "$P/libkcs_acc_bf16in.so" C-PRC-01
grade PASS "prc01 seq, default shapes" "$P/libkcs_acc_seq.so" C-PRC-01

# C-PRC-03: TF32 input coercion at k = 65536 (no random-input bound can see it there)
grade FAIL "prc03 tf32" "$P/libkcs_acc_tf32.so" C-PRC-03 --shape 8x8x65536
grep -q 'inexact-on-exact-inputs' "$T/out.txt" || fail "prc03 tf32: signature"
grade PASS "prc03 seq" "$P/libkcs_acc_seq.so" C-PRC-03 --shape 8x8x65536
grade PASS "prc03 rz" "$P/libkcs_acc_rz.so" C-PRC-03 --shape 8x8x65536

# C-ORD-01: bf16 block partials at k = 2^20; every fp32 order passes
grade FAIL "ord01 bf16block" "$P/libkcs_acc_bf16block.so" C-ORD-01 --shape 4x1x1048576
for m in seq rz; do
  grade PASS "ord01 $m" "$P/libkcs_acc_$m.so" C-ORD-01 --shape 4x1x1048576
done

# A shape outside the precondition: exit 2, naming the range
rc=0
"$KCS" grade "$P/libkcs_acc_seq.so" C-PRC-03 --shape 8x8x131072 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/o.txt"; fail "out-of-range shape: exit $rc, expected 2"; }
grep -q 'k = 131072 is outside the precondition.s range \[1, 65536\] of C-PRC-03' "$T/o.txt" \
  || { cat "$T/o.txt"; fail "out-of-range shape: message"; }
rc=0
"$KCS" grade "$P/libkcs_acc_seq.so" C-PRC-01 --shape 8x8 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "malformed --shape: exit $rc, expected 2"
echo "grade_power: ok"
