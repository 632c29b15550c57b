#!/usr/bin/env bash
# kcs check (issue #18): a dry run that prints the plan and exits 2 on each
# kind of problem (placement longer than the rank count, a profile on a
# non-GEMM op or a format it lacks, a case outside its contract's
# precondition, an existing output / missing directory), 0 with warnings
# only; a misspelt profile or variant is refused at load with file:line;
# `kcs run` refuses the same study before writing anything.
source "$(dirname "$0")/lib.sh"
C="$KCS_SRC/contracts"
study() { # name, placement lines, cases lines
  printf 'name: %s\nseed: 1\nsamples: 4\ncontracts: [%s/C-PRC-01.yaml, %s/C-ORD-01.yaml]\nplacement:\n%scases:\n%s' \
    "$1" "$C" "$C" "$2" "$3" > "$T/$1.yaml"
}
GEMM='  - { contract: C-PRC-01, op: gemm, dtype_in: bf16, shapes: [[8, 8, 64]], inputs: [normal], trials: 1 }
'
expect() { # rc, pattern, command...
  local want=$1 pat=$2; shift 2
  set +e; "$@" > "$T/out" 2>&1; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want: $(cat "$T/out")"
  grep -Eq -- "$pat" "$T/out" || fail "$*: no '$pat' in: $(cat "$T/out")"
}

study ok '  - { backend: cpu, variant: native }
  - cpu:0:nvidia-h100
' "$GEMM"
expect 0 '^plan: 1 cases x 2 ranks = 2 case runs; work ~' "$KCS" check "$T/ok.yaml"
expect 0 '^  rank 1: cpu:0 profile=nvidia-h100' "$KCS" check "$T/ok.yaml" -n 2 -o "$T/new.h5"
# more ranks than entries: a warning, not a problem
expect 0 'warning: .*ok.yaml:[0-9]+: 3 ranks over 2 placement entries' "$KCS" check "$T/ok.yaml" -n 3
# fewer ranks than entries: entries that would never run
expect 2 "problem: $T/ok.yaml:6: placement has 2 entries but the run has 1 rank: entries 1..1 \(from line 7\)" \
  "$KCS" check "$T/ok.yaml" -n 1
# output exists / directory missing
touch "$T/exists.h5"
expect 2 'problem: .*exists.h5: output exists' "$KCS" check "$T/ok.yaml" -o "$T/exists.h5"
expect 0 '0 problems' "$KCS" check "$T/ok.yaml" -o "$T/exists.h5" --force
expect 2 "problem: .*the output's directory $T/nodir does not exist" "$KCS" check "$T/ok.yaml" -o "$T/nodir/x.h5"

# a profile on a format it lacks (nvidia-h100 has no fp32 inputs)
study fmt '  - cpu:0:nvidia-h100
' '  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 64]], inputs: [normal], trials: 1 }
'
expect 2 "problem: $T/fmt.yaml:6: placement\[0\]: cases\[0\] \(C-PRC-01, dtype_in fp32\): profile nvidia-h100 has no fp32 input" \
  "$KCS" check "$T/fmt.yaml"
# a profile on a non-GEMM op
study prof '  - { backend: cpu, profile: nvidia-h100 }
' "$GEMM"'  - { contract: C-ORD-01, op: reduce_sum, dtype_in: fp32, inputs: [normal], trials: 1 }
'
expect 2 "problem: $T/prof.yaml:6: placement\[0\]: profile nvidia-h100 emulates matrix units .* cases\[1\] \(C-ORD-01\) is op reduce_sum" \
  "$KCS" check "$T/prof.yaml"

# a case outside its contract's precondition (C-PRC-01: k in [1, 1048576])
study pre '  - cpu
' '  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[1, 1, 2000000]], inputs: [normal], trials: 1 }
'
grep -q 'k: \[1, 1048576\]' "$C/C-PRC-01/C-PRC-01.yaml" || fail "C-PRC-01's k range changed: update this test"
# (found when the study loads, at the shape's file:line:col)
expect 2 "pre.yaml:[0-9]+:[0-9]+: cases\[0\]\.shapes\[0\]: dimension k = 2000000 is outside the precondition's range \[1, 1048576\] of C-PRC-01" \
  "$KCS" check "$T/pre.yaml"

# placement: auto: what node-local ranks would take on this node
printf 'name: auto\nseed: 1\ncontracts: [%s/C-PRC-01.yaml]\nplacement: auto\ncases:\n%s' "$C" "$GEMM" > "$T/auto.yaml"
expect 0 '^  auto here: node-local rank 1 -> [a-z_]+:[0-9]+' "$KCS" check "$T/auto.yaml" -n 2

# misspelt profile / variant: refused at load with file:line
study typo '  - { backend: cpu, profile: nvidia-h10 }
  - { backend: cpu, variant: nativ }
' "$GEMM"
expect 2 "typo.yaml:6:[0-9]+: placement\[0\]: unknown profile 'nvidia-h10' \(known: .*nvidia-h100" "$KCS" check "$T/typo.yaml"
grep -Eq "typo.yaml:7:[0-9]+: placement\[1\]: unknown variant 'nativ'" "$T/out" || fail "variant not refused: $(cat "$T/out")"

# a library path after the profile name (docs/profiles.md): a bad value is
# refused at load with file:line, naming the key and value
study libpath '  - { backend: cpu, profile: "nvidia-h100,fp8_promote=128" }
  - { backend: cpu, profile: "nvidia-h100,fp8_promote=0" }
' "$GEMM"
expect 2 "libpath.yaml:7:[0-9]+: placement\[1\]: profile 'nvidia-h100,fp8_promote=0': fp8_promote=0: expected none or an interval" "$KCS" check "$T/libpath.yaml"
grep -q "placement\[0\]" "$T/out" && fail "a valid library path refused: $(cat "$T/out")"

# kcs run makes the same checks first: -n 1 on the two-entry study, nothing written
set +e
"$MPIEXEC" -n 1 --allow-run-as-root --oversubscribe "$KCS" run "$T/ok.yaml" -o "$T/r.h5" -q 2> "$T/run.err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "kcs run with fewer ranks than placement entries exited $rc: $(cat "$T/run.err")"
grep -q "placement has 2 entries but the run has 1 rank" "$T/run.err" || fail "run: $(cat "$T/run.err")"
[ ! -e "$T/r.h5" ] && [ ! -e "$T/r.h5.partial" ] && [ ! -e "$T/r.h5.journal" ] || fail "run wrote output"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/ok.yaml" -o "$T/r.h5" -q \
  || fail "the checked study does not run with 2 ranks"
echo "check: ok"
