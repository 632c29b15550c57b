"""The Python side of the kcs worker protocol (include/kcs_worker.h, version 1).

The kcs grader starts a worker per implementation under test, passes each
call's inputs in a shared memory region, and keeps the reference (and its
own state) in its own process. Here the implementation is a Python callable.
The worker program kcs starts is a small RELAY, and the kernel runs in a
server child forked by a Broker. kcs.check() runs the Broker in the kernel
HOST (kcs/host.py): a fresh interpreter started once per session, never a
fork of the checking process (whose torch/OpenMP threads would make a fork
deadlock), that imports the kernel by reference in each child:

    host process (Broker)                kcs (grader)
       |  listens on a private             |  forks + execs the worker program with
       |  AF_UNIX socket                   |  one argument: python3 -m kcs.relay SPEC
       |                                   |  (SPEC: a file naming the socket, a token)
       |                                   v
       |<---- connect, token, fds --- relay (fd 3: the protocol channel,
       |      [3, 1, 2] (SCM_RIGHTS)       1/2: the worker log)
       |
       +-- fork --> server child: load the kernel of that token, serve(channel)
                    -> HELLO, CALL/RESULT...; stdout/stderr = the worker log

The relay stays alive as long as the server child: the Broker tells it how
the child ended ("exit N" / "signal S") and the relay ends the same way, so
kcs sees the worker's death, its status and its signal as the protocol
says. When kcs kills the relay (time limit) the Broker sees its connection
close and SIGKILLs the server child. A fresh relay (for the next call) gets
a fresh fork. The reference never crosses the channel: only the call's
inputs and the output buffer are in the region. A kernel that cannot be
loaded in the child answers HELLO with LOAD_FAILED and the reason.

Message layouts (native byte order) mirror kcs_worker.h; if that header
changes, HDR/HELLO/CALL/RESULT below change with it.
"""
import os
import secrets
import selectors
import signal
import socket
import struct
import sys
import tempfile
import traceback

import numpy as np

from . import encodings as enc
from . import ops as ops_table

PROTOCOL_VERSION = 1
MAGIC = 0x5753434B  # "KCSW"
WORKER_FD = 3
MAX_MSG = 65536
MAX_INPUTS = 4
HELLO, CALL, RESULT, BYE = 1, 2, 3, 4
LOAD_FAILED, NOT_IMPLEMENTATION = -1, -2
CALL_NEW_REGION = 1

HDR = struct.Struct("=IHHII")            # magic, version, type, length, seq
HELLO_FIXED = struct.Struct("=ii")       # status, pid; then name, ops, message, file
CALL_FIXED = struct.Struct("=Iiii4q Q 4Q 4Q QQQ d".replace(" ", ""))
RESULT_FIXED = struct.Struct("=iI")      # status, reserved; then message
assert HDR.size == 16 and CALL_FIXED.size == 152 and RESULT_FIXED.size == 8


class ProtocolError(RuntimeError):
    pass


class Raised(Exception):
    """Raise this from a kernel to refuse a call on purpose, as declared
    semantics demand (e.g. an out-of-range gather index under oob=raise, a
    NaN input under nan=raise). kcs records the call with status "raised"
    and its message (not as an error: the kernel did not break). Whether
    the refusal conforms is the contract's business: where its declared
    semantics allow raising (oob=raise, nan=raise) its clauses say whether
    this call's inputs called for it; anywhere else a result was due, and
    the trial FAILs (check()'s reasons say "the kernel raised where the
    contract wants a result")."""


def _strings(payload, off, n):
    out = []
    for _ in range(n):
        end = payload.find(b"\0", off)
        if end < 0:
            raise ProtocolError("a string in the payload is not NUL-terminated")
        out.append(payload[off:end].decode("utf-8", "replace"))
        off = end + 1
    return out, off


