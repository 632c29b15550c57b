#!/usr/bin/env bash
# Signals as users send them. The study has one case of six long trials, so
# a signal lands inside a case and the run must stop after the current trial
# (not the case): exit 4 and "between two trials" when the ranks get SIGTERM
# (what srun and Slurm's preemption do). Open MPI 4.1's mpirun answers a
# SIGTERM itself: it waits odls_base_sigkill_timeout seconds (default 1),
# then sends the ranks SIGTERM and SIGKILL at once and exits 1 (measured:
# lengthening the timeout only delays both). No graceful stop is possible
# then, but nothing may be lost: no dataset in place, journals kept, and
# `--resume` completes the run.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/signals.yaml"
out="$T/s.h5"
start() {
  setsid "$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$@" -q > "$T/log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do [ -e "$out.partial" ] && break; sleep 0.05; done
  sleep 1 # inside the case's trials
}
finish() { set +e; timeout 120 tail --pid="$pid" -f /dev/null; wait "$pid"; rc=$?; set -e; }

# 1. SIGTERM to the ranks: exit 4 through mpirun
start "$study" -o "$out"
pkill -TERM -f -- "^$KCS run $study -o $out" || fail "no rank to signal"
finish
[ "$rc" -eq 4 ] || { cat "$T/log"; fail "SIGTERM to the ranks: exit $rc, expected 4"; }
grep -q "interrupted between two trials" "$T/log" || { cat "$T/log"; fail "did not stop between trials"; }
ls "$out.journal"/rank-*.kj > /dev/null || fail "journals not kept"
[ ! -e "$out" ] && [ ! -e "$out.partial" ] || fail "an interrupted run left a dataset"
echo "signals: SIGTERM to the ranks stopped between trials, exit 4"

# 2. SIGTERM to mpirun (Ctrl-C): Open MPI kills the ranks; nothing is lost
start --resume "$out"
kill -TERM "$pid"
finish
[ "$rc" -ne 0 ] || fail "SIGTERM to mpirun: exit 0"
[ ! -e "$out" ] || fail "SIGTERM to mpirun: a dataset in place"
ls "$out.journal"/rank-*.kj > /dev/null || fail "journals not kept"
echo "signals: SIGTERM to mpirun: exit $rc, journals kept"

mpirun4 "$KCS" run --resume "$out" -q 2>/dev/null || true # -n differs: refused, journals stay
"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run --resume "$out" -q ||
  fail "resume after the signals failed"
[ -e "$out" ] && [ ! -e "$out.journal" ] || fail "resume did not complete"
echo "signals: ok"
