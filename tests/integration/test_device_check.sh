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
# a GPU that answers but no time left (KCS_DEVICE_CHECK_BUDGET=5): every
# step is recorded as skipped, none runs, exit 1, no "complete" line
mkdir -p "$T/gpu"
cat > "$T/gpu/nvidia-smi" <<'SH'
#!/bin/sh
case "$*" in
  *query-gpu*) echo "0, NVIDIA H100 80GB HBM3, 580.00, 9.0, 81559 MiB, GPU-test" ;;
  *) echo "| NVIDIA-SMI 580.00   Driver Version: 580.00   CUDA Version: 13.0 |" ;;
esac
SH
chmod +x "$T/gpu/nvidia-smi"
set +e
OUT="$T/o4" PATH="$T/gpu:$PATH" KCS_DEVICE_CHECK_KCS="$KCS" KCS_DEVICE_CHECK_BUDGET=5 \
  bash "$KCS_SRC/scripts/device-check" > "$T/o4.stdout" 2> "$T/o4.stderr"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "device-check with no time left exited $rc, expected 1: $(cat "$T/o4.stderr")"
for s in devices freivalds probe-bf16-tile64 probe-fp8_e4m3-tile16-fa1 "corners run"; do
  grep -q "^device-check: $s: SKIPPED (overall budget" "$T/o4/summary.txt" \
    || fail "step '$s' not recorded as skipped: $(cat "$T/o4/summary.txt")"
done
grep -q "complete" "$T/o4/summary.txt" && fail "a run with skipped steps called complete"
[ ! -e "$T/o4/freivalds.txt" ] && [ ! -e "$T/o4/corners/results.txt" ] \
  || fail "a skipped step wrote its output"
echo "device_check: ok"
