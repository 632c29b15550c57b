#!/usr/bin/env bash
# Ordering signatures end to end: C-ORD-02 (repeat protocol) and C-ORD-03
# (batch invariance) run on OpenBLAS, an own sequential fp32 kernel, the
# random-order gemm (calib:C-ORD-02:bad, new order on every run) and the
# batch-size-dependent split-K gemm (calib:C-ORD-03:bad). kcs reduce must
# classify the random-order rank run-to-run-nondeterministic, the split-K
# rank batch-variant, and the deterministic kernels as deterministic.
source "$(dirname "$0")/lib.sh"
{ study_head signatures-test 99 64 C-ORD-02 C-ORD-03; own_ranks sequential/fp32; cat <<EOF; } > "$T/sig.yaml"
  - { backend: cpu, variant: "calib:C-ORD-02:bad" }
  - { backend: cpu, variant: "calib:C-ORD-03:bad" }
cases:
  - contract: C-ORD-02
    op: gemm
    dtype_in: fp32
    shapes: [[8, 8, 256]]
    inputs: [normal]
    trials: 2
  - contract: C-ORD-03
    op: gemm
    dtype_in: fp32
    shapes: [[8, 16, 256]]
    inputs: [normal]
    trials: 2
EOF
mpirun4 "$KCS" run "$T/sig.yaml" -o "$T/sig.h5" -q
"$KCS" reduce "$T/sig.h5" -o "$T/rep" -q --no-plots
grep -q "## Ordering signatures" "$T/rep/report.md" || fail "report lacks the signatures"
"$PYTHON" - "$T/sig.h5" "$T/rep/analysis.h5" <<'PY'
import sys
import h5py

f = h5py.File(sys.argv[1], "r")
s = lambda x: x.decode() if isinstance(x, bytes) else x
cases = {int(c["case_id"]): s(c["contract"]) for c in f["cases"][:]}
sig = {(cases[int(r["case_id"])], int(r["rank"])): r for r in h5py.File(sys.argv[2], "r")["analysis/signatures"][:]}
for (c, r), x in sorted(sig.items()):
    print(c, r, s(x["klass"]), s(x["determinism"]), s(x["protocol"]), "pattern", s(x["pattern"]),
          "class", int(x["bitwise_class"]))
assert s(sig["C-ORD-02", 2]["klass"]) == "run-to-run-nondeterministic"
assert s(sig["C-ORD-02", 2]["determinism"]) == "nondeterministic"
assert s(sig["C-ORD-02", 2]["protocol"]) == "repeat"
assert s(sig["C-ORD-03", 3]["klass"]) == "batch-variant"
assert s(sig["C-ORD-03", 3]["protocol"]) == "batch_invariance"
for r in (0, 1):
    assert s(sig["C-ORD-02", r]["determinism"]) == "deterministic", r
    assert s(sig["C-ORD-02", r]["klass"]) in ("schedule-variant", "bitwise-deterministic"), r
# the sequential kernel is batch-invariant; it differs bitwise from OpenBLAS
assert s(sig["C-ORD-03", 1]["klass"]) == "schedule-variant"
assert int(sig["C-ORD-03", 1]["bitwise_class"]) != int(sig["C-ORD-03", 0]["bitwise_class"])
print("signatures: python checks ok")
PY
grep -E "^\| 2 \|.*\| nondeterministic \(1/1 repeat cases failed\)" "$T/rep/report.md" > /dev/null ||
  fail "the rank summary does not call rank 2 nondeterministic: $(grep '^| 2 |' "$T/rep/report.md")"
echo "reduce_signatures: ok"
