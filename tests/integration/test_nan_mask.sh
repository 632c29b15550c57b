#!/usr/bin/env bash
# nan=mask (issue 14): C-EXC-01's invariant (mismatch_nonfinite = 0 against
# the reference) with the declared semantics nan=mask instead of
# nan=propagate. The reference treats NaN inputs as absent, so the CPU
# backend's own kernels, which mask when the attrs say so, PASS through
# `kcs grade`, and OpenBLAS (native), which propagates NaN whatever it is
# told, FAILS; under C-EXC-01 itself (nan=propagate) both pass. Bound only
# to kernels that declare nan_mask, OpenBLAS is NOT-CLAIMED. A contract
# handing nan=mask to an op that does not define it is refused by lint.
source "$(dirname "$0")/lib.sh"
C="$KCS_SRC/contracts"
grep -q '^  attrs: "nan=propagate"$' "$C/C-EXC-01/C-EXC-01.yaml" || fail "C-EXC-01's attrs changed: update this test"
# (the elementwise op, in C-EXC-01's scope, has no masked value: dropped)
sed -e 's/^id: C-EXC-01$/id: C-EXC-91/' -e 's/^  attrs: "nan=propagate"$/  attrs: "nan=mask"/' \
    -e '/^scope:/s/, elementwise\]/]/' \
  "$C/C-EXC-01/C-EXC-01.yaml" > "$T/C-EXC-91.yaml"
# (grep reads all of lint's output: grep -q would close the pipe early, SIGPIPE under pipefail)
"$KCS" lint "$T/C-EXC-91.yaml" | grep -x '  attrs: "nan=mask"' > /dev/null || fail "nan=mask contract does not lint"

grade() { VERDICT_LINE='^C-EXC-[0-9]{2} ' grade_verdict "$@"; } # EXPECT LABEL ARGS...
grade PASS "nan=mask, own kernels (mask)" --backend cpu --variant own "$T/C-EXC-91.yaml"
grade FAIL "nan=mask, OpenBLAS (propagates)" --backend cpu --variant native "$T/C-EXC-91.yaml"
grep -q 'spurious-nan' "$T/out.txt" || fail "propagating under nan=mask: no spurious-nan signature"
# every op of the scope the backend offers is judged, and each one fails natively
for op in gemm reduce_sum dot softmax; do
  grade FAIL "nan=mask, OpenBLAS, $op" --backend cpu --variant native --ops "$op" "$T/C-EXC-91.yaml"
  grade PASS "nan=mask, own, $op" --backend cpu --variant own --ops "$op" "$T/C-EXC-91.yaml"
done
# the same kernels under nan=propagate: both pass (own kernels propagate when told to)
grade PASS "nan=propagate, own" --backend cpu --variant own C-EXC-01
grade PASS "nan=propagate, OpenBLAS" --backend cpu --variant native C-EXC-01

# bound only to kernels that declare nan_mask (precondition.declares): the own
# kernels declare it and PASS; OpenBLAS declares nothing and is NOT-CLAIMED
sed -e 's/^id: C-EXC-91$/id: C-EXC-92/' \
  -e 's/^  values: { dist: \[normal, uniform_pm1\], finite: false }$/&\n  declares: [nan_mask]/' \
  "$T/C-EXC-91.yaml" > "$T/C-EXC-92.yaml"
grep -q 'declares: \[nan_mask\]' "$T/C-EXC-92.yaml" || fail "C-EXC-01's values line changed: update this test"
grade PASS "declares nan_mask, own" --backend cpu --variant own "$T/C-EXC-92.yaml"
rc=0
"$KCS" grade --backend cpu --variant native "$T/C-EXC-92.yaml" > "$T/out.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -qE '^C-EXC-92 .*NOT-CLAIMED .*does not declare nan_mask' "$T/out.txt" \
  || { cat "$T/out.txt"; fail "declares nan_mask, OpenBLAS: expected NOT-CLAIMED (exit $rc)"; }

# nan=mask on an op that does not define it: refused with file:line:field
sed -e 's/^scope: { ops: \[gemm, batched_gemm, reduce_sum, dot, softmax\] }$/scope: { ops: [softmax, rmsnorm] }/' \
  "$T/C-EXC-91.yaml" > "$T/bad.yaml"
grep -q rmsnorm "$T/bad.yaml" || fail "C-EXC-01's scope changed: update this test"
rc=0
"$KCS" lint "$T/bad.yaml" > /dev/null 2> "$T/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "nan=mask on rmsnorm: exit $rc, expected 2"
grep -Eq 'bad.yaml:[0-9]+:[0-9]+: measurement.attrs: nan=mask is not defined for op rmsnorm' "$T/bad.err" \
  || { cat "$T/bad.err"; fail "nan=mask on rmsnorm: message"; }
echo "nan=mask: masking kernels pass, propagating ones fail"
