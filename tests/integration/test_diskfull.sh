#!/usr/bin/env bash
# Disk full at every stage of a run: for amounts of free space from "the
# journal header does not fit" to "everything fits", on a small tmpfs, with
# Open MPI's OMPIO and ROMIO, `kcs run` either exits 0 with a dataset equal
# to the uninterrupted one, or exits non-zero leaving no OUT.h5 (journals kept
# when anything was journaled), and after space is freed `--resume` (or a
# fresh run when nothing was journaled) completes it. No run may hang or
# exit 0 with a damaged file. A third pass (OMPIO, KCS_TEST_NO_RESERVE=1)
# skips the space reservation so that HDF5's own writes fail -- OMPIO does
# not report them -- and checks that the read-back verification catches it.
# ROMIO is not run that way: HDF5 1.10 then hangs in a collective write
# (the reason the reservation exists). A damaged global heap can make HDF5
# loop for ever while reading back; the read-back runs in `kcs _readback`
# under a stall limit (10 s here) and must end in exit 1. Needs root (mount -t tmpfs): skipped
# otherwise. KCS_DISKFULL_PASSES picks the passes (and "reduce", the sweep
# of kcs reduce at the end): by default all but ROMIO's, which
# test_diskfull_romio.sh runs (label slow: kcs has no code of its own per
# MPI-IO component, and the OMPIO passes run every kcs path of it).
source "$(dirname "$0")/lib.sh"
study="$KCS_SRC/tests/studies/diskfull.yaml"
M="$T/mnt"
mkdir -p "$M"
if ! mount -t tmpfs -o size=64k tmpfs "$M" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs here (needs root)"; exit 77
fi
trap 'umount "$M" 2> /dev/null || true; rm -rf "$T"' EXIT
umount "$M"
export KCS_READBACK_STALL_S=10
mpirun4 "$KCS" run "$study" -o "$T/ref.h5" -q
run() { # run IO ARGS...: kcs run under a time limit; exit status in RC
  local io=$1; shift
  set +e
  timeout -k 5 60 "$MPIEXEC" -n 4 --allow-run-as-root --oversubscribe --mca io "$io" -x KCS_READBACK_STALL_S \
    -x KCS_TEST_NO_RESERVE "$KCS" run "$@" -q > "$T/log" 2>&1
  RC=$?
  set -e
  [ "$RC" -ne 124 ] && [ "$RC" -ne 137 ] || { cat "$T/log" >&2; fail "$io: kcs run hung ($*)"; }
}
declare -A seen
# The sweep's sizes were found on a 35683-byte dataset of this study; they
# scale with the dataset (a wider result row makes every stage larger).
ref_bytes=$(stat -c %s "$T/ref.h5")
scale() { local out="" s; for s in "$@"; do out+=" $(( (s * ref_bytes + 35682) / 35683 ))"; done; echo $out; }
# The smallest size (KiB) at which the run completes, by bisection between
# a size that fails and one that fits: the interesting failures (after the
# journal, caught by the read-back) lie just below it.
boundary() {
  local io=$1 lo=$2 hi=$3 mid
  while [ $((hi - lo)) -gt 2 ]; do
    mid=$(( (lo + hi) / 2 ))
    mount -t tmpfs -o "size=${mid}k" tmpfs "$M"
    run "$io" "$study" -o "$M/out.h5"
    umount "$M"
    if [ "$RC" -eq 0 ]; then hi=$mid; else lo=$mid; fi
  done
  echo "$hi"
}
passes=${KCS_DISKFULL_PASSES:-ompio ompio:noreserve reduce}
for pass in $passes; do
  case "$pass" in ompio|romio321|ompio:noreserve) ;; reduce) continue ;; *) fail "unknown pass $pass" ;; esac
  io=${pass%%:*}
  export KCS_TEST_NO_RESERVE=0
  [ "$pass" = ompio:noreserve ] && KCS_TEST_NO_RESERVE=1
  b=$(boundary "$io" "$(scale 4)" "$(scale 400)")
  echo "$pass: completes from ${b}k"
  sizes="$(scale 4 36) $((b / 2)) $((b - 24)) $((b - 12)) $((b - 6)) $((b - 2)) $b $((b + 40))"
  [ "$pass" = ompio:noreserve ] && sizes="$((b - 16)) $((b - 8)) $((b - 4)) $((b - 2)) $b"
  for kib in $sizes; do
    mount -t tmpfs -o "size=${kib}k" tmpfs "$M"
    out="$M/out.h5"
    run "$io" "$study" -o "$out"; rc=$RC
    if [ "$rc" -eq 0 ]; then
      "$PYTHON" "$KCS_SRC/tests/integration/same_dataset.py" "$T/ref.h5" "$out" ||
        fail "$pass ${kib}k: exit 0 with a dataset unlike the uninterrupted one"
      [ ! -e "$out.journal" ] && [ ! -e "$out.partial" ] || fail "$pass ${kib}k: leftovers after success"
      seen[$pass.ok]=1
      echo "$pass ${kib}k: exit 0, complete and equal"
    else
      [ "$rc" -eq 1 ] || { cat "$T/log" >&2; fail "$pass ${kib}k: exit $rc on a full disk (expected 1)"; }
      [ ! -e "$out" ] || fail "$pass ${kib}k: failed run left $out in place"
      why=$(grep -m1 "kcs run: " "$T/log") || { cat "$T/log" >&2; fail "$pass ${kib}k: no reason given"; }
      case "$why" in *"read back"*|*"does not open"*|*truncated*) seen[$pass.verify]=1 ;; esac
      mount -o remount,size=4m "$M"
      if ls "$out.journal"/rank-*.kj > /dev/null 2>&1; then
        run "$io" --resume "$out"; rc2=$RC; how=resume; seen[$pass.resume]=1
      else
        run "$io" "$study" -o "$out"; rc2=$RC; how=rerun; seen[$io.rerun]=1
      fi
      [ "$rc2" -eq 0 ] || { cat "$T/log" >&2; fail "$pass ${kib}k: $how after freeing space exited $rc2"; }
      "$PYTHON" "$KCS_SRC/tests/integration/same_dataset.py" "$T/ref.h5" "$out" ||
        fail "$pass ${kib}k: $how gave a dataset unlike the uninterrupted one"
      echo "$pass ${kib}k: exit 1 (${why:0:110}), $how completed"
    fi
    umount "$M"
  done
  [ -n "${seen[$pass.ok]:-}" ] || fail "$pass: no size was large enough; widen the sweep"
  [ -n "${seen[$pass.resume]:-}" ] || fail "$pass: no failure after journaling; the sweep misses that stage"
  [ "$pass" != ompio:noreserve ] || [ -n "${seen[$pass.verify]:-}" ] ||
    fail "$pass: no failure was caught by the read-back check"
