#!/usr/bin/env bash
# C-PRC-06 binds only kernels that DECLARE round_to_nearest (issue #14 item
# 1: a probabilistic clause where the declared arithmetic rounds to
# nearest). Plugins written against kcs_plugin.h alone (norm_plugin.c): an
# fp32 softmax/layernorm that rounds to nearest PASSes; one that keeps its
# running sums to 16 significant bits FAILs C-PRC-06 (while a plain
# allclose at 1e-3 lets it through, C-PRC-02's worst-case bound in some
# trials only); one that truncates its fp32 sums while declaring
# round_to_nearest FAILs; the same truncating kernel without the
# declaration is NOT-CLAIMED, and C-PRC-02 (which admits truncation)
# PASSes it. The CPU backend's own kernels likewise, at a long row through
# --shape, and C-PRC-07's attention at a long sequence; and a 4-rank study (native, OpenCL on PoCL, 16-bit sums,
# truncated sums) under mpirun.
source "$(dirname "$0")/lib.sh"
P="$KCS_BUILD/tests/plugin"

line() { # FILE OP VERDICT [PATTERN]
  grep -qE "^C-PRC-06 +([a-z]+,)*$2(,[a-z]+)* +$3${4:+ .*$4}" "$1" || { cat "$1"; fail "$1: C-PRC-06 $2 not $3 ${4:-}"; }
}

# 1. Plugins.
grade 0 "$T/rn.txt" "$P/libkcs_norm_rn.so" C-PRC-06
line "$T/rn.txt" softmax PASS
line "$T/rn.txt" layernorm PASS
grade 3 "$T/s16.txt" "$P/libkcs_norm_sum16.so" C-PRC-06
line "$T/s16.txt" softmax FAIL sum-narrower-than-declared
# every trial (C-PRC-02's worst-case bound sees the same kernel in some)
grep -qE '^C-PRC-06 .* FAIL +([0-9]+)/\1 +trials failed' "$T/s16.txt" || { cat "$T/s16.txt"; fail "sum16: not every trial"; }
grade 3 "$T/tr.txt" "$P/libkcs_norm_trunc.so" C-PRC-06
line "$T/tr.txt" softmax FAIL sum-narrower-than-declared
grade 0 "$T/und.txt" "$P/libkcs_norm_trunc_undeclared.so" C-PRC-06 --junit "$T/und.xml"
line "$T/und.txt" softmax NOT-CLAIMED "does not declare round_to_nearest"
grep -q '<failure' "$T/und.xml" && fail "JUnit: not claimed reported as a failure"
# C-PRC-02's worst-case bound admits truncated fp32 sums (truncating
# matrix units are conforming there); where it sees a 16-bit denominator
# it names it
grade 0 "$T/und2.txt" "$P/libkcs_norm_trunc_undeclared.so" C-PRC-02
grep -qE '^C-PRC-02 +([a-z]+,)*softmax(,[a-z]+)* +PASS' "$T/und2.txt" || { cat "$T/und2.txt"; fail "trunc: C-PRC-02"; }
"$KCS" grade "$P/libkcs_norm_sum16.so" C-PRC-02 --ops softmax > "$T/s16b.txt" 2>&1 || true
grep -qE '^C-PRC-02 +softmax +FAIL .*denominator-beyond-bound' "$T/s16b.txt" || { cat "$T/s16b.txt"; fail "sum16: C-PRC-02 signature"; }

