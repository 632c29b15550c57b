#!/usr/bin/env bash
# kcs bench freivalds / metrics / hdf5 / study at tiny sizes: exit 0, the table has the
# rows the options ask for with positive finite numbers, nothing is left in
# the output directory, --help works and bad options exit 2.
source "$(dirname "$0")/lib.sh"
mpirun2() { "$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$@"; }
D="$T/d"
mkdir -p "$D"

# $1: file; $2: first field of the table's header line; $3: first numeric
# field, counted from the end (NF-$3+1 .. NF are numbers or "-"). Prints the
# number of data rows after the header, up to a blank line; fails on a bad
# number.
rows() {
  awk -v h="$2" -v k="$3" '
    $1 == h && !done { on = 1; next }
    on && !NF { on = 0; done = 1 }
    on && NF {
      n++
      for (i = NF - k + 1; i <= NF; i++) {
        if ($i == "-") continue
        if ($i !~ /^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$/ || !($i + 0 > 0)) {
          print "bad number \"" $i "\" in: " $0 > "/dev/stderr"; bad = 1
        }
      }
    }
    END { if (bad) exit 1; print n + 0 }' "$1"
}
empty() { [ -z "$(ls -A "$1")" ] || fail "$2 left files behind: $(ls -A "$1")"; }

# --- freivalds: 2 sizes, the floors re-measured before the second -------
"$KCS" bench freivalds --sizes 128,256 --reps 3 --bw-mib 8 > "$T/f.out"
cat "$T/f.out"
grep -q "^machine (this run, so far): read bandwidth" "$T/f.out" || fail "freivalds: no machine line"
grep -q "^machine (fastest seen in this run" "$T/f.out" || fail "freivalds: no final machine line"
for n in 128 256; do
  grep -Eq "^ *$n +10( +[0-9.]+){11} +yes$" "$T/f.out" || fail "freivalds: no passing row for n=$n"
done

# --- metrics: 2 sizes x 2 formats x {metrics, digest} --------------------
"$KCS" bench metrics --sizes 1000,2^12 --formats fp32,bf16 --reps 3 --bw-mib 8 > "$T/m.out"
cat "$T/m.out"
grep -q "^machine (this run): single-thread read bandwidth" "$T/m.out" || fail "metrics: no machine line"
[ "$(rows "$T/m.out" n 5)" -eq 8 ] || fail "metrics: expected 8 rows"
for n in 1000 4096; do
  for f in fp32 bf16; do
    for s in metrics digest; do
      grep -Eq "^ *$n +$f +$s " "$T/m.out" || fail "metrics: no row $n $f $s"
    done
  done
done

# --- hdf5: one process and 2 ranks, rows = cases x ranks x trials ---------
# (Open MPI keeps its session directory under TMPDIR too: elsewhere here)
TMPDIR="$D" OMPI_MCA_orte_tmpdir_base="$T" \
  "$KCS" bench hdf5 --cases 20 --trials 3 --samples 8 --reps 2 > "$T/h1.out"
