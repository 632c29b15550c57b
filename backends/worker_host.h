/* The grader's side of the worker protocol (include/kcs_worker.h): start a
 * worker process, share a region with it, make calls under a time limit,
 * and turn any death of the worker into an error with the whole reason.
 * Generic over the worker program: the plugin backend starts `kcs-worker
 * LIB.so`; a worker in another language is another argv. */
#ifndef KCS_WORKER_HOST_H
#define KCS_WORKER_HOST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "kcs_worker.h"
#include "worker_box.h"

typedef struct kcs_worker_limits {
    uint64_t as_bytes;    /* RLIMIT_AS of the worker; 0: unlimited */
    double cpu_s;         /* RLIMIT_CPU of the worker (s, per worker); 0: none */
    int as_default, cpu_default; /* 1: the default, not set by the user */
    char log_path[PATH_MAX]; /* the worker's stdout and stderr are appended here */
    int log_default;      /* 1: log_path is the default, not KCS_WORKER_LOG */
} kcs_worker_limits;

/* The default limits of a worker (docs/isolation.md): address space
 * KCS_WORKER_MEM_DEFAULT_MIB, or half the physical memory when that is
 * less (never under 2 GiB); CPU time KCS_WORKER_CPU_DEFAULT_S per worker. */
#define KCS_WORKER_MEM_DEFAULT_MIB 16384
#define KCS_WORKER_CPU_DEFAULT_S 3600

/* Limits from the environment: KCS_WORKER_MEM (MiB of address space),
 * KCS_WORKER_CPU (seconds), 0 for none, the defaults above when unset;
 * KCS_WORKER_LOG (file; default $TMPDIR/kcs-worker-<pid>.log). A malformed
 * value is KCS_E_INVAL. */
int kcs_worker_limits_env(kcs_worker_limits *l, kcs_error *err);

/* Remove the log when it is the default one ($TMPDIR/kcs-worker-<pid>.log)
 * and nothing was written to it; a log the user named is always kept. */
void kcs_worker_log_tidy(const kcs_worker_limits *l);

/* What the worker said in HELLO. */
typedef struct kcs_worker_info {
    int status; /* 0, KCS_WORKER_LOAD_FAILED, KCS_WORKER_NOT_IMPLEMENTATION */
    int pid;
    char name[128];
    char ops[256];
    char msg[KCS_ERRMSG_MAX];
    char file[PATH_MAX];
    char declares[256]; /* what the implementation declares ("" when nothing) */
    kcs_box_report box; /* what of the worker's box held (worker_box.h) */
} kcs_worker_info;

typedef struct kcs_worker kcs_worker;

/* Start argv[0] (a path) with argv as a worker, in a box (worker_box.h;
 * info->box says which layers held), and read its HELLO (within
 * start_timeout_s). A worker that dies or says nothing is KCS_E_CRASHED /
 * KCS_E_TIMEOUT; a HELLO with status < 0 is returned in info with rc 0 (the
 * caller decides; the worker has exited). */
int kcs_worker_start(char *const argv[], const kcs_worker_limits *lim, double start_timeout_s,
                     kcs_worker **w_p, kcs_worker_info *info, kcs_error *err);

/* The grader's mapping of a shared region of at least `bytes` bytes; a
 * larger region is made when needed (and sent with the next call). The
 * pointer is valid until the next kcs_worker_region or kcs_worker_stop. */
unsigned char *kcs_worker_region(kcs_worker *w, size_t bytes, kcs_error *err);

/* One CALL (wc's offsets refer to the region; flags and region_bytes are
 * filled here) and its RESULT: 0 with *status_p and msg set, or
 * KCS_E_TIMEOUT (no answer within timeout_s, <= 0: none: the worker is
 * killed) / KCS_E_CRASHED (the worker died, closed the channel or broke the
 * protocol). After a non-zero return the worker is gone (kcs_worker_alive
 * is 0); the error says why in full. */
int kcs_worker_invoke(kcs_worker *w, kcs_worker_call *wc, const char *op, const char *attrs,
                    double timeout_s, int *status_p, char *msg, size_t msg_len, kcs_error *err);

int kcs_worker_alive(const kcs_worker *w);
int kcs_worker_pid(const kcs_worker *w);

/* Close the channel, give the worker a moment to exit, then SIGKILL its
 * whole box (worker_box.h); free everything. When this returns no process
 * of the box is left. NULL is fine. */
void kcs_worker_stop(kcs_worker *w);

/* Make this process unreadable to its workers (/proc/PID/mem, ptrace):
 * PR_SET_DUMPABLE 0. For single-process graders (kcs grade, kcs calibrate);
 * not for MPI ranks, whose shared-memory transport reads peers' memory. */
void kcs_worker_protect_grader(void);

#endif
