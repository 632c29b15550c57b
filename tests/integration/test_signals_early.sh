#!/usr/bin/env bash
# SIGTERM early in a `kcs run` (during MPI_Init and the setup before the
# first case) stops it like a later one: exit 4 (interrupted), nothing in
# place, never 143 (killed by the signal). Singleton runs (no mpirun), each
# signalled a little later: at 0.05 s, 0.2 s and 0.5 s.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/signals.yaml"
for delay in 0.05 0.2 0.5; do
  out="$T/early-$delay.h5"
  "$KCS" run "$study" -o "$out" -q > "$T/log" 2>&1 &
  pid=$!
  sleep "$delay"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 4 ] || { cat "$T/log"; fail "SIGTERM at $delay s: exit $rc, expected 4"; }
  [ ! -e "$out" ] || fail "SIGTERM at $delay s: a dataset in place"
  echo "signals: SIGTERM at $delay s: exit 4"
done
