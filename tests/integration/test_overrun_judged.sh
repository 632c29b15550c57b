#!/usr/bin/env bash
# A plugin that writes one element past its output (tests/plugin/
# bad_plugin.c -DOVERRUN: zeros, and one float too many) is judged, not an
# error of the run (issue 14): its values come back with guard_ok = 0, so
# C-EXC-02 fails it naming write-past-output, and the gemm contracts fail
# it (no ERROR row). kcs grade runs it in its worker process; the
# in-process path is tests/unit/backends/test_plugin.c's.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
rc=0
"$KCS" grade "$P/libkcs_overrun_plugin.so" C-EXC-02 C-PRC-01 > "$T/o.txt" 2>&1 || rc=$?
cat "$T/o.txt"
[ "$rc" = 3 ] || fail "overrun: exit $rc, expected 3"
grep -qE '^C-EXC-02 +gather +FAIL .*write-past-output' "$T/o.txt" ||
  fail "overrun: C-EXC-02 must FAIL naming write-past-output"
grep -qE '^C-PRC-01 +gemm +FAIL' "$T/o.txt" || fail "overrun: C-PRC-01 must FAIL"
! grep -q ' ERROR ' "$T/o.txt" || fail "overrun: an ERROR row"
echo "overrun judged: ok"
