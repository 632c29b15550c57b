#!/usr/bin/env bash
# A kernel that maps 20 GiB is an ERROR under the default limits
# (docs/isolation.md: the worker's address space is at most 16 GiB, less
# on a machine with less than 32 GiB): the map is refused and the call
# fails. With the limit off (--worker-mem 0) the same plugin passes, which
# shows that it is the limit that stopped it (it touches only 64 MiB of the
# 20 GiB, so nothing here can take the machine).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/box_lib.sh"
guarded_grade --shape 8x8x8 "$P/libkcs_escape_mem20g.so" C-PRC-01
[ "$rc" = 3 ] || { cat "$T/g.err"; fail "default limits: exit $rc, expected 3"; }
verdict_is ERROR "cannot map 20 GiB" "default limits"
echo "memory: 20 GiB refused under the default limits"
guarded_grade --shape 8x8x8 --worker-mem 0 "$P/libkcs_escape_mem20g.so" C-PRC-01
if [ "$rc" = 0 ]; then
  verdict_is PASS - "--worker-mem 0"
  echo "memory: the same plugin passes with --worker-mem 0"
else # a machine whose overcommit policy refuses 20 GiB itself
  verdict_is ERROR "cannot map 20 GiB" "--worker-mem 0"
  echo "memory: this machine refuses a 20 GiB map even without the limit"
fi
# the CPU limit's default is on too: it is in the help, and 0 turns it off
"$KCS" grade --help | grep -q "default 3600; 0: none" || fail "the CPU limit's default is not in --help"
