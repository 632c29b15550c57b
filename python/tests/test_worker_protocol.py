"""kcs/worker.py against the worker protocol (include/kcs_worker.h), driven
by the test grader in protocol_grader.py: a relay started like kcs starts
a worker, the kernel in a child forked from this process, calls through a
shared region, and every way a kernel can fail."""
import os
import signal
import time

import numpy as np
import pytest

from kcs import encodings as enc
from kcs.worker import Broker, Raised
from protocol_grader import Grader, WorkerDied


@pytest.fixture
def harness(tmp_path):
    made = []

    def make(fn, op="gemm"):
        b = Broker(fn, name="test", ops=op, tmpdir=str(tmp_path))
        spec = b.write_spec(str(tmp_path / f"spec{len(made)}.json"))
        g = Grader(b.command(spec), str(tmp_path / "worker.log"), poll=b.poll)
        made.append((b, g))
        return b, g

    yield make
    for b, g in made:
        g.close()
        b.close()


def rng_mats(m, n, k, seed=1):
    r = np.random.default_rng(seed)
    return (r.standard_normal((m, k)).astype(np.float32),
            r.standard_normal((k, n)).astype(np.float32))


def test_hello_and_a_correct_call(harness):
    b, g = harness(lambda A, B: A @ B)
    h = g.start()
    assert h["status"] == 0 and h["name"] == "test" and h["ops"] == "gemm"
    A, B = rng_mats(8, 6, 32)
    st, msg, out, guards = g.call("gemm", "fp32", "fp32", 8, 6, 32, 0, [A, B, None])
    assert (st, msg, guards) == (0, "", True)
    assert np.array_equal(out.reshape(8, 6), A @ B)
    # a second call on a bigger region (sent again) by the same worker
    A2, B2 = rng_mats(40, 30, 64, seed=2)
    st, _, out, guards = g.call("gemm", "fp32", "fp32", 40, 30, 64, 0, [A2, B2, None])
    assert st == 0 and guards and np.array_equal(out.reshape(40, 30), A2 @ B2)
    assert b.forks == 1
    assert g.stop() == 0  # the grader closes the channel: the worker exits 0


def test_the_launcher_kcs_execs(tmp_path):
    """kcs runs the worker program with one argument (the spec), as
    $KCS_PLUGIN_WORKER SPEC: the launcher Broker writes does that."""
    b = Broker(lambda A, B: A @ B, name="launched", ops="gemm", tmpdir=str(tmp_path))
    spec = b.write_spec(str(tmp_path / "k.kcsw"))
    launcher = b.write_launcher(str(tmp_path / "kcs-python-worker"))
    g = Grader([launcher, spec], str(tmp_path / "worker.log"), poll=b.poll)
    try:
        assert g.start()["name"] == "launched"
        A, B = rng_mats(3, 3, 8)
        st, _, out, _ = g.call("gemm", "fp32", "fp32", 3, 3, 8, 0, [A, B, None])
        assert st == 0 and np.array_equal(out.reshape(3, 3), A @ B)
        assert g.stop() == 0
    finally:
        g.close()
        b.close()


