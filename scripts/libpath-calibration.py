#!/usr/bin/env python3
"""scripts/libpath-calibration.py KCS [SEEDS]: the calibration table of the
library paths (docs/profiles.md, "Library paths"), through `kcs grade
--backend cpu --profile SPEC` on C-PRC-01.

C-PRC-01 admits bf16, fp16 and fp32 inputs, not fp8; every emulated
profile's bf16 and fp16 rows keep 24 bits or more, so no bf16/fp16 variant
fails it. To show what the fp8 paths do, the script grades a copy of the
shipped contract whose precondition admits fp8_e4m3 inputs only (the same
tolerance, protocol and exact-sum generator; scope narrowed to gemm, the
only op emulated profiles run), written to a temporary folder, and a copy
with bf16 inputs only. Each (variant, k) row is graded SEEDS times (default
20) with --seed 1..SEEDS at 16x16xk; the table gives failed trials over all
trials and failing verdicts over runs, each with its Clopper-Pearson 95 %
interval. Prints a Markdown table on stdout, progress on stderr."""
import json
import os
import re
import subprocess
import sys
import tempfile

from scipy.stats import beta

KS = [256, 4096, 65536]
# (inputs, spec, k values): split-K summed in fp32 (":fp32", the default) or
# in the instruction's accumulator (":unit"); C added first (default) or last
VARIANTS = [
    ("fp8_e4m3", "nvidia-h100,fp8_promote=none", KS),
    ("fp8_e4m3", "nvidia-h100,fp8_promote=128", KS),
    ("fp8_e4m3", "nvidia-h100,promote=128,c=last", KS),
    ("fp8_e4m3", "nvidia-h100,splitk=4", KS),
    ("fp8_e4m3", "nvidia-h100,splitk=4:unit", KS),
    ("fp8_e4m3", "nvidia-h100,splitk=512", [65536]),
    ("fp8_e4m3", "nvidia-h100,splitk=512:unit", [65536]),
    ("bf16", "nvidia-h100,fp8_promote=none", KS),
    ("bf16", "nvidia-h100,fp8_promote=128", KS),
    ("bf16", "nvidia-h100,splitk=4:unit", KS),
    ("bf16", "nvidia-h100,c=last", KS),
]


def cp(x, n, conf=0.95):
    a = (1 - conf) / 2
    lo = 0.0 if x == 0 else beta.ppf(a, x, n - x + 1)
    hi = 1.0 if x == n else beta.ppf(1 - a, x + 1, n - x)
    return lo, hi


def contract_copy(src, dst_dir, fmt):
    text = open(src).read()
    text, n1 = re.subn(r"^  dtype_in: \[bf16, fp16, fp32\]$", f"  dtype_in: [{fmt}]", text,
                       flags=re.M)
    text, n2 = re.subn(r"^scope: \{ ops: \[gemm, batched_gemm, attention\] \}$",
                       "scope: { ops: [gemm] }", text, flags=re.M)
    if n1 != 1 or n2 != 1:
        sys.exit(f"libpath-calibration: {src}: the precondition or scope line changed; "
                 "update this script")
    d = os.path.join(dst_dir, fmt, "C-PRC-01")
    os.makedirs(d)
    path = os.path.join(d, "C-PRC-01.yaml")
    open(path, "w").write(text)
    return path


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    kcs = sys.argv[1]
    seeds = int(sys.argv[2]) if len(sys.argv) == 3 else 20
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(root, "contracts", "C-PRC-01", "C-PRC-01.yaml")
    print("| inputs | profile spec | k | failed trials | 95 % CI | FAIL runs | 95 % CI |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        paths = {f: contract_copy(src, tmp, f) for f in ("fp8_e4m3", "bf16")}
        for fmt, spec, ks in VARIANTS:
            for k in ks:
                failed = trials = fails = 0
                for seed in range(1, seeds + 1):
                    r = subprocess.run([kcs, "grade", "--backend", "cpu", "--profile", spec,
                                        paths[fmt], "--shape", f"16x16x{k}", "--seed",
                                        str(seed), "--json"], capture_output=True, text=True)
                    if r.returncode not in (0, 3):
                        sys.exit(f"libpath-calibration: kcs grade exit {r.returncode}: "
                                 f"{r.stderr.strip()}")
                    c = json.loads(r.stdout)["contracts"][0]
                    if c["verdict"] not in ("PASS", "FAIL") or c["errors"]:
                        sys.exit(f"libpath-calibration: {spec} k={k} seed {seed}: "
                                 f"{c['verdict']} {c['detail']}")
                    failed += c["failed"]
                    trials += c["trials"]
                    fails += c["verdict"] == "FAIL"
                t_lo, t_hi = cp(failed, trials)
                r_lo, r_hi = cp(fails, seeds)
                print(f"| {fmt} | `{spec}` | {k} | {failed}/{trials} | [{t_lo:.3f}, {t_hi:.3f}] "
                      f"| {fails}/{seeds} | [{r_lo:.3f}, {r_hi:.3f}] |", flush=True)
                print(f"libpath-calibration: {fmt} {spec} k={k} done", file=sys.stderr)


if __name__ == "__main__":
    main()
