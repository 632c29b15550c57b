"""Grade a Python kernel against a kcs contract.

check() writes a one-case study (the contract, the op, the dtypes, the
shapes, the trials, the seed), runs `kcs run` on it with a single rank
whose implementation is a worker process speaking the worker protocol
(kcs/worker.py; the kernel runs in the kernel host of kcs/host.py, a fresh
interpreter, never in a fork of this process), and
reads the dataset back with load(). kcs generates the inputs, computes the
reference, applies the guards, the oracle and the verdict: the Python side
only ever sees the inputs of a call and its output buffer.
"""
import inspect
import os
import re
import shutil
import tempfile
import weakref

from ._binary import find_kcs
from .dataset import load
from .host import Registration
from .worker import wants_torch
from . import ops as ops_table
from . import runner as _runner


class WorkerModeUnsupported(RuntimeError):
    """The kcs binary does not run plugins in a worker process started as
    `$KCS_PLUGIN_WORKER SPEC` (it predates the worker protocol of
    include/kcs_worker.h)."""


class KcsRefused(ValueError):
    """kcs refused the check's study (exit 2): a contract, op, dtype or
    shape it does not accept, e.g. a dtype_out the contract does not
    cover. The message is kcs's own, whole (every line it printed)."""


class KcsRunFailed(RuntimeError):
    """`kcs run` failed (an exit status other than 0, 2 or 3, or no
    dataset). The message is kcs's whole stderr; .dir holds its files."""


class Result:
    """What kcs said about a kernel.

    verdict     "PASS" (every trial within tolerance), "FAIL" (some trial
                violates the contract or is unexplained), "ERROR" (some call
                failed: the kernel returned a wrong shape or dtype, raised
                an exception other than kcs.Raised, hung, died, or kcs could
                not run it), "NOT_CLAIMED" (the contract binds only kernels
                that declare a property, e.g. C-ORD-03's batch_invariant,
                and fn was not declared so: check(..., declares="batch_invariant"))
    tau         the worst FINITE measured/eta over the trials (> 1 fails);
                NaN when no trial has a finite one. A trial's ratio is
                infinite when a clause with eta = 0 fails (the exact-result
                clause on exact-sum inputs), the output is NaN where the
                reference is not, or the kernel raised where a result was
                due: those are counted below, not folded into tau
    tau_max     the largest ratio of any trial as kcs recorded it (inf included)
    exact_trials, exact_mismatches
                trials on exact-sum inputs (input_dist "exact": the exact
                result is representable, eta = 0) and how many of them did
                not return the exact result (trials, not outputs: the
                dataset keeps per-trial maxima)
    signatures  the signatures that EVERY failing trial supports, sorted
                (a single NaN trial does not make the rest "nonfinite")
    signature_counts
                {signature: number of failing trials naming it}, for all of
                them; failing_trials: how many trials failed
    reasons     why calls failed (ERROR) or were refused (kcs.Raised where
                the contract wanted a result), one whole text per trial
    trials      the per-trial table (pandas DataFrame, as kcs.load gives)
    log         the worker's stdout and stderr
    semantics   the semantics (attrs) the kernel was judged under: the
                contract's own ("nan=propagate"), or where declares= names
                others (nan=mask, oob=clamp|zero|undefined) kcs's statement
                of the declared ones ("nan=mask (declared; contract:
                nan=propagate)"); "" for a contract without attrs
    dir         the folder holding the study, dataset (check.h5), kcs's
                stderr (kcs.err) and the worker log (worker.log): kept
                while this Result exists (or for good with check(keep=...))
    """

    def __init__(self, verdict, tau, signatures, reasons, trials, log, command, *,
                 tau_max=None, signature_counts=None, failing_trials=0, exact_trials=0,
                 exact_mismatches=0, dir=None, semantics=""):
        self.verdict, self.tau, self.signatures = verdict, tau, signatures
        self.reasons, self.trials, self.log, self.command = reasons, trials, log, command
        self.tau_max = tau if tau_max is None else tau_max
        self.signature_counts = dict(signature_counts or {})
        self.failing_trials = failing_trials
        self.exact_trials, self.exact_mismatches = exact_trials, exact_mismatches
        self.dir = dir
        self.semantics = semantics

    def __bool__(self):
        return self.verdict == "PASS"

    def lines(self):
        """The verdict lines: one summary, one per failing trial; texts whole."""
        counts = ", ".join(f"{k} ({v}/{self.failing_trials})"
                           for k, v in sorted(self.signature_counts.items(),
                                              key=lambda kv: (-kv[1], kv[0])))
        head = f"{self.verdict}  tau={self.tau:.3g}"
        if self.exact_trials:
            head += f"  exact-sum trials not exact: {self.exact_mismatches}/{self.exact_trials}"
        if self.semantics:
            head += f"  semantics: {self.semantics}"
        out = [head + f"  signatures: {', '.join(self.signatures) or '-'}"
               + (f"  (per failing trial: {counts})" if counts else "")]
        if self.trials is not None:
            bad = self.trials[self.trials["verdict"] != "within_tolerance"]
            for r in bad.itertuples(index=False):
                what = r.signature
                msg = getattr(r, "message", "")
                if r.verdict in ("error", "unavailable") and msg:
                    what = msg  # the signature field keeps 63 characters of it
                elif msg:
                    what = f"{what} ({msg})"
                out.append(f"  case {r.case_id} {r.op} {r.dtype_in}->{r.dtype_out} m={r.m} "
                           f"n={r.n} k={r.k} {r.input_dist} trial {r.trial}: {r.status} "
                           f"{r.verdict} tau={r.tau:.3g} {what}")
        out += [f"  reason: {x}" for x in self.reasons]
        return out

    def __repr__(self):
        return (f"Result(verdict={self.verdict!r}, tau={self.tau!r}, "
                f"signatures={self.signatures!r}, exact_mismatches={self.exact_mismatches!r}, "
                f"semantics={self.semantics!r})")

    def __str__(self):
        return "\n".join(self.lines())


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


