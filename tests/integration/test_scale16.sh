#!/usr/bin/env bash
# 16 oversubscribed ranks on small cases: every (case, rank, trial) row is
# written once by its rank, and the placement list is taken cyclically.
source "$(dirname "$0")/lib.sh"
"$MPIEXEC" -n 16 --allow-run-as-root --oversubscribe "$KCS" run \
  "$KCS_SRC/tests/studies/small.yaml" -o "$T/s16.h5" -q
"$PYTHON" - "$T/s16.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert int(f.attrs["n_ranks"]) == 16
    r = f["results"][:]
    n_cases, trials = len(f["cases"]), int(f["cases"]["trials"].max())
    assert len(r) == n_cases * 16 * trials
    idx = (r["case_id"] * 16 + r["rank"]) * trials + r["trial"]
    assert np.array_equal(idx, np.arange(len(r))), "rows out of place"
    assert all(x == b"ok" for x in r["status"])
    # ranks i and i+4 run the same implementation: identical outputs
    for c in range(n_cases):
        for t in range(trials):
            d = r["output_digest"][(c * 16 + np.arange(16)) * trials + t]
            assert np.all(d[:4] == d[4:8]) and np.all(d[:4] == d[12:16]), (c, t)
    ranks = f["provenance/ranks"][:]
    assert list(ranks["rank"]) == list(range(16))
print("scale16: ok")
PY
