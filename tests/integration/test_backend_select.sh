#!/usr/bin/env bash
# KCS_BACKENDS selects and excludes backends at run time (vendor runtimes
# are never initialised when excluded), and an excluded backend's rank is
# unavailable, not a crash.
source "$(dirname "$0")/lib.sh"
all=$("$KCS" devices --json | "$PYTHON" -c 'import json,sys; print(" ".join(b["backend"] for b in json.load(sys.stdin)))')
case " $all " in *" cpu "*) ;; *) fail "cpu missing from kcs devices: $all" ;; esac
only=$(KCS_BACKENDS=cpu "$KCS" devices --json | "$PYTHON" -c 'import json,sys; print(" ".join(b["backend"] for b in json.load(sys.stdin)))')
[ "$only" = "cpu" ] || fail "KCS_BACKENDS=cpu listed: $only"
excl=$(KCS_BACKENDS=-opencl,-cuda,-hip,-level_zero "$KCS" devices --json | "$PYTHON" -c 'import json,sys; print(" ".join(b["backend"] for b in json.load(sys.stdin)))')
case " $excl " in *" opencl "*|*" cuda "*|*" hip "*|*" level_zero "*) fail "exclusion ignored: $excl" ;; esac
# a study that places a rank on an excluded backend still completes (exit 3)
study_cpu_opencl select 1 > "$T/s.yaml"
set +e
KCS_BACKENDS=-opencl "$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe -x KCS_BACKENDS \
  "$KCS" run "$T/s.yaml" -o "$T/s.h5" -q 2> "$T/err"; rc=$?
set -e
[ "$rc" -eq 3 ] || fail "exit $rc, expected 3: $(cat "$T/err")"
grep -q "excluded by KCS_BACKENDS" "$T/err" || fail "no exclusion message: $(cat "$T/err")"
"$PYTHON" - "$T/s.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    st = [x.decode() for x in f["provenance/ranks"]["status"]]
    assert st == ["ok", "unavailable"], st
print("backend selection: ok")
PY
