"""Grade two numpy matmuls against C-PRC-01 (accumulator precision), then
read a kcs dataset with pandas.

    python3 grade_matmul.py                 # both parts
    python3 grade_matmul.py --dataset-only  # only the dataset part
    python3 grade_matmul.py --dataset out.h5

The kcs binary comes from $KCS or PATH (build/kcs after scripts/build).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import kcs

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("KCS_SRC") or os.path.abspath(os.path.join(HERE, "..", ".."))


def matmul(A, B):
    """A correct fp32 GEMM (numpy's, through BLAS)."""
    return A @ B


def bf16(x):
    """Round float32 to the nearest bfloat16 (ties to even), kept as float32."""
    b = x.view(np.uint32)
    b = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return b.view(np.float32)


def matmul_bf16_acc(A, B):
    """The same product with its running sum kept in bf16: a kernel that
    declares an fp32 accumulator and narrows it (what C-PRC-01 catches)."""
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for p in range(A.shape[1]):
        acc = bf16(acc + np.outer(A[:, p], B[p, :]))
    return acc


def grade():
    shapes = [[32, 32, 256], [16, 16, 1024]]
    contract = os.path.join(SRC, "contracts", "C-PRC-01", "C-PRC-01.yaml")
    for fn in (matmul, matmul_bf16_acc):
        try:
            r = kcs.check(fn, contract, shapes=shapes, dtype_in="fp32", trials=2)
        except kcs.WorkerModeUnsupported as e:
            print(f"{fn.__name__}: not graded: {e}")
            return
        print(f"{fn.__name__}: {r.verdict}  tau={r.tau:.3g}  {', '.join(r.signatures)}")
        print(r.trials[["k", "input_dist", "trial", "verdict", "tau", "effective_acc_bits"]]
              .to_string(index=False))


def make_dataset(path):
    """Two implementations of one gemm case: OpenBLAS, and kcs's own kernel
    accumulating in bf16."""
    study = os.path.join(os.path.dirname(path), "example.yaml")
    contract = os.path.join(SRC, "contracts", "C-PRC-01", "C-PRC-01.yaml")
    with open(study, "w") as f:
        f.write(f"""name: python-example
seed: 11
samples: 8
contracts: ["{contract}"]
placement:
  - {{ backend: cpu, variant: native }}
  - {{ backend: cpu, variant: own, schedule: sequential, acc: bf16 }}
cases:
  - {{ contract: C-PRC-01, op: gemm, dtype_in: fp32, shapes: [[16, 16, 512]], trials: 3 }}
""")
    mpi = os.environ.get("MPIEXEC") or shutil.which("mpiexec")
    cmd = [kcs.find_kcs(), "run", study, "-o", path, "-q"]
    if mpi:
        cmd = [mpi, "-n", "2", "--allow-run-as-root", "--oversubscribe"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(cmd, check=True, env=env)


def read(path):
    df = kcs.load(path)
    print(f"{path}: {len(df)} rows, one per trial")
    print(df.groupby(["implementation", "verdict"]).agg(trials=("trial", "size"),
                                                         max_tau=("tau", "max")))
    doc = df.attrs["fields"].get("tau")  # files written before fields were described lack it
    print("tau:", doc["description"] if doc else "(not described in this file)")
    s = kcs.load(path, samples=True)
    print(s.pivot_table(index="index", columns="rank", values="value").head())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", help="read this dataset instead of making one")
    ap.add_argument("--dataset-only", action="store_true")
    a = ap.parse_args()
    if not a.dataset_only:
        grade()
    if a.dataset:
        read(a.dataset)
    else:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "example.h5")
            make_dataset(path)
            read(path)


if __name__ == "__main__":
    sys.exit(main())
