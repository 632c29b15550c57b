# The ordering contracts' violations and the reducer's signatures name the
# summation orders (docs/order.md, "Orders in violations"): a 3-rank study
# (cpu native, cpu own splitk:4, cpu own atomic) with record_order: true on
# C-ORD-02 (gemm, repeated runs) and C-ORD-04 (allreduce over 4
# contributions). The atomic rank draws its order per call and per output
# tile (gemm) or element (allreduce): its violations must name its orders,
# by output position, and say that they change between calls; the splitk
# rank's schedule-variant signature must name blocked:64 = splitk:4. The
# same study without record_order says that the order was not recorded.
source "$(dirname "$0")/lib.sh"
{
  study_head order-names 11 "" C-ORD-02 C-ORD-04
  own_ranks splitk:4/fp32 atomic/fp32
  echo "record_order: true"
  echo "cases:"
  echo "  - { contract: C-ORD-02, op: gemm, dtype_in: fp32, shapes: [[8, 8, 256]], inputs: [spread], trials: 1 }"
  echo "  - { contract: C-ORD-04, op: allreduce, dtype_in: fp32, shapes: [[4, 1, 64]], inputs: [spread], trials: 1 }"
} > "$T/s.yaml"
expect_rc 0 "$T/run.txt" "$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/s.yaml" -o "$T/out.h5"
expect_rc 0 "$T/red.txt" "$KCS" reduce --no-plots "$T/out.h5" -o "$T/rep"
R="$T/rep/report.md"
# the atomic rank's gemm violation: two tiles of 4x16 outputs, each a drawn
# order, other orders at another call
has_rows "$R" "C-ORD-02 violation named" \
  "^- case [0-9]+ \(C-ORD-02, k=256, spread\), rank 2 .*\*\*violation\*\*: run-to-run-reordering" \
  "^  - summation order: rank 2 summed in 2 trees by output position: outputs 0-31 in sequential in the order \([0-9,]+…\) \(hash [0-9a-f]{8}\), outputs 32-63 in sequential in the order \([0-9,]+…\) \(hash [0-9a-f]{8}\), and in 2 trees by output position: .* on another call: its order changes between calls; rank 0 in .*; rank 1 in blocked:64 = splitk:4 \(probed on 8×8 outputs\)$"
# the allreduce violation: orders over the 4 contributions, per element
has_rows "$R" "C-ORD-04 violation named" \
  "^- case [0-9]+ \(C-ORD-04, k=64, spread\), rank 2 .*\*\*violation\*\*: arrival-order-reduction" \
  "^  - summation order: rank 2 summed the contributions in [2-8] trees by output position: outputs [0-9,-]+ in (sequential|ring order).* on another call: its order changes between calls; .*\(probed on 1×8 outputs\)$"
# the signatures: the splitk rank's schedule-variant orders, named
has_rows "$R" "signature orders" \
  "^- rank 1 \(.*\): schedule-variant in [0-9]+ cases; summed gemm fp32 k 256: blocked:64 = splitk:4; allreduce fp32 k 4: sequential$" \
  "^- rank 2 \(.*\): run-to-run-nondeterministic in 2 cases;.* summed gemm fp32 k 256: 2 trees by output position"
# the splitk tree is the one acc.c prescribes (blocks of 64 in order)
"$PYTHON" - "$T/out.h5" <<'PY' || fail "/provenance/order trees"
import h5py, json, sys
recs = json.loads(h5py.File(sys.argv[1])["provenance/order"][()].decode())
def seq(lo, hi):
    s = str(lo)
    for i in range(lo + 1, hi): s = "(" + s + "," + str(i) + ")"
    return s
t = seq(0, 64)
for b in range(1, 4): t = "(" + t + "," + seq(64 * b, 64 * (b + 1)) + ")"
g = [p for p in recs[1]["probes"] if p["op"] == "gemm"][0]
assert [x["tree"] for x in g["trees"]] == [t], g["trees"][0]["tree"][:80]
a = [p for p in recs[2]["probes"] if p["op"] == "gemm"][0]
assert a.get("call_varies") is True and len(a["other_call"]) == 2, a.keys()
assert "call_varies" not in g
print("splitk:4 tree as acc.c prescribes; atomic varies between calls")
PY
# without record_order: the violation says the order was not recorded
grep -v record_order "$T/s.yaml" > "$T/plain.yaml"
expect_rc 0 "$T/run2.txt" "$MPIEXEC" -n 3 --allow-run-as-root --oversubscribe "$KCS" run "$T/plain.yaml" -o "$T/plain.h5"
expect_rc 0 "$T/red2.txt" "$KCS" reduce --no-plots "$T/plain.h5" -o "$T/rep2"
has_rows "$T/rep2/report.md" "not recorded" \
  "^  - summation order: order not recorded; run with record_order: true$" \
  "^- rank 2 \(.*\): run-to-run-nondeterministic in 2 cases; order not recorded; run with record_order: true$"
echo "order_names: ok"
