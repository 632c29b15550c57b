#!/usr/bin/env bash
# The worker's environment does not announce grading (docs/isolation.md):
# a plugin that computes correctly only when it sees a KCS_* variable, or
# "kcs" in its process name or argv[0], must be caught (FAIL). With the box
# off (KCS_WORKER_BOX=off: the worker as kcs started it before the box) it
# does see that it is graded and passes, which shows the test can fail.
# The grade's "worker box" line names the layers that held.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/box_lib.sh"
export KCS_SOMETHING=1 # a KCS_ variable of the user's: not passed on either
guarded_grade --shape 8x8x8 "$P/libkcs_escape_sniff.so" C-PRC-01
[ "$rc" = 3 ] || { cat "$T/g.err"; fail "box: exit $rc, expected 3"; }
verdict_is FAIL - "box"
echo "env: the kernel did not see that it is graded"
KCS_WORKER_BOX=off guarded_grade --shape 8x8x8 "$P/libkcs_escape_sniff.so" C-PRC-01
[ "$rc" = 0 ] || { cat "$T/g.err"; fail "no box: exit $rc, expected 0 (the plugin did not detect kcs)"; }
echo "env: without the box it does"
# which layers held: the text line, the JSON member and the recorded runtime
"$KCS" grade --shape 8x8x8 "$P/libkcs_example_plugin.so" C-PRC-01 > "$T/text" 2>&1 || true
grep -E "^kcs grade: worker box: .*env name" "$T/text" || { cat "$T/text"; fail "no worker box line"; }
if unshare -p -f true 2> /dev/null; then # this kernel and user allow a PID namespace
  grep -qE "^kcs grade: worker box: pidns " "$T/text" || { cat "$T/text"; fail "pidns did not hold"; }
fi
KCS_WORKER_BOX=-pidns guarded_grade --shape 8x8x8 "$P/libkcs_example_plugin.so" C-PRC-01
"$PYTHON" - "$T/g.json" <<'PY' || fail "the JSON does not say which layers held"
import json, sys
doc = json.load(open(sys.argv[1]))
assert "no pidns: left out (KCS_WORKER_BOX)" in doc["box"], doc["box"]
PY
KCS_WORKER_BOX=-bogus guarded_grade "$P/libkcs_example_plugin.so" C-PRC-01
[ "$rc" = 2 ] && grep -q "KCS_WORKER_BOX=-bogus" "$T/g.err" || { cat "$T/g.err"; fail "KCS_WORKER_BOX=-bogus: exit $rc"; }
