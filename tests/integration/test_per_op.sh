#!/usr/bin/env bash
# Per-op preconditions (precondition.per_op, issue 14): C-PRC-02 binds
# layernorm only for fp32 inputs with k <= 512 and at least 8 rows, and softmax over its whole
# range. `kcs grade --shape` runs a shape for the ops that admit it and
# refuses one that no graded op admits (exit 2, naming the per-op range);
# a study case of layernorm past its range or in bf16 is refused at its
# file:line:col, the same case for softmax is not; lint's normal form keeps
# the narrowing.
source "$(dirname "$0")/lib.sh"
C="$KCS_SRC/contracts"

"$KCS" lint "$C/C-PRC-02.yaml" > "$T/n.yaml" || fail "lint C-PRC-02"
grep -qx '  per_op: {layernorm: {dtype_in: \[fp32\], shape: {m: \[8, 1073741824\], k: \[2, 512\]}}}' "$T/n.yaml" \
  || { cat "$T/n.yaml"; fail "normal form lacks per_op"; }

# grade --shape 4x1x2048: softmax only (layernorm's range ends at 512)
"$KCS" grade --backend cpu C-PRC-02 --shape 4x1x2048 --json > "$T/g.json" 2> "$T/g.err" \
  || { cat "$T/g.json" "$T/g.err"; fail "grade --shape 4x1x2048"; }
"$PYTHON" - "$T/g.json" <<'PY' || fail "grade --shape 4x1x2048: not softmax alone"
import json, sys
rows = json.load(open(sys.argv[1]))["contracts"]
r = [x for x in rows if x["id"] == "C-PRC-02"]
assert len(r) == 1 and r[0]["verdict"] == "PASS", r
assert r[0]["ops"] == ["softmax"], r[0]["ops"]
PY
# ... --ops layernorm at k = 2048: no graded op admits it
rc=0
"$KCS" grade --backend cpu C-PRC-02 --ops layernorm --shape 8x1x2048 > "$T/o.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/o.txt"; fail "grade layernorm at k = 2048: exit $rc, expected 2"; }
grep -q "dimension k = 2048 is outside the precondition's range \[2, 512\] of C-PRC-02 for layernorm (precondition.per_op.layernorm.shape.k)" "$T/o.txt" \
  || { cat "$T/o.txt"; fail "grade layernorm at k = 2048: message"; }

# study cases: layernorm at k = 2048 and in bf16 refused; softmax at 2048 admitted
cat > "$T/s.yaml" <<YAML
name: per-op
seed: 1
contracts: [$C/C-PRC-02.yaml]
placement:
  - cpu
cases:
  - { contract: C-PRC-02, op: layernorm, dtype_in: fp32, shapes: [[8, 1, 256], [8, 1, 2048], [4, 1, 256]], inputs: [offset], trials: 1 }
  - { contract: C-PRC-02, op: layernorm, dtype_in: bf16, inputs: [offset], trials: 1 }
  - { contract: C-PRC-02, op: softmax, dtype_in: bf16, shapes: [[4, 1, 2048]], inputs: [large], trials: 1 }
YAML
expect_rc 2 "$T/o.txt" "$KCS" check "$T/s.yaml" # a study outside the per-op precondition
has_rows "$T/o.txt" "study: file:line:field for layernorm at k = 2048" \
  "s.yaml:7:[0-9]+: cases\[0\]\.shapes\[1\]: dimension k = 2048 is outside the precondition's range \[2, 512\] of C-PRC-02 for layernorm"
grep -Eq "s.yaml:7:[0-9]+: cases\[0\]\.shapes\[2\]: dimension m = 4 is outside the precondition's range \[8, 1073741824\] of C-PRC-02 for layernorm \(precondition.per_op.layernorm.shape.m\)" "$T/o.txt" \
  || { cat "$T/o.txt"; fail "study: no file:line:field for layernorm on 4 rows"; }
grep -Eq "s.yaml:8:[0-9]+: cases\[1\]\.dtype_in: dtype_in bf16 is not admitted by C-PRC-02's precondition for layernorm" "$T/o.txt" \
  || { cat "$T/o.txt"; fail "study: no file:line:field for layernorm in bf16"; }
grep -q 'cases\[2\]' "$T/o.txt" && { cat "$T/o.txt"; fail "study: softmax case refused"; }
sed -i -e 's/, \[8, 1, 2048\], \[4, 1, 256\]\], inputs: \[offset\]/], inputs: [offset]/' -e '/op: layernorm, dtype_in: bf16/d' "$T/s.yaml"
"$KCS" check "$T/s.yaml" > "$T/o.txt" 2>&1 || { cat "$T/o.txt"; fail "study inside the per-op precondition refused"; }
echo "per-op preconditions: lint, grade --shape and study cases enforce precondition.per_op"