# 2. A 16-bit running sum passes a plain functional test: the CPU
#    backend's own softmax and layernorm with acc bits:16 (the mechanism of
#    the plugin above and of the sweep's catalogue), through kcs exec,
#    against an fp64 softmax and layernorm with allclose at rtol 1e-3
#    (atol 1e-8 for softmax, whose outputs are near 1/k; 1e-3 for
#    layernorm, whose outputs are of order 1); and that same kernel FAILs
#    C-PRC-06 (section 3).
"$PYTHON" - "$KCS" "$T" <<'PY' || fail "bits:16: allclose"
import math, os, random, struct, subprocess, sys
kcs, tmp = sys.argv[1:3]
random.seed(7)
m, k = 2, 4096
x = [struct.unpack('f', struct.pack('f', random.gauss(0, 1)))[0] for _ in range(m * k)]
inp = os.path.join(tmp, "x.f64")
with open(inp, "wb") as f:
    f.write(struct.pack(f"<{m * k}d", *x))
worst = {}
for op in ("softmax", "layernorm"):
    out = os.path.join(tmp, op + ".f64")
    r = subprocess.run([kcs, "exec", op, "--backend", "cpu", "--variant", "own", "--acc", "bits:16",
                        "-m", str(m), "-k", str(k), "--a", inp, "--out", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        sys.exit(1)
    y = struct.unpack(f"<{m * k}d", open(out, "rb").read())
    for i in range(m):
        row = x[i * k:(i + 1) * k]
        if op == "softmax":
            mx = max(row)
            e = [math.exp(v - mx) for v in row]
            s = sum(e)
            ref = [v / s for v in e]
        else:
            mu = sum(row) / k
            var = sum((v - mu) ** 2 for v in row) / k
            ref = [(v - mu) / math.sqrt(var + 1e-5) for v in row]
        atol = 1e-8 if op == "softmax" else 1e-3
        for a, b in zip(y[i * k:(i + 1) * k], ref):
            worst[op] = max(worst.get(op, 0.0), abs(a - b) / (atol + 1e-3 * abs(b)))
print("bits:16 against allclose(rtol 1e-3): worst error / tolerance", worst)
sys.exit(0 if max(worst.values()) <= 1.0 else 1)
PY

# 3. The CPU backend's kernels at a long row (--shape inside the
#    precondition: 64 rows of 16384).
grade 0 "$T/own.txt" --backend cpu --variant own C-PRC-06 --shape 64x1x16384
line "$T/own.txt" softmax PASS
grade 0 "$T/nat.txt" --backend cpu C-PRC-06 --shape 64x1x16384
line "$T/nat.txt" layernorm PASS
for bits in 16 18; do
  grade 3 "$T/b$bits.txt" --backend cpu --variant own --acc bits:$bits C-PRC-06 --shape 64x1x16384
  line "$T/b$bits.txt" softmax FAIL sum-narrower-than-declared
  line "$T/b$bits.txt" layernorm FAIL sum-narrower-than-declared
done
grade 0 "$T/rz.txt" --backend cpu --variant own --acc fp32:rz C-PRC-06 --shape 64x1x16384
line "$T/rz.txt" softmax NOT-CLAIMED
# outside the precondition (fewer than 64 rows): refused, naming the range
rc=0
"$KCS" grade --backend cpu C-PRC-06 --shape 4x1x1024 > "$T/few.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/few.txt"; fail "grade at 4 rows: exit $rc, expected 2"; }
grep -q "dimension m = 4 is outside the precondition's range \[64, " "$T/few.txt" || { cat "$T/few.txt"; fail "grade at 4 rows: message"; }
# 3b. C-PRC-07, attention that declares round_to_nearest, on the CPU
#    backend's kernels at a sequence length C-CMP-01 does not claim
#    (n = 4096 > 128): the own and fused fp32 compositions PASS; 16- and
#    18-bit sums FAIL (C-CMP-01 refuses the shape); truncated fp32 sums are
#    NOT-CLAIMED; a sequence beyond the precondition is refused.
aline() { # FILE VERDICT [PATTERN]
  grep -qE "^C-PRC-07 +attention +$2${3:+ .*$3}" "$1" || { cat "$1"; fail "$1: C-PRC-07 not $2 ${3:-}"; }
}
A=16x4096x64
grade 0 "$T/a_own.txt" --backend cpu --variant own C-PRC-07 --shape $A
aline "$T/a_own.txt" PASS
grade 0 "$T/a_fused.txt" --backend cpu --variant fused C-PRC-07 --shape $A
aline "$T/a_fused.txt" PASS
grade 3 "$T/a_b16.txt" --backend cpu --variant own --acc bits:16 C-PRC-07 --shape $A
aline "$T/a_b16.txt" FAIL attention-narrower-than-declared
# the finest: 18-bit sums, and the fused online softmax's 16-bit running
# sums (inside the first-order magnitude's bound; the random_walk one sees them)
grade 3 "$T/a_b18.txt" --backend cpu --variant own --acc bits:18 C-PRC-07 --shape $A
aline "$T/a_b18.txt" FAIL attention-narrower-than-declared
grade 3 "$T/a_f16.txt" --backend cpu --variant fused --acc bits:16 C-PRC-07 --shape $A
aline "$T/a_f16.txt" FAIL attention-narrower-than-declared
grade 0 "$T/a_rz.txt" --backend cpu --variant own --acc fp32:rz C-PRC-07 --shape $A
aline "$T/a_rz.txt" NOT-CLAIMED
rc=0
"$KCS" grade --backend cpu C-CMP-01 --shape $A > "$T/a_cmp.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/a_cmp.txt"; fail "C-CMP-01 at n = 4096: exit $rc, expected 2"; }
rc=0
"$KCS" grade --backend cpu C-PRC-07 --shape 16x8192x64 > "$T/a_long.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/a_long.txt"; fail "C-PRC-07 at n = 8192: exit $rc, expected 2"; }
grep -q "dimension n = 8192 is outside the precondition's range \[16, 4096\]" "$T/a_long.txt" || { cat "$T/a_long.txt"; fail "C-PRC-07 at n = 8192: message"; }