def _contract_attrs(path):
    """The contract's oracle attrs (its default semantics), "" when none."""
    m = re.search(r'^\s+attrs:\s*"([^"]*)"', open(path, encoding="utf-8").read(), re.M)
    return m.group(1) if m else ""


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
          inputs=None, timeout=60.0, tensors="auto", keep=None, declares=None, reuse=True):
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
    declares  what fn declares about itself, comma-separated, in the
              plugins' vocabulary (src/arith/declares.c): "batch_invariant"
              (a contract with precondition.declares binds only kernels
              that declare it; otherwise the verdict is "NOT_CLAIMED"),
              "nan=mask|propagate", "oob=raise|clamp|zero|undefined":
              the semantics select the matching postconditions (the
              contract's attrs are swapped for the declared ones, as
              `kcs grade` does for a plugin); Result.semantics says which
    reuse     True: run the study in this session's `kcs run --serve`
              (kcs/runner.py: started once, replaced when it dies or
              hangs); False: a `kcs run` process of its own
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
            # the session's `kcs run --serve` (runner.py), restarted when a
            # kernel killed or stopped it; reuse=False: a process per check
            calls = len(shp or [0] * 8) * (int(trials) if trials else 4) * 4
            proc_rc, how = _runner.run(kcs, study, out, work, env,
                                       deadline_s=120.0 + float(timeout) * calls, reuse=reuse)
            forks = reg.stats()["forks"]
        finally:
            reg.close()
        rc = proc_rc
        err = open(os.path.join(work, "kcs.err"), encoding="utf-8", errors="replace").read()
        wlog = (open(log, encoding="utf-8", errors="replace").read()
                if os.path.exists(log) else "")
        if rc == 2:
            raise KcsRefused(f"kcs refused the check (exit 2): {err.strip()}")
        if rc not in (0, 3) or not os.path.exists(out):
            raise KcsRunFailed(f"kcs run exited {rc}: {err.strip()}")
        trials_df = load(out)
        if forks == 0 and (trials_df["status"] == "unavailable").all():
            # a kcs that dlopen()s plugins in its own process took the spec
            # for a library; one with workers would have started the relay
            raise WorkerModeUnsupported(
                f"{kcs} did not start the Python worker (it loads plugins in its own "
                f"process, or ignores KCS_PLUGIN_WORKER): {err.strip()}")
        res = _result(trials_df, wlog, cmd, err, work)
        said = re.search(r"judged under declared semantics (.*)", err)
        res.semantics = said.group(1).strip() if said else _contract_attrs(cpath)
        return _kept(res, work, keep)
    except BaseException as e:
        # an exception of kcs's that names files of the check keeps them as
        # long as it lives; anything else removes them now
        if keep is None and not (isinstance(e, (KcsRefused, KcsRunFailed,
                                                WorkerModeUnsupported))
                                 and _kept(e, work, keep)):
            shutil.rmtree(work, ignore_errors=True)
        raise


def _kept(obj, work, keep):
    """work (a temporary folder when keep is None) is removed when obj is
    garbage (or at exit): files that obj's messages name stay readable."""
    obj.dir = work
    if keep is None:
        weakref.finalize(obj, shutil.rmtree, work, True)
    return obj


def _result(df, log, cmd, kcs_err="", work=None):
    import math
    ok_status = df["status"].isin(["ok", "raised"])
    errors = df[~ok_status | df["verdict"].isin(["error", "unavailable"])]
    failing = df[df["verdict"].isin(["violation", "under_specified"])]
    taus = [float(t) for t in df["tau"]]
    finite = [t for t in taus if math.isfinite(t)]
    tau = max(finite) if finite else float("nan")
    tau_max = max(taus) if taus else float("nan")
    exact = df[(df["input_dist"] == "exact") & (df["status"] == "ok")]
    exact_bad = int((exact["verdict"].isin(["violation", "under_specified"])
                     & ~exact["tau"].apply(lambda t: math.isfinite(float(t)))).sum())
    per_trial = [{s for s in str(x).split(",") if s} for x in failing["signature"]]
    counts = {}
    for sigs_of in per_trial:
        for sg in sigs_of:
            counts[sg] = counts.get(sg, 0) + 1
    sigs = sorted(set.intersection(*per_trial)) if per_trial else []
    # /results.message holds a failed call's whole reason (the 64-byte
    # signature field cuts it); older datasets have no message column
    why = "message" if "message" in df.columns else "signature"
    reasons = [f"case {r.case_id} {r.input_dist} k={r.k} trial {r.trial}: {r.status}: "
               f"{getattr(r, why) or r.signature}"
               for r in errors.itertuples(index=False)]
    refused = df[(df["status"] == "raised") & df["verdict"].isin(["violation", "under_specified"])]
    reasons += [f"case {r.case_id} {r.input_dist} k={r.k} trial {r.trial}: the kernel raised "
                f"where the contract wants a result: {getattr(r, why, '') or 'kcs.Raised'}"
                for r in refused.itertuples(index=False)]
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
    return Result(verdict, tau, sigs, reasons, df, log, cmd, tau_max=tau_max,
                  signature_counts=counts, failing_trials=len(failing),
                  exact_trials=len(exact), exact_mismatches=exact_bad, dir=work)


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
