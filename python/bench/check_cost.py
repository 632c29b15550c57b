"""What one kcs.check costs within a session (issue 42: under 0.5 s when
the worker is reused): N small checks (an 8x8x64 fp32 matmul, C-PRC-01,
one trial) with the session's `kcs run --serve` reused (reuse=True, the
default) and N with a `kcs run` process per check (reuse=False, what
check() did before), interleaved so that both see the same machine load;
the medians side by side, after one warm-up check of each (the first
starts the kernel host and the runner).

    python3 python/bench/check_cost.py [N]        # N = 20

The kcs binary comes from $KCS or PATH. Exit status 1 when the reused
median is not under 0.5 s (the target), 0 otherwise."""
import statistics
import sys
import time

import kcs


def matmul(A, B):
    return A @ B


def one(reuse):
    t = time.perf_counter()
    r = kcs.check(matmul, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1,
                  reuse=reuse)
    took = time.perf_counter() - t
    assert r.verdict == "PASS", r.lines()
    return took


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    first = {reuse: one(reuse) for reuse in (True, False)}
    took = {True: [], False: []}
    for _ in range(n):
        for reuse in (True, False):
            took[reuse].append(one(reuse))
    for reuse, name in ((False, "a kcs run per check (before)"),
                        (True, "kcs run --serve reused (after)")):
        t = took[reuse]
        print(f"{name}: median {statistics.median(t):.3f} s over {n} checks "
              f"(min {min(t):.3f}, max {max(t):.3f}; first {first[reuse]:.3f} s)")
    med = statistics.median(took[True])
    print(f"target under 0.5 s per check with reuse: {'met' if med < 0.5 else 'NOT met'}")
    return 0 if med < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
