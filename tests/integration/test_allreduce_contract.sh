#!/usr/bin/env bash
# C-ORD-04 (allreduce reduction order, issue #14 item 9) on the CPU
# backend's allreduce kernels: every deterministic summation tree in the
# declared accumulator PASSes (rank order, pairwise, fp64-then-round,
# pairwise rounding toward zero); an arrival-order reduction FAILs with
# arrival-order-reduction and partial sums 3 bits narrower than declared
# FAIL with narrow-partial-sums, although both pass a plain functional
# test (allclose to the fp64 sum at torch's fp32 tolerances), run here
# through kcs exec.
source "$(dirname "$0")/lib.sh"

grade() { # EXPECTED_VERDICT SIGNATURE ARGS...
  local want=$1 sig=$2 rc=0
  shift 2
  "$KCS" grade --backend cpu "$@" C-ORD-04 > "$T/g.txt" 2>&1 || rc=$?
  grep -qE "^C-ORD-04 +allreduce +$want .*$sig" "$T/g.txt" || { cat "$T/g.txt"; fail "grade $*: not $want $sig"; }
}
grade PASS "" --variant own
grade PASS "" --variant own --schedule pairwise
grade PASS "" --variant native
grade PASS "" --variant own --schedule pairwise --acc fp32:rz
grade FAIL arrival-order-reduction --variant own --schedule atomic
grade FAIL narrow-partial-sums --variant own --acc bits:21

# The plain functional test both bad kernels pass: 8 ranks x 4096, normal
# inputs exact in fp32, allclose(rtol 1.3e-6, atol 1e-5) to the fp64 sum;
# the arrival-order kernel's two runs (two call seeds) differ in their bits.
"$PYTHON" - "$KCS" "$T" <<'PY'
import random, struct, subprocess, sys
kcs, T = sys.argv[1], sys.argv[2]
P, K = 8, 4096
rnd = random.Random(7)
x = [struct.unpack("f", struct.pack("f", rnd.gauss(0, 1)))[0] for _ in range(P * K)]
open(f"{T}/x.f64", "wb").write(struct.pack(f"{P*K}d", *x))
ref = [sum(x[r * K + i] for r in range(P)) for i in range(K)]
def run(*args):
    subprocess.run([kcs, "exec", "allreduce", "-m", str(P), "-k", str(K), "--a", f"{T}/x.f64",
                    "--out", f"{T}/y.f64", "--force", *args], check=True, stdout=subprocess.DEVNULL)
    return list(struct.unpack(f"{K}d", open(f"{T}/y.f64", "rb").read()))
def close(y):
    return all(abs(a - b) <= 1e-5 + 1.3e-6 * abs(b) for a, b in zip(y, ref))
atomic = [run("--variant", "own", "--schedule", "atomic", "--seed", str(s)) for s in (1, 2)]
narrow = run("--variant", "own", "--acc", "bits:21")
assert all(close(y) for y in atomic + [narrow]), "a bad kernel fails the plain test"
assert atomic[0] != atomic[1], "arrival order: two runs gave the same bits"
assert close(run("--variant", "native")) and run("--variant", "own") == run("--variant", "own")
PY
echo "allreduce contract: ok"
