"""The kcs runner that check() reuses within a session.

`kcs run` on a one-case study costs a process start, MPI_Init and HDF5's
start-up each time, most of a check. So check() keeps one `kcs run
--serve` per (interpreter session, kcs binary, environment): a fresh
process started once with subprocess (never a fork of the caller), which
runs one study per request line and answers its exit status. It is
restarted when it died or stopped answering, or when a variable read at
start-up (MPI's, HDF5's, the loader's) changed; the others go with each
request, so each run sees the caller's environment of that check. It ends
at interpreter exit (its stdin closes).

What a run shares with the next one: the kcs process only. Every run
builds its plan, its backend binding, its worker and its dataset afresh
(kcs_runner_run); the kernel never runs in it, but in a child the kernel
host forks for that run alone (host.py), so a kernel's module state,
monkey-patching, threads or leaked memory die with its child. What a
hostile kernel can still reach is the runner process itself (same user:
a signal, SIGSTOP): a runner that is dead, or dies or hangs during a
request, is killed and the check is run again in a fresh runner (and,
should that fail as well, in a one-shot `kcs run`), so it gets the verdict
it would have had without reuse, and no later check runs in a runner a
kernel has touched.
"""
import atexit
import os
import select
import subprocess
import threading
import time

_lock = threading.Lock()
_runner = None
_no_serve = set()  # kcs binaries without --serve (older ones): one-shot runs

# variables read when kcs starts (MPI_Init, HDF5, the loader): a change
# starts another runner; any other variable that differs from the
# runner's starting environment goes with the request (set or unset)
START_PREFIXES = ("OMPI_", "OPAL_", "PMIX_", "HWLOC_", "HDF5_", "LD_", "MALLOC_")
PER_CHECK = ("KCS_WORKER_LOG", "KCS_PLUGIN_WORKER")


def _start_key(env):
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(START_PREFIXES)))


class _Runner:
    def __init__(self, kcs, env):
        self.kcs, self.env, self.key = kcs, dict(env), _start_key(env)
        self.owner = os.getpid()
        self.proc = subprocess.Popen(
            [kcs, "run", "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, close_fds=True, cwd="/")
        self.buf = b""

    def alive(self):
        return self.proc.poll() is None

    def request(self, study, out, work, errfile, env, deadline_s):
        """The run's exit status, or None when the runner died or stopped
        answering within deadline_s (it is then killed)."""
        diff = [f"{k}={v}" for k, v in env.items() if self.env.get(k) != v]
        diff += [k for k in self.env if k not in env]
        fields = [study, out, work, errfile] + diff
        if any(("\t" in f or "\n" in f) for f in fields):
            return None  # not expressible on a request line: one-shot
        try:
            self.proc.stdin.write(("\t".join(fields) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            self.kill()
            return None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + deadline_s
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                self.kill()
                return None
            r, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not r:
                if not self.alive():
                    return None
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                self.kill()
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            return int(line.split()[0])
        except (ValueError, IndexError):
            self.kill()
            return None

    def kill(self):
        if self.alive():
            self.proc.kill()
        self.close()

    def close(self):
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _runner_for(kcs, env):
    global _runner
    with _lock:
        r = _runner
        if r is not None and (r.owner != os.getpid()):
            _runner = r = None  # inherited through a fork: the parent's
        if r is not None and (not r.alive() or r.kcs != kcs or r.key != _start_key(env)):
            r.kill()
            _runner = r = None
        if r is None:
            _runner = r = _Runner(kcs, env)
        return r


def pid():
    """The pid of this session's runner, None when none runs."""
    r = _runner
    return r.proc.pid if r is not None and r.alive() and r.owner == os.getpid() else None


def shutdown():
    """End this session's runner (atexit does it too)."""
    global _runner
    with _lock:
        if _runner is not None and _runner.owner == os.getpid():
            _runner.close()
        _runner = None


atexit.register(shutdown)


def _clean(out):
    """What a lost run may have left of its output."""
    for p in (out, out + ".partial"):
        if os.path.exists(p):
            os.remove(p)
    if os.path.isdir(out + ".journal"):
        import shutil
        shutil.rmtree(out + ".journal", ignore_errors=True)


def run(kcs, study, out, work, env, deadline_s, reuse=True):
    """Run `kcs run STUDY -o OUT -q` in work with env; kcs's stderr goes to
    work/kcs.err. Returns (exit status, "serve" | "one-shot"): in the
    session's runner, or in a fresh one where that one was dead, died or
    hung during the request, or where that failed too, in a `kcs run`
    process of its own."""
    errfile = os.path.join(work, "kcs.err")
    global _runner
    for _attempt in range(2 if reuse else 0):  # a fresh runner once more
        if kcs in _no_serve:
            break
        r = _runner_for(kcs, {k: v for k, v in env.items() if k not in PER_CHECK})
        rc = r.request(study, out, work, errfile, env, deadline_s)
        if rc is not None:
            return rc, "serve"
        if r.proc.poll() == 2 and not r.buf:
            _no_serve.add(kcs)  # refused --serve: it predates it
        with _lock:
            if _runner is r:
                r.kill()
                _runner = None
        _clean(out)
    cmd = [kcs, "run", study, "-o", out, "-q"]
    with open(os.path.join(work, "kcs.out"), "w") as so, open(errfile, "w") as se:
        proc = subprocess.run(cmd, stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env,
                              cwd=work)
    return proc.returncode, "one-shot"
