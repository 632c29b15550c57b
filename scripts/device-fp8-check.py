#!/usr/bin/env python3
"""scripts/device-fp8-check.py KCS OUT.txt [BACKEND]: the CUDA backend's fp8 (e4m3) GEMM
at shapes that are not multiples of 16 (cuBLASLt's fp8 kernels take only
those, so the backend pads with zeros), through `kcs exec`.

Inputs are multiples of 1/16 in [-1/2, 1/2] (exact in e4m3), C multiples of
1/256: every product and every partial sum is a multiple of 1/256 below 2^10,
exact in fp32 in any order, so D must equal A B + C exactly. Writes one line
per shape to OUT.txt; exit 0 when every shape matches, 1 otherwise."""
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    kcs, out_txt = sys.argv[1], sys.argv[2]
    backend = sys.argv[3] if len(sys.argv) > 3 else "cuda"  # another: to try the script
    rng = np.random.default_rng(20261204)
    shapes = [(1, 1, 1), (5, 7, 33), (16, 16, 16), (17, 33, 100), (64, 3, 129)]
    ok = True
    lines = []
    with tempfile.TemporaryDirectory() as d:
        for m, n, k in shapes:
            a = rng.integers(-8, 9, size=(m, k)) / 16.0
            b = rng.integers(-8, 9, size=(k, n)) / 16.0
            c = rng.integers(-64, 65, size=(m, n)) / 256.0
            paths = {x: os.path.join(d, x + ".f64") for x in "abcd"}
            a.astype("<f8").tofile(paths["a"])
            b.astype("<f8").tofile(paths["b"])
            c.astype("<f8").tofile(paths["c"])
            if os.path.exists(paths["d"]):
                os.remove(paths["d"])
            cmd = [kcs, "exec", "gemm", "--backend", backend, "--dtype-in", "fp8_e4m3",
                   "-m", str(m), "-n", str(n), "-k", str(k), "--a", paths["a"],
                   "--b", paths["b"], "--c", paths["c"], "--out", paths["d"]]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                ok = False
                lines.append(f"{m}x{n}x{k}: kcs exec exit {r.returncode}: {r.stderr.strip()}")
                continue
            got = np.fromfile(paths["d"], dtype="<f8").reshape(m, n)
            want = a @ b + c
            bad = int(np.count_nonzero(got != want))
            ok = ok and bad == 0
            lines.append(f"{m}x{n}x{k}: {bad} of {m * n} outputs differ from A B + C"
                         f" (max |diff| {np.max(np.abs(got - want)):.3g})")
    with open(out_txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
