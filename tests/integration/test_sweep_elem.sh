#!/usr/bin/env bash
# kcs calibrate --sweep C-PRC-05 (src/calibrate/calib_sweep_elem.c) at
# small sizes: rows for every conforming kernel at every point (k = 1, 4,
# ... 256 elements per row; below 64, rows enough for 64 values per call)
# and admitted dtype, none flagged; every bad kernel of the catalogue
# (backends/cpu/defect_exp.c) flagged in every trial where its defect
# showed, at every point; /calibration_sweep has the rows.
source "$(dirname "$0")/lib.sh"

set +e
"$KCS" calibrate --sweep C-PRC-05 --trials 8 --max-k 256 -o "$T/sweep.h5" \
  > "$T/sweep.txt" 2> "$T/sweep.err"
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$T/sweep.txt" "$T/sweep.err"; fail "sweep: exit $rc (3: a bad kernel missed)"; }
grep -q 'FALSE ALARM' "$T/sweep.txt" && { grep 'FALSE ALARM' "$T/sweep.txt"; fail "false alarm"; }

rows() { # KERNEL CLASS -> "DTYPE K FLAGGED/TRIALS INERT" per row
  awk -v kern="$1" -v cl="$2" '$1 == "C-PRC-05" && $2 == "elementwise" && $3 == kern &&
                                $4 == cl { print $5, $7, $8, $9 }' "$T/sweep.txt"
}

for kern in native own calib:C-PRC-05:good exp:cr exp:cephes exp:ulp3; do
  r=$(rows "$kern" conforming)
  # 5 points x 3 dtypes, each with 8 trials and none flagged
  [ "$(echo "$r" | awk '$3 == "0/8"' | wc -l)" = 15 ] \
    || { echo "$r"; fail "conforming $kern: not 15 unflagged rows of 8 trials"; }
done
[ "$(rows native conforming | awk '$1 == "fp32" { print $2 }' | tr '\n' ' ')" = "1 4 16 64 256 " ] \
  || fail "points are not k = 1, 4, 16, 64, 256"
[ "$(rows native conforming | awk '{ print $1 }' | sort -u | tr '\n' ' ')" = "bf16 fp16 fp32 " ] \
  || fail "not every admitted dtype_in"

for kern in calib:C-PRC-05:bad defect:exp-fast defect:exp-poly4 defect:exp-bf16 defect:exp-fp16 \
            defect:exp-ftz defect:exp-satmax defect:exp-ovfnan defect:exp-log2e32; do
  r=$(rows "$kern" bad)
  [ "$(echo "$r" | wc -l)" = 15 ] || { echo "$r"; fail "$kern: not 15 rows"; }
  echo "$r" | awk '{ split($3, a, "/"); if (a[1] != a[2]) exit 1; t += a[2] } END { exit !(t > 0) }' \
    || { echo "$r"; fail "$kern: not flagged in every counted trial"; }
done
# the points below 64 elements hold 64 values per call (m = 64/k rows)
awk '$1 == "C-PRC-05" && $3 == "native" && $5 == "fp32" { print $NF }' "$T/sweep.txt" | tr '\n' ' ' \
  | grep -qx '64x1x1 16x1x4 4x1x16 1x1x64 1x1x256 ' || { cat "$T/sweep.txt"; fail "point shapes"; }
# the narrow results differ from expf on nearly every argument: never inert
rows defect:exp-bf16 bad | awk '$4 != 0 { exit 1 }' || fail "exp-bf16: inert trials"

[ -s "$T/sweep.h5" ] || fail "no HDF5 file"
if command -v h5dump > /dev/null; then
  h5dump -d /calibration_sweep "$T/sweep.h5" > "$T/dump.txt"
  grep -q '"elementwise"' "$T/dump.txt" || fail "no elementwise rows in HDF5"
fi
echo "sweep_elem: ok"