done
case " $passes " in *" reduce "*) ;; *) echo "diskfull ($passes): ok"; exit 0 ;; esac
# kcs reduce on a full disk: the dataset is only ever read, so it stays
# byte for byte as it was whatever happens; the report directory (on the
# full disk) is either the earlier complete report, untouched, or the new
# complete one -- never a partial one under its name, and no partial copy
# (REPORT_DIR.partial-<pid>) is left behind.
mount -t tmpfs -o size=8m tmpfs "$M"
cp "$T/ref.h5" "$M/d.h5"
cp "$M/d.h5" "$T/before.h5"
"$KCS" reduce "$M/d.h5" -o "$M/r1" --no-plots -q || fail "reduce with space failed"
cp -r "$M/r1" "$T/r1-before"
seen_fail=0 seen_ok=0
for kib in 4 64 256 512 1024 2048 5000; do
  rm -f "$M/fill"
  avail=$(df -k --output=avail "$M" | tail -1)
  [ "$avail" -gt "$kib" ] && dd if=/dev/zero of="$M/fill" bs=1k count=$((avail - kib)) 2> /dev/null
  set +e; timeout 60 "$KCS" reduce "$M/d.h5" -o "$M/r1" --no-plots -q 2> "$T/rlog"; r=$?; set -e
  [ "$r" -ne 124 ] || fail "reduce hung on a full disk"
  cmp -s "$M/d.h5" "$T/before.h5" || fail "reduce ${kib}k: exit $r and the dataset changed"
  ! ls -d "$M"/r1.partial-* > /dev/null 2>&1 || fail "reduce ${kib}k: left its partial report"
  if [ "$r" -eq 0 ]; then
    "$PYTHON" -c 'import sys,h5py; f=h5py.File(sys.argv[1],"r"); f["analysis/verdicts"][:]' "$M/r1/analysis.h5" ||
      fail "reduce ${kib}k: exit 0 but its analysis.h5 does not read"
    [ -s "$M/r1/report.md" ] || fail "reduce ${kib}k: exit 0 without report.md"
    seen_ok=1
    rm -f "$M/fill"
    rm -rf "$T/r1-before"
    cp -r "$M/r1" "$T/r1-before" # what the next failure must leave
  else
    [ "$r" -eq 1 ] || fail "reduce ${kib}k: exit $r on a full disk: $(cat "$T/rlog")"
    diff -r "$M/r1" "$T/r1-before" > /dev/null || fail "reduce ${kib}k: failed and changed the earlier report"
    seen_fail=1
  fi
  echo "reduce with ${kib}k free: exit $r"
done
umount "$M"
[ "$seen_fail" -eq 1 ] && [ "$seen_ok" -eq 1 ] || fail "reduce sweep did not see both outcomes"
echo "diskfull: ok"
