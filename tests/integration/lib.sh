# Shared helpers of the end-to-end scripts (sourced, not a test itself).
set -euo pipefail
: "${KCS:?}" "${KCS_SRC:?}" "${MPIEXEC:=mpiexec}" "${PYTHON:=/usr/bin/python3}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T=$(mktemp -d /tmp/kcs-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
mpirun4() { "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# kcs grade ARGS with stdout and stderr in OUT; fails unless it exits
# EXPECTED_RC (a script may define its own grade instead)
grade() { # EXPECTED_RC OUT ARGS...
  local want=$1 out=$2 rc=0
  shift 2
  "$KCS" grade "$@" > "$out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$out"; fail "kcs grade $*: exit $rc, expected $want"; }
}
