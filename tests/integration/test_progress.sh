#!/usr/bin/env bash
# Progress in batch logs (issue #18): with stderr not a terminal, rank 0
# prints plain lines (no carriage returns) at most one per 5 % of the cases
# or per 10 s, with done/total, elapsed and ETA, and a last line at 100 %;
# the other ranks print none; -q silences it.
source "$(dirname "$0")/lib.sh"
{ study_head progress 3 4 C-PRC-01; own_ranks pairwise/fp32; cat <<Y; } > "$T/s.yaml"
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[4, 4, 16], [4, 8, 16], [8, 4, 32], [8, 8, 32], [4, 4, 64], [4, 8, 64], [8, 4, 64], [8, 8, 64], [4, 4, 128], [8, 8, 128]], inputs: [normal, uniform_pm1], trials: 1 }
Y
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/a.h5" 2> "$T/err" \
  || fail "run failed: $(cat "$T/err")"
n=$("$PYTHON" -c 'import h5py,sys; print(len(h5py.File(sys.argv[1],"r")["cases"]))' "$T/a.h5")
[ "$n" -ge 20 ] || fail "the study has $n cases; the test needs >= 20"
grep -q $'\r' "$T/err" && fail "carriage returns in a batch log"
lines=$(grep -c '^kcs: cases [0-9]*/[0-9]* ([0-9]*%), elapsed [0-9.]* s, ETA [0-9.]* s$' "$T/err" || true)
[ "$lines" -ge 2 ] || fail "expected progress lines, got: $(cat "$T/err")"
[ "$lines" -le 21 ] || fail "$lines progress lines for $n cases (more than one per 5 %)"
[ "$(grep -c "^kcs: cases $n/$n (100%)" "$T/err")" = 1 ] || fail "no single last line at 100 %: $(cat "$T/err")"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/b.h5" -q 2> "$T/errq"
grep -q '^kcs: cases' "$T/errq" && fail "-q printed progress"
echo "progress: ok"