def _send(sock, mtype, seq, payload):
    msg = HDR.pack(MAGIC, PROTOCOL_VERSION, mtype, len(payload), seq) + payload
    if len(msg) > MAX_MSG:
        raise ProtocolError(f"message of {len(msg)} bytes exceeds {MAX_MSG}")
    sock.send(msg)


def _cstr(s, limit=4096):
    b = s.encode("utf-8", "replace")[:limit]
    return b.replace(b"\0", b" ") + b"\0"


def send_hello(sock, status, name, ops, message="", file=""):
    payload = HELLO_FIXED.pack(status, os.getpid()) + b"".join(
        _cstr(s) for s in (name, ops, message, file))
    _send(sock, HELLO, 0, payload)


def send_result(sock, seq, status, message=""):
    _send(sock, RESULT, seq, RESULT_FIXED.pack(status, 0) + _cstr(message, 16000))


def parse_call(payload):
    if len(payload) < CALL_FIXED.size:
        raise ProtocolError(f"CALL payload of {len(payload)} bytes")
    v = CALL_FIXED.unpack_from(payload)
    call = {
        "flags": v[0], "dtype_in": v[1], "dtype_acc": v[2], "dtype_out": v[3],
        "m": v[4], "n": v[5], "k": v[6], "batch": v[7], "region_bytes": v[8],
        "in_off": list(v[9:13]), "in_bytes": list(v[13:17]),
        "out_off": v[17], "out_bytes": v[18], "guard_bytes": v[19], "time_limit_s": v[20],
    }
    (call["op"], call["attrs"]), _ = _strings(payload, CALL_FIXED.size, 2)
    return call


def recv_msg(sock):
    """One datagram: (type, seq, payload, fds). None when the peer closed."""
    data, fds, flags, _ = socket.recv_fds(sock, MAX_MSG, 4)
    if not data and not fds:
        return None
    if flags & socket.MSG_TRUNC:
        raise ProtocolError("a message longer than the protocol allows")
    if len(data) < HDR.size:
        raise ProtocolError(f"a message of {len(data)} bytes")
    magic, version, mtype, length, seq = HDR.unpack_from(data)
    if magic != MAGIC or version != PROTOCOL_VERSION:
        raise ProtocolError(f"magic {magic:#x} version {version}")
    if length != len(data) - HDR.size:
        raise ProtocolError(f"length {length}, datagram carries {len(data) - HDR.size}")
    return mtype, seq, data[HDR.size:], fds


# --------------------------------------------------------------- the kernel


def _to_torch(arrays, dtypes):
    import torch  # optional
    out = []
    for a, dt in zip(arrays, dtypes):
        if a is None:
            out.append(None)
        elif dt == enc.BF16:
            t = torch.from_numpy(np.ascontiguousarray(a)).to(torch.bfloat16)
            out.append(t)
        else:
            out.append(torch.from_numpy(np.ascontiguousarray(a)))
    return out


def wants_torch(fn):
    """True when fn's parameters are annotated as torch tensors
    (torch.Tensor, or the string "torch.Tensor")."""
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    for p in params:
        ann = p.annotation
        if ann is inspect.Parameter.empty:
            continue
        name = ann if isinstance(ann, str) else (
            f"{getattr(ann, '__module__', '')}.{getattr(ann, '__qualname__', '')}")
        if "torch" in name and "Tensor" in name:
            return True
    return False


def _result_array(res, dt_out):
    """The kernel's return value as the numpy type of dt_out, or a reason."""
    if hasattr(res, "detach") and hasattr(res, "cpu"):  # a torch tensor
        import torch
        t = res.detach().cpu()
        if t.dtype == torch.bfloat16:
            if dt_out != enc.BF16:
                return None, f"returned torch.bfloat16, dtype_out {enc.NAMES[dt_out]}"
            return t.float().numpy(), None  # exact: every bf16 is a float32
        res = t.numpy()
    if not isinstance(res, np.ndarray):
        if isinstance(res, np.generic):
            res = np.asarray(res)
        else:
            return None, (f"returned {type(res).__name__}, expected a numpy array "
                          f"(or a torch tensor)")
    want = np.dtype(enc.SEEN[dt_out])
    if res.dtype != want:
        return None, (f"returned dtype {res.dtype}, dtype_out {enc.NAMES[dt_out]} "
                      f"expects {want}")
    return res, None


