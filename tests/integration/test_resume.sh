#!/usr/bin/env bash
# Kill `mpirun -n 4 kcs run` at random points (SIGKILL to the whole job, and
# once SIGTERM, a scheduler's preemption), resume each time, and compare the
# final dataset with an uninterrupted run: identical results, no duplicate or
# missing rows.
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/resume.yaml"
mpirun4 "$KCS" run "$study" -o "$T/ref.h5" -q

out="$T/out.h5"
# bytes in this run's journals (0 before the first attempt creates them)
jsize() { { find "$out.journal" -type f -printf '%s\n' 2>/dev/null || true; } | awk '{ s += $1 } END { print s + 0 }'; }
kills=0 attempt=0
while [ ! -e "$out" ]; do
  attempt=$((attempt + 1))
  [ "$attempt" -le 40 ] || fail "no completion after 40 attempts"
  # every rank's journal there: resume; a kill while the ranks were still
  # creating them (before any case ran) leaves some only: start over
  nj=$( (ls "$out.journal"/rank-*.kj 2> /dev/null || true) | wc -l)
  if [ "$nj" -eq 4 ]; then args=(--resume "$out"); else args=("$study" -o "$out" --force); fi
  setsid "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe "$KCS" run "${args[@]}" -q \
    > "$T/log.$attempt" 2>&1 &
  pid=$!
  limit=600 # half-seconds this attempt may take
  if [ "$kills" -lt 6 ]; then
    # a random point of this attempt's work, whatever the machine's speed:
    # once its ranks have journaled something new (so it is past MPI start-up
    # and makes progress), 0-0.15 s later -- often inside the collective HDF5
    # write that follows each journal record
    s0=$(jsize)
    for _ in $(seq 2000); do
      [ "$(jsize)" -gt "$s0" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", (r % 16) / 100 }')"
    if kill -0 "$pid" 2>/dev/null; then
      if [ "$kills" -eq 2 ]; then
        kill -TERM "$pid"          # mpirun forwards SIGTERM to the ranks
      else
        kill -KILL -- "-$pid"      # the whole job, mid-write if it so happens
        pkill -KILL -f -- "$out" 2>/dev/null || true  # ranks outside its group too
      fi
      kills=$((kills + 1))
      limit=120
    fi
  fi
  # a launcher still there 60 s after the signal (or 300 s into an attempt)
  # is hung, not working: take the whole job down
  for _ in $(seq "$limit"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "attempt $attempt: the job did not end; SIGKILL" >&2
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  wait "$pid" || true
  # leftovers of this job only (other tests may be running kcs too)
  pkill -KILL -f -- "$out" 2>/dev/null || true
done
[ "$kills" -ge 5 ] || fail "only $kills kills landed before completion; the study is too short"
[ ! -e "$out.journal" ] || fail "journal left behind after completion"
echo "completed after $kills kills and $attempt attempts"

"$PYTHON" - "$T/ref.h5" "$out" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    assert int(b.attrs["complete"]) == 1
    ra, rb = a["results"][:], b["results"][:]
    assert len(ra) == len(rb), (len(ra), len(rb))
    for name in ra.dtype.names:
        if name == "time_ns":
            continue
        x, y = ra[name], rb[name]
        if x.dtype.kind == "f":
            same = np.array_equal(x, y, equal_nan=True)
        else:
            same = np.array_equal(x, y)
        assert same, f"results.{name} differs after resume"
    keys = set(zip(rb["case_id"], rb["rank"], rb["trial"]))
    assert len(keys) == len(rb), "duplicate rows"
    assert np.array_equal(a["cases"][:], b["cases"][:]), "cases differ"
    # schema 2: /samples is one dataset [n_cases, n_ranks, n_samples]
    assert np.array_equal(a["samples"][:], b["samples"][:], equal_nan=True), "samples differ"
print("resume: identical to the uninterrupted run")
PY
echo "resume: ok"
