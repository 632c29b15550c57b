#!/usr/bin/env bash
# The corner vectors' instruction program and its host side (issue #47):
# 1. backends/cuda/corners/mma_corners.cu compiles with this machine's nvcc
#    for sm_80, sm_90a and sm_100a (those this nvcc lists; a missing one is
#    named), compile only: no GPU is needed;
# 2. scripts/mma-corners.py input writes one line per corner (the copied
#    corners.json's eight and the chained NVIDIA analogue) and refuses an
#    existing output;
# 3. compare, on results made up here (the device "answers" MMA-Sim's value
#    on the Hopper corners, another value on one, layout-failed elsewhere):
#    "agrees with" names MMA-Sim exactly where the answer equals MMA-Sim's
#    and the vector was made for the device's architecture, names kcs where
#    it equals kcs's emulation, and kcs's value is `kcs exec --profile`'s;
#    bad results lines are refused naming file and line (exit 2).
source "$(dirname "$0")/lib.sh"
PY=${PYTHON:-/usr/bin/python3}
corners=$KCS_SRC/tests/data/mmasim-corners/corners.json
script=$KCS_SRC/scripts/mma-corners.py

# --- 1. compile -------------------------------------------------------------
nvcc=${KCS_NVCC:-$(command -v nvcc 2> /dev/null || true)}
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ]; then
  archs=$("$nvcc" --list-gpu-arch 2> /dev/null | tr '\n' ' ')
  gencode=()
  for a in 80 90a 100a; do
    if [[ " $archs " == *" compute_${a%a} "* ]]; then
      gencode+=(-gencode "arch=compute_$a,code=sm_$a")
    else
      echo "mma_corners: $("$nvcc" --version | grep -o 'release [0-9.]*') cannot build sm_$a: not compiled"
    fi
  done
  [ "${#gencode[@]}" -gt 0 ] || fail "nvcc ($nvcc) lists none of sm_80, sm_90a, sm_100a"
  "$nvcc" -std=c++17 -O2 -Xcompiler=-Wall,-Wextra "${gencode[@]}" -c \
    "$KCS_SRC/backends/cuda/corners/mma_corners.cu" -o "$T/mma_corners.o" > "$T/nvcc.log" 2>&1 \
    || fail "mma_corners.cu does not compile: $(grep -m5 -i error "$T/nvcc.log")"
  echo "mma_corners: compiled for ${gencode[*]}"
else
  echo "mma_corners: no nvcc on this machine: compile step not run"
fi

# --- 2. input ---------------------------------------------------------------
"$PY" "$script" input "$corners" "$T/v.in" > /dev/null || fail "input failed"
[ "$(wc -l < "$T/v.in")" -eq 9 ] || fail "expected 9 vectors: $(wc -l < "$T/v.in")"
grep -q '^h100-bf16.4 bf16 16 00000001 9a20 ' "$T/v.in" || fail "sign-of-zero corner not as in corners.json: $(sed -n 5p "$T/v.in")"
set +e
"$PY" "$script" input "$corners" "$T/v.in" 2> "$T/err"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "exists" "$T/err" || fail "input overwrote an existing file (exit $rc)"

# --- 3. compare -------------------------------------------------------------
{
  echo "# device made up"
  "$PY" - "$corners" <<'PY'
import json, sys
cs = json.load(open(sys.argv[1]))["corners"]
for i, c in enumerate(cs):
    name = f"{c['entry']}.{i}"
    if c["entry"] == "h100-bf16" and i == 4:
        print(f"{name} wgmma.m64n8k16.f32.bf16 ok 0x80000000")      # -0: not MMA-Sim's +0
    elif c["entry"].startswith("h100"):
        print(f"{name} wgmma.x ok {c['mmasim_d_bits']}")
    else:
        print(f"{name} wgmma.x layout-failed -")
print("nv-inf-chain wgmma.m64n8k16.f32.bf16 ok 0x7fffffff")   # NVIDIA's NaN
PY
} > "$T/results.txt"
"$PY" "$script" compare "$corners" "$T/results.txt" --kcs "$KCS" --profile nvidia-h100 \
  --device-arch Hopper --json "$T/c.json" > "$T/c.txt" 2> "$T/c.err" || fail "compare failed: $(cat "$T/c.err")"
