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
    # every rank's journal there: resume; some only (a kill while the ranks
    # were creating them, before any case ran): start over
    local nj; nj=$( (ls "$out.journal"/rank-*.kj 2> /dev/null || true) | wc -l)
    if [ "$nj" -eq 4 ]; then args=(--resume "$out"); elif [ "$nj" -gt 0 ]; then args+=(--force); fi
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
    if [ "$killed" -eq 1 ] && [ -e "$out" ]; then
      # the kill landed after the final rename: the run had finished, so
      # it was no interruption; start this one over
      rm -rf "$out" "$out".*
      kills=$((kills - 1))
      continue
    fi
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
# (after every rank's journal exists and a first case record has landed)
for _ in $(seq 1200); do [ "$(ls "$T/out3.h5.journal"/rank-*.kj 2> /dev/null | wc -l)" -eq 4 ] && break; sleep 0.05; done
s0=$(jsize "$T/out3.h5")
for _ in $(seq 1200); do [ "$(jsize "$T/out3.h5")" -gt "$s0" ] && break; sleep 0.05; done
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

# 4. a plugin rank that crashes (in its worker) on every k = 1024 call: the
# crashed trials, their reasons and the exit status survive kills
{ study_head resume-crashing-plugin 13 4 C-PRC-01; cat <<EOF; } > "$T/crash.yaml"
  - { backend: plugin, plugin: $KCS_BUILD/tests/plugin/libkcs_hostile_crash_k_plugin.so }
  - { backend: plugin, plugin: $PLUGIN }
  - { backend: cpu, variant: own, schedule: pairwise, acc: fp32 }
cases:
  - contract: C-PRC-01
    op: gemm
    dtype_in: fp32
    shapes: [[24, 24, 512], [16, 16, 1024], [32, 16, 768], [20, 20, 1024], [24, 16, 2048],
             [16, 16, 1024], [28, 20, 640], [12, 40, 1024]]
    inputs: [normal, uniform_pm1]
    trials: 2
EOF
set +e; mpirun4 "$KCS" run "$T/crash.yaml" -o "$T/ref4.h5" -q 2> /dev/null; ref4=$?; set -e
[ "$ref4" -eq 3 ] || fail "crashing plugin: uninterrupted run exited $ref4, expected 3"
"$PYTHON" - "$T/ref4.h5" <<'PY' || fail "crashing plugin: the uninterrupted run lacks its crashed trials"
import sys, h5py
r = h5py.File(sys.argv[1], "r")["results"][:]
crashed = [x for x in r if x["status"].decode() == "crashed"]
assert crashed and all(x["rank"] == 1 for x in crashed), len(crashed)
assert all(x["message"] for x in crashed), crashed[0]
PY
got=$(kill_and_resume crashplugin "$T/out4.h5" 2 "$T/crash.yaml" -o "$T/out4.h5")
[ "$got" -eq "$ref4" ] || fail "crashing plugin: resumed exit status $got, uninterrupted $ref4"
compare "$T/ref4.h5" "$T/out4.h5" crashing-plugin
echo "resume_faithful: ok"
