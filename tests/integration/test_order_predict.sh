# kcs exec gemm --order (docs/order.md): OpenBLAS sgemm's output bits
# predicted from the trees `kcs probe --order` recovered, at three shapes
# (8x8x64: the micro-kernel's tile, 20x20x512: tile and edge outputs with
# different trees, 1x1x4096: k split into panels), bit for bit on random
# fp32 inputs; the same inputs predicted from another tree (pairwise) must
# differ, or the comparison could not fail. Bad trees files exit 2 naming
# the field.
source "$(dirname "$0")/lib.sh"
"$PYTHON" - "$T" <<'PY'
import numpy as np, sys
rng = np.random.default_rng(45)
for (m, n, k) in [(8, 8, 64), (20, 20, 512), (1, 1, 4096)]:
    rng.standard_normal((m, k)).astype(np.float32).astype(np.float64).tofile(f"{sys.argv[1]}/A{m}x{n}x{k}")
    rng.standard_normal((k, n)).astype(np.float32).astype(np.float64).tofile(f"{sys.argv[1]}/B{m}x{n}x{k}")
PY
for shape in "8 8 64" "20 20 512" "1 1 4096"; do
  set -- $shape
  s="$1x$2x$3"
  dims=(-m $1 -n $2 -k $3)
  expect_rc 0 "$T/probe.txt" "$KCS" probe --order --op gemm "${dims[@]}" --json
  grep '^{' -A100000 "$T/probe.txt" > "$T/trees$s.json"
  expect_rc 0 "$T/pw.txt" "$KCS" probe --order --op gemm "${dims[@]}" --variant own --schedule pairwise --json
  grep '^{' -A100000 "$T/pw.txt" > "$T/pairwise$s.json"
  expect_rc 0 "$T/o.txt" "$KCS" exec gemm "${dims[@]}" --a "$T/A$s" --b "$T/B$s" --out "$T/native$s"
  expect_rc 0 "$T/o.txt" "$KCS" exec gemm "${dims[@]}" --a "$T/A$s" --b "$T/B$s" --out "$T/pred$s" --order "$T/trees$s.json"
  expect_rc 0 "$T/o.txt" "$KCS" exec gemm "${dims[@]}" --a "$T/A$s" --b "$T/B$s" --out "$T/wrong$s" --order "$T/pairwise$s.json"
  "$PYTHON" - "$T" "$s" <<'PY' || fail "prediction at $s"
import json, numpy as np, sys
T, s = sys.argv[1], sys.argv[2]
nat, pred, wrong = (np.fromfile(f"{T}/{w}{s}").view(np.uint64) for w in ("native", "pred", "wrong"))
trees = json.load(open(f"{T}/trees{s}.json"))["trees"]
assert nat.size == pred.size > 0
same = int((nat == pred).sum())
diff_wrong = int((nat != wrong).sum())
print(f"{s}: {len(trees)} tree(s); predicted {same}/{nat.size} outputs bit for bit; "
      f"the pairwise tree misses {diff_wrong}")
assert same == nat.size, "prediction differs from OpenBLAS"
assert diff_wrong > 0, "a wrong tree predicts the same bits: the comparison cannot fail"
PY
done
# a trees file of another shape, or broken, is refused naming what is wrong
expect_rc 2 "$T/o.txt" "$KCS" exec gemm -m 16 -n 16 -k 32 --a "$T/A8x8x64" --b "$T/B8x8x64" --out "$T/x" --order "$T/trees8x8x64.json"
has_rows "$T/o.txt" "shape" "trees of gemm k 64 m 8 n 8; this call is gemm k 32 m 16 n 16"
sed 's/"tree": "/"tree": "(/' "$T/trees8x8x64.json" > "$T/bad.json"
expect_rc 2 "$T/o.txt" "$KCS" exec gemm -m 8 -n 8 -k 64 --a "$T/A8x8x64" --b "$T/B8x8x64" --out "$T/x" --order "$T/bad.json"
has_rows "$T/o.txt" "bad tree" "trees\[0\]\.tree: order tree, offset"
expect_rc 2 "$T/o.txt" "$KCS" exec gemm -m 8 -n 8 -k 64 --a "$T/A8x8x64" --b "$T/B8x8x64" --out "$T/x" --order "$T/A8x8x64"
has_rows "$T/o.txt" "not json" "field \"op\""
[ ! -e "$T/x" ] || fail "a refused prediction wrote its output"
# the command line: the text form, and bad flags exit 2 with the reason
expect_rc 0 "$T/o.txt" "$KCS" probe --order --op gemm -k 4 --variant own --schedule sequential
has_rows "$T/o.txt" "text" "^kcs probe --order: gemm on cpu \(sequential\), fp32, k 4, 1x1 outputs: [0-9]+ calls" "^\(\(\(0,1\),2\),3\)$"
bad() { # REGEX ARGS...
  local re=$1
  shift
  expect_rc 2 "$T/o.txt" "$KCS" probe "$@"
  has_rows "$T/o.txt" "probe $*" "$re"
}
bad "needs --op" --order -k 8
bad "unknown op 'foo'" --order --op foo -k 8
bad "needs -k K" --order --op gemm
bad "needs --variant own" --order --op gemm -k 8 --schedule pairwise
bad "sum only positive terms" --order --op softmax -k 8
bad "allreduce needs >= 2 ranks" --order --op allreduce -k 8
bad "belong to --order" --op gemm -k 8
echo "order_predict: ok"
