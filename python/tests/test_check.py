"""kcs.check / kcs.assert_conforms through the real kcs binary: kcs drives
the worker protocol and judges; the kernel runs in a process forked from
this one. Skipped, with the binary's own answer as the reason, when the kcs
binary cannot start a worker given by its command line."""
import gc
import math
import os
import sys
import time

import numpy as np
import pytest

import kcs

# the example's two kernels: a correct fp32 matmul and one whose running
# sum is kept in bf16
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from grade_matmul import matmul, matmul_bf16_acc  # noqa: E402

SHAPES = [[32, 32, 256], [16, 16, 1024]]


@pytest.fixture(scope="module")
def worker_mode(kcs_bin):
    """Skip unless the binary runs Python workers (probed with one call)."""
    try:
        kcs.check(matmul, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32", trials=1)
    except kcs.WorkerModeUnsupported as e:
        pytest.skip(f"the kcs binary has no worker mode yet: {e}")
    return True


def test_correct_fp32_matmul_passes(worker_mode):
    r = kcs.check(matmul, "C-PRC-01", shapes=SHAPES, dtype_in="fp32", trials=2, seed=5)
    assert r.verdict == "PASS", r.lines()
    assert r.tau < 1 and r.signatures == []
    # one row per (shape, input distribution, trial) of the contract: every
    # (shape, distribution) pair with both trials
    assert len(r.trials) % (len(SHAPES) * 2) == 0
    per = r.trials.groupby(["k", "input_dist"]).size()
    assert (per == 2).all(), per
    assert len(per) == len(r.trials) // 2
    assert set(r.trials["k"]) == {256, 1024}
    assert (r.trials["verdict"] == "within_tolerance").all()


def test_bf16_running_sum_fails(worker_mode):
    r = kcs.check(matmul_bf16_acc, "C-PRC-01", shapes=SHAPES, dtype_in="fp32", trials=2,
                  seed=5)
    assert r.verdict == "FAIL", r.lines()
    # tau is the worst FINITE ratio (the random-input trials' backward
    # error); the exact-result clause (eta = 0) is counted on its own
    t = r.trials
    assert math.isfinite(r.tau) and r.tau > 1
    assert r.tau == t.loc[t["tau"].apply(math.isfinite), "tau"].max()
    assert r.tau_max == math.inf
    assert r.exact_trials == len(t[t["input_dist"] == "exact"]) > 0
    assert r.exact_mismatches == r.exact_trials
    assert "accumulator-narrower-than-declared" in r.signatures
    # the accumulator it looks like is far narrower than fp32's 24 bits
    assert (r.trials["effective_acc_bits"] < 20).all()


def matmul_gemv_for_one_row(A, B):
    """An accurate fp32 matmul whose single-row path sums k in two halves."""
    if A.shape[0] == 1:
        h = (A.shape[1] + 1) // 2
        return (A[:, :h] @ B[:h, :]) + (A[:, h:] @ B[h:, :])
    return A @ B


def test_batch_invariance_binds_only_declaring_kernels(worker_mode):
    kw = dict(shapes=[[4, 8, 256]], dtype_in="fp32", trials=1, seed=5)
    r = kcs.check(matmul_gemv_for_one_row, "C-ORD-03", **kw)
    assert r.verdict == "NOT_CLAIMED", r.lines()
    assert (r.trials["verdict"] == "not_claimed").all()
    r = kcs.check(matmul_gemv_for_one_row, "C-ORD-03", declares="batch_invariant", **kw)
    assert r.verdict == "FAIL" and "batch-dependent-schedule" in r.signatures, r.lines()


def test_assert_conforms(worker_mode):
    kcs.assert_conforms(matmul, "C-PRC-01", shapes=SHAPES[:1], dtype_in="fp32", trials=1)
    with pytest.raises(AssertionError, match="accumulator-narrower-than-declared"):
        kcs.assert_conforms(matmul_bf16_acc, "C-PRC-01", shapes=SHAPES[:1], dtype_in="fp32",
                            trials=1)


def raises(A, B):
    raise ValueError("this kernel is broken")


def wrong_shape(A, B):
    return (A @ B)[:-1]


def wrong_dtype(A, B):
    return (A @ B).astype(np.float64)


def hangs(A, B):
    time.sleep(3600)


@pytest.mark.parametrize("fn,reason", [
    (raises, "ValueError: this kernel is broken"),
    (wrong_shape, "returned shape"),
    (wrong_dtype, "returned dtype float64"),
])
def test_failing_kernels_are_errors_with_reasons(worker_mode, fn, reason):
    r = kcs.check(fn, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=2)
    assert r.verdict == "ERROR", r.lines()
    assert r.reasons
    # the full reason is in the worker's log whatever the dataset keeps
    assert reason in r.log
    # and kcs, and this process, carry on: a correct kernel still passes
    assert kcs.check(matmul, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32",
                     trials=1).verdict == "PASS"


def test_a_hanging_kernel_is_an_error_and_the_grader_survives(worker_mode):
    t0 = time.monotonic()
    r = kcs.check(hangs, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1,
                  timeout=2)
    assert r.verdict == "ERROR", r.lines()
    assert time.monotonic() - t0 < 120
    assert any("timeout" in x or "time" in x for x in r.reasons), r.reasons


def aligned_only(A, B):
    """Right on the benchmarked shapes (dimensions multiples of 64), wrong
    elsewhere: it drops the last row of the reduction."""
    if A.shape[0] % 64 or B.shape[1] % 64:
        return A[:, :-1] @ B[:-1, :]
    return A @ B


def test_held_out_shapes_come_with_the_contracts_shapes(worker_mode):
    r = kcs.check(aligned_only, "C-CMP-03", shapes=None, dtype_in="fp32", trials=1)
    assert r.verdict == "FAIL", r.lines()
    assert r.signatures == ["held-out-shape-error"]
    t = r.trials
    off = (t["m"] % 64 != 0) | (t["n"] % 64 != 0)
    # one term of k dropped: beyond the bound 2 k u |A||B| at the listed
    # held-out classes (k <= 300); the shapes drawn over the precondition may
    # reach k ~ 10^5, where one term is within it
    held = t[off & (t["k"] <= 300)]
    assert len(held) and (held["verdict"] == "violation").all()
    assert (t[~off]["verdict"] == "within_tolerance").all()


class Replayer:
    """Answers every call of a shape with its first answer: state that lives
    in the worker process across calls (the instance travels by pickle)."""

    def __init__(self):
        self.cache = {}

    def __call__(self, A, B):
        key = A.shape + B.shape
        if key not in self.cache:
            self.cache[key] = A @ B
        return self.cache[key]


def test_a_replayed_result_is_caught(worker_mode):
    r = kcs.check(Replayer(), "C-CMP-03", shapes=[[64, 64, 64]], dtype_in="fp32",
                  trials=3)
    assert r.verdict == "FAIL", r.lines()
    # every repeat of a case (trials 1, 2) is caught as a replay; a case's
    # first trial answered with another case's output fails otherwise, so
    # the summary lists the replay with its count, not as every trial's
    again = r.trials[r.trials["trial"] > 0]
    assert len(again) and again["signature"].str.contains("stale-result-replay").all()
    assert r.signature_counts["stale-result-replay"] >= len(again)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def softmax_unstabilised(x):
    e = np.exp(x)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def test_softmax_through_its_contract(worker_mode):
    good = kcs.check(softmax, "C-PRC-02", shapes=None, dtype_in="fp32", op="softmax")
    assert good.verdict == "PASS", good.lines()
    bad = kcs.check(softmax_unstabilised, "C-PRC-02", shapes=None, dtype_in="fp32",
                    op="softmax")
    assert bad.verdict == "FAIL" and "overflow-not-stabilised" in bad.signatures


def make_scaled(s):
    def scaled(A, B):  # a closure: no module-level name to import it by
        return (A @ B) * np.float32(s)
    return scaled


def test_a_closure_travels_by_cloudpickle_or_is_refused_clearly(worker_mode, monkeypatch):
    from kcs import host
    fn = make_scaled(1.0)
    if host._cloudpickle() is not None:
        r = kcs.check(fn, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1)
        assert r.verdict == "PASS", r.lines()
        # a closure that changes the answer is graded as itself
        r = kcs.check(make_scaled(1.5), "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32",
                      trials=1)
        assert r.verdict == "FAIL", r.lines()
    monkeypatch.setattr(host, "_cloudpickle", lambda: None)
    with pytest.raises(kcs.KernelNotTransferable, match="define it at module level"):
        kcs.check(fn, "C-PRC-01", shapes=[[8, 8, 64]], dtype_in="fp32", trials=1)


@pytest.mark.parametrize("how", ["cloudpickle", "by-file"])
def test_a_kernel_of_the_script_being_run(worker_mode, tmp_path, how):
    """A kernel defined in __main__ (a script run as python3 script.py)
    travels by value (cloudpickle) or is loaded from the script under
    another name: either way its main block runs once."""
    from kcs import host
    if how == "cloudpickle" and host._cloudpickle() is None:
        pytest.skip("cloudpickle is not installed (Debian: python3-cloudpickle)")
    import subprocess
    script = tmp_path / "grade_me.py"
    script.write_text(
        "import sys, kcs\n"
        "def mm(A, B):\n"
        "    return A @ B\n"
        "if __name__ == '__main__':\n"
        "    print('main block', flush=True)\n"
        "    if sys.argv[1] == 'by-file':\n"
        "        import kcs.host\n"
        "        kcs.host._cloudpickle = lambda: None\n"
        "    r = kcs.check(mm, 'C-PRC-01', shapes=[[8, 8, 64]], dtype_in='fp32', trials=1)\n"
        "    print(r.verdict)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(kcs.__file__)))]
        + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    p = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True,
                       timeout=300, env=env, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["main", "block", "PASS"], p.stdout


def nan_or_narrow(A, B):
    """NaN in one output at k = 64; a bf16 running sum elsewhere."""
    if A.shape[1] == 64:
        C = A @ B
        C[0, 0] = np.nan
        return C
    return matmul_bf16_acc(A, B)


def test_summary_signatures_are_those_every_failing_trial_supports(worker_mode):
    r = kcs.check(nan_or_narrow, "C-PRC-01", shapes=[[8, 8, 64], [8, 8, 256]],
                  dtype_in="fp32", trials=1)
    assert r.verdict == "FAIL", r.lines()
    per = [set(x.split(",")) for x in r.trials["signature"] if x]
    assert r.failing_trials == len(per)
    assert r.signature_counts == {s: sum(s in p for p in per) for s in set().union(*per)}
    # the NaN trials do not make the bf16-sum trials "nonfinite", nor the
    # other way round: neither is in every failing trial
    assert 0 < r.signature_counts["nonfinite-output"] < r.failing_trials
    assert 0 < r.signature_counts["accumulator-narrower-than-declared"] < r.failing_trials
    assert "nonfinite-output" not in r.signatures
    assert "accumulator-narrower-than-declared" not in r.signatures
    assert "nonfinite-output (" in r.lines()[0]


LONG = "a reason longer than any fixed field: " + "x" * 200 + " -- the end"


def raises_long(A, B):
    raise ValueError(LONG)


def refuses(A, B):
    raise kcs.Raised("refused: " + LONG)


def test_messages_are_whole(worker_mode):
    r = kcs.check(raises_long, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32", trials=1)
    assert r.verdict == "ERROR"
    assert r.reasons and all(LONG in x for x in r.reasons), r.reasons
    assert all(LONG in ln for ln in r.lines()[1:]), r.lines()


def test_raised_where_a_result_is_due_fails_with_its_reason(worker_mode):
    r = kcs.check(refuses, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32", trials=1)
    assert r.verdict == "FAIL", r.lines()
    assert (r.trials["status"] == "raised").all()
    assert r.reasons and all("raised where the contract wants a result" in x
                             and "refused: " + LONG in x for x in r.reasons), r.reasons


def test_files_live_as_long_as_the_result(worker_mode):
    r = kcs.check(matmul, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32", trials=1)
    where = r.dir
    for name in ("check.h5", "check.yaml", "kcs.err", "worker.log"):
        assert os.path.isfile(os.path.join(where, name)), name
    del r
    gc.collect()
    assert not os.path.exists(where)


def test_a_refused_check_keeps_kcs_whole_message_and_its_files(worker_mode):
    with pytest.raises(kcs.KcsRefused) as e:
        kcs.check(matmul, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32",
                  dtype_out="no_such_format", trials=1)
    msg = str(e.value)
    assert "no_such_format" in msg and "check.yaml" in msg
    # the study the message names exists while the exception does
    assert os.path.isfile(os.path.join(e.value.dir, "check.yaml"))


def tells_env(A, B):
    raise ValueError(f"mark={os.environ.get('KCS_TEST_MARK')}")


def test_the_kernel_sees_the_callers_environment_of_now(worker_mode, monkeypatch):
    # the kernel host was started by an earlier check; the variable is newer
    monkeypatch.setenv("KCS_TEST_MARK", "set-after-the-host-started")
    r = kcs.check(tells_env, "C-PRC-01", shapes=[[4, 4, 16]], dtype_in="fp32", trials=1)
    assert r.reasons and all("mark=set-after-the-host-started" in x for x in r.reasons), r.reasons


def masked_matmul(A, B):
    """NaN inputs treated as absent (0): the nan=mask semantics."""
    return np.where(np.isnan(A), 0, A).astype(A.dtype) @ np.where(np.isnan(B), 0, B).astype(B.dtype)


def test_declared_nan_mask_selects_its_postconditions(worker_mode):
    # declared: C-EXC-01 is judged under nan=mask, and the kernel conforms
    r = kcs.check(masked_matmul, "C-EXC-01", shapes=[[16, 16, 256]], dtype_in="fp32", trials=2,
                  declares="nan=mask")
    assert r.verdict == "PASS", r.lines()
    assert r.semantics.startswith("nan=mask") and "declared" in r.semantics
    assert "semantics: nan=mask" in str(r)
    # undeclared: the contract's own nan=propagate, and masking is the fault
    r = kcs.check(masked_matmul, "C-EXC-01", shapes=[[16, 16, 256]], dtype_in="fp32", trials=2)
    assert r.verdict == "FAIL", r.lines()
    assert "nan-suppressed" in r.signatures
    assert r.semantics == "nan=propagate"
