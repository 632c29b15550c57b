#!/usr/bin/env bash
# A plugin that writes one element past its output (tests/plugin/
# bad_plugin.c -DOVERRUN: zeros, and one float too many) is judged, not an
# error of the run (issue 14): its values come back with guard_ok = 0, so
# C-EXC-02 fails it naming write-past-output, and the gemm contracts fail
# it (no ERROR row). kcs grade runs it in its worker process; the
# in-process path is tests/unit/backends/test_plugin.c's.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"
grade 3 "$T/o.txt" "$P/libkcs_overrun_plugin.so" C-EXC-02 C-PRC-01
cat "$T/o.txt"
# C-EXC-02 fails naming write-past-output; C-PRC-01 too (issue 42), with the offsets
has_rows "$T/o.txt" overrun '^C-EXC-02 +gather +FAIL .*write-past-output' \
  '^C-PRC-01 +gemm +FAIL .*write-past-output.*wrote outside its output \(bytes '
! grep -q ' ERROR ' "$T/o.txt" || fail "overrun: an ERROR row"
echo "overrun judged: ok"