# 4. A study under mpirun: OpenBLAS-backed native kernels, the OpenCL
#    kernels on PoCL (they declare round_to_nearest: no relaxed-math build
#    options), the own kernels with 16-bit sums, and the own kernels with
#    truncated fp32 sums (not claimed).
{ study_head round-nearest 11 "" C-PRC-06; cat <<YAML; } > "$T/s.yaml"
  - { backend: opencl, device: 0, variant: native }
  - { backend: cpu, variant: own, acc: "bits:16" }
  - { backend: cpu, variant: own, acc: "fp32:rz" }
cases:
  - { contract: C-PRC-06, op: softmax, dtype_in: fp32, shapes: [[64, 1, 4096]], inputs: [normal, positive], trials: 2 }
  - { contract: C-PRC-06, op: layernorm, dtype_in: bf16, shapes: [[64, 1, 2048]], inputs: [normal, positive], trials: 2 }
YAML
rc=0
mpirun4 "$KCS" run "$T/s.yaml" -o "$T/s.h5" --json --fail-on violation > "$T/run.json" 2> "$T/run.err" || rc=$?
[ "$rc" = 5 ] || { cat "$T/run.err" "$T/run.json"; fail "study: exit $rc, expected 5 (rank 2 violates)"; }
"$PYTHON" - "$T/run.json" <<'PY' || fail "study verdicts"
import json, sys
d = json.load(open(sys.argv[1]))
v = {r["rank"]: r for r in d["results"]}
assert v[0]["verdict"] == "PASS" and v[0]["trials"] > 0, v[0]
assert v[1]["verdict"] == "PASS" and v[1]["trials"] > 0, v[1]
assert v[2]["verdict"] == "FAIL" and v[2]["violation"] == v[2]["trials"] > 0, v[2]
assert v[3]["verdict"] == "NOT_CLAIMED" and v[3]["not_claimed"] == v[3]["trials"] > 0, v[3]
PY

echo "round_to_nearest: C-PRC-06 and C-PRC-07 bind declared kernels, flag 16-bit and truncated sums"
