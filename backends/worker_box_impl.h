/* Inside the worker's box (worker_box.c, worker_box_prep.c,
 * worker_box_child.c): what the grader prepares and the box's processes
 * read. Not an interface: only those three files include it. */
#ifndef KCS_WORKER_BOX_IMPL_H
#define KCS_WORKER_BOX_IMPL_H

#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "worker_box.h"

#ifndef SYS_landlock_create_ruleset /* headers older than Linux 5.13 */
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* The mount points of this process with their per-mount flags, for the
 * read-only remount (rofs): NUL-separated paths, one flags word each. */
typedef struct box_mount_list {
    char *paths;
    unsigned long *flags;
    int n;
} box_mount_list;

/* Everything the keeper and the worker read, prepared by the grader. */
typedef struct box_plan {
    const kcs_box_spec *spec;
    uint32_t off;            /* layers left out */
    char *const *argv;       /* argv[0] renamed */
    char *const *envp;
    const char *scratch;     /* "" when none */
    const char *cgroup;      /* "" when none */
    int ruleset;             /* Landlock, -1: none */
    box_mount_list mounts;
    int userns;              /* CLONE_NEWUSER in the flags */
    uid_t outer_uid;
    gid_t outer_gid;
    pid_t grader;
    int rep_w, st_w;         /* the report and status pipes' write ends */
    int boxoff;              /* KCS_WORKER_BOX=off: the worker is a plain child */
    int proc_own;            /* the keeper mounted the box's own proc */
    kcs_box_report rep;
} box_plan;

/* worker_box.c: mark a layer held, or tried and not held with why (and
 * errno when > 0). Async-signal-safe. */
void box_held(kcs_box_report *r, kcs_box_layer l);
void box_not_held(kcs_box_report *r, kcs_box_layer l, const char *why, int e);

/* worker_box_prep.c, in the grader before the clone: a Landlock ruleset
 * that allows writes only beneath scratch (and to harmless and GPU device
 * nodes) and no signal out of the box (-1 and why when there is none); the
 * mount points with their flags; the cgroup v2 directory of this process
 * ("" when none). */
int box_ll_ruleset(const char *scratch, char *why, size_t len, int *e);
void box_mounts_read(box_mount_list *m);
void box_mounts_free(box_mount_list *m);
void box_cgroup_here(char *out, size_t len);

/* worker_box_child.c, between clone and exec (system calls only): a fork
 * that runs no atfork handler (flags: CLONE_NEW*), writing a file, and the
 * keeper and the worker themselves (they never return). */
pid_t box_raw_fork(unsigned long flags);
int box_write_file(const char *path, const char *text);
void box_keeper(box_plan *p) __attribute__((noreturn));
void box_worker(box_plan *p, pid_t keeper) __attribute__((noreturn));

#endif
