#!/usr/bin/env bash
# kcs calibrate --sweep on gemm contracts (src/calibrate/calib_sweep.c),
# small: C-PRC-01, C-ORD-01 and C-CMP-03 to k = 4096, 2 trials per point;
# the table, /calibration_sweep and the power figure. (The long shapes of
# issue 14 are test_grade_power's; this part also runs under the sanitizers.)
source "$(dirname "$0")/lib.sh"
# kcs calibrate --sweep, small: no false alarm of any conforming kernel, and the
# catalogue's bf16, fp16 and 14-bit accumulators detected at every point
set +e
"$KCS" calibrate --sweep C-PRC-01 C-ORD-01 C-CMP-03 --trials 2 --max-k 4096 -o "$T/sweep.h5" \
  > "$T/sweep.txt" 2>&1
src=$?
set -e
grep -q '^C-PRC-01  gemm ' "$T/sweep.txt" || { cat "$T/sweep.txt"; fail "sweep: no PRC-01 rows"; }
grep -q 'FALSE ALARM' "$T/sweep.txt" && { grep 'FALSE ALARM' "$T/sweep.txt"; fail "sweep: false alarm"; }
grep -E ' own (bf16|fp16|bits:14) ' "$T/sweep.txt" | grep -q MISSED \
  && { grep MISSED "$T/sweep.txt"; fail "sweep: narrow accumulator missed"; }
[ "$src" -eq 0 ] || { grep -E "MISSED|FALSE" "$T/sweep.txt"; fail "sweep: exit $src (a miss or a false alarm)"; }
grep -q 'INERT' "$T/sweep.txt" || fail "sweep: no INERT column"
grep -qE '^kcs: sweep points ([0-9]+)/\1 \(100%\)' "$T/sweep.txt" || fail "sweep: no last progress line"
# progress in a batch log is counted within a point too, kernel by kernel (a
# long point runs for hours): on a sweep of 3 points (k = 64, three dtypes),
# a line per 5 % is a line every few kernels (C-PRC-01's narrow-output
# states add their own points: count the total from the last line)
"$KCS" calibrate --sweep C-PRC-01 --trials 1 --min-k 64 --max-k 64 > "$T/p.txt" 2> "$T/p.err" ||
  fail "sweep at k = 64 failed: $(cat "$T/p.err")"
np=$(sed -nE 's#^kcs: sweep points ([0-9]+)/\1 \(100%\).*#\1#p' "$T/p.err" | tail -1)
[ -n "$np" ] && [ "$np" -ge 3 ] || fail "sweep: no last progress line at k = 64: $(cat "$T/p.err")"
[ "$(grep -cE "^kcs: sweep points [0-9]+\.[0-9]/$np \([0-9]+%\), elapsed" "$T/p.err")" -ge 6 ] ||
  fail "sweep: no progress within points: $(cat "$T/p.err")"
# at k = 1 a 16-bit accumulator holds a bf16 x bf16 product exactly: its
# output is a conforming kernel's, so its trials are inert, not missed
awk '$1 == "C-PRC-01" && $4 == "bits:16" && $7 == "bf16" && $9 == 1 && $10 == "0/0" && $11 == 2' \
  "$T/sweep.txt" | grep -q . || { grep 'bits:16' "$T/sweep.txt" | head -3; fail "sweep: k=1 bits:16 not inert"; }
[ -s "$T/sweep.h5" ] || fail "sweep: no HDF5 file"
if command -v h5dump > /dev/null; then
  h5dump -H "$T/sweep.h5" | grep -q calibration_sweep || fail "sweep: no /calibration_sweep"
fi
# the power figure (scripts/plot-sweep) draws from it
if "$PYTHON" -c 'import h5py, matplotlib' 2> /dev/null; then
  "$PYTHON" "$KCS_SRC/scripts/plot-sweep" "$T/sweep.png" "$T/sweep.h5" > /dev/null ||
    fail "plot-sweep failed"
  [ -s "$T/sweep.png" ] || fail "plot-sweep wrote no figure"
  # its merge of runs of one point: counts summed, and its Clopper-Pearson
  # interval the same as the sweep's own (calib_sweep.c) on every row
  "$PYTHON" - "$KCS_SRC/scripts/plot-sweep" "$T/sweep.h5" > "$T/merge.txt" 2>&1 <<'PY' ||
import sys
from importlib.machinery import SourceFileLoader
ps = SourceFileLoader("plot_sweep", sys.argv[1]).load_module()
one = ps.load([sys.argv[2]])
two = {tuple(r[c] for c in ps.KEY): r for r in ps.load([sys.argv[2], sys.argv[2]])}
bad = 0
for r in one:
    t = two[tuple(r[c] for c in ps.KEY)]
    if (t["trials"], t["flagged"], t["inert"]) != (2 * r["trials"], 2 * r["flagged"], 2 * r["inert"]):
        bad += 1
    if r["trials"] > 0:
        lo, hi = ps.clopper_pearson(int(r["flagged"]), int(r["trials"]))
        if abs(lo - r["ci_lo"]) > 1e-6 or abs(hi - r["ci_hi"]) > 1e-6:
            print("interval", r["kernel"], r["k"], (lo, hi), (r["ci_lo"], r["ci_hi"]))
            bad += 1
print(len(one), "rows,", bad, "wrong")
sys.exit(bad != 0 or len(one) < 10)
PY
    fail "plot-sweep merge: $(tail -5 "$T/merge.txt")"
fi
echo "sweep_gemm: ok"
