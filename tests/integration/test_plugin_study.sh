#!/usr/bin/env bash
# The example plugin graded by a study: the correct library passes, the
# deliberately broken one (bf16 accumulation past k = 64) is flagged with
# C-PRC-01's signature, yet both pass the small-shape case a kernel author
# would test.
source "$(dirname "$0")/lib.sh"
sed "s|\.\./build/tests/plugin/|$KCS_BUILD/tests/plugin/|; s|\.\./contracts/|$KCS_SRC/contracts/|" \
  "$KCS_SRC/studies/plugin_example.yaml" > "$T/plugin.yaml"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/plugin.yaml" -o "$T/p.h5" -q
"$PYTHON" - "$T/p.h5" <<'PY'
import sys, h5py
s = lambda x: x.decode()
with h5py.File(sys.argv[1], "r") as f:
    cases = {int(c["case_id"]): int(c["k"]) for c in f["cases"][:]}
    for r in f["results"][:]:
        k, rank, v, sig = cases[int(r["case_id"])], int(r["rank"]), s(r["verdict"]), s(r["signature"])
        if rank == 0 or k <= 64:
            assert v == "within_tolerance", (rank, k, v, sig)
        else:
            assert v == "violation" and "accumulator-narrower-than-declared" in sig, (rank, k, v, sig)
    ranks = f["provenance/ranks"][:]
    assert s(ranks["backend"][0]) == "plugin" and s(ranks["status"][1]) == "ok"
    assert s(ranks["model"][0]) != "" and len(s(ranks["uuid"][0])) >= 16
print("plugin study: ok")
PY
