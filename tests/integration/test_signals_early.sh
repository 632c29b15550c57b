#!/usr/bin/env bash
# SIGTERM early in a `kcs run` (during MPI_Init and the setup before the
# first case) stops it like a later one: exit 4 (interrupted), nothing in
# place, never 143 (killed by the signal). Singleton runs (no mpirun), each
# signalled a little later after the dynamic loader has mapped libmpi (a
# signal before main() cannot be caught by any program): 0.1 s, 0.25 s and
# 0.5 s after that.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/signals.yaml"
for delay in 0.1 0.25 0.5; do
  out="$T/early-$delay.h5"
  "$KCS" run "$study" -o "$out" -q > "$T/log" 2>&1 &
  pid=$!
  for _ in $(seq 500); do grep -q libmpi "/proc/$pid/maps" 2> /dev/null && break; sleep 0.01; done
  sleep "$delay"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 4 ] || { cat "$T/log"; fail "SIGTERM at $delay s: exit $rc, expected 4"; }
  [ ! -e "$out" ] || fail "SIGTERM at $delay s: a dataset in place"
  echo "signals: SIGTERM at $delay s: exit 4"
done
