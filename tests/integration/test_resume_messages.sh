#!/usr/bin/env bash
# `kcs run --resume OUT` where there is nothing to resume says why, exit 2,
# and touches nothing: a run that never started a case (no journal, no
# dataset) and a run that finished (the dataset complete, its journals
# removed) are told apart.
source "$(dirname "$0")/lib.sh"
set +e
"$KCS" run --resume "$T/never.h5" 2> "$T/never.err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "never started: exit $rc, expected 2: $(cat "$T/never.err")"
grep -qF "$T/never.h5: nothing to resume: no journal and no dataset" "$T/never.err" \
  || fail "never started: $(cat "$T/never.err")"
[ ! -e "$T/never.h5" ] && [ ! -e "$T/never.h5.journal" ] || fail "never started: files made"

"$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run \
  "$KCS_SRC/tests/studies/diskfull.yaml" -o "$T/done.h5" -q || fail "the study did not run"
cp "$T/done.h5" "$T/done.copy"
set +e
"$KCS" run --resume "$T/done.h5" 2> "$T/done.err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "finished: exit $rc, expected 2: $(cat "$T/done.err")"
grep -qF "$T/done.h5: nothing to resume: the run finished and this dataset is complete" \
  "$T/done.err" || fail "finished: $(cat "$T/done.err")"
cmp -s "$T/done.h5" "$T/done.copy" || fail "finished: the dataset changed"
echo "resume messages: ok"
