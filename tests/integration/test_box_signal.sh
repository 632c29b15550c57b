#!/usr/bin/env bash
# A kernel cannot kill or stop its grader (docs/isolation.md): a plugin that
# SIGKILLs its parent and every ancestor named kcs still gets its verdict
# (PASS: its results are right), and one that SIGSTOPs them and hangs is an
# ERROR when --timeout fires. Run in each box configuration of box_lib.sh:
# the namespaces, then Landlock's signal scope and a uid of its own, then a
# uid of its own alone.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/box_lib.sh"
for box in "${BOX_CONFIGS[@]}"; do
  export KCS_WORKER_BOX=$box
  guarded_grade --timeout 2 --shape 8x8x8 "$P/libkcs_escape_kill.so" C-PRC-01
  [ "$rc" = 0 ] || { cat "$T/g.err"; fail "box '$box': kill: exit $rc, expected 0"; }
  verdict_is PASS - "box '$box': kill"
  guarded_grade --timeout 1 --shape 8x8x8 "$P/libkcs_escape_stop.so" C-PRC-01
  [ "$rc" = 3 ] || { cat "$T/g.err"; fail "box '$box': stop: exit $rc, expected 3"; }
  verdict_is ERROR "exceeded its 1 s limit" "box '$box': stop"
  echo "box '$box': the grader survived SIGKILL and SIGSTOP from its kernel"
done
