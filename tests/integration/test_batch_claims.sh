#!/usr/bin/env bash
# C-ORD-03 binds only kernels that DECLARE batch invariance (issue #14 item
# 5): a kernel that does not declare it is NOT-CLAIMED (kcs grade, a study's
# verdicts, JUnit "skipped"), one that declares it and keeps it PASSes, one
# that declares it and changes its schedule with the batch size FAILs (while
# passing a plain accuracy contract), and an unknown declaration is refused.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"


# 1. Plugins: declared and kept, declared and broken, not declared.
grade 0 "$T/inv.txt" "$P/libkcs_batch_invariant.so" C-ORD-03
grep -qE '^C-ORD-03 +gemm +PASS' "$T/inv.txt" || { cat "$T/inv.txt"; fail "invariant plugin not PASS"; }
grade 3 "$T/dep.txt" "$P/libkcs_batch_dependent.so" C-ORD-03
grep -qE '^C-ORD-03 +gemm +FAIL .*batch-dependent-schedule' "$T/dep.txt" \
  || { cat "$T/dep.txt"; fail "declaring batch-dependent plugin not flagged"; }
grade 0 "$T/dep_acc.txt" "$P/libkcs_batch_dependent.so" C-PRC-01   # accurate: a plain test passes
grep -qE '^C-PRC-01 +gemm +PASS' "$T/dep_acc.txt" || { cat "$T/dep_acc.txt"; fail "dependent plugin not accurate"; }
grade 0 "$T/und.txt" "$P/libkcs_batch_undeclared.so" C-ORD-03 --junit "$T/und.xml"
grep -qE '^C-ORD-03 +gemm +NOT-CLAIMED .*does not declare batch_invariant' "$T/und.txt" \
  || { cat "$T/und.txt"; fail "undeclared plugin not reported as not claiming"; }
grep -q '<skipped message="not claimed' "$T/und.xml" || { cat "$T/und.xml"; fail "JUnit: not skipped"; }
grep -q '<failure' "$T/und.xml" && fail "JUnit: not claimed reported as a failure"
grade 2 "$T/bad.txt" "$P/libkcs_batch_baddecl.so" C-ORD-03
grep -q "bit_exact_everywhere" "$T/bad.txt" || { cat "$T/bad.txt"; fail "unknown declaration not named"; }

# 2. The CPU backend: OpenBLAS (native) declares nothing, the own kernels
#    declare and keep it.
grade 0 "$T/native.txt" --backend cpu --variant native C-ORD-03 --json
"$PYTHON" - "$T/native.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["contracts"][0]
assert c["verdict"] == "NOT-CLAIMED" and d["not_claimed"] == 1 and d["passed"] == 0, d
PY
grade 0 "$T/own.txt" --backend cpu --variant own C-ORD-03
grep -qE '^C-ORD-03 .* PASS ' "$T/own.txt" || { cat "$T/own.txt"; fail "own kernels not PASS"; }

# 3. A study: rank 0 OpenBLAS, rank 1 the own kernels, rank 2 the
#    undeclared plugin with the study declaring batch invariance for it in
#    its placement entry (a claim that kernel cannot keep).
{ study_head batch-claims 3 "" C-ORD-03; cat <<YAML; } > "$T/s.yaml"
  - { backend: cpu, variant: own }
  - { backend: plugin, plugin: $P/libkcs_batch_undeclared.so, declares: batch_invariant }
cases:
  - { contract: C-ORD-03, op: gemm, dtype_in: fp32 }
YAML
"$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/s.h5" \
  --json --fail-on violation > "$T/run.json" 2> "$T/run.err" && rc=0 || rc=$?
[ "$rc" = 5 ] || { cat "$T/run.err" "$T/run.json"; fail "study: exit $rc, expected 5 (rank 2 violates)"; }
"$PYTHON" - "$T/run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = {r["rank"]: r for r in d["results"]}
assert v[0]["verdict"] == "NOT_CLAIMED" and v[0]["not_claimed"] == v[0]["trials"] > 0, v[0]
assert v[1]["verdict"] == "PASS", v[1]
assert v[2]["verdict"] == "FAIL" and v[2]["violation"] > 0, v[2]
assert d["totals"]["not_claimed"] == v[0]["trials"], d["totals"]
PY
echo "batch claims: ok"
