#!/usr/bin/env bash
# scripts/device-check (issues #21, #47) on a machine without an NVIDIA GPU:
# it stops before building or running anything, says "no device" with the
# reason, leaves that reason in $OUT/no-device.txt, exits 3, and nothing in
# $OUT reads as a finished run (no "complete" line, no step's output). Two
# ways to have no device: no driver tools at all, and a driver that does
# not answer. An $OUT holding an earlier run is refused (exit 2) and left
# as it was.
source "$(dirname "$0")/lib.sh"
run() { # OUT dir, PATH
  set +e
  OUT="$1" PATH="$2" bash "$KCS_SRC/scripts/device-check" > "$1.stdout" 2> "$1.stderr"; local rc=$?
  set -e
  echo "$rc"
}
check() { # OUT dir, rc, reason pattern
  [ "$2" -eq 3 ] || fail "device-check exited $2, expected 3: $(cat "$1.stderr")"
  grep -q "^device-check: no device: $3" "$1.stderr" || fail "no 'no device' message: $(cat "$1.stderr")"
  grep -q "^no device: $3" "$1/no-device.txt" || fail "no-device.txt: $(cat "$1/no-device.txt" 2>&1)"
  grep -q "build:" "$1/summary.txt" && fail "device-check started a build without a device"
  grep -q "complete" "$1/summary.txt" && fail "summary.txt calls a run without a device complete"
  [ ! -e "$1/build.log" ] || fail "device-check wrote a build log without a device"
  for f in freivalds.txt probes.txt corners devices.txt nvcc.txt; do
    [ ! -e "$1/$f" ] || fail "device-check wrote $f without a device"
  done
}
# a driver that does not answer (nvidia-smi's own failure message)
mkdir -p "$T/fake"
cat > "$T/fake/nvidia-smi" <<'SH'
#!/bin/sh
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
exit 9
SH
chmod +x "$T/fake/nvidia-smi"
rc=$(run "$T/o1" "$T/fake:$PATH")
check "$T/o1" "$rc" "nvidia-smi: NVIDIA-SMI has failed"
# no driver tools at all (only where this machine has no nvidia-smi)
if ! command -v nvidia-smi > /dev/null 2>&1; then
  rc=$(run "$T/o2" "$PATH")
  check "$T/o2" "$rc" "nvidia-smi not found"
fi
# an OUT with an earlier run in it: refused, untouched
mkdir -p "$T/o3" && echo "earlier run" > "$T/o3/summary.txt"
rc=$(run "$T/o3" "$T/fake:$PATH")
[ "$rc" -eq 2 ] || fail "device-check into a non-empty OUT exited $rc, expected 2"
grep -q "is not empty" "$T/o3.stderr" || fail "no 'not empty' message: $(cat "$T/o3.stderr")"
[ "$(cat "$T/o3/summary.txt")" = "earlier run" ] || fail "device-check overwrote an earlier summary.txt"
[ "$(ls "$T/o3")" = "summary.txt" ] || fail "device-check wrote into a non-empty OUT: $(ls "$T/o3")"
echo "device_check: ok"
