#!/usr/bin/env bash
# OpenBLAS's output bits may depend on its thread count (issue #18): each
# rank's /provenance/ranks records the BLAS library and its thread count,
# and `kcs exec --threads N` runs the native kernels with N threads whatever
# OPENBLAS_NUM_THREADS says, so a rank's native output can be reproduced.
# (--bind-to none: bound to one core by mpirun, OpenBLAS caps itself at one
# thread, which the record would then say.)
source "$(dirname "$0")/lib.sh"
{ study_head blas-threads 5 4 C-PRC-01; cat <<Y; } > "$T/s.yaml"
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[32, 32, 512]], inputs: [normal], trials: 1 }
Y
OPENBLAS_NUM_THREADS=2 "$MPIEXEC" -n 1 --allow-run-as-root --bind-to none -x OPENBLAS_NUM_THREADS \
  "$KCS" run "$T/s.yaml" -o "$T/a.h5" -q || fail "run failed"
"$PYTHON" - "$T/a.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["provenance/ranks"][0]
    blas = r["blas"].decode()
    assert "OpenBLAS" in blas and "/" in blas, blas   # the library's path and its config
    assert int(r["blas_threads"]) == 2, r["blas_threads"]
print("provenance: blas =", blas, "threads =", int(r["blas_threads"]))
PY
# inputs exact in fp32: k/8 - 2 for small k
"$PYTHON" - "$T" <<'PY'
import struct, sys, random
random.seed(11)
for name, n in (("A", 32 * 512), ("B", 512 * 32)):
    with open(f"{sys.argv[1]}/{name}.f64", "wb") as f:
        f.write(struct.pack(f"<{n}d", *[random.randint(-4096, 4096) / 1024.0 for _ in range(n)]))
PY
ex() { # threads env, --threads value or "", out
  local extra=(); [ -n "$2" ] && extra=(--threads "$2")
  OPENBLAS_NUM_THREADS=$1 "$KCS" exec gemm --backend cpu --variant native -m 32 -n 32 -k 512 \
    --a "$T/A.f64" --b "$T/B.f64" --out "$3" "${extra[@]}" > /dev/null || fail "exec $*"
}
ex 2 "" "$T/env2.f64"; ex 1 2 "$T/flag2.f64"
cmp -s "$T/env2.f64" "$T/flag2.f64" || fail "--threads 2 under OPENBLAS_NUM_THREADS=1 differs from a 2-thread run"
ex 1 "" "$T/env1.f64"; ex 2 1 "$T/flag1.f64"
cmp -s "$T/env1.f64" "$T/flag1.f64" || fail "--threads 1 under OPENBLAS_NUM_THREADS=2 differs from a 1-thread run"
if cmp -s "$T/env1.f64" "$T/env2.f64"; then
  echo "(here 1 and 2 OpenBLAS threads give the same bits at 32x32x512)"
else
  echo "(here 1 and 2 OpenBLAS threads give different bits at 32x32x512)"
fi
set +e; "$KCS" exec gemm --backend cpu -m 1 -n 1 -k 1 --a "$T/A.f64" --b "$T/B.f64" --out "$T/x" --threads -3 2> "$T/err"; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "--threads -3 exited $rc"
echo "blas_threads: ok"
