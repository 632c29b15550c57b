#!/usr/bin/env bash
# Resume reproduces the uninterrupted run: kill `kcs run` at random points
# (after a new journal record, 0-0.3 s later), resume exactly as kcs advises
# (`kcs run --resume OUT`, no other flags), and compare with an
# uninterrupted run: same dataset (tests/integration/same_dataset.py) and
# same exit status. Studied: a crashing kernel and a hung one (time limit)
# whose backends stay unusable afterwards, --case-timeout, and --plugin.
# Resuming with a different --plugin or --case-timeout is refused (exit 2).
source "$(dirname "$0")/lib.sh"
PLUGIN="${KCS_BUILD:?}/tests/plugin/libkcs_example_plugin.so"
BROKEN="$KCS_BUILD/tests/plugin/libkcs_example_plugin_broken.so"
jsize() { { find "$1.journal" -name 'rank-*.kj' -printf '%s\n' 2>/dev/null || true; } | awk '{ s += $1 } END { print s + 0 }'; }

# kill_and_resume NAME OUT KILLS ARGS...: the first attempt runs ARGS, later
# ones --resume; prints the final exit status
kill_and_resume() {
  local name=$1 out=$2 kills_wanted=$3; shift 3
  local kills=0 attempt=0 rc=0
  while :; do
    attempt=$((attempt + 1))
    [ "$attempt" -le 20 ] || fail "$name: no completion after 20 attempts"
    local args=("$@")
    ls "$out.journal"/rank-*.kj > /dev/null 2>&1 && args=(--resume "$out")
    setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "${args[@]}" -q \
      > "$T/$name.log.$attempt" 2>&1 &
    local pid=$! killed=0
    if [ "$kills" -lt "$kills_wanted" ]; then
      local s0; s0=$(jsize "$out")
      for _ in $(seq 1200); do
        [ "$(jsize "$out")" -gt "$s0" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
      done
      sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", (r % 31) / 100 }')"
      if kill -0 "$pid" 2>/dev/null; then
        kill -KILL -- "-$pid"; pkill -KILL -f -- "$out" 2>/dev/null || true
        kills=$((kills + 1)) killed=1
      fi
    fi
    set +e; timeout 120 tail --pid="$pid" -f /dev/null; wait "$pid"; rc=$?; set -e
    pkill -KILL -f -- "$out" 2>/dev/null || true
    if [ "$killed" -eq 0 ]; then
      [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ] || { cat "$T/$name.log.$attempt" >&2; fail "$name: attempt $attempt exited $rc"; }
      [ -e "$out" ] && break
    fi
  done
  echo "$name: completed after $kills kills, $attempt attempts, exit $rc" >&2
  echo "$rc"
}

compare() { "$PYTHON" "$KCS_SRC/tests/integration/same_dataset.py" "$1" "$2" || fail "$3: resumed dataset differs"; }

# 1. crash + time limit: exit 3, and the backends stay unusable after resume
faults="$KCS_SRC/tests/studies/resume_faults.yaml"
set +e; mpirun4 "$KCS" run "$faults" -o "$T/ref1.h5" -q 2> /dev/null; ref1=$?; set -e
[ "$ref1" -eq 3 ] || fail "faults study: uninterrupted run exited $ref1, expected 3"
got=$(kill_and_resume faults "$T/out1.h5" 3 "$faults" -o "$T/out1.h5")
[ "$got" -eq "$ref1" ] || fail "faults: resumed exit status $got, uninterrupted $ref1"
compare "$T/ref1.h5" "$T/out1.h5" faults

# 2. --case-timeout given at the start, restored by a bare --resume
set +e; mpirun4 "$KCS" run "$faults" -o "$T/ref2.h5" --case-timeout 2 -q 2> /dev/null; ref2=$?; set -e
got=$(kill_and_resume timeout "$T/out2.h5" 2 "$faults" -o "$T/out2.h5" --case-timeout 2)
[ "$got" -eq "$ref2" ] || fail "--case-timeout: resumed exit status $got, uninterrupted $ref2"
compare "$T/ref2.h5" "$T/out2.h5" case-timeout

# 3. --plugin, restored by a bare --resume; a different one is refused
study="$KCS_SRC/tests/studies/resume.yaml"
mpirun4 "$KCS" run "$study" -o "$T/ref3.h5" --plugin "$PLUGIN" -q
# interrupt once, then try the wrong flags before resuming
setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "$study" -o "$T/out3.h5" \
  --plugin "$PLUGIN" -q > "$T/p.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do [ "$(jsize "$T/out3.h5")" -gt 40000 ] && break; sleep 0.05; done
kill -KILL -- "-$pid"; pkill -KILL -f -- "$T/out3.h5" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
set +e
mpirun4 "$KCS" run --resume "$T/out3.h5" --plugin "$BROKEN" -q > "$T/p2.log" 2>&1; r=$?
mpirun4 "$KCS" run --resume "$T/out3.h5" --case-timeout 7 -q > "$T/p3.log" 2>&1; r3=$?
set -e
[ "$r" -eq 2 ] && grep -q "differs from the interrupted run's" "$T/p2.log" ||
  { cat "$T/p2.log"; fail "resume with another --plugin: exit $r"; }
[ "$r3" -eq 2 ] && grep -q "case-timeout 7 differs" "$T/p3.log" ||
  { cat "$T/p3.log"; fail "resume with another --case-timeout: exit $r3"; }
got=$(kill_and_resume plugin "$T/out3.h5" 1 --resume "$T/out3.h5")
[ "$got" -eq 0 ] || fail "--plugin: resumed exit status $got"
compare "$T/ref3.h5" "$T/out3.h5" plugin
"$PYTHON" - "$T/out3.h5" <<'PY' || fail "--plugin: provenance does not say plugin on every rank"
import sys, h5py
r = h5py.File(sys.argv[1], "r")["provenance/ranks"][:]
assert all(b.decode() == "plugin" for b in r["backend"]), r["backend"]
PY
echo "resume_faithful: ok"
