"""check() reuses one `kcs run --serve` and one kernel host per session
(kcs/runner.py, kcs/host.py), while every check's kernel runs in a process
of its own: reuse, isolation and restart, through the real kcs binary.
The timing (under 0.5 s per reused check) is python/bench/check_cost.py's,
not a test's."""
import os
import signal
import time

import numpy as np
import pytest

import kcs
import kcs.host
import kcs.runner

SHAPE = [[4, 4, 16]]


def matmul(A, B):
    return A @ B


def matmul_pid(A, B):
    """A correct matmul that records the pid of the process it runs in."""
    with open(os.environ["KCS_TEST_PID_FILE"], "a") as fh:
        fh.write(f"{os.getpid()}\n")
    return A @ B


def exits(A, B):
    os._exit(3)


STATE = {"scale": 1.0}


def poisons(A, B):
    """Correct, but leaves state behind in the process it runs in: this
    module's STATE zeroed, numpy's matmul replaced, a variable set."""
    STATE["scale"] = 0.0
    np.matmul = lambda a, b: np.zeros((a.shape[0], b.shape[1]), dtype=a.dtype)
    os.environ["KCS_TEST_POISON"] = "1"
    return A @ B


def scaled(A, B):
    """Correct while STATE is as this module defines it."""
    if os.environ.get("KCS_TEST_POISON"):
        return np.zeros((A.shape[0], B.shape[1]), dtype=A.dtype)
    return np.matmul(A, B) * STATE["scale"]


@pytest.fixture(scope="module")
def serving(kcs_bin):
    r = kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    if kcs.runner.pid() is None:
        pytest.skip("the kcs binary has no `kcs run --serve` (each check ran one-shot)")
    assert r.verdict == "PASS", r.lines()
    return True


def _pids():
    return kcs.runner.pid(), kcs.host.client().pid


def test_runner_and_host_are_reused(serving):
    kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    before = _pids()
    r = kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    assert _pids() == before and None not in before


def test_each_check_runs_its_kernel_in_a_fresh_process(serving, tmp_path, monkeypatch):
    f = tmp_path / "pids"
    monkeypatch.setenv("KCS_TEST_PID_FILE", str(f))
    seen, n_read = [], 0
    for _ in range(2):
        r = kcs.check(matmul_pid, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
        assert r.verdict == "PASS", r.lines()
        lines = f.read_text().split()
        seen.append(set(lines[n_read:]))
        n_read = len(lines)
    assert seen[0] and seen[1] and not seen[0] & seen[1]
    assert str(kcs.host.client().pid) not in seen[0] | seen[1]
    # a variable of the caller's (KCS_TEST_PID_FILE) reached the kernel
    # through the reused runner: it goes with each request


def test_the_runner_follows_the_callers_environment(serving, monkeypatch):
    before = _pids()
    monkeypatch.setenv("KCS_TEST_POISON", "1")  # scaled() returns zeros under it
    r = kcs.check(scaled, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "FAIL", r.lines()
    monkeypatch.delenv("KCS_TEST_POISON")
    r = kcs.check(scaled, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    assert _pids()[0] == before[0]


def test_state_a_kernel_leaves_does_not_reach_the_next_check(serving):
    r = kcs.check(poisons, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    r = kcs.check(scaled, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    assert "KCS_TEST_POISON" not in os.environ and STATE["scale"] == 1.0


def test_a_kernel_that_exits_errors_and_the_next_check_passes(serving):
    before = _pids()
    r = kcs.check(exits, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "ERROR", r.lines()
    r = kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    assert _pids() == before  # the kernel's process died, not the runner or host


def test_a_killed_runner_is_replaced(serving):
    old = kcs.runner.pid()
    os.kill(old, signal.SIGKILL)
    time.sleep(0.2)
    r = kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
    assert r.verdict == "PASS", r.lines()
    new = kcs.runner.pid()
    assert new is not None and new != old


def test_a_stopped_runner_is_replaced(serving, monkeypatch):
    old = kcs.runner.pid()
    os.kill(old, signal.SIGSTOP)
    try:
        real = kcs.runner.run

        def short(*a, **kw):  # a short deadline: the stopped runner never answers
            kw["deadline_s"] = 3.0
            return real(*a, **kw)

        monkeypatch.setattr(kcs.runner, "run", short)
        r = kcs.check(matmul, "C-PRC-01", shapes=SHAPE, dtype_in="fp32", trials=1)
        assert r.verdict == "PASS", r.lines()
    finally:
        try:
            os.kill(old, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert kcs.runner.pid() != old
