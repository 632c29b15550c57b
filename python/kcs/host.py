"""The kernel host: where kcs.check() runs a Python kernel.

A kernel must never run in a fork of the checking process: that process
may have threads (torch's intra-op pool, OpenMP, a BLAS pool), and a fork
of a threaded process can deadlock in the child (a lock held by a thread
that does not exist there). So check() starts, once per session, a HOST:
a fresh interpreter (`python -m kcs.host`, started with subprocess, not
forked) that imports numpy (and torch, when the caller has imported it)
and never runs a kernel itself, so that it stays single-threaded in the
sense that matters. The host runs a Broker (kcs/worker.py): each worker
that kcs starts (the relay, `python -m kcs.relay SPEC`) hands its channel
to the host, which forks a server child from ITSELF; the child imports the
kernel and answers kcs's calls:

    caller (check())          host (fresh interpreter, reused)      kcs run
      | register fn  ------->   | kernels[token] = how to load it     |
      | run kcs ------------------------------------------------------>| starts the relay
      |                         |<--- relay: token, channel fds -------|
      |                         +-- fork --> child: load fn, serve()   |

The kernel crosses to the host as a reference, never as a live object:

  - a function, class or other object defined at module level goes by
    pickle (by reference: its module and qualified name); the child imports
    its module with the caller's sys.path and working directory. A
    kernel defined in the script being run (__main__) is found by loading
    that script under the name __mp_main__, as multiprocessing's spawn
    does: its `if __name__ == "__main__":` block does not run.
  - a lambda, a closure or a nested function cannot be pickled by
    reference; cloudpickle (Debian: python3-cloudpickle), when installed,
    carries it by value. Without cloudpickle check() refuses it with a
    message saying so.

The host lives until the caller exits (it ends when its control socket
closes) and is restarted if it dies.
"""
import base64
import json
import os
import pickle
import socket
import subprocess
import sys
import threading

_lock = threading.Lock()
_client = None


class KernelNotTransferable(TypeError):
    """The kernel cannot be handed to the kernel host: a lambda, closure or
    nested function without cloudpickle, or an object pickle refuses."""


def _cloudpickle():
    try:
        import cloudpickle
        return cloudpickle
    except ImportError:
        return None


def _main_file():
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None)
    return os.path.abspath(f) if f and os.path.isfile(f) else None


def kernel_ref(fn):
    """How the host finds fn: a JSON-able dict. Raises KernelNotTransferable."""
    data, how, first_error = None, "pickle", None
    try:
        data = pickle.dumps(fn, protocol=4)
    except Exception as e:  # noqa: BLE001 - pickle raises many kinds
        first_error = e
    if data is None:
        cp = _cloudpickle()
        if cp is None:
            name = getattr(fn, "__qualname__", None) or type(fn).__name__
            raise KernelNotTransferable(
                f"kcs.check: the kernel {name!r} cannot be passed to the kcs worker "
                f"({type(first_error).__name__}: {first_error}). kcs runs kernels in a fresh "
                f"process, never in a fork of this one (a fork of a process that has used "
                f"torch or OpenMP threads can deadlock), so the kernel must be importable: "
                f"define it at module level, or install cloudpickle (Debian: "
                f"python3-cloudpickle) to pass lambdas and closures by value") from None
        try:
            data, how = cp.dumps(fn, protocol=4), "cloudpickle"
        except Exception as e:  # noqa: BLE001
            raise KernelNotTransferable(
                f"kcs.check: neither pickle ({first_error}) nor cloudpickle ({e}) can pass "
                f"the kernel to the kcs worker") from None
    main_file = None
    if how == "pickle" and b"__main__" in data:
        # defined in the script being run: by value when cloudpickle can,
        # else by loading the script under another name in the worker
        cp = _cloudpickle()
        main_file = _main_file()
        if cp is not None:
            data, how, main_file = cp.dumps(fn, protocol=4), "cloudpickle", None
        elif main_file is None:
            raise KernelNotTransferable(
                "kcs.check: the kernel is defined in __main__ without a script file "
                "(an interactive session or python -c), so the kcs worker cannot import "
                "it: define it in a module, or install cloudpickle (Debian: "
                "python3-cloudpickle)")
    ref = {"how": how, "data": base64.b64encode(data).decode("ascii"),
           "path": list(sys.path), "cwd": os.getcwd(), "env": dict(os.environ)}
    if main_file:
        ref["main_file"] = main_file
    return ref


def load_kernel(ref):
    """In the host's forked child: the kernel ref names, with the caller's
    sys.path and working directory."""
    if isinstance(ref.get("env"), dict):  # the caller's environment at check() time
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in ref["env"].items()})
    path = [p for p in ref.get("path", []) if isinstance(p, str)]
    sys.path[:] = path + [p for p in sys.path if p not in path]
    if ref.get("cwd"):
        try:
            os.chdir(ref["cwd"])
        except OSError:
            pass
    if ref.get("main_file"):
        import importlib.util
        spec = importlib.util.spec_from_file_location("__mp_main__", ref["main_file"])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["__mp_main__"] = sys.modules["__main__"] = mod
        spec.loader.exec_module(mod)
    data = base64.b64decode(ref["data"])
    if ref.get("how") == "cloudpickle":
        import cloudpickle  # noqa: F401 - registers what its pickles need
    return pickle.loads(data)


