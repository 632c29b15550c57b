#!/usr/bin/env bash
# kcs probe's widths (docs/profiles.md "Widths"): the text line and the
# --json object of the same probe name the same product alignment, c addend,
# sum-under-c and output widths, for a global (rz) path, a late-c (rne)
# path and Hopper fp8; the JSON values are the text's, each with its status.
# (That every profile's widths are recovered from its own emulation is
# unit.test_probe's round trip.)
source "$(dirname "$0")/lib.sh"
# library paths: the whole spec reaches the backend (docs/profiles.md "Library paths")
for pd in "nvidia-h100 fp8_e4m3" "nvidia-h100 bf16" "amd-mi300 bf16" "amd-mi250 fp16" \
          "nvidia-h100,fp8_promote=128 fp8_e4m3" "nvidia-h100,splitk=2:unit fp8_e4m3"; do
  set -- $pd
  text=$("$KCS" probe --backend cpu --profile "$1" --dtype-in "$2") || fail "probe $pd (text)"
  json=$("$KCS" probe --backend cpu --profile "$1" --dtype-in "$2" --json) || fail "probe $pd (json)"
  TEXT="$text" JSON="$json" "$PYTHON" - "$pd" << 'PY' || fail "widths of $pd: text and --json differ"
import json, os, re, sys
w = json.loads(os.environ["JSON"])["widths"]
line = [l for l in os.environ["TEXT"].splitlines() if l.strip().startswith("widths")]
assert len(line) == 1, line
m = re.search(r"product alignment (\S+), c addend (\S+), sum under a larger c (\S+) "
              r"\(fraction bits below the largest exponent\); output (\S+) significand bits, (\S+)$",
              line[0])
assert m, line[0]
keys = ["product_align_bits", "c_addend_bits", "sum_under_c_bits", "output_bits"]
for k, t in zip(keys, m.groups()):
    assert w[k]["text"] == t, (k, w[k], t)
    assert w[k]["status"] in ("exact", "range", "n/a", "inconsistent"), w[k]
    if w[k]["status"] == "exact":
        assert w[k]["lo"] == w[k]["hi"] and str(w[k]["lo"]) == t, w[k]
assert w["output_rounding"] == m.group(5), (w["output_rounding"], m.group(5))
print(sys.argv[1], {k: w[k]["text"] for k in keys}, w["output_rounding"])
PY
done
# a bad library-path key: exit 2, the key named (probe and exec)
expect_rc 2 "$T/probe.out" "$KCS" probe --backend cpu --profile nvidia-h100,bogus=1 --dtype-in fp8_e4m3
grep -q "unknown key 'bogus'" "$T/probe.out" || fail "probe with a bad spec: $(cat "$T/probe.out")"
"$PYTHON" -c "
import struct
open('$T/a.f64','wb').write(struct.pack('<64d', *[(-1)**i * 0.5 * (1 + i % 3) for i in range(64)]))" \
  || fail "inputs"
cp "$T/a.f64" "$T/b.f64"
expect_rc 2 "$T/exec.out" "$KCS" exec gemm --backend cpu --profile nvidia-h100,bogus=1 \
  --dtype-in fp8_e4m3 -m 4 -n 4 -k 16 --a "$T/a.f64" --b "$T/b.f64" --out "$T/d.f64"
grep -q "unknown key 'bogus'" "$T/exec.out" || fail "exec with a bad spec: $(cat "$T/exec.out")"
[ ! -e "$T/d.f64" ] || fail "exec with a bad spec wrote its output"
"$KCS" exec gemm --backend cpu --profile nvidia-h100,promote=128,c=last --dtype-in fp8_e4m3 \
  -m 4 -n 4 -k 16 --a "$T/a.f64" --b "$T/b.f64" --out "$T/d.f64" || fail "exec with a path"
[ "$(stat -c %s "$T/d.f64")" -eq 128 ] || fail "exec with a path: 16 doubles expected"
echo "probe widths: ok"