def run_kernel(fn, call, region, tensors="numpy"):
    """One CALL on the region: fn on the inputs, the output written into
    its place. Returns (status, message) in kcs_plugin.h's convention."""
    op = call["op"]
    try:
        shapes = ops_table.input_shapes(op, call["m"], call["n"], call["k"], call["batch"])
    except ValueError as e:
        return -1, str(e)
    dts = [call["dtype_in"]] * MAX_INPUTS
    if op == "gather":
        dts[1] = enc.I64
    args, arg_dts = [], []
    for i in range(MAX_INPUTS):
        nbytes = call["in_bytes"][i]
        if nbytes == 0:
            continue
        if shapes[i] is None:
            return -1, f"{op}: input {i} present, the op has no such input"
        st = np.dtype(enc.STORAGE[dts[i]])
        count = nbytes // st.itemsize
        if count != int(np.prod(shapes[i], dtype=np.int64)):
            return -1, (f"{op}: input {i} holds {count} elements, shape {shapes[i]} "
                        f"needs {int(np.prod(shapes[i]))}")
        raw = np.frombuffer(region, dtype=st, count=count, offset=call["in_off"][i])
        # a copy: the kernel gets arrays of its own, never views of the region
        args.append(enc.decode(dts[i], raw).reshape(shapes[i]).copy())
        arg_dts.append(dts[i])
    if tensors == "torch":
        try:
            args = _to_torch(args, arg_dts)
        except ImportError:
            return -1, "tensors='torch' (the kernel wants torch tensors), but torch is not installed"
    elif tensors != "numpy":
        return -1, f"tensors={tensors!r}: numpy or torch"
    try:
        res = fn(*args)
    except Raised as e:
        return 1, str(e) or "raised"
    except BaseException as e:  # noqa: B902 - a kernel's failure is the verdict's business
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        return -1, f"the kernel raised {type(e).__name__}: {e}{where}"
    dt_out = call["dtype_out"]
    arr, why = _result_array(res, dt_out)
    if why:
        return -1, why
    want_shape = ops_table.output_shape(op, call["m"], call["n"], call["k"], call["batch"])
    ok_shape = arr.shape == want_shape or (want_shape == () and arr.shape == (1,))
    if not ok_shape:
        return -1, f"returned shape {arr.shape}, {op} expects {want_shape}"
    try:
        stored = np.ascontiguousarray(enc.encode(dt_out, np.ascontiguousarray(arr)))
    except enc.EncodingError as e:
        return -1, str(e)
    data = stored.tobytes()
    if len(data) != call["out_bytes"]:
        return -1, f"output of {len(data)} bytes, the call's output holds {call['out_bytes']}"
    off = call["out_off"]
    region[off:off + len(data)] = data
    return 0, ""


# --------------------------------------------------------------- serving


