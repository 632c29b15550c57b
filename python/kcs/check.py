"""Grade a Python kernel against a kcs contract.

check() writes a one-case study (the contract, the op, the dtypes, the
shapes, the trials, the seed), runs `kcs run` on it with a single rank
whose implementation is a worker process speaking the worker protocol
(kcs/worker.py: the kernel runs in a process forked from this one), and
reads the dataset back with load(). kcs generates the inputs, computes the
reference, applies the guards, the oracle and the verdict: the Python side
only ever sees the inputs of a call and its output buffer.
"""
import inspect
import os
import re
import shutil
import subprocess
import tempfile
import time

from ._binary import find_kcs
from .dataset import load
from .host import Registration
from .worker import wants_torch
from . import ops as ops_table


class WorkerModeUnsupported(RuntimeError):
    """The kcs binary does not run plugins in a worker process started as
    `$KCS_PLUGIN_WORKER SPEC` (it predates the worker protocol of
    include/kcs_worker.h)."""


class KcsRefused(ValueError):
    """kcs refused the check's study (exit 2): a contract, op, dtype or
    shape it does not accept, e.g. a dtype_out the contract does not
    cover. The message is kcs's own, whole (every line it printed)."""


class Result:
    """What kcs said about a kernel.

    verdict     "PASS" (every trial within tolerance), "FAIL" (some trial
                violates the contract or is unexplained), "ERROR" (some call
                failed: the kernel raised, returned a wrong shape or dtype,
                hung, died, or kcs could not run it), "NOT_CLAIMED" (the
                contract binds only kernels that declare a property, e.g.
                C-ORD-03's batch_invariant, and fn was not declared so:
                check(..., declares="batch_invariant"))
    tau         the largest measured/eta over the trials (> 1 fails)
    signatures  names of the matched signatures, sorted
    reasons     why calls failed (ERROR), one text per failed trial
    trials      the per-trial table (pandas DataFrame, as kcs.load gives)
    log         the worker's stdout and stderr
    """

    def __init__(self, verdict, tau, signatures, reasons, trials, log, command):
        self.verdict, self.tau, self.signatures = verdict, tau, signatures
        self.reasons, self.trials, self.log, self.command = reasons, trials, log, command

    def __bool__(self):
        return self.verdict == "PASS"

    def lines(self):
        """The verdict lines: one summary, one per failing trial."""
        out = [f"{self.verdict}  tau={self.tau:.3g}  signatures: "
               f"{', '.join(self.signatures) or '-'}"]
        if self.trials is not None:
            bad = self.trials[self.trials["verdict"] != "within_tolerance"]
            for r in bad.itertuples(index=False):
                out.append(f"  case {r.case_id} {r.op} {r.dtype_in} m={r.m} n={r.n} k={r.k} "
                           f"{r.input_dist} trial {r.trial}: {r.status} {r.verdict} "
                           f"tau={r.tau:.3g} {r.signature}")
        out += [f"  reason: {x}" for x in self.reasons]
        return out

    def __repr__(self):
        return f"Result(verdict={self.verdict!r}, tau={self.tau!r}, signatures={self.signatures!r})"


def _contract_path(contract, kcs):
    if os.path.isfile(contract):
        return os.path.abspath(contract)
    folder = os.path.join(contract, os.path.basename(os.path.normpath(contract)) + ".yaml")
    if os.path.isdir(contract) and os.path.isfile(folder):  # a contract folder
        return os.path.abspath(folder)
    name = contract if contract.endswith(".yaml") else contract + ".yaml"
    dirs = []
    if os.environ.get("KCS_CONTRACTS"):
        dirs.append(os.environ["KCS_CONTRACTS"])
    if os.environ.get("KCS_SRC"):
        dirs.append(os.path.join(os.environ["KCS_SRC"], "contracts"))
    bindir = os.path.dirname(os.path.realpath(kcs))
    dirs.append(os.path.join(bindir, "..", "share", "kcs", "contracts"))
    d = bindir
    for _ in range(4):  # a build directory inside (or next to) the source tree
        dirs.append(os.path.join(d, "contracts"))
        d = os.path.dirname(d)
    cid = name[:-len(".yaml")]
    for d in dirs:  # a contract is a folder, <ID>/<ID>.yaml (older trees: <ID>.yaml)
        for p in (os.path.join(d, cid, name), os.path.join(d, name)):
            if os.path.isfile(p):
                return os.path.abspath(p)
    raise FileNotFoundError(f"contract {contract!r}: not a file, and no {cid}/{name} in "
                            f"{', '.join(dirs)} (set $KCS_CONTRACTS)")


