#!/usr/bin/env bash
# One writer per output. While job A writes X, a second `kcs run -o X` (and
# a `--resume X`) exits 2 naming A (host, pid); X ends up A's dataset. An
# output that appears while a run writes it is not replaced (exit 2, the
# run's dataset left as X.partial). A lock left by a killed job is
# recognised as stale: a fresh run names it, `--resume` takes it over.
source "$(dirname "$0")/lib.sh"
long="$KCS_SRC/tests/studies/resume.yaml"   # several seconds
short="$KCS_SRC/tests/studies/diskfull.yaml"
h5attr() { "$PYTHON" -c 'import sys,h5py; v=h5py.File(sys.argv[1],"r").attrs[sys.argv[2]]; print(v.decode() if isinstance(v,bytes) else v)' "$@"; }
wait_record() { # wait until job $1 has journaled a case of output $2
  for _ in $(seq 600); do
    [ -n "$(find "$2.journal" -name 'rank-*.kj' -size +20k 2>/dev/null)" ] && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# 1. two jobs, one output
X="$T/x.h5"
setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "$long" -o "$X" -q > "$T/a.log" 2>&1 &
a=$!
wait_record "$a" "$X" || { cat "$T/a.log"; fail "job A did not start journaling"; }
owner=$(cat "$X.journal/lock")
pid=$(sed -n 's/.*pid \([0-9]*\).*/\1/p' <<< "$owner")
[ -n "$pid" ] && kill -0 "$pid" || fail "lock file does not name a live process: '$owner'"
set +e
mpirun4 "$KCS" run "$short" -o "$X" -q > "$T/b.log" 2>&1; rb=$?
mpirun4 "$KCS" run --resume "$X" -q > "$T/c.log" 2>&1; rc=$?
set -e
[ "$rb" -eq 2 ] || { cat "$T/b.log"; fail "second job exited $rb, expected 2"; }
[ "$rc" -eq 2 ] || { cat "$T/c.log"; fail "--resume of a live job exited $rc, expected 2"; }
grep -q "another kcs run is writing this output (host .*, pid $pid," "$T/b.log" ||
  { cat "$T/b.log"; fail "second job's message does not name the live job (pid $pid)"; }
grep -q "pid $pid," "$T/c.log" || { cat "$T/c.log"; fail "--resume's message does not name the live job"; }
wait "$a" || { cat "$T/a.log"; fail "job A failed after the second job was refused"; }
[ "$(h5attr "$X" study_name)" = resume ] || fail "$X is not job A's dataset"
[ ! -e "$X.journal" ] || fail "journal left after A completed"
echo "lock: second job refused naming pid $pid; $X is A's"

# 2. an output that appears during the run is not replaced
Y="$T/y.h5"
setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "$long" -o "$Y" -q > "$T/y.log" 2>&1 &
y=$!
wait_record "$y" "$Y" || { cat "$T/y.log"; fail "job Y did not start journaling"; }
echo "someone else's file" > "$Y"
set +e; wait "$y"; ry=$?; set -e
[ "$ry" -eq 2 ] || { cat "$T/y.log"; fail "run whose output appeared exited $ry, expected 2"; }
[ "$(cat "$Y")" = "someone else's file" ] || fail "the file that appeared was replaced"
[ "$(h5attr "$Y.partial" complete)" = 1 ] || fail "the run's dataset was not kept as $Y.partial"
grep -q "appeared while this run was writing it" "$T/y.log" || { cat "$T/y.log"; fail "no reason given"; }
echo "lock: an output that appeared meanwhile was left alone"

# 3. a stale lock from a killed job
Z="$T/z.h5"
setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "$long" -o "$Z" -q > "$T/z.log" 2>&1 &
z=$!
wait_record "$z" "$Z" || { cat "$T/z.log"; fail "job Z did not start journaling"; }
kill -KILL -- "-$z"; pkill -KILL -f -- "$Z" 2>/dev/null || true; wait "$z" 2>/dev/null || true
[ -s "$Z.journal/lock" ] || fail "the killed job left no lock file"
set +e; mpirun4 "$KCS" run "$long" -o "$Z" -q > "$T/z2.log" 2>&1; r2=$?; set -e
[ "$r2" -eq 2 ] && grep -q "which is gone" "$T/z2.log" ||
  { cat "$T/z2.log"; fail "a fresh run over a dead job's journal: exit $r2, stale lock not named"; }
mpirun4 "$KCS" run --resume "$Z" -q || fail "--resume did not take over the stale lock"
[ "$(h5attr "$Z" complete)" = 1 ] && [ ! -e "$Z.journal" ] || fail "resume after a stale lock incomplete"
echo "lock: ok"
