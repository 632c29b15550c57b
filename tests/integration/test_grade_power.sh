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

grade() { # EXPECT LABEL ARGS...
  local want=$1 label=$2 rc=0
  shift 2
  "$KCS" grade "$@" > "$T/out.txt" 2>&1 || rc=$?
  local line
  line=$(grep -E '^C-[A-Z]{3}-[0-9]{2} ' "$T/out.txt" || true)
  case "$want" in
    PASS) [ "$rc" = 0 ] && echo "$line" | grep -q ' PASS ' || { cat "$T/out.txt"; fail "$label: expected PASS (exit $rc)"; } ;;
    FAIL) [ "$rc" = 3 ] && echo "$line" | grep -q ' FAIL ' || { cat "$T/out.txt"; fail "$label: expected FAIL (exit $rc)"; } ;;
  esac
  echo "$label: $line"
}

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
# kcs calibrate --sweep, small: no false alarm of any conforming kernel, and the
# catalogue's bf16, fp16 and 14-bit accumulators detected at every point
set +e
"$KCS" calibrate --sweep C-PRC-01 C-ORD-01 C-CMP-03 --trials 2 --max-k 4096 -o "$T/sweep.h5" \
  > "$T/sweep.txt" 2>&1
src=$?
set -e
grep -q '^C-PRC-01  gemm ' "$T/sweep.txt" || { cat "$T/sweep.txt"; fail "sweep: no PRC-01 rows"; }
grep -q 'FALSE ALARM' "$T/sweep.txt" && { grep 'FALSE ALARM' "$T/sweep.txt"; fail "sweep: false alarm"; }
grep -E ' own (bf16|fp16|bits:14) ' "$T/sweep.txt" | grep -q MISSED \
  && { grep MISSED "$T/sweep.txt"; fail "sweep: narrow accumulator missed"; }
[ "$src" -eq 0 ] || { grep -E "MISSED|FALSE" "$T/sweep.txt"; fail "sweep: exit $src (a miss or a false alarm)"; }
grep -q 'INERT' "$T/sweep.txt" || fail "sweep: no INERT column"
# at k = 1 a 16-bit accumulator holds a bf16 x bf16 product exactly: its
# output is a conforming kernel's, so its trials are inert, not missed
awk '$1 == "C-PRC-01" && $4 == "bits:16" && $7 == "bf16" && $9 == 1 && $10 == "0/0" && $11 == 2' \
  "$T/sweep.txt" | grep -q . || { grep 'bits:16' "$T/sweep.txt" | head -3; fail "sweep: k=1 bits:16 not inert"; }
[ -s "$T/sweep.h5" ] || fail "sweep: no HDF5 file"
if command -v h5dump > /dev/null; then
  h5dump -H "$T/sweep.h5" | grep -q calibration_sweep || fail "sweep: no /calibration_sweep"
fi
# the power figure (scripts/plot-sweep) draws from it
if "$PYTHON" -c 'import h5py, matplotlib' 2> /dev/null; then
  "$PYTHON" "$KCS_SRC/scripts/plot-sweep" "$T/sweep.png" "$T/sweep.h5" > /dev/null ||
    fail "plot-sweep failed"
  [ -s "$T/sweep.png" ] || fail "plot-sweep wrote no figure"
fi
echo "grade_power: ok"