def serve(sock, fn, name="python", ops="gemm", file="", tensors="numpy"):
    """Answer the grader on sock until it closes the channel or says BYE."""
    import mmap
    send_hello(sock, 0, name, ops, "", file)
    region = None
    while True:
        msg = recv_msg(sock)
        if msg is None:
            return 0
        mtype, seq, payload, fds = msg
        if mtype == BYE:
            return 0
        if mtype != CALL:
            raise ProtocolError(f"message type {mtype} where CALL was due")
        call = parse_call(payload)
        if call["flags"] & CALL_NEW_REGION:
            if len(fds) != 1:
                raise ProtocolError(f"NEW_REGION with {len(fds)} descriptors")
            if region is not None:
                region.close()
            region = mmap.mmap(fds[0], call["region_bytes"], mmap.MAP_SHARED,
                               mmap.PROT_READ | mmap.PROT_WRITE)
            os.close(fds[0])
        else:
            for fd in fds:
                os.close(fd)
        if region is None:
            raise ProtocolError("CALL before any region")
        end = max([call["out_off"] + call["out_bytes"]] +
                  [o + b for o, b in zip(call["in_off"], call["in_bytes"])])
        if end > len(region):
            raise ProtocolError(f"tensors end at {end}, the region has {len(region)} bytes")
        status, message = run_kernel(fn, call, region, tensors)
        if message:
            print(f"kcs python worker[{os.getpid()}]: call {seq}: {message}", file=sys.stderr,
                  flush=True)
        send_result(sock, seq, status, message)


# --------------------------------------------------------------- relay

from .relay import LIMITS as _LIMITS, TOKEN_LEN as _TOKEN_LEN  # noqa: E402


def _take_limits(as_bytes, cpu_s):
    """The CPU-time limit kcs gave the relay, on the server child. RLIMIT_AS
    is not applied: the child starts with the whole address space of the
    checking process (an interpreter, numpy, pandas, pytest), which is not
    the kernel's footprint; it would fail at once or mean nothing."""
    import resource
    if cpu_s != 2 ** 64 - 1:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    return as_bytes


