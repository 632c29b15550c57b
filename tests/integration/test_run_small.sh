#!/usr/bin/env bash
# mpirun -n 4 kcs run on a small study: the dataset's schema and contents,
# input digests equal across ranks and across two runs, verdicts, reduce.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/small.yaml"

mpirun4 "$KCS" run "$study" -o "$T/a.h5" -q
mpirun4 "$KCS" run "$study" -o "$T/b.h5" -q
[ -f "$T/a.h5" ] && [ ! -e "$T/a.h5.partial" ] || fail "a.h5 missing or partial left behind"

h5dump -H "$T/a.h5" > "$T/header.txt"
for obj in 'GROUP "provenance"' 'DATASET "ranks"' 'DATASET "cases"' 'DATASET "results"' \
           'DATASET "samples"' 'DATASET "study"' 'GROUP "contracts"' 'ATTRIBUTE "schema_version"'; do
  grep -q "$obj" "$T/header.txt" || fail "h5dump -H lacks $obj"
done

"$PYTHON" "$KCS_SRC/tests/integration/check_dataset.py" "$T/a.h5" "$T/b.h5"

"$KCS" reduce "$T/a.h5" -o "$T/report" > "$T/reduce.out"
[ -s "$T/report/report.md" ] || fail "no report.md"
grep -q "C-PRC-01" "$T/report/report.md" || fail "report lacks the contract"
grep -q "accumulator-narrower-than-declared" "$T/report/report.md" || fail "report lacks the bf16 rank's signature"
"$PYTHON" - "$T/report/analysis.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    v = f["analysis/verdicts"][:]
    assert len(v) > 0, "empty /analysis/verdicts"
    assert "verdict" in v.dtype.names, v.dtype
PY

# An existing dataset is never overwritten without --force.
sum1=$(sha256sum "$T/a.h5")
set +e
mpirun4 "$KCS" run "$study" -o "$T/a.h5" -q 2> "$T/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "overwrite without --force exited $rc, expected 2"
grep -q "refusing to overwrite" "$T/err.txt" || fail "no refusal message: $(cat "$T/err.txt")"
[ "$(sha256sum "$T/a.h5")" = "$sum1" ] || fail "a.h5 changed"
echo "run_small: ok"