def _preload_list():
    """Modules the host imports up front (so that every child has them
    already): numpy always, torch when the caller has it loaded."""
    return ["numpy"] + [m for m in ("torch",) if m in sys.modules]


# --------------------------------------------------------------- the caller's end


class HostError(RuntimeError):
    """The kernel host could not be started or stopped answering."""


class _Client:
    def __init__(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kcs.host", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=env,
            close_fds=True)
        theirs.close()
        self.sock = mine
        self.ask_lock = threading.Lock()
        self.owner = os.getpid()  # a forked caller starts a host of its own
        self.sock.settimeout(120)
        self.buf = b""
        hello = self._read()
        self.path, self.pid = hello["socket"], hello["pid"]

    def _read(self):
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except OSError as e:
                raise HostError(f"the kcs kernel host did not answer: {e}") from None
            if not chunk:
                raise HostError(f"the kcs kernel host (pid {self.proc.pid}) went away "
                                f"(exit status {self.proc.poll()})")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        msg = json.loads(line)
        if "error" in msg:
            raise HostError(f"the kcs kernel host: {msg['error']}")
        return msg

    def ask(self, **msg):
        with self.ask_lock:  # one request and its answer at a time (threads)
            try:
                self.sock.sendall(json.dumps(msg).encode() + b"\n")
            except OSError as e:
                raise HostError(f"the kcs kernel host went away: {e}") from None
            return self._read()

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        try:
            self.sock.close()
        finally:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def client():
    """This session's kernel host (started on first use, restarted if it died)."""
    global _client
    with _lock:
        if _client is not None and _client.owner != os.getpid():
            _client = None  # inherited through a fork: the parent's, not ours
        if _client is None or not _client.alive():
            if _client is not None:
                _client.close()
            _client = _Client()
        return _client


def shutdown():
    """Stop the kernel host (atexit does it too)."""
    global _client
    with _lock:
        if _client is not None and _client.owner == os.getpid():
            _client.close()
        _client = None


import atexit  # noqa: E402

atexit.register(shutdown)


class Registration:
    """A kernel registered with the host for one check: the relay spec
    names the host's socket and this token."""

    def __init__(self, fn, *, name, ops, file="", tensors="numpy"):
        ref = kernel_ref(fn)
        self.host = client()
        ans = self.host.ask(op="register", kernel=ref, name=name, ops=ops, file=file,
                            tensors=tensors, preload=_preload_list())
        self.token = ans["token"]

    def write_spec(self, path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"broker": self.host.path, "token": self.token,
                       "pid": self.host.pid}, fh)
        return path

    @staticmethod
    def write_launcher(path):
        from .worker import write_launcher
        return write_launcher(path)

    def stats(self):
        """{"forks": n, "deaths": [[pid, "exit N" | "signal S"], ...]}"""
        return self.host.ask(op="stats", token=self.token)

    def close(self):
        try:
            if self.host.alive():
                self.host.ask(op="forget", token=self.token)
        except HostError:
            pass


# --------------------------------------------------------------- the host process


def host_main(argv):
    """python -m kcs.host FD: serve kernels for the process holding the
    other end of socket FD, until it closes."""
    from .worker import Broker
    if len(argv) != 1:
        print("usage: python3 -m kcs.host FD (started by kcs.check, never by hand)",
              file=sys.stderr)
        return 2
    ctl = socket.socket(fileno=int(argv[0]))
    import importlib
    for m in ("numpy",):
        importlib.import_module(m)
    broker = Broker(None)
    state = {"buf": b"", "done": False}

    def reply(obj):
        ctl.setblocking(True)
        ctl.sendall(json.dumps(obj).encode() + b"\n")
        ctl.setblocking(False)

    def on_control(_sock):
        try:
            chunk = ctl.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            state["done"] = True
            return
        state["buf"] += chunk
        while b"\n" in state["buf"]:
            line, _, state["buf"] = state["buf"].partition(b"\n")
            try:
                msg = json.loads(line)
                what = msg.get("op")
                if what == "register":
                    for m in msg.get("preload", []):
                        if m in ("numpy", "torch"):
                            try:
                                importlib.import_module(m)
                            except ImportError:
                                pass
                    ref = msg["kernel"]
                    tok = broker.add(lambda ref=ref: load_kernel(ref), name=msg["name"],
                                     ops=msg["ops"], file=msg.get("file", ""),
                                     tensors=msg.get("tensors", "numpy"))
                    reply({"token": tok})
                elif what == "stats":
                    k = broker.kernels.get(msg.get("token"), {})
                    reply({"forks": k.get("forks", 0), "deaths": k.get("deaths", [])})
                elif what == "forget":
                    broker.kernels.pop(msg.get("token"), None)
                    reply({"ok": True})
                else:
                    reply({"error": f"unknown request {what!r}"})
            except (ValueError, KeyError, TypeError) as e:
                reply({"error": f"bad request: {e}"})

    ctl.setblocking(False)
    broker.watch(ctl, on_control)
    reply({"socket": broker.path, "pid": os.getpid()})
    try:
        while not state["done"]:
            broker.poll(0.05)
    finally:
        broker.close()
    return 0


if __name__ == "__main__":
    sys.exit(host_main(sys.argv[1:]))
