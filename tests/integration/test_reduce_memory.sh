#!/usr/bin/env bash
# kcs reduce streams datasets case by case: its peak memory (maximum
# resident set size, /usr/bin/time -v) must not grow with the dataset.
# Synthetic datasets of 48 and 192 MiB (test_reduce_memory --write, same
# shapes, 4x the cases); KCS_REDUCE_MEM_MIB=1024 measures a 1 GiB one.
source "$(dirname "$0")/lib.sh"
gen="${KCS_BUILD:-$(dirname "$KCS")}/tests/test_reduce_memory"
[ -x "$gen" ] || fail "generator $gen not built"
[ -x /usr/bin/time ] || { echo "reduce_memory: skipped (no /usr/bin/time)"; exit 0; }
big="${KCS_REDUCE_MEM_MIB:-192}"
rss() { # dataset -> max RSS in KiB of kcs reduce on it
  /usr/bin/time -v "$KCS" reduce "$1" -o "$1.rep" -q --no-plots 2> "$1.time" ||
    fail "kcs reduce $1 failed: $(tail -3 "$1.time")"
  awk -F': ' '/Maximum resident set size/ {print $2}' "$1.time"
}
"$gen" --write "$T/small.h5" 48 > /dev/null
"$gen" --write "$T/big.h5" "$big" > /dev/null
s_small=$(stat -c %s "$T/small.h5"); s_big=$(stat -c %s "$T/big.h5")
r_small=$(rss "$T/small.h5"); r_big=$(rss "$T/big.h5")
echo "dataset $((s_small / 1048576)) MiB: max RSS $((r_small / 1024)) MiB"
echo "dataset $((s_big / 1048576)) MiB: max RSS $((r_big / 1024)) MiB"
# 4x the data may cost a few MiB more (HDF5 metadata cache, per-case
# tables of O(cases) records), never a fraction of the data
[ "$r_big" -lt $((r_small + 8 * 1024)) ] || fail "peak memory grew from $r_small to $r_big KiB"
# The process's own footprint (vendor runtimes such as cuBLAS are mapped at
# load time: ~200 MiB in a build with every backend) is not the reducer's:
# measure it with a command that reads nothing, and bound what is above it.
/usr/bin/time -v "$KCS" version > /dev/null 2> "$T/base.time"
r_base=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/base.time")
echo "kcs version alone: max RSS $((r_base / 1024)) MiB"
[ $((r_big - r_base)) -lt $((s_big / 1024 / 4)) ] ||
  fail "peak memory $r_big KiB ($r_base KiB without data) is not small against $s_big B"
grep -q "Divergence baselines" "$T/big.h5.rep/report.md" || fail "no report for the big dataset"
echo "reduce_memory: ok"