def _contract_id_and_ops(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^id:\s*([\w.-]+)", text, re.M)
    s = re.search(r"^scope:\s*\{\s*ops:\s*\[([^\]]*)\]", text, re.M)
    if not m:
        raise ValueError(f"{path}: no `id:` line")
    ops = [o.strip() for o in s.group(1).split(",")] if s else []
    return m.group(1), ops


def _shape_list(shapes):
    out = []
    for s in shapes:
        s = [int(v) for v in s]
        if len(s) not in (3, 4) or any(v < 0 for v in s):
            raise ValueError(f"shape {s}: expected [m, n, k] or [m, n, k, batch]")
        out.append(s)
    if not out:
        raise ValueError("shapes: at least one shape")
    return out


def _yaml_str(s):
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def study_text(contract_path, contract_id, op, dtype_in, dtype_out, shapes, trials, seed,
               inputs, timeout, spec, declares=None):
    """The one-case study check() runs: one rank, a plugin placement whose
    "library" is the worker spec. kcs runs plugins in a worker process,
    started as `$KCS_PLUGIN_WORKER SPEC`: check() points KCS_PLUGIN_WORKER
    at a launcher of kcs/worker.py's relay."""
    lines = [
        "name: python-check",
        f"seed: {int(seed)}",
        f"timeout: {float(timeout)}",
        "samples: 16",
        f"contracts: [{_yaml_str(contract_path)}]",
        "placement:",
        f"  - {{ backend: plugin, plugin: {_yaml_str(spec)}"
        + (f", declares: {_yaml_str(declares)}" if declares else "") + " }",
        "cases:",
        f"  - contract: {contract_id}",
        f"    op: {op}",
        f"    dtype_in: {dtype_in}",
    ]
    if dtype_out:
        lines.append(f"    dtype_out: {dtype_out}")
    if shapes is not None:
        lines.append("    shapes: [" + ", ".join("[" + ", ".join(map(str, s)) + "]"
                                                 for s in shapes) + "]")
    if inputs:
        lines.append("    inputs: [" + ", ".join(inputs) + "]")
    if trials:
        lines.append(f"    trials: {int(trials)}")
    return "\n".join(lines) + "\n"


def check(fn, contract, *, shapes, dtype_in, dtype_out=None, trials=None, seed=None, op=None,
          inputs=None, timeout=60.0, tensors="auto", keep=None, declares=None):
    """Grade fn through contract's measurement protocol; returns a Result.

    fn        the kernel: fn(A, B) or fn(A, B, C) for gemm, the ops table's
              signature for the others (kcs.ops), numpy arrays in (torch
              tensors with tensors="torch"), an array out
    contract  an id (C-PRC-01, looked up in $KCS_CONTRACTS or next to the
              kcs binary) or a contract YAML path
    shapes    [[m, n, k], ...] (or [m, n, k, batch]); None: the contract's
              own measurement shapes and its held-out shapes
    dtype_in, dtype_out   kcs format names (fp32, bf16, fp16, ...);
              dtype_out None: the contract's
    trials, seed, inputs  None: the contract's trials and inputs, a fixed seed
    op        None: the first op of the contract's scope
    timeout   seconds one kernel call may take; a hung call is an ERROR
    tensors   "numpy", "torch" (CPU tensors; bf16 as torch.bfloat16), or
              "auto": torch when fn's parameters are annotated torch.Tensor
    keep      a directory to keep the study, dataset and worker log in
    declares  what fn declares about itself, e.g. "batch_invariant" (a
              contract with precondition.declares binds only kernels that
              declare it; otherwise the verdict is "NOT_CLAIMED")
    """
    if tensors == "auto":
        tensors = "torch" if wants_torch(fn) else "numpy"
    if tensors not in ("numpy", "torch"):
        raise ValueError(f"tensors={tensors!r}: numpy, torch or auto")
    kcs = find_kcs()
    cpath = _contract_path(contract, kcs)
    cid, scope_ops = _contract_id_and_ops(cpath)
    if op is None:
        usable = [o for o in scope_ops if o in ops_table.OPS]
        if not usable:
            raise ValueError(f"{cid}: no op of its scope ({', '.join(scope_ops)}) can be a "
                             f"Python kernel")
        op = usable[0]
    shp = _shape_list(shapes) if shapes is not None else None
    work = keep or tempfile.mkdtemp(prefix="kcs-check-")
    os.makedirs(work, exist_ok=True)
    try:
        src = ""
        try:
            src = inspect.getsourcefile(fn) or ""
        except TypeError:
            pass
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        # the file kcs fingerprints as the implementation's identity (none
        # for a lambda typed at a prompt: kcs then hashes the spec)
        src = os.path.abspath(src) if src and os.path.isfile(src) else ""
        reg = Registration(fn, name=f"python:{name}", ops=op, file=src, tensors=tensors)
        try:
            spec = reg.write_spec(os.path.join(work, "kernel.kcsw"))
            launcher = reg.write_launcher(os.path.join(work, "kcs-python-worker"))
            study = os.path.join(work, "check.yaml")
            with open(study, "w", encoding="utf-8") as fh:
                fh.write(study_text(cpath, cid, op, dtype_in, dtype_out, shp, trials,
                                    seed if seed is not None else 20260601, inputs, timeout,
                                    spec, declares))
            out = os.path.join(work, "check.h5")
            for p in (out, out + ".partial"):
                if os.path.exists(p):
                    os.remove(p)
            if os.path.isdir(out + ".journal"):
                shutil.rmtree(out + ".journal")
            log = os.path.join(work, "worker.log")
            env = dict(os.environ, KCS_WORKER_LOG=log, KCS_PLUGIN_WORKER=launcher)
            # one rank that never spawns: Open MPI's singleton need not
            # start its orted daemon (about 0.4 s and more of every check)
            env.setdefault("OMPI_MCA_ess_singleton_isolated", "1")
            cmd = [kcs, "run", study, "-o", out, "-q"]
            with open(os.path.join(work, "kcs.out"), "w") as so, \
                    open(os.path.join(work, "kcs.err"), "w") as se:
                proc = subprocess.run(cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL,
                                      env=env, cwd=work)
            forks = reg.stats()["forks"]
        finally:
            reg.close()
        rc = proc.returncode
        err = open(os.path.join(work, "kcs.err"), encoding="utf-8", errors="replace").read()
        wlog = (open(log, encoding="utf-8", errors="replace").read()
                if os.path.exists(log) else "")
        if rc == 2:
            raise KcsRefused(f"kcs refused the check (exit 2): {err.strip()}")
        if rc not in (0, 3) or not os.path.exists(out):
            raise RuntimeError(f"kcs run exited {rc}: {err.strip()}")
        trials_df = load(out)
        if forks == 0 and (trials_df["status"] == "unavailable").all():
            # a kcs that dlopen()s plugins in its own process took the spec
            # for a library; one with workers would have started the relay
            raise WorkerModeUnsupported(
                f"{kcs} did not start the Python worker (it loads plugins in its own "
                f"process, or ignores KCS_PLUGIN_WORKER): {err.strip()}")
        return _result(trials_df, wlog, cmd, err)
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def _result(df, log, cmd, kcs_err=""):
    ok_status = df["status"].isin(["ok", "raised"])
    errors = df[~ok_status | df["verdict"].isin(["error", "unavailable"])]
    failing = df[df["verdict"].isin(["violation", "under_specified"])]
    tau = float(df["tau"].max()) if len(df) else float("nan")
    sigs = sorted({s for x in failing["signature"] for s in x.split(",") if s})
    # /results.message holds a failed call's whole reason where the dataset
    # has it (the 64-byte signature field cuts it)
    why = "message" if "message" in df.columns else "signature"
    reasons = [f"trial {r.trial} (k={r.k}): {r.status}: {getattr(r, why) or r.signature}"
               for r in errors.itertuples(index=False)]
    if (df["status"] == "unavailable").any():
        reasons += [ln for ln in kcs_err.splitlines() if "unavailable" in ln]
    if len(errors):
        verdict = "ERROR"
    elif len(failing):
        verdict = "FAIL"
    elif len(df) and (df["verdict"] == "within_tolerance").all():
        verdict = "PASS"
    elif len(df) and df["verdict"].isin(["within_tolerance", "not_claimed"]).all():
        verdict = "NOT_CLAIMED"  # the contract binds only kernels that declare a property
    else:
        verdict = "ERROR"
        reasons.append("no trial was judged")
    return Result(verdict, tau, sigs, reasons, df, log, cmd)


def assert_conforms(fn, contract, **kw):
    """check(fn, contract, **kw) for pytest: AssertionError with the verdict
    lines and signatures unless the verdict is PASS. Returns the Result."""
    r = check(fn, contract, **kw)
    if r.verdict != "PASS":
        cid = os.path.basename(contract)
        msg = "\n".join([f"{getattr(fn, '__qualname__', fn)} does not conform to {cid}:"]
                        + r.lines())
        raise AssertionError(msg)
    return r
