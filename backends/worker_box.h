/* The worker's box: how a kernel under test is contained (docs/isolation.md).
 *
 * A worker runs in a box of layers, each applied where the kernel allows
 * it and each reporting whether it held:
 *
 *   pidns     its own PID namespace: it cannot see or signal the grader (a
 *             keeper process is its init; when the keeper ends, the kernel
 *             kills everything left in the namespace)
 *   ipcns     its own System V IPC namespace
 *   mntns     its own mount namespace (for proc and rofs)
 *   userns    a user namespace (when kcs is not root), for the three above
 *   proc      a /proc of its own PID namespace (read-only)
 *   landlock  Landlock: writes only under its scratch directory (and to
 *             /dev/null, /dev/zero, /dev/full, GPU device nodes); on ABI 6+
 *             no signal to a process outside the box
 *   rofs      without Landlock: every mount read-only in its mount
 *             namespace, the scratch directory excepted
 *   cgroup    a cgroup v2 of its own, killed whole (cgroup.kill) at the end
 *   reaper    the keeper is a child subreaper and the grader too: what the
 *             worker's children leave behind is reaped and killed
 *   pdeath    PR_SET_PDEATHSIG: the box dies with the grader
 *   uid       a uid of its own (2^30 + the keeper's pid), when kcs is root
 *             and there is no PID namespace
 *   rlimit    RLIMIT_AS, RLIMIT_CPU (defaults: docs/isolation.md), no core
 *   env       no KCS_* variable; TMPDIR is the scratch directory
 *   name      argv[0] and the process name do not say kcs
 *
 * The grader's own side (protocol, time limits, seccomp and capabilities)
 * is worker_host.c; this file starts, kills and reaps the box. */
#ifndef KCS_WORKER_BOX_H
#define KCS_WORKER_BOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef enum kcs_box_layer {
    KCS_BOX_PIDNS,
    KCS_BOX_IPCNS,
    KCS_BOX_MNTNS,
    KCS_BOX_USERNS,
    KCS_BOX_PROC,
    KCS_BOX_LANDLOCK,
    KCS_BOX_ROFS,
    KCS_BOX_CGROUP,
    KCS_BOX_REAPER,
    KCS_BOX_PDEATH,
    KCS_BOX_UID,
    KCS_BOX_RLIMIT,
    KCS_BOX_ENV,
    KCS_BOX_NAME,
    KCS_BOX_N_LAYERS
} kcs_box_layer;

#define KCS_BOX_WHY_LEN 80

/* What a box's start reports: per layer, whether it was tried and held,
 * and when tried but not held, why. Filled by the box's processes before
 * the worker program runs (so the kernel under test cannot change it). */
typedef struct kcs_box_report {
    uint32_t tried, held; /* bit (1u << layer) */
    char why[KCS_BOX_N_LAYERS][KCS_BOX_WHY_LEN];
} kcs_box_report;

/* The process name the worker program is given (argv[0], PR_SET_NAME). */
#define KCS_BOX_PROCESS_NAME "plugin-host"

/* What the box needs from the worker host. */
typedef struct kcs_box_spec {
    char *const *argv;  /* argv[0]: the program's path */
    int chan;           /* becomes descriptor 3 */
    int logfd, nullfd;  /* stdout/stderr; stdin */
    uint64_t as_bytes;  /* RLIMIT_AS, 0: none */
    double cpu_s;       /* RLIMIT_CPU, 0: none */
    /* between the box's layers and the exec, in the worker (async-signal-
     * safe only): the host's own last steps (seccomp, capabilities) */
    void (*last)(void);
} kcs_box_spec;

typedef struct kcs_box kcs_box;

const char *kcs_box_layer_name(kcs_box_layer l);

/* The held layers among those that depend on the kernel and privileges,
 * comma-separated ("pidns,ipcns,mntns,proc,landlock,cgroup"), "none"
 * when none; and a full line: held ones, then each missing one with why. */
void kcs_box_summary(const kcs_box_report *r, char *buf, size_t len);
void kcs_box_describe(const kcs_box_report *r, char *buf, size_t len);

/* Start the box and the worker program in it. On success *box_p is the
 * box (its pid: kcs_box_pid) and rep says what held; the worker has the
 * channel on descriptor 3. KCS_WORKER_BOX=off starts the worker as a plain
 * child (no box: the measurements' baseline); KCS_WORKER_BOX=-LAYER,...
 * leaves those layers out (tests of the fallbacks). */
int kcs_box_start(const kcs_box_spec *spec, kcs_box **box_p, kcs_box_report *rep,
                  kcs_error *err);

/* The process the grader holds (the keeper, or the worker itself when
 * the box is off). */
pid_t kcs_box_pid(const kcs_box *b);

/* Has the box ended (its keeper exited)? Does not reap it. */
int kcs_box_ended(const kcs_box *b);

/* Kill everything in the box (SIGKILL: keeper, process group, cgroup). */
void kcs_box_kill(kcs_box *b);

/* Reap the box: *status is the worker's wait status (or the keeper's when
 * the worker's is unknown: killed here). When this returns, no process of
 * the box is left (the namespace, the cgroup or the sweep saw to it).
 * Returns 0, or -1 when the status was collected elsewhere. */
int kcs_box_reap(kcs_box *b, int *status);

/* Remove what the box left (scratch directory, cgroup) and free it. */
void kcs_box_free(kcs_box *b);

/* The last box started in this process: what held (for kcs grade and the
 * provenance). 0 when none was started. */
int kcs_box_last_report(kcs_box_report *rep);

#endif
