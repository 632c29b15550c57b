"""A grader side of the worker protocol (include/kcs_worker.h), written here
only to test kcs/worker.py on its own: it starts the worker argv the way
kcs does (fd 3 = a SOCK_SEQPACKET channel, stdout/stderr to a log, its own
process group), shares a memfd region holding [inputs][guard|out|guard],
makes calls under a time limit, kills the worker on a timeout, and reports
any death. The verdicts of check() come from the kcs binary, never from
this file."""
import mmap
import os
import select
import signal
import socket
import subprocess
import time

import numpy as np

from kcs import encodings as enc
from kcs import worker as W

ALIGN = 64
GUARD = 4096
SENTINEL_BYTE = 0xA5


class WorkerDied(Exception):
    pass


def _up(x):
    return (x + ALIGN - 1) // ALIGN * ALIGN


class Grader:
    def __init__(self, argv, log_path, poll=None, cpu_s=None):
        self.argv, self.log_path, self.poll = argv, log_path, poll or (lambda t: time.sleep(t))
        self.cpu_s = cpu_s  # RLIMIT_CPU of the worker, as kcs's KCS_WORKER_CPU sets it
        self.proc = self.sock = None
        self.region = self.region_fd = None
        self.new_region = False
        self.seq = 0
        self.hello = None

    # -- life cycle
    def start(self, timeout=20.0):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log = open(self.log_path, "ab")
        env = dict(os.environ, KCS_WORKER_FD=str(theirs.fileno()),
                   KCS_WORKER_PROTOCOL=str(W.PROTOCOL_VERSION))
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     pass_fds=[theirs.fileno()], env=env,
                                     start_new_session=True, preexec_fn=self._limits)
        theirs.close()
        log.close()
        self.sock = ours
        self.new_region = self.region is not None  # a fresh worker needs the region again
        msg = self._recv(timeout)
        mtype, seq, payload, fds = msg
        assert mtype == W.HELLO and seq == 0, (mtype, seq)
        status, pid = W.HELLO_FIXED.unpack_from(payload)
        strs, _ = W._strings(payload, W.HELLO_FIXED.size, 4)
        self.hello = {"status": status, "pid": pid, "name": strs[0], "ops": strs[1],
                      "message": strs[2], "file": strs[3]}
        return self.hello

    def _limits(self):
        if self.cpu_s:
            import resource
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_s, self.cpu_s + 1))

    def stop(self):
        if self.sock:
            self.sock.close()
            self.sock = None
        if self.proc:
            end = time.monotonic() + 5
            while self.proc.poll() is None and time.monotonic() < end:
                self.poll(0.02)  # the broker relays the server child's exit
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            rc = self.proc.returncode
            self.proc = None
            return rc
        return None

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def _death(self, what):
        end = time.monotonic() + 10
        while self.proc.poll() is None and time.monotonic() < end:
            self.poll(0.02)
        rc = self.proc.wait(timeout=1)
        how = f"signal {-rc}" if rc < 0 else f"exit {rc}"
        self.sock.close()
        self.sock = None
        self.proc = None
        raise WorkerDied(f"{what}: the worker ended ({how})")

    def _recv(self, timeout):
        end = time.monotonic() + timeout
        while True:
            r, _, _ = select.select([self.sock], [], [], 0.02)
            if r:
                msg = W.recv_msg(self.sock)
                if msg is None:
                    self._death("channel closed")
                return msg
            self.poll(0.02)
            if time.monotonic() > end:
                self._kill()
                self.sock.close()
                self.sock = None
                self.proc = None
                raise TimeoutError(f"no answer within {timeout} s (worker killed)")

    # -- one call
    def call(self, op, dtype_in, dtype_out, m, n, k, batch, inputs, timeout=10.0, attrs=""):
        """inputs: storage arrays (None for absent slots). Returns (status,
        message, output storage array, guards_ok)."""
        if self.sock is None:
            self.start()
        dt_in, dt_out = enc.BY_NAME[dtype_in], enc.BY_NAME[dtype_out]
        from kcs import ops as O
        out_elems = int(np.prod(O.output_shape(op, m, n, k, batch), dtype=np.int64)) or 1
        out_bytes = out_elems * enc.itemsize(dt_out)
        offs, sizes, pos = [0] * 4, [0] * 4, 0
        for i, a in enumerate(inputs[:4]):
            if a is None:
                continue
            offs[i], sizes[i] = pos, a.nbytes
            pos = _up(pos + a.nbytes)
        out_off = _up(pos + GUARD)
        total = _up(out_off + out_bytes + GUARD)
        if self.region is None or len(self.region) < total:
            if self.region is not None:
                self.region.close()
                os.close(self.region_fd)
            self.region_fd = os.memfd_create("kcs-test-region")
            os.ftruncate(self.region_fd, total)
            self.region = mmap.mmap(self.region_fd, total)
            self.new_region = True
        for i, a in enumerate(inputs[:4]):
            if a is not None:
                self.region[offs[i]:offs[i] + sizes[i]] = np.ascontiguousarray(a).tobytes()
        g0 = out_off - GUARD
        self.region[g0:out_off + out_bytes + GUARD] = bytes([SENTINEL_BYTE]) * (
            2 * GUARD + out_bytes)
        self.seq += 1
        flags = W.CALL_NEW_REGION if self.new_region else 0
        fixed = W.CALL_FIXED.pack(flags, dt_in, enc.F32, dt_out, m, n, k, batch,
                                  len(self.region), *offs, *sizes, out_off, out_bytes,
                                  GUARD, float(timeout))
        payload = fixed + op.encode() + b"\0" + attrs.encode() + b"\0"
        hdr = W.HDR.pack(W.MAGIC, W.PROTOCOL_VERSION, W.CALL, len(payload), self.seq)
        try:
            if flags:
                socket.send_fds(self.sock, [hdr + payload], [self.region_fd])
            else:
                self.sock.send(hdr + payload)
        except OSError:
            self._death("send failed")
        self.new_region = False
        mtype, seq, payload, _ = self._recv(timeout)
        assert mtype == W.RESULT and seq == self.seq, (mtype, seq, self.seq)
        status, _ = W.RESULT_FIXED.unpack_from(payload)
        (message,), _ = W._strings(payload, W.RESULT_FIXED.size, 1)
        out = np.frombuffer(self.region, dtype=enc.STORAGE[dt_out], count=out_elems,
                            offset=out_off).copy()
        guard = bytes(self.region[g0:out_off]) + bytes(
            self.region[out_off + out_bytes:out_off + out_bytes + GUARD])
        return status, message, out, guard == bytes([SENTINEL_BYTE]) * (2 * GUARD)

    def close(self):
        self.stop()
        if self.region is not None:
            self.region.close()
            os.close(self.region_fd)
            self.region = None
