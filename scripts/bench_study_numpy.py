#!/usr/bin/env python3
"""The core work of a GEMM study in numpy, for `kcs bench study --numpy`:
for each M,N,K,TRIALS argument and each trial, normal inputs (fp32),
the kernel (fp32 matmul = sgemm), the fp64 reference, |A||B|, the error
metrics kcs stores (max abs / rel, backward error, componentwise scaled
error) and a digest of the output. Prints the wall seconds of the whole.
Usage: bench_study_numpy.py M,N,K,TRIALS [...]"""
import hashlib
import sys
import time

import numpy as np


def trial(rng, m, n, k):
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    d = a @ b                                       # the kernel under test
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64                                 # fp64 oracle
    absref = np.abs(a64) @ np.abs(b64)              # |A||B|
    err = np.abs(d.astype(np.float64) - ref)
    nz = ref != 0
    out = (err.max(), (err[nz] / np.abs(ref[nz])).max(),
           np.sqrt((err * err).sum()) / (np.linalg.norm(a64) * np.linalg.norm(b64)),
           (err / absref).max())
    digest = hashlib.blake2b(d.tobytes(), digest_size=8).hexdigest()
    return out, digest


def main(argv):
    jobs = [tuple(int(v) for v in s.split(",")) for s in argv]
    rng = np.random.default_rng(20261129)
    t0 = time.perf_counter()
    for m, n, k, trials in jobs:
        for _ in range(trials):
            trial(rng, m, n, k)
    print("%.6f" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main(sys.argv[1:])
