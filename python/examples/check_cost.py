"""What one kcs.check costs when the kernel host is reused (issue 42):
the median wall time of N checks of a small fp32 matmul, after one warm-up
check (which starts the host), and how much of it is `kcs run` itself.

    python3 check_cost.py [N]        # N = 20

The kcs binary comes from $KCS or PATH."""
import statistics
import sys
import time

import kcs


def matmul(A, B):
    return A @ B


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    run_s = []
    kcs.check  # noqa: B018 - loads kcs/check.py (the module, not the function)
    kc = sys.modules["kcs.check"]
    real_run = kc.subprocess.run

    def timed_run(*a, **kw):  # the `kcs run` subprocess alone
        t = time.perf_counter()
        try:
            return real_run(*a, **kw)
        finally:
            run_s.append(time.perf_counter() - t)

    kc.subprocess.run = timed_run
    t = time.perf_counter()
    kcs.check(matmul, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1)
    first = time.perf_counter() - t
    run_s.clear()
    took = []
    for _ in range(n):
        t = time.perf_counter()
        r = kcs.check(matmul, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1)
        took.append(time.perf_counter() - t)
        assert r.verdict == "PASS", r.lines()
    print(f"first check (starts the kernel host): {first:.3f} s")
    print(f"{n} checks: median {statistics.median(took):.3f} s "
          f"(min {min(took):.3f}, max {max(took):.3f}); of which `kcs run`: median "
          f"{statistics.median(run_s):.3f} s; the rest (host, dataset read): median "
          f"{statistics.median([a - b for a, b in zip(took, run_s)]):.3f} s")


if __name__ == "__main__":
    main()
