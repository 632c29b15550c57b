"""The worker program kcs starts for a Python kernel (see kcs/worker.py):
`python3 -m kcs.relay SPEC`. It hands its protocol channel (fd 3) and its
log (fds 1, 2) to the checking process named in SPEC and then mirrors how
that process's forked server ended. Standard library only: it starts fast
(kcs starts a fresh one after every worker death)."""
import os
import signal
import socket
import struct
import sys

WORKER_FD = 3

TOKEN_LEN = 32


LIMITS = struct.Struct("=QQ")  # RLIMIT_AS, RLIMIT_CPU soft limits (2**64-1: none)


def limits():
    """The resource limits kcs gave this worker, for the server child to
    take on (it is forked from the checking process, not from kcs)."""
    import resource

    def soft(r):
        v = resource.getrlimit(r)[0]
        return 2 ** 64 - 1 if v == resource.RLIM_INFINITY else v

    return LIMITS.pack(soft(resource.RLIMIT_AS), soft(resource.RLIMIT_CPU))


def relay_main(argv):
    """python3 -m kcs.relay SPEC: started by kcs with the channel on fd 3
    (SPEC: the JSON file Broker.write_spec wrote: the broker's socket and
    token); hands the channel to the Broker and ends the way the Broker's
    server child ended."""
    import json
    if len(argv) != 1:
        print("usage: python3 -m kcs.relay SPEC (started by kcs, never by hand: the "
              "channel is fd 3)", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            spec = json.load(fh)
        broker, token = spec["broker"], spec["token"]
    except (OSError, ValueError, KeyError) as e:
        print(f"kcs.relay: {argv[0]}: not a kcs Python worker spec ({e})",
              file=sys.stderr, flush=True)
        return 2
    # kcs names the channel in no variable (a kernel must not learn from its
    # environment that it is graded): it is always fd 3. A test grader that
    # hands over another descriptor says so in KCS_WORKER_FD.
    fd = int(os.environ.get("KCS_WORKER_FD", WORKER_FD))
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(broker)
        socket.send_fds(conn, [token.encode()[:TOKEN_LEN].ljust(TOKEN_LEN, b"\0")
                               + limits()], [fd, 1, 2])
    except OSError as e:
        print(f"kcs.relay: cannot reach the checking process at {broker}: {e}",
              file=sys.stderr, flush=True)
        return 75
    os.close(fd)  # the server child holds the channel now
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = conn.recv(256)
        if not chunk:
            print("kcs.relay: the checking process went away", file=sys.stderr,
                  flush=True)
            return 75
        buf += chunk
    word, _, num = buf.decode().strip().partition(" ")
    if word == "signal":
        sig = int(num)
        print(f"kcs.relay: the Python worker died of signal {sig} "
              f"({signal.Signals(sig).name})", file=sys.stderr, flush=True)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return int(num) if word == "exit" else 70



if __name__ == "__main__":
    sys.exit(relay_main(sys.argv[1:]))
