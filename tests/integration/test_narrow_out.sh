#!/usr/bin/env bash
# Narrow outputs (contracts/README.md, "Narrow outputs"): a one-case study
# declaring dtype_out bf16 (and one fp16) under C-PRC-01, graded on the
# example plugin in its worker process (the output region holds bf16 /
# fp16 storage), the broken example (bf16 running sum past k = 64) and the
# CPU backend's own kernels; exact-sum inputs whose result is a bf16 value:
# the fp32-accumulating kernels PASS every trial, the bf16 running sum
# FAILs every exact trial at k > 64 naming accumulator-narrower-than-declared;
# the dataset records dtype_out; a dtype_out the contract does not admit is
# refused at load with file:line:col (exit 2).
source "$(dirname "$0")/lib.sh"
P=$KCS_BUILD/tests/plugin
for out in bf16 fp16; do
  cat > "$T/$out.yaml" <<EOF
name: narrow-$out
seed: 42
samples: 16
contracts:
  - $KCS_SRC/contracts/C-PRC-01.yaml
placement:
  - { backend: plugin, plugin: $P/libkcs_example_plugin.so }
  - { backend: plugin, plugin: $P/libkcs_example_plugin_broken.so }
  - { backend: cpu, variant: own, schedule: pairwise, acc: fp32 }
cases:
  - contract: C-PRC-01
    op: gemm
    dtype_in: $out
    dtype_out: $out
    shapes: [[16, 16, 16], [32, 32, 1024]]
    inputs: [normal, exact]
    trials: 2
EOF
  expect_rc 0 "$T/check-$out.txt" "$KCS" check "$T/$out.yaml"
  "$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/$out.yaml" \
    -o "$T/$out.h5" -q || fail "kcs run of the dtype_out $out study exited $?"
  "$PYTHON" - "$T/$out.h5" "$out" <<'PY'
import sys, h5py, numpy as np
s = lambda x: x.decode()
out = sys.argv[2]
with h5py.File(sys.argv[1], "r") as f:
    cases = {int(c["case_id"]): c for c in f["cases"][:]}
    assert cases and all(s(c["dtype_out"]) == out for c in cases.values()), cases
    seen = set()
    for r in f["results"][:]:
        c = cases[int(r["case_id"])]
        k, dist, rank = int(c["k"]), s(c["input_dist"]), int(r["rank"])
        v, sig = s(r["verdict"]), s(r["signature"])
        seen.add((rank, k, dist))
        assert s(r["status"]) == "ok", (rank, k, dist, s(r["status"]), s(r["message"]))
        if rank == 1 and k > 64 and dist == "exact":
            # bf16 running sum: the exact result is a value of dtype_out,
            # the partial sums are not
            assert v == "violation" and "accumulator-narrower-than-declared" in sig, \
                (rank, k, dist, v, sig)
        elif rank != 1 or k <= 64:
            # fp32 accumulation rounded once to dtype_out: exact on exact inputs,
            # within the bound plus u(dtype_out) on random ones
            assert v == "within_tolerance", (rank, k, dist, v, sig, float(r["tau"]))
            if dist == "exact":
                assert float(r["max_abs"]) == 0.0, (rank, k, float(r["max_abs"]))
    assert len(seen) == 12, seen  # 3 ranks x 2 shapes x 2 distributions
print(f"dtype_out {out}: ok")
PY
done

# A dtype_out the precondition does not admit: C-PRC-04 (reduce_sum) stays fp32.
cat > "$T/refused.yaml" <<EOF
name: narrow-refused
seed: 1
contracts:
  - $KCS_SRC/contracts/C-PRC-04.yaml
placement:
  - { backend: cpu, variant: native }
cases:
  - { contract: C-PRC-04, op: reduce_sum, dtype_in: fp32, dtype_out: bf16, shapes: [[4, 1, 64]] }
EOF
expect_rc 2 "$T/refused.txt" "$KCS" check "$T/refused.yaml"
has_rows "$T/refused.txt" "refused dtype_out" \
  'refused.yaml:8:[0-9]+: cases\[0\]\.dtype_out: dtype_out bf16 is not admitted by C-PRC-04.s precondition \(dtype_out: fp32\)'
echo "narrow outputs: ok"