cat "$T/h1.out"
empty "$D" "bench hdf5 (default dir from TMPDIR)"
mpirun2 "$KCS" bench hdf5 --cases 20 --trials 3 --samples 8 --reps 2 --dir "$D" > "$T/h2.out"
cat "$T/h2.out"
empty "$D" "mpirun -n 2 bench hdf5"
grep -q "20 cases x 1 ranks x 3 trials = 60 rows" "$T/h1.out" || fail "hdf5: 1-rank header"
grep -q "20 cases x 2 ranks x 3 trials = 120 rows" "$T/h2.out" || fail "hdf5: 2-rank header"
for o in "$T/h1.out" "$T/h2.out"; do
  [ "$(rows "$o" writer 5)" -eq 3 ] || fail "hdf5: expected 3 rows in $o"
  for w in "kcs store (parallel HDF5)" "pwrite (floor)" "pwrite+fsync (floor)"; do
    grep -Fq "$w" "$o" || fail "hdf5: no row '$w'"
  done
  # The columns agree, recomputed from the printed values (4 significant
  # digits each: 3e-3 relative slack): best_s <= median_s; rows/s x median_s
  # = the header's rows; MB/s / rows/s (the payload per row) the same for
  # every writer; x_store x median_s = the store row's median_s.
  awk '
    function near(a, b) { return a - b <= 3e-3 * b && b - a <= 3e-3 * b }
    function bad(why) { print "hdf5 table: " why > "/dev/stderr"; err = 1 }
    /^kcs bench hdf5:/ { for (i = 2; i <= NF; i++) if ($i == "rows") { rows = $(i - 1); break } }
    /^kcs store|^pwrite/ {
      n++; w[n] = $1; med[n] = $(NF - 4); best[n] = $(NF - 3); rps[n] = $(NF - 2)
      mbs[n] = $(NF - 1); x[n] = $NF
    }
    END {
      if (n != 3 || w[1] != "kcs" || !(rows > 0)) bad("expected the store row first, 3 rows, a row count")
      for (i = 1; i <= n; i++) {
        if (!(best[i] <= med[i])) bad(w[i] ": best_s above median_s")
        if (!near(rps[i] * med[i], rows)) bad(w[i] ": rows/s x median_s is not " rows)
        if (!near(mbs[i] / rps[i], mbs[1] / rps[1])) bad(w[i] ": another payload per row")
        if (!near(x[i] * med[i], med[1])) bad(w[i] ": x_store is not store median / median")
      }
      exit err
    }' "$o" || fail "hdf5: the table's columns disagree in $o"
done

# --- study: tests/studies/small.yaml = 2 shapes x 2 inputs, 2 trials -----
"$KCS" bench study "$KCS_SRC/tests/studies/small.yaml" --reps 2 --dir "$D" > "$T/s.out"
cat "$T/s.out"
empty "$D" "bench study"
grep -q "(study small), 4 cases, 8 trials over 1 ranks" "$T/s.out" || fail "study: header"
[ "$(rows "$T/s.out" stage 5)" -eq 4 ] || fail "study: expected 4 rows"
awk '/^end to end/ { e = ($NF + 0 == 1) } /^kernel calls/ { k = ($NF + 0 <= 1) }
     END { exit !(e && k) }' "$T/s.out" || fail "study: /e2e column (e2e 1, kernels <= 1)"
# where time goes: the 8 stages and "other", each with seconds, a share and CPU seconds;
# the shares of one rank add up to about 1 (medians of parts and of the whole)
grep -q "^where time goes" "$T/s.out" || fail "study: no stage table"
awk '/^stage  *rank 0/ { on = 1; next } on && NF == 4 { n++; s += $3; if ($3 < -0.05) bad = 1 }
     END { exit !(n == 9 && !bad && s > 0.8 && s < 1.2) }' "$T/s.out" \
  || fail "study: stage shares (9 rows, non-negative, summing to ~1)"
# kcs vs the numpy script, side by side (where the interpreter has numpy)
if /usr/bin/python3 -c "import numpy" 2> /dev/null; then
  "$KCS" bench study "$KCS_SRC/tests/studies/small.yaml" --reps 1 --dir "$D" \
    --numpy "$KCS_SRC/scripts/bench_study_numpy.py" > "$T/s2.out"
  cat "$T/s2.out"
  empty "$D" "bench study --numpy"
  grep -Eq "^numpy \(.*gemm fp32 cases.*kcs end to end / numpy = [0-9.e+-]+$" "$T/s2.out" \
    || fail "study: no numpy comparison"
fi

# --- help and bad options ---------------------------------------------------
for b in metrics hdf5 study; do
  "$KCS" bench "$b" --help | grep -q "^usage: kcs bench $b" || fail "bench $b --help"
done
bad() {
  set +e
  "$@" > "$T/bad.out" 2> "$T/bad.err"; local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'${*:2}' exited $rc, expected 2"
  [ -s "$T/bad.err" ] || fail "'${*:2}' printed no error"
}
bad "$KCS" bench metrics --nope
bad "$KCS" bench metrics --sizes 12,x
bad "$KCS" bench metrics --formats fp7
bad "$KCS" bench hdf5 --trials 0
bad "$KCS" bench hdf5 --dir "$T/missing"
bad "$KCS" bench study --reps many
bad "$KCS" bench study a.yaml b.yaml
bad "$KCS" bench study "$T/missing.yaml" --reps 1 --dir "$D"
bad "$KCS" bench nosuch
empty "$D" "the failing runs"
echo "bench: ok"
