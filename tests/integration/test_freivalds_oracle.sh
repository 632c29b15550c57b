#!/usr/bin/env bash
# A contract can use the batched Freivalds check as its oracle
# (`oracle: freivalds:k:mode`): conforming GEMMs pass, a bf16 accumulator
# is flagged, in both modes.
source "$(dirname "$0")/lib.sh"
for mode in rigorous probabilistic; do
  sed "s|^oracle:.*|oracle: { kind: \"freivalds:10:$mode\" }|" "$KCS_SRC/contracts/C-PRC-01/C-PRC-01.yaml" > "$T/c.yaml"
  grep -q "freivalds:10:$mode" "$T/c.yaml" || fail "could not set the oracle"
  "$KCS" lint -q "$T/c.yaml" || fail "contract with a freivalds oracle does not lint"
  cat > "$T/s.yaml" <<Y
name: fv
seed: 5
samples: 4
contracts: [$T/c.yaml]
placement:
  - { backend: cpu, variant: native }
  - { backend: cpu, variant: own, schedule: pairwise, acc: fp32 }
  - { backend: cpu, variant: own, schedule: sequential, acc: bf16 }
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[32, 32, 256], [16, 24, 1024]], inputs: [normal], trials: 2 }
Y
  "$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/$mode.h5" -q
  "$PYTHON" - "$T/$mode.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["results"][:]
    for x in r:
        v, rank = x["verdict"].decode(), int(x["rank"])
        if rank < 2:
            assert v == "within_tolerance" and x["tau"] <= 1, (rank, v, x["tau"])
        else:
            assert v == "violation" and x["tau"] > 1, (rank, v, x["tau"])
print("freivalds oracle:", sys.argv[1].rsplit("/", 1)[-1], "ok")
PY
done
