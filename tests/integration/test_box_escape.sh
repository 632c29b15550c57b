#!/usr/bin/env bash
# No process of a kernel outlives kcs, and the JUnit file is kcs's alone
# (docs/isolation.md): the plugin's first call starts a child that calls
# setsid() and forks again; the grandchild keeps rewriting the --junit file
# as a pass for 20 s (and tries to create a file next to it) and the call
# returns zeros. `kcs grade` must report FAIL, and half a second after it exits the
# grandchild must be gone, the JUnit file still say failure, and the file
# next to it must not exist (the box allows no write outside its scratch
# directory). The same for `kcs run --junit`. Run in each box configuration
# of box_lib.sh, and with read-only mounts instead of Landlock.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/box_lib.sh"
export ESCAPE_NAME="escapee-$$"
alive() { pgrep -x "$ESCAPE_NAME" > /dev/null; }
cleanup() { pkill -KILL -x "$ESCAPE_NAME" 2> /dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
junit_fails() { # FILE LABEL: the file is kcs's JUnit with a failure in it
  "$PYTHON" - "$1" <<'PY' || { cat "$1"; fail "$2: the JUnit file does not report the failure"; }
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = list(root.iter("testcase"))
assert cases and all(c.get("classname") != "escaped" for c in cases), "rewritten"
assert any(c.find("failure") is not None for c in cases), "no failure"
PY
}
cat > "$T/study.yaml" <<EOS
name: escape
seed: 3
contracts:
  - $KCS_SRC/contracts/C-PRC-01/C-PRC-01.yaml
placement:
  - "plugin:$P/libkcs_escape_escape.so"
cases:
  - contract: C-PRC-01
    op: gemm
    dtype_in: fp32
    shapes: [[16, 16, 64]]
    inputs: [normal]
    trials: 2
EOS
for box in "${BOX_CONFIGS[@]}" "-landlock"; do
  export KCS_WORKER_BOX=$box
  export ESCAPE_TARGET="$T/grade.xml"
  guarded_grade --timeout 5 --shape 8x8x8 --junit "$ESCAPE_TARGET" "$P/libkcs_escape_escape.so" C-PRC-01
  [ "$rc" = 3 ] || { cat "$T/g.err"; fail "box '$box': grade: exit $rc, expected 3"; }
  verdict_is FAIL - "box '$box': grade"
  sleep 0.5
  ! alive || fail "box '$box': the kernel's setsid() grandchild outlived kcs grade"
  junit_fails "$ESCAPE_TARGET" "box '$box': grade"
  [ ! -e "$ESCAPE_TARGET.escaped" ] || fail "box '$box': grade: the kernel wrote outside its scratch directory"
  export ESCAPE_TARGET="$T/run.xml"
  rc=0
  timeout -s KILL 120 "$KCS" run -q "$T/study.yaml" -o "$T/run-$rc-${#box}.h5" --junit "$ESCAPE_TARGET" \
    > "$T/run.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$T/run.log"; fail "box '$box': kcs run: exit $rc, expected 0"; }
  sleep 0.5
  ! alive || fail "box '$box': the kernel's setsid() grandchild outlived kcs run"
  junit_fails "$ESCAPE_TARGET" "box '$box': run"
  [ ! -e "$ESCAPE_TARGET.escaped" ] || fail "box '$box': run: the kernel wrote outside its scratch directory"
  echo "box '$box': nothing of the kernel outlived kcs grade and kcs run; JUnit is kcs's"
done