def _close_other_fds(keep):
    """Close every descriptor above 2 except keep: the server child holds the
    channel and the log, nothing of the checking process's files and
    sockets (and no copy of a grader's end of a channel: that would keep
    the channel from closing)."""
    try:
        fds = [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        fds = range(3, 1024)
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def write_launcher(path):
    """An executable that kcs can exec as the worker program (kcs passes
    one argument, the spec): this interpreter, -S -m kcs.relay, with this
    package importable. -S: the relay needs only the standard library and
    this package (on PYTHONPATH here), so the site module's start-up
    (site-packages, .pth files) is skipped; kcs starts one relay per run."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o700)
    with os.fdopen(fd, "w") as fh:
        fh.write("#!/bin/sh\n# kcs Python worker: the relay of kcs/relay.py\n"
                 f"PYTHONPATH='{pkg_parent}'${{PYTHONPATH:+:$PYTHONPATH}}\n"
                 "export PYTHONPATH\n"
                 f"exec '{sys.executable}' -S -m kcs.relay \"$@\"\n")
    return path


class Broker:
    """Hands each relay's channel to a server child forked from THIS
    process, which runs the kernel registered under the relay's token.
    kcs.check() runs a Broker only in the kernel host (kcs/host.py), a
    fresh interpreter that never runs a kernel itself; constructed with fn
    in a process of one's own (the protocol tests) it forks that process.
    Call poll() regularly; close() at the end (kills what is left)."""

    def __init__(self, fn=None, *, name="python", ops="gemm", file="", tensors="numpy",
                 tmpdir=None):
        self.dir = tempfile.mkdtemp(prefix="kcs-broker-", dir=tmpdir)
        self.path = os.path.join(self.dir, "s")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        self.listener.listen(8)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, None)
        self.watched = []  # other sockets of the owner (the host's control)
        self.kernels = {}  # token -> {load, name, ops, file, tensors, forks, deaths}
        self.children = {}  # pid -> relay connection
        self.child_token = {}  # pid -> token
        self.deaths = []  # (pid, "exit N" | "signal S")
        self.token = None
        if fn is not None:
            self.token = self.add(lambda: fn, name=name, ops=ops, file=file, tensors=tensors)

    def add(self, load, *, name, ops, file="", tensors="numpy"):
        """Register a kernel (load(): the callable, run in the child);
        returns the token its relays present."""
        token = secrets.token_hex(_TOKEN_LEN // 2)
        self.kernels[token] = {"load": load, "name": name, "ops": ops, "file": file,
                               "tensors": tensors, "forks": 0, "deaths": []}
        return token

    @property
    def forks(self):
        return sum(k["forks"] for k in self.kernels.values())

    def watch(self, sock, handler):
        """poll() calls handler(sock) when sock is readable."""
        self.watched.append(sock)
        self.sel.register(sock, selectors.EVENT_READ, handler)

    def write_spec(self, path):
        """The file a relay reads (its one argument): where this broker
        listens and the token it wants."""
        import json
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"broker": self.path, "token": self.token, "pid": os.getpid()}, fh)
        return path

    write_launcher = staticmethod(write_launcher)

    def command(self, spec):
        """The worker argv: what kcs runs."""
        return [sys.executable, "-m", "kcs.relay", spec]

    def poll(self, timeout=0.05):
        for key, _ in self.sel.select(timeout):
            if key.data is None:
                self._accept()
            elif callable(key.data):
                key.data(key.fileobj)
            else:  # a relay connection: readable means closed (relay gone)
                pid = key.data
                try:
                    gone = key.fileobj.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    gone = True
                if gone and pid in self.children:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        self._reap(block=False)

    def _accept(self):
        conn, _ = self.listener.accept()
        conn.settimeout(10)
        try:
            data, fds, _, _ = socket.recv_fds(conn, _TOKEN_LEN + _LIMITS.size, 3)
        except OSError:
            conn.close()
            return
        token = data[:_TOKEN_LEN].rstrip(b"\0").decode(errors="replace")
        kernel = self.kernels.get(token)
        if kernel is None or len(fds) != 3 or len(data) != _TOKEN_LEN + _LIMITS.size:
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        chan_fd, out_fd, err_fd = fds
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the server child: never returns into the caller
            code = 0
            try:
                self.listener.close()
                for c in list(self.children.values()) + self.watched:
                    c.close()
                conn.close()
                os.dup2(out_fd, 1)
                os.dup2(err_fd, 2)
                _close_other_fds({chan_fd})
                _take_limits(*_LIMITS.unpack_from(data, _TOKEN_LEN))
                sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
                sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                sock = socket.socket(fileno=chan_fd)
                try:
                    fn = kernel["load"]()
                except BaseException as e:  # noqa: B902 - reported to kcs as the load failure
                    traceback.print_exc()
                    send_hello(sock, LOAD_FAILED, kernel["name"], kernel["ops"],
                               f"the Python kernel could not be loaded in the kcs worker: "
                               f"{type(e).__name__}: {e}", kernel["file"])
                    code = 0
                else:
                    code = serve(sock, fn, kernel["name"], kernel["ops"], kernel["file"],
                                 kernel["tensors"])
            except BaseException:  # noqa: B902
                traceback.print_exc()
                code = 3
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        for fd in fds:
            os.close(fd)
        conn.settimeout(None)
        kernel["forks"] += 1
        self.children[pid] = conn
        self.child_token[pid] = token
        self.sel.register(conn, selectors.EVENT_READ, pid)

    def _reap(self, block):
        for pid in list(self.children):
            try:
                got, status = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                got, status = pid, 0
            if got == 0:
                continue
            conn = self.children.pop(pid)
            if os.WIFSIGNALED(status):
                how = f"signal {os.WTERMSIG(status)}"
            else:
                how = f"exit {os.WEXITSTATUS(status)}"
            self.deaths.append((pid, how))
            k = self.kernels.get(self.child_token.pop(pid, None))
            if k is not None:
                k["deaths"].append([pid, how])
            try:
                conn.sendall((how + "\n").encode())
            except OSError:
                pass
            self.sel.unregister(conn)
            conn.close()

    def close(self):
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._reap(block=True)
        self.sel.close()
        self.listener.close()
        try:
            os.unlink(self.path)
            os.rmdir(self.dir)
        except OSError:
            pass


if __name__ == "__main__":
    from .relay import relay_main
    sys.exit(relay_main(sys.argv[1:]))
