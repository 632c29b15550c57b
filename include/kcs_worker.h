/* kcs_worker.h: the worker protocol of kcs (Kernel Contract Studies),
 * version 1.
 *
 * A kernel under test is untrusted code. kcs never runs it in its own
 * process: it starts a WORKER process per implementation under test, hands
 * it each call's tensors in shared memory, and keeps the reference result,
 * the other ranks' results and its own state in the grader process, where
 * the worker cannot map them. The C plugin host (`kcs-worker LIB.so`, which
 * dlopen()s a library written against kcs_plugin.h) is the first worker; a
 * worker in another language (Python, …) implements this file.
 *
 * This header is self-contained (<stdint.h> only) and usable from C and C++.
 * Everything below is native byte order and native alignment of the machine
 * both processes run on (they always share one machine).
 *
 * ---------------------------------------------------------------------------
 * Life cycle
 * ---------------------------------------------------------------------------
 *  1. The grader creates an AF_UNIX SOCK_SEQPACKET socket pair and starts
 *     the worker in a box (docs/isolation.md: PID, IPC and mount namespaces,
 *     Landlock or read-only mounts, a cgroup, where the kernel allows them).
 *     The worker: stdin is /dev/null; stdout and stderr are appended to a
 *     log file (never the grader's stdout); the channel is descriptor
 *     KCS_WORKER_FD (3) and every other descriptor is closed; resource limits
 *     (RLIMIT_AS, RLIMIT_CPU, RLIMIT_CORE = 0) are set; on Linux it gets
 *     PR_SET_NO_NEW_PRIVS, drops every capability and installs a seccomp
 *     filter that refuses ptrace, process_vm_readv and process_vm_writev;
 *     then it exec()s the worker (a fresh address space: nothing of the
 *     grader is mapped). The channel is always descriptor 3 and the
 *     protocol's version is in every message's header: no environment
 *     variable names either, and the environment holds no KCS_* variable
 *     (a kernel must not learn from it that it is being graded); argv[0]
 *     is "plugin-host", not the program's name.
 *  2. The worker loads the implementation and sends HELLO (status 0 and the
 *     implementation's name and ops; or status < 0 and why it cannot load).
 *  3. For each kernel call the grader sends CALL; the worker runs the kernel
 *     on the shared region and answers RESULT. One call at a time; seq
 *     numbers the calls and RESULT repeats CALL's seq.
 *  4. The grader ends the worker by closing its end of the channel (or by
 *     sending BYE); the worker exits 0 when recv() returns 0.
 *
 * Which program is the worker is the grader's choice (an argv): the C
 * plugin host is `kcs-worker LIB.so`; a Python worker would be e.g.
 * `python3 -m kcs.worker MODULE:FUNCTION`, reading the same messages from
 * descriptor 3 (socket.socket(fileno=3); the region arrives with
 * socket.recv_fds and is mapped with mmap.mmap(fd, region_bytes)) and
 * answering with the same RESULT. A worker that is itself the caller (a
 * pytest process that starts the grader) inverts only step 1: it creates
 * the pair and hands the other end to the grader as an inherited
 * descriptor; every message and the region are unchanged, but the grader
 * can then neither kill nor restart it, so a time limit or a death ends
 * the grading with an ERROR instead of starting a fresh worker. (The C
 * grader implements the forking side: src/worker_host.c.)
 *
 * The grader treats as an ERROR of the call being made (with the reason in
 * full), and starts a fresh worker for the next call:
 *   - the worker's exit or death by a signal (abort, SIGSEGV, the kernel's
 *     OOM killer, RLIMIT_CPU's SIGXCPU/SIGKILL) before RESULT;
 *   - the channel closing, or a malformed message (wrong magic, version,
 *     type, seq or length);
 *   - no RESULT within the call's time limit (the worker is SIGKILLed);
 *   - a write into the guard regions around the output (see below).
 *
 * ---------------------------------------------------------------------------
 * Messages
 * ---------------------------------------------------------------------------
 * Each message is ONE datagram of the SOCK_SEQPACKET socket: a
 * kcs_worker_hdr, then `length` payload bytes (at most KCS_WORKER_MAX_MSG in
 * all). Strings in payloads are NUL-terminated and follow the fixed part
 * one after another in the order listed.
 *
 * ---------------------------------------------------------------------------
 * Shared region
 * ---------------------------------------------------------------------------
 * One memfd (or POSIX shm object), passed as SCM_RIGHTS ancillary data with
 * the CALL that first uses it (flags & KCS_WORKER_CALL_NEW_REGION); the
 * worker maps it MAP_SHARED, read-write, `region_bytes` long, and keeps it
 * mapped for later calls (replacing an older region) until the next region
 * arrives. Within it every tensor starts at a multiple of 64 bytes:
 *
 *   [in 0][in 1][in 2][in 3] [guard | out | guard]
 *
 * in_off[i]/in_bytes[i] (in_bytes 0: the input is absent, NULL in the
 * plugin ABI), out_off/out_bytes. The output and both guard regions
 * (guard_bytes each, immediately before out_off and after out_off +
 * out_bytes) are pre-filled with the sentinel of dtype_out; a worker writes
 * only the output bytes. Tensor encodings, shapes and dtypes are those of
 * kcs_plugin.h (dense, row-major, native storage of each kcs_dtype).
 * The region holds only this call's inputs and output: never a reference.
 */