"$PY" - "$T/c.json" "$KCS" "$T" <<'PY' || fail "compare's verdicts are wrong (above)"
import json, os, struct, subprocess, sys
rows = json.load(open(sys.argv[1]))
kcs, tmp = sys.argv[2], sys.argv[3]
bad = 0
assert len(rows) == 9, len(rows)
for r in rows:
    dev, ms, ag = r["device"], r["mmasim"], r["agrees_with"]
    nan = lambda x: x is not None and (x & 0x7F800000) == 0x7F800000 and (x & 0x7FFFFF) != 0
    eq = lambda a, b: a is not None and b is not None and (a == b or (nan(a) and nan(b)))
    want_ms = dev is not None and r["mmasim_applies"] and eq(dev, ms)
    want_k = dev is not None and eq(dev, r["kcs"])
    if ("mmasim" in ag) != want_ms or ("kcs:nvidia-h100" in ag) != want_k:
        print("wrong agreement:", r); bad += 1
    if r["mmasim_applies"] != r["vector"].startswith("h100"):
        print("MMA-Sim applies to the wrong vectors:", r); bad += 1
    if r["kcs"] is None:
        print("no kcs value:", r); bad += 1
    if r["status"] == "layout-failed" and ag:
        print("a failed instruction agrees:", r); bad += 1
# the sign-of-zero corner answered -0: MMA-Sim (+0) must not be named
r4 = [r for r in rows if r["vector"] == "h100-bf16.4"][0]
if "mmasim" in r4["agrees_with"] or r4["mmasim"] != 0:
    print("sign-of-zero row:", r4); bad += 1
if sum("mmasim" in r["agrees_with"] for r in rows) != 3:
    print("expected 3 rows agreeing with MMA-Sim"); bad += 1
# kcs's value is kcs exec's: one vector by hand (h100-bf16.1, 1 x 1 x 16, bf16)
r1 = [r for r in rows if r["vector"] == "h100-bf16.1"][0]
a = [2.0**-70, -(2.0**-80)] + [0.0] * 14
b = [2.0**-70, 1.5 * 2.0**-80] + [0.0] * 14
for n, x in (("a", a), ("b", b), ("c", [0.0])):
    open(os.path.join(tmp, n + "1.f64"), "wb").write(struct.pack(f"<{len(x)}d", *x))
subprocess.run([kcs, "exec", "gemm", "--backend", "cpu", "--profile", "nvidia-h100", "--dtype-in",
                "bf16", "-m", "1", "-n", "1", "-k", "16", "--a", os.path.join(tmp, "a1.f64"),
                "--b", os.path.join(tmp, "b1.f64"), "--c", os.path.join(tmp, "c1.f64"),
                "--out", os.path.join(tmp, "d1.f64")], check=True)
d = struct.unpack("<d", open(os.path.join(tmp, "d1.f64"), "rb").read())[0]
if struct.unpack("<I", struct.pack("<f", d))[0] != r1["kcs"]:
    print("kcs value differs from kcs exec:", d, r1); bad += 1
sys.exit(1 if bad else 0)
PY
grep -q "hardware agrees with: mmasim" "$T/c.txt" || fail "the text report names no agreement: $(head -20 "$T/c.txt")"
# another architecture: MMA-Sim's Hopper answers are shown, not compared
"$PY" "$script" compare "$corners" "$T/results.txt" --kcs "$KCS" --profile nvidia-a100 \
  --device-arch Ampere > "$T/a.txt" 2> "$T/a.err" || fail "compare (Ampere) failed: $(cat "$T/a.err")"
grep -q "agrees with: mmasim" "$T/a.txt" && fail "MMA-Sim's Hopper answers compared on an Ampere device"
grep -q "made for another architecture" "$T/a.txt" || fail "no 'another architecture' note"
# bad results: named file and line, exit 2
printf 'h100-bf16.0 wgmma.x ok 0x0\nnot-a-corner wgmma.x ok 0x0\n' > "$T/bad.txt"
set +e
"$PY" "$script" compare "$corners" "$T/bad.txt" --kcs "$KCS" --profile nvidia-h100 2> "$T/bad.err"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "bad.txt:2:" "$T/bad.err" || fail "a bad results line: exit $rc, $(cat "$T/bad.err")"
echo "mma_corners: ok"
