# Shared helpers of the end-to-end scripts (sourced, not a test itself).
set -euo pipefail
: "${KCS:?}" "${KCS_SRC:?}" "${MPIEXEC:=mpiexec}" "${PYTHON:=/usr/bin/python3}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
T=$(mktemp -d /tmp/kcs-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
mpirun4() { "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# COMMAND with stdout and stderr in OUT; fails unless it exits EXPECTED_RC
expect_rc() { # EXPECTED_RC OUT COMMAND...
  local want=$1 out=$2 rc=0
  shift 2
  "$@" > "$out" 2>&1 || rc=$?
  local what="$*"
  [ "$1" != "$KCS" ] || what="kcs ${*:2}"
  [ "$rc" = "$want" ] || { cat "$out"; fail "$what: exit $rc, expected $want"; }
}
# kcs grade ARGS with stdout and stderr in OUT; fails unless it exits
# EXPECTED_RC (a script may define its own grade instead)
grade() { # EXPECTED_RC OUT ARGS...
  local want=$1 out=$2
  shift 2
  expect_rc "$want" "$out" "$KCS" grade "$@"
}
# Each REGEX (grep -E) matches a line of OUT; else OUT is shown and LABEL fails.
has_rows() { # OUT LABEL REGEX...
  local out=$1 label=$2 re
  shift 2
  for re in "$@"; do
    grep -qE "$re" "$out" || { cat "$out"; fail "$label: no line matching '$re'"; }
  done
}
# kcs grade ARGS into $T/out.txt: its verdict line (the first to match
# VERDICT_LINE, a contract's row by default) must say EXPECT, PASS with
# exit 0 or FAIL with exit 3; prints "LABEL: line".
grade_verdict() { # EXPECT LABEL ARGS...
  local want=$1 label=$2 rc=0
  shift 2
  "$KCS" grade "$@" > "$T/out.txt" 2>&1 || rc=$?
  local line re='^C-[A-Z]{3}-[0-9]{2} '
  [ -z "${VERDICT_LINE:-}" ] || re=$VERDICT_LINE
  line=$(grep -E "$re" "$T/out.txt" || true)
  case "$want" in
    PASS) [ "$rc" = 0 ] && echo "$line" | grep -q ' PASS ' || { cat "$T/out.txt"; fail "$label: expected PASS (exit $rc)"; } ;;
    FAIL) [ "$rc" = 3 ] && echo "$line" | grep -q ' FAIL ' || { cat "$T/out.txt"; fail "$label: expected FAIL (exit $rc)"; } ;;
  esac
  echo "$label: $line"
}
# The head of a study file: name, seed, samples (none when ""), the
# shipped contracts IDs, and placement: beginning with a cpu native rank
# (the caller adds ranks and cases:).
study_head() { # NAME SEED SAMPLES ID...
  printf 'name: %s\nseed: %s\n' "$1" "$2"
  [ -z "$3" ] || printf 'samples: %s\n' "$3"
  echo "contracts:"
  shift 3
  local id
  for id in "$@"; do printf '  - %s/contracts/%s.yaml\n' "$KCS_SRC" "$id"; done
  printf 'placement:\n  - { backend: cpu, variant: native }\n'
}
# Placement lines: one cpu "own" rank per SCHEDULE/ACC.
own_ranks() { # SCHEDULE/ACC...
  local r
  for r in "$@"; do
    printf '  - { backend: cpu, variant: own, schedule: "%s", acc: "%s" }\n' "${r%%/*}" "${r#*/}"
  done
}
# A study of one small C-PRC-01 gemm case on two ranks: cpu native and
# opencl device 0 (a backend these tests exclude or hide).
study_cpu_opencl() { # NAME SEED
  study_head "$1" "$2" 4 C-PRC-01
  cat <<Y
  - { backend: opencl, device: 0 }
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 64]], inputs: [normal], trials: 1 }
Y
}