#ifndef KCS_WORKER_H
#define KCS_WORKER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KCS_WORKER_PROTOCOL_VERSION 1
#define KCS_WORKER_MAGIC 0x5753434Bu /* the bytes "KCSW" read as a little-endian uint32 */
#define KCS_WORKER_FD 3              /* the channel's descriptor in the worker */
#define KCS_WORKER_MAX_MSG 65536     /* largest datagram, header included */
#define KCS_WORKER_MAX_INPUTS 4
#define KCS_WORKER_ALIGN 64          /* tensor offsets in the region */

/* Message types. */
enum {
    KCS_WORKER_HELLO = 1,  /* worker -> grader, once, first */
    KCS_WORKER_CALL = 2,   /* grader -> worker */
    KCS_WORKER_RESULT = 3, /* worker -> grader, answers CALL */
    KCS_WORKER_BYE = 4     /* grader -> worker: exit 0 (no payload) */
};

/* 16 bytes at the start of every message. */
typedef struct kcs_worker_hdr {
    uint32_t magic;   /* KCS_WORKER_MAGIC */
    uint16_t version; /* KCS_WORKER_PROTOCOL_VERSION */
    uint16_t type;    /* KCS_WORKER_* */
    uint32_t length;  /* payload bytes after this header */
    uint32_t seq;     /* CALL: 1, 2, …; RESULT: the CALL's; HELLO, BYE: 0 */
} kcs_worker_hdr;

/* HELLO payload, followed by four strings: name, ops (comma-separated, as
 * kcs_plugin.ops), message (why loading failed; "" on success), file (the
 * file the implementation was loaded from, absolute; the grader fingerprints
 * it as the implementation's identity; "" when there is none), and
 * optionally a fifth: what the implementation declares (kcs_plugin_declares
 * of kcs_plugin.h; absent or "" when nothing). */
typedef struct kcs_worker_hello {
    int32_t status; /* 0 or KCS_WORKER_LOAD_FAILED / KCS_WORKER_NOT_IMPLEMENTATION */
    int32_t pid;    /* the worker's process id (for the log) */
} kcs_worker_hello;

#define KCS_WORKER_LOAD_FAILED (-1)        /* cannot load it (like a missing driver) */
#define KCS_WORKER_NOT_IMPLEMENTATION (-2) /* loads, but is not a valid implementation */

#define KCS_WORKER_CALL_NEW_REGION 1u /* an SCM_RIGHTS descriptor comes with this CALL */

/* CALL payload, followed by two strings: op ("gemm", …) and attrs
 * ("key=value;…", "" when none). Dtypes are kcs_dtype values
 * (kcs_plugin.h); m, n, k, batch as in kcs_plugin_call. */
typedef struct kcs_worker_call {
    uint32_t flags;          /* KCS_WORKER_CALL_* */
    int32_t dtype_in, dtype_acc, dtype_out;
    int64_t m, n, k, batch;
    uint64_t region_bytes;   /* size of the current region */
    uint64_t in_off[KCS_WORKER_MAX_INPUTS], in_bytes[KCS_WORKER_MAX_INPUTS];
    uint64_t out_off, out_bytes;
    uint64_t guard_bytes;    /* on each side of the output */
    double time_limit_s;     /* informational: the grader enforces it (0: none) */
} kcs_worker_call;

/* RESULT payload, followed by one string: the kernel's message ("" when
 * none). status is the kernel's return value in kcs_plugin.h's convention:
 * 0 done (the output holds the result), > 0 raised on purpose (message says
 * why), < 0 failed (message says why). */
typedef struct kcs_worker_result {
    int32_t status;
    uint32_t reserved; /* 0 */
} kcs_worker_result;

#ifdef __cplusplus
}
#endif

#endif
