#!/usr/bin/env bash
# A node without the CUDA runtime (issue #18): kcs and libkcs have no vendor
# runtime among their NEEDED entries; with libcudart hidden (a private mount
# namespace binding /dev/null over the file the cuda module resolves),
# `kcs devices` exits 0 and lists cuda as unavailable with the loader's
# reason, and a study with a CPU and an OpenCL rank runs; /provenance says
# why cuda was unavailable. Skipped (exit 77, said why) where unshare -m is
# not permitted or the cuda module is not built.
source "$(dirname "$0")/lib.sh"
lib="$KCS_BUILD/lib/libkcs_private.so"
for f in "$KCS" "$lib" "$KCS_BUILD/lib/libkcs.so"; do
  if readelf -d "$f" | grep NEEDED | grep -Ei 'OpenCL|cudart|cublas|amdhip|ze_loader|hiprtc|nvrtc'; then
    fail "$f links a vendor runtime"
  fi
done
# modules not where kcs looks (KCS_BACKEND_DIR): every vendor backend is
# unavailable with the loader's reason, cpu and plugin still run
mkdir -p "$T/nomods"
KCS_BACKEND_DIR="$T/nomods" "$KCS" devices > "$T/nomods.txt" 2>&1 || fail "kcs devices without modules: $(cat "$T/nomods.txt")"
for m in "$KCS_BUILD"/lib/kcs/libkcs_backend_*.so; do
  [ -e "$m" ] || continue
  b=$(basename "$m" .so); b=${b#libkcs_backend_}
  grep -Eq "^$b +unavailable: cannot load $T/nomods/libkcs_backend_$b.so: .*No such file" "$T/nomods.txt" \
    || fail "$b without its module: $(cat "$T/nomods.txt")"
done
grep -Eq '^cpu +0 ' "$T/nomods.txt" || fail "cpu missing without modules: $(cat "$T/nomods.txt")"
mod="$KCS_BUILD/lib/kcs/libkcs_backend_cuda.so"
if [ ! -f "$mod" ]; then
  echo "SKIP: the cuda backend module is not built (KCS_WITH_CUDA=OFF or no toolkit)"; exit 77
fi
if ! unshare -m --propagation private true 2> "$T/unshare.err"; then
  echo "SKIP: unshare -m is not permitted here ($(head -1 "$T/unshare.err")): cannot hide libcudart"
  exit 77
fi
cudart=$(ldd "$mod" | awk '/libcudart/ && !f {print $3; f = 1}') # no early exit: ldd would die of SIGPIPE (pipefail)
[ -n "$cudart" ] && [ -f "$cudart" ] || fail "cannot find the libcudart the cuda module loads (ldd: $(ldd "$mod" | grep cudart))"

study_cpu_opencl hidden-runtime 7 > "$T/s.yaml"
# everything below runs in one private mount namespace
cat > "$T/inside.sh" <<'SH'
set -u
mount --bind /dev/null "$CUDART" || { echo "mount --bind failed"; exit 90; }
"$KCS" devices > "$T/devices.txt" 2> "$T/devices.err"; echo "devices_rc=$?"
"$KCS" devices --json > "$T/devices.json" 2>> "$T/devices.err"
"$KCS" version > "$T/version.txt" 2>&1; echo "version_rc=$?"
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/s.h5" -q \
  2> "$T/run.err"; echo "run_rc=$?"
SH
CUDART="$cudart" T="$T" KCS="$KCS" MPIEXEC="$MPIEXEC" \
  unshare -m --propagation private bash "$T/inside.sh" > "$T/rcs.txt" 2>&1
grep -q '^devices_rc=0$' "$T/rcs.txt" || fail "kcs devices with libcudart hidden: $(cat "$T/rcs.txt" "$T/devices.err")"
grep -q '^version_rc=0$' "$T/rcs.txt" || fail "kcs version with libcudart hidden: $(cat "$T/version.txt")"
grep -Eq '^cuda +unavailable: cannot load .*libkcs_backend_cuda.so: .*libcudart' "$T/devices.txt" \
  || fail "cuda not listed unavailable with the loader's reason: $(cat "$T/devices.txt")"
grep -Eq '^cpu +0 ' "$T/devices.txt" || fail "cpu device not listed: $(cat "$T/devices.txt")"
"$PYTHON" - "$T/devices.json" <<'PY'
import json, sys
d = {b["backend"]: b for b in json.load(open(sys.argv[1]))}
assert d["cuda"]["status"] == "unavailable" and "libcudart" in d["cuda"]["message"], d["cuda"]
assert d["cpu"]["status"] == "ok", d["cpu"]
PY
grep -q '^run_rc=0$' "$T/rcs.txt" || fail "CPU+OpenCL study with libcudart hidden: $(cat "$T/rcs.txt" "$T/run.err")"
"$PYTHON" - "$T/s.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    st = [x.decode() for x in f["provenance/ranks"]["status"]]
    be = [x.decode() for x in f["provenance/ranks"]["backend"]]
    assert st == ["ok", "ok"] and be == ["cpu", "opencl"], (st, be)
    b = f["provenance/build"].attrs["backends"]
    b = b.decode() if isinstance(b, bytes) else str(b)
    assert "cuda: unavailable: cannot load" in b and "libcudart" in b, b
    import re
    assert re.search(r"(^|; )opencl: [1-9][0-9]* devices?(;|$)", b), b
    assert re.search(r"(^|; )cpu: 1 device(;|$)", b), b
print("runtime hidden: ok")
PY
# outside the namespace the runtime is back: cuda loads (its driver may still be missing)
"$KCS" devices | grep -Eq '^cuda +.*cannot load' && fail "cuda module fails to load outside the namespace"
echo "runtime_hidden: ok"
