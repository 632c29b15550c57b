# Shared by the test_box_*.sh scripts (sourced after lib.sh): grading a
# plugin of tests/plugin/escape_plugin.c under a wall-clock guard, and the
# box configurations the fallbacks are tested with.
P="$KCS_BUILD/tests/plugin"
export KCS_WORKER_LOG="$T/worker.log"
# The layer sets: everything this kernel allows; no namespaces (Landlock's
# signal scope, a uid of its own, the cgroup and the subreapers hold);
# nothing but what needs no privilege and no kernel feature (a uid of its
# own when root, the subreapers, rlimits).
BOX_CONFIGS=("" "-pidns,-ipcns,-mntns" "-pidns,-ipcns,-mntns,-landlock,-cgroup")
# kcs grade --json ARGS under a 60 s guard (SIGKILL: a stopped grader is
# caught too); sets rc and leaves stdout in $T/g.json, stderr in $T/g.err.
guarded_grade() { # ARGS...
  rc=0
  local t0=$SECONDS
  timeout -s KILL 60 "$KCS" grade --json "$@" > "$T/g.json" 2> "$T/g.err" || rc=$?
  [ "$rc" -ne 137 ] || [ $((SECONDS - t0)) -lt 59 ] || { cat "$T/g.err"; fail "kcs grade $*: no verdict within 60 s (the grader was stopped or hung)"; }
  [ "$rc" -lt 128 ] || { cat "$T/g.err"; fail "kcs grade $*: kcs died of signal $((rc - 128))"; }
}
# The one contract's verdict in $T/g.json must be VERDICT, and its detail
# hold TEXT ("-": anything).
verdict_is() { # VERDICT TEXT LABEL
  "$PYTHON" - "$T/g.json" "$1" "$2" <<'PY' || { cat "$T/g.json" "$T/g.err"; fail "$3: wrong verdict"; }
import json, sys
c, = json.load(open(sys.argv[1]))["contracts"]
assert c["verdict"] == sys.argv[2], c
assert sys.argv[3] == "-" or sys.argv[3] in c["detail"], c["detail"]
PY
}
# A uid of its own needs root: elsewhere the last configuration holds nothing
# that stops a signal.
[ "$(id -u)" = 0 ] || BOX_CONFIGS=("${BOX_CONFIGS[@]:0:2}")
