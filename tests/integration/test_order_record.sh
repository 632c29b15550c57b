# record_order: true (docs/order.md): a 2-rank study (cpu native, cpu own
# pairwise) writes every rank's summation trees into /provenance/order, the
# own rank's tree is the pairwise tree of acc.c (h = n / 2), the reducer's
# report shows both and names the ranks that summed differently, with the
# reducer's schedule-variant signature of each; without the
# option there is no /provenance/order; a bad value exits 2 naming it.
source "$(dirname "$0")/lib.sh"
{
  study_head order-rec 5 "" C-PRC-01
  own_ranks pairwise/fp32
  echo "record_order: true"
  echo "cases:"
  echo "  - { contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[8, 8, 64]], inputs: [normal], trials: 1 }"
} > "$T/s.yaml"
expect_rc 0 "$T/run.txt" "$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/out.h5"
"$PYTHON" - "$T/out.h5" <<'PY' || fail "/provenance/order"
import h5py, json, sys
recs = json.loads(h5py.File(sys.argv[1])["provenance/order"][()].decode())
assert [r["rank"] for r in recs] == [0, 1], recs
def pairwise(lo, n):
    if n == 1: return str(lo)
    h = n // 2
    return "(" + pairwise(lo, h) + "," + pairwise(lo + h, n - h) + ")"
own = recs[1]
assert own["variant"] == "own" and own["schedule"] == "pairwise", own
p = own["probes"][0]
assert (p["op"], p["k"], p["m"], p["n"]) == ("gemm", 64, 8, 8), p
assert len(p["trees"]) == 1 and sorted(p["trees"][0]["outputs"]) == list(range(64)), p["trees"]
assert p["trees"][0]["tree"] == pairwise(0, 64), p["trees"][0]["tree"]
nat = recs[0]["probes"][0]
assert "trees" in nat and nat["trees"][0]["tree"] != p["trees"][0]["tree"]
print("rank 1 pairwise tree recovered; rank 0 (OpenBLAS):", len(nat["trees"]), "tree(s)")
PY
expect_rc 0 "$T/red.txt" "$KCS" reduce --no-plots "$T/out.h5" -o "$T/rep"
has_rows "$T/rep/report.md" "report" "^## Summation orders" "^\| 0 \| cpu native \| gemm fp32 k 64 \(8x8\) \| [0-9]+ \|" \
  "^\| 1 \| cpu own pairwise \| gemm fp32 k 64 \(8x8\) \| 1 \| pairwise \`\(\(\(\(\(\(0,1\),\(2,3\)\)" \
  "^- gemm fp32 k 64 \(8x8\): rank 0 \[schedule-variant in [0-9]+ cases\] \(cpu native\) in .*; rank 1 \[schedule-variant in [0-9]+ cases\] \(cpu own pairwise\) in pairwise \`"
# without the option: no /provenance/order, no section
grep -v record_order "$T/s.yaml" > "$T/plain.yaml"
expect_rc 0 "$T/run.txt" "$MPIEXEC" -n 2 --allow-run-as-root --oversubscribe "$KCS" run "$T/plain.yaml" -o "$T/plain.h5"
"$PYTHON" -c "import h5py, sys; assert 'order' not in h5py.File(sys.argv[1])['provenance']" "$T/plain.h5" ||
  fail "/provenance/order without record_order"
expect_rc 0 "$T/red.txt" "$KCS" reduce --no-plots "$T/plain.h5" -o "$T/rep2"
! grep -q "Summation orders" "$T/rep2/report.md" || fail "an order section without record_order"
sed 's/record_order: true/record_order: maybe/' "$T/s.yaml" > "$T/bad.yaml"
expect_rc 2 "$T/bad.txt" "$KCS" check "$T/bad.yaml"
has_rows "$T/bad.txt" "bad value" "bad.yaml:[0-9]+:[0-9]+: .*record_order"
echo "order_record: ok"
