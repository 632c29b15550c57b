#!/usr/bin/env bash
# kcs lint on the contract suite (a folder per contract, contracts/<ID>/<ID>.yaml,
# which the folder and the old path contracts/<ID>.yaml name too): the eighteen contracts are valid, their
# normal form (YAML) lints again to itself and their JSON form parses;
# every malformed contract of tests/contracts_bad is refused with exit 2
# and the diagnostics of its .expect file (file:line:col: field: message).
source "$(dirname "$0")/lib.sh"

n=0
for f in "$KCS_SRC"/contracts/C-*/C-*.yaml; do
  id=$(basename "$f" .yaml)
  "$KCS" lint "$f" > "$T/$id.norm.yaml" 2> "$T/$id.err" || fail "$id: lint failed: $(cat "$T/$id.err")"
  grep -qx "id: $id" "$T/$id.norm.yaml" || fail "$id: normal form lacks 'id: $id'"
  "$KCS" lint "$T/$id.norm.yaml" > "$T/$id.norm2.yaml" || fail "$id: normal form does not lint"
  cmp -s "$T/$id.norm.yaml" "$T/$id.norm2.yaml" || fail "$id: normal form is not a fixed point"
  n=$((n + 1))
done
[ "$n" -eq 18 ] || fail "expected 18 contracts, found $n"
# The folder and the path before folders name the folder's contract.
for f in "$KCS_SRC/contracts/C-PRC-01" "$KCS_SRC/contracts/C-PRC-01/" "$KCS_SRC/contracts/C-PRC-01.yaml"; do
  "$KCS" lint "$f" > "$T/named.yaml" || fail "$f: lint failed"
  cmp -s "$T/named.yaml" "$T/C-PRC-01.norm.yaml" || fail "$f: not C-PRC-01's normal form"
done

# All eighteen in one --json array, with the keys the reference documents.
"$KCS" lint --json "$KCS_SRC"/contracts/C-*/C-*.yaml > "$T/all.json" || fail "lint --json failed"
"$PYTHON" - "$T/all.json" <<'EOF' || fail "lint --json output"
import json, sys
cs = json.load(open(sys.argv[1]))
assert len(cs) == 18, len(cs)
ids = sorted(c["id"] for c in cs)
assert ids[0] == "C-CMP-01" and ids[-1] == "C-PRC-08", ids
for c in cs:
    m = c["measurement"]
    for k in ("shapes", "held_out", "inputs", "trials", "guards", "protocol",
              "repetitions", "attrs", "special", "seed"):
        assert k in m, (c["id"], k)
    t = c["tolerance"]
    assert t["structure"] in ("backward_error", "pointwise_relative", "pointwise_absolute",
                              "ulp", "invariant", "composite"), t
    assert ("all" in t) == (t["structure"] == "composite"), c["id"]
    assert ("quantity" in t) == (t["structure"] == "invariant"), c["id"]
    assert c["signature"], c["id"]
by = {c["id"]: c for c in cs}
assert by["C-ORD-02"]["measurement"]["protocol"] == "repeat"
assert by["C-ORD-02"]["measurement"]["repetitions"] >= 2
assert by["C-ORD-03"]["measurement"]["protocol"] == "batch_invariance"
assert by["C-ORD-03"]["precondition"]["declares"] == ["batch_invariant"]
assert by["C-ORD-04"]["scope"]["ops"] == ["allreduce"]
assert by["C-ORD-04"]["measurement"]["protocol"] == "repeat"
assert len(by["C-ORD-04"]["tolerance"]["all"]) == 3
assert by["C-EXC-02"]["measurement"]["attrs"] == "oob=raise"
assert by["C-EXC-02"]["measurement"]["special"]["oob"] == 0.05
assert len(by["C-CMP-03"]["measurement"]["held_out"]) == 4
assert len(by["C-PRC-02"]["tolerance"]["all"]) == 2
assert by["C-PRC-06"]["precondition"]["declares"] == ["round_to_nearest"]
EOF

# Malformed contracts: exit 2, every expected diagnostic on stderr.
bad=0
for f in "$KCS_SRC"/tests/contracts_bad/*.yaml; do
  name=$(basename "$f" .yaml)
  set +e
  "$KCS" lint "$f" > "$T/$name.out" 2> "$T/$name.err"; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, expected 2"
  [ ! -s "$T/$name.out" ] || fail "$name: printed a normal form"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    grep -qF -- "$line" "$T/$name.err" || fail "$name: missing diagnostic '$line'; got: $(cat "$T/$name.err")"
  done < "${f%.yaml}.expect"
  bad=$((bad + 1))
done
[ "$bad" -ge 48 ] || fail "expected at least 48 malformed contracts, found $bad"

# Several files: valid ones are still printed, the exit status says 2.
set +e
"$KCS" lint "$KCS_SRC/contracts/C-PRC-01.yaml" "$KCS_SRC/tests/contracts_bad/bad_repeat_one.yaml" \
  > "$T/mix.out" 2> "$T/mix.err"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "mixed lint: exit $rc"
grep -q "^id: C-PRC-01" "$T/mix.out" || fail "mixed lint: valid contract not printed"
grep -q "bad_repeat_one.yaml:23:16: measurement.repetitions" "$T/mix.err" || fail "mixed lint: diagnostic"
echo "lint: 18 contracts valid, $bad malformed ones refused as expected"
