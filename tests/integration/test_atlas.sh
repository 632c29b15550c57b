#!/usr/bin/env bash
# scripts/atlas on a one-study grid (KCS_ATLAS_STUDIES): refusals before
# anything runs (a DIR that is not a bundle, a DIR.work that is not an
# atlas work directory or is of another grid, bad --ranks), a stopped run
# keeping DIR.work and the same command continuing from it, the bundle
# checked with `kcs publish --verify`, DIR.work removed after success, and
# an earlier bundle replaced. The grids themselves: studies/atlas/ and
# quick/ match their generator and pass `kcs check`.
source "$(dirname "$0")/lib.sh"
atlas=$KCS_SRC/scripts/atlas
export KCS KCS_SILICON=none
mkdir -p "$T/grid"
{
  study_head atlas-test 46 16 C-PRC-01
  own_ranks pairwise/fp32
  cat <<Y
cases:
  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 16], [8, 8, 64], [8, 8, 256]], inputs: [normal], trials: 2 }
Y
} | sed 's/backend: cpu, variant: native }/backend: cpu, variant: native }  # atlas:native atlas:gpus/' > "$T/grid/one.yaml"
export KCS_ATLAS_STUDIES=$T/grid

# the grids match their generator and check
"$PYTHON" "$KCS_SRC/studies/atlas/generate.py" --check || fail "studies/atlas differ from generate.py"
for f in "$KCS_SRC"/studies/atlas/*.yaml "$KCS_SRC"/studies/atlas/quick/*.yaml; do
  n=$(grep -c '^  - { backend' "$f")
  expect_rc 0 "$T/check.txt" "$KCS" check "$f" -n "$n" -o "$T/x.h5"
  grep -q "^0 problems" "$T/check.txt" || { cat "$T/check.txt"; fail "kcs check $f"; }
done

# refusals: nothing runs, nothing is touched
mkdir -p "$T/mine" && echo keep > "$T/mine/notes.txt"
expect_rc 2 "$T/r1.txt" "$atlas" -o "$T/mine"
grep -q "is not an atlas bundle" "$T/r1.txt" || { cat "$T/r1.txt"; fail "no message for a foreign DIR"; }
[ "$(cat "$T/mine/notes.txt")" = keep ] && [ ! -e "$T/mine.work" ] || fail "a foreign DIR was touched"
mkdir -p "$T/b.work" && echo keep > "$T/b.work/x"
expect_rc 2 "$T/r2.txt" "$atlas" -o "$T/b"
grep -q "not an atlas work directory" "$T/r2.txt" || { cat "$T/r2.txt"; fail "no message for a foreign DIR.work"; }
[ "$(cat "$T/b.work/x")" = keep ] || fail "a foreign DIR.work was touched"
expect_rc 2 "$T/r3.txt" "$atlas" --ranks 0 -o "$T/c"
expect_rc 2 "$T/r4.txt" "$atlas" --bogus -o "$T/c"
[ ! -e "$T/c" ] && [ ! -e "$T/c.work" ] || fail "a refused run left files"

# a run that stops keeps DIR.work; the same command continues from it
KCS_SILICON=$T/no-such-run expect_rc 1 "$T/s1.txt" "$atlas" -o "$T/a"
grep -q "work files kept in $T/a.work" "$T/s1.txt" || { cat "$T/s1.txt"; fail "the kept work directory is not named"; }
[ -f "$T/a.work/data/one.h5" ] && [ ! -e "$T/a" ] || fail "after the failed publish: dataset kept, no bundle"
expect_rc 0 "$T/s2.txt" "$atlas" -o "$T/a"
grep -q "one: done in an earlier run" "$T/s2.txt" || { cat "$T/s2.txt"; fail "the study ran again"; }
[ ! -e "$T/a.work" ] || fail "DIR.work left after success"
expect_rc 0 "$T/v.txt" "$KCS" publish --verify "$T/a"
# another grid's work directory is refused
mkdir -p "$T/q.work" && echo "grid quick" > "$T/q.work/ATLAS-WORK"
expect_rc 2 "$T/r5.txt" "$atlas" -o "$T/q"
grep -q "holds a run of another grid" "$T/r5.txt" || { cat "$T/r5.txt"; fail "no message for another grid"; }
# an earlier bundle is replaced
expect_rc 0 "$T/s3.txt" "$atlas" -o "$T/a"
expect_rc 0 "$T/v2.txt" "$KCS" publish --verify "$T/a"
echo "atlas: ok"
