#!/usr/bin/env bash
# A hung kernel (timeout), a crashing kernel (SIGSEGV) and a cuda rank on a
# machine without a GPU (unavailable): the study completes with exit 3 and
# the other ranks' results intact.
source "$(dirname "$0")/lib.sh"
set +e
mpirun4 "$KCS" run "$KCS_SRC/tests/studies/faults.yaml" -o "$T/f.h5" -q 2> "$T/err"; rc=$?
set -e
[ "$rc" -eq 3 ] || fail "exit $rc, expected 3 (degraded); stderr: $(cat "$T/err")"
grep -q "exceeded its 2 s limit" "$T/err" || fail "no timeout message: $(cat "$T/err")"
grep -q "died of signal" "$T/err" || fail "no crash message: $(cat "$T/err")"
"$PYTHON" - "$T/f.h5" <<'PY'
import sys, h5py
s = lambda x: x.decode()
with h5py.File(sys.argv[1], "r") as f:
    assert int(f.attrs["complete"]) == 1
    r = f["results"][:]
    by = {}
    for x in r:
        by.setdefault(int(x["rank"]), []).append((s(x["status"]), s(x["verdict"])))
    assert all(st == "ok" and v == "within_tolerance" for st, v in by[0]), by[0]
    assert by[1][0][0] == "timeout" and all(st == "error" for st, _ in by[1][1:]), by[1]
    assert by[2][0][0] == "crashed" and all(st == "error" for st, _ in by[2][1:]), by[2]
    assert all(st == "unavailable" for st, _ in by[3]), by[3]
    ranks = f["provenance/ranks"][:]
    assert s(ranks["status"][3]) == "unavailable", ranks["status"]
print("faults: ok")
PY