def test_a_bad_spec_is_refused(tmp_path):
    import subprocess
    import sys
    bad = tmp_path / "bad.kcsw"
    bad.write_text("not json")
    p = subprocess.run([sys.executable, "-m", "kcs.relay", str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "not a kcs Python worker spec" in p.stderr


def test_gemm_with_c_gets_three_inputs(harness):
    def k(A, B, C):  # runs in the forked child: it reports through its answer
        if (A.shape, B.shape, C.shape) != ((4, 16), (16, 5), (4, 5)):
            raise AssertionError(f"shapes {A.shape} {B.shape} {C.shape}")
        return C + A @ B

    _, g = harness(k)
    A, B = rng_mats(4, 5, 16)
    C = np.ones((4, 5), np.float32)
    st, msg, out, _ = g.call("gemm", "fp32", "fp32", 4, 5, 16, 0, [A, B, C])
    assert st == 0, msg
    assert np.array_equal(out.reshape(4, 5), C + A @ B)


def test_kernel_failures_are_errors_with_reasons(harness):
    def bad(A, B):
        if A.shape[0] == 1:
            raise ValueError("no single rows here")
        if A.shape[0] == 2:
            return (A @ B)[:, :-1]
        if A.shape[0] == 3:
            return (A @ B).astype(np.float64)
        if A.shape[0] == 4:
            return [[0.0]]
        raise Raised("refused on purpose")

    b, g = harness(bad)
    cases = {1: "the kernel raised ValueError: no single rows here",
             2: "returned shape (2, 4), gemm expects (2, 5)",
             3: "returned dtype float64, dtype_out fp32 expects float32",
             4: "returned list, expected a numpy array"}
    for m, want in cases.items():
        A, B = rng_mats(m, 5, 8)
        st, msg, _, guards = g.call("gemm", "fp32", "fp32", m, 5, 8, 0, [A, B, None])
        assert st < 0 and want in msg, (m, msg)
        assert guards
    A, B = rng_mats(5, 5, 8)
    st, msg, _, _ = g.call("gemm", "fp32", "fp32", 5, 5, 8, 0, [A, B, None])
    assert st > 0 and msg == "refused on purpose"
    assert b.forks == 1  # one worker answered all of them


def test_a_hung_kernel_is_killed_and_a_fresh_worker_answers(harness):
    calls = {"n": 0}

    def slow(A, B):
        calls["n"] += 1  # counts in the forked child only
        if A.shape[0] == 3:
            time.sleep(600)
        return A @ B

    b, g = harness(slow)
    A, B = rng_mats(3, 4, 8)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        g.call("gemm", "fp32", "fp32", 3, 4, 8, 0, [A, B, None], timeout=1.0)
    assert time.monotonic() - t0 < 10
    # the relay is gone; the broker kills the hung child once it notices
    deadline = time.monotonic() + 10
    while not b.deaths and time.monotonic() < deadline:
        b.poll(0.05)
    assert b.deaths and b.deaths[0][1] == f"signal {int(signal.SIGKILL)}", b.deaths
    assert not b.children
    A, B = rng_mats(4, 4, 8)
    st, _, out, _ = g.call("gemm", "fp32", "fp32", 4, 4, 8, 0, [A, B, None])
    assert st == 0 and np.array_equal(out.reshape(4, 4), A @ B)
    assert b.forks == 2
    assert calls["n"] == 0  # the kernel never ran in this process


@pytest.mark.parametrize("how,want", [("exit", "exit 7"), ("segv", f"signal {int(signal.SIGSEGV)}")])
def test_a_dying_kernel_is_seen_as_the_workers_death(harness, how, want):
    def die(A, B):
        if how == "exit":
            os._exit(7)
        os.kill(os.getpid(), signal.SIGSEGV)

    b, g = harness(die)
    A, B = rng_mats(2, 2, 4)
    with pytest.raises(WorkerDied, match=want.replace("exit", "exit")):
        g.call("gemm", "fp32", "fp32", 2, 2, 4, 0, [A, B, None])
    assert b.deaths and b.deaths[0][1] == want


def test_the_cpu_limit_reaches_the_kernel(tmp_path):
    """kcs sets RLIMIT_CPU on the worker it starts (the relay); the kernel's
    process takes it on, so a spinning kernel dies of SIGXCPU."""
    def spin(A, B):
        while True:
            pass

    b = Broker(spin, name="spin", ops="gemm", tmpdir=str(tmp_path))
    spec = b.write_spec(str(tmp_path / "k.kcsw"))
    g = Grader(b.command(spec), str(tmp_path / "worker.log"), poll=b.poll, cpu_s=1)
    try:
        A, B = rng_mats(2, 2, 4)
        with pytest.raises(WorkerDied, match=f"signal {int(signal.SIGXCPU)}"):
            g.call("gemm", "fp32", "fp32", 2, 2, 4, 0, [A, B, None], timeout=60)
        assert b.deaths[0][1] == f"signal {int(signal.SIGXCPU)}"
    finally:
        g.close()
        b.close()


def test_bf16_in_and_out_travel_as_encodings(harness):
    vals = np.array([1.0, -2.5, 0.375, 96.0, 0.0, -0.0, 3.0, 0.5], np.float32)
    A = vals.reshape(2, 4)
    B = (vals[::-1] * 2).astype(np.float32).reshape(4, 2)
    enc_a = (A.view(np.uint32) >> 16).astype(np.uint16)
    enc_b = (B.view(np.uint32) >> 16).astype(np.uint16)
    def double_a(A2, B2):  # exact: doubling a bf16 value is a bf16 value
        if A2.dtype != np.float32 or not np.array_equal(A2, A) or not np.array_equal(B2, B):
            raise AssertionError("the kernel did not see the bf16 values as float32")
        return A2[:, :2] * np.float32(2)

    _, g = harness(double_a)
    st, msg, out, _ = g.call("gemm", "bf16", "bf16", 2, 2, 4, 0, [enc_a, enc_b, None])
    assert st == 0, msg
    got = (out.astype(np.uint32) << 16).view(np.float32).reshape(2, 2)
    assert np.array_equal(got, A[:, :2] * 2)

    def inexact(A, B):
        return np.full((2, 2), 1.0 + 2.0 ** -10, np.float32)  # not a bf16 value

    _, g2 = harness(inexact)
    st, msg, _, _ = g2.call("gemm", "bf16", "bf16", 2, 2, 4, 0, [enc_a, enc_b, None])
    assert st < 0 and "not a bf16 value" in msg


def test_fp8_tables():
    # E4M3: 0x7E = 448 (largest), 0x08 = 2^-6 (smallest normal), 0x01 = 2^-9
    dec = enc.decode(enc.F8_E4M3, np.array([0x7E, 0x08, 0x01, 0xBC, 0x7F], np.uint8))
    assert dec[:4].tolist() == [448.0, 2.0 ** -6, 2.0 ** -9, -1.5]
    assert np.isnan(dec[4])
    # E5M2: 0x7B = 57344, 0x7C = inf
    dec = enc.decode(enc.F8_E5M2, np.array([0x7B, 0x7C, 0x3C], np.uint8))
    assert dec.tolist() == [57344.0, np.inf, 1.0]
    codes = np.arange(256, dtype=np.uint8)
    for dt in (enc.F8_E4M3, enc.F8_E5M2):
        v = enc.decode(dt, codes)
        finite = ~np.isnan(v)
        assert np.array_equal(enc.encode(dt, v[finite]), codes[finite])
    with pytest.raises(enc.EncodingError):
        enc.encode(enc.F8_E4M3, np.array([1.0625], np.float32))


def test_torch_tensors_when_the_kernel_wants_them(tmp_path):
    from kcs.worker import wants_torch

    def t(A: "torch.Tensor", B: "torch.Tensor"):
        import torch
        assert isinstance(A, torch.Tensor)
        return A @ B

    assert wants_torch(t) and not wants_torch(lambda A, B: A @ B)
    b = Broker(t, name="torch", ops="gemm", tensors="torch", tmpdir=str(tmp_path))
    spec = b.write_spec(str(tmp_path / "spec.json"))
    g = Grader(b.command(spec), str(tmp_path / "worker.log"), poll=b.poll)
    try:
        A, B = rng_mats(3, 3, 8)
        st, msg, out, _ = g.call("gemm", "fp32", "fp32", 3, 3, 8, 0, [A, B, None])
        try:
            import torch  # noqa: F401
        except ImportError:
            assert st < 0 and "torch is not installed" in msg
            return
        assert st == 0, msg
        assert np.allclose(out.reshape(3, 3), A @ B, rtol=1e-6)
    finally:
        g.close()
        b.close()
