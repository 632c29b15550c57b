/* The worker's box, its two processes (worker_box_impl.h): the keeper (pid
 * 1 of the box's PID namespace, or a plain child where there is none) and
 * the worker. They run between clone and exec in a copy of the grader,
 * which may have threads: system calls only, no malloc, no stdio, no
 * glibc function that takes a lock (set*id are raw system calls). */
#define _GNU_SOURCE
#include "worker_box_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kcs_worker.h"

pid_t box_raw_fork(unsigned long flags)
{
    return (pid_t)syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int box_write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, text, strlen(text));
    close(fd);
    return rc;
}

static void utoa(unsigned long v, char *out)
{
    char d[24];
    int k = 0;
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 23);
    while (k)
        *out++ = d[--k];
    *out = 0;
}

static void close_from(int lo)
{
#if defined(SYS_close_range)
    if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0) == 0)
        return;
#endif
    for (int fd = lo; fd < 65536; fd++)
        close(fd);
}

/* Kill every child of this process until none is left (the keeper without
 * a PID namespace: a subreaper collects what the worker's tree orphans). */
static void kill_children(void)
{
    pid_t self = getpid();
    for (int round = 0; round < 1000; round++) {
        int found = 0, fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char buf[4096];
        long n;
        while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct {
                    uint64_t ino;
                    int64_t off;
                    unsigned short reclen;
                    unsigned char type;
                    char name[];
                } *de = (void *)(buf + off);
                off += de->reclen;
                if (de->name[0] < '1' || de->name[0] > '9')
                    continue;
                char path[64] = "/proc/", st[512];
                strcat(path, de->name);
                strcat(path, "/stat");
                int sf = open(path, O_RDONLY | O_CLOEXEC);
                if (sf < 0)
                    continue;
                ssize_t r = read(sf, st, sizeof st - 1);
                close(sf);
                if (r <= 0)
                    continue;
                st[r] = 0;
                char *p = strrchr(st, ')'); /* "pid (comm) S ppid ..." */
                if (!p || !p[1] || !p[2] || !p[3])
                    continue;
                long ppid = strtol(p + 4, NULL, 10);
                if (ppid == self) {
                    long pid = strtol(de->name, NULL, 10);
                    kill((pid_t)pid, SIGKILL);
                    found = 1;
                }
            }
        }
        if (fd >= 0)
            close(fd);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!found && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
            return;
        if (!found) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

static void apply_rlimits(box_plan *p)
{
    struct rlimit r;
    int ok = 1;
    if (p->spec->as_bytes) {
        r.rlim_cur = r.rlim_max = (rlim_t)p->spec->as_bytes;
        ok &= setrlimit(RLIMIT_AS, &r) == 0;
    }
    if (p->spec->cpu_s > 0) {
        rlim_t s = (rlim_t)(p->spec->cpu_s + 0.999);
        r.rlim_cur = s;
        r.rlim_max = s + 1; /* SIGXCPU first, SIGKILL a second later */
        ok &= setrlimit(RLIMIT_CPU, &r) == 0;
    }
    r.rlim_cur = r.rlim_max = 0;
    ok &= setrlimit(RLIMIT_CORE, &r) == 0;
    if (ok)
        box_held(&p->rep, KCS_BOX_RLIMIT);
    else
        box_not_held(&p->rep, KCS_BOX_RLIMIT, "setrlimit failed", errno);
}

/* The worker: its own layers, the report, the exec. */
void box_worker(box_plan *p, pid_t keeper)
{
    const kcs_box_spec *s = p->spec;
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != keeper)
        _exit(126); /* the keeper is already gone */
    if (p->boxoff)
        setpgid(0, 0); /* its own process group: the host kills whatever it forked */
    apply_rlimits(p);
    if (!(p->rep.held & (1u << KCS_BOX_PIDNS)) && !(p->rep.held & (1u << KCS_BOX_USERNS)) &&
        geteuid() == 0 && !(p->off & (1u << KCS_BOX_UID))) {
        /* root without a PID namespace: a uid of its own cannot signal kcs */
        uid_t u = (uid_t)((1u << 30) + (unsigned)keeper);
        /* raw system calls: glibc's set*id would wait for the grader's
         * other threads, which this child does not have */
        if (syscall(SYS_setgroups, 0, NULL) == 0 && syscall(SYS_setresgid, u, u, u) == 0 &&
            syscall(SYS_setresuid, u, u, u) == 0)
            box_held(&p->rep, KCS_BOX_UID);
        else
            box_not_held(&p->rep, KCS_BOX_UID, "setresuid failed", errno);
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (p->ruleset >= 0) {
        if (syscall(SYS_landlock_restrict_self, p->ruleset, 0) == 0)
            box_held(&p->rep, KCS_BOX_LANDLOCK);
        else
            box_not_held(&p->rep, KCS_BOX_LANDLOCK, "landlock_restrict_self failed", errno);
        close(p->ruleset);
    }
    if (s->last)
        s->last();
    box_held(&p->rep, KCS_BOX_PDEATH);
    write_all(p->rep_w, &p->rep, sizeof p->rep);
    close(p->rep_w);
    if (dup2(s->nullfd, 0) < 0 || dup2(s->logfd, 1) < 0 || dup2(s->logfd, 2) < 0)
        _exit(126);
    if (s->chan != KCS_WORKER_FD) {
        if (dup2(s->chan, KCS_WORKER_FD) < 0)
            _exit(126);
    } else {
        fcntl(s->chan, F_SETFD, fcntl(s->chan, F_GETFD) & ~FD_CLOEXEC);
    }
    close_from(KCS_WORKER_FD + 1);
    signal(SIGPIPE, SIG_DFL);
    execve(s->argv[0], p->argv, p->envp);
    _exit(127);
}

/* Make the scratch directory a mount of its own, then every other mount
 * read-only (keeping each one's nosuid/nodev/noexec). */
static int remount_ro(box_plan *p, int *e)
{
    if (p->scratch[0] && mount(p->scratch, p->scratch, NULL, MS_BIND | MS_REC, NULL) < 0) {
        *e = errno;
        return -1;
    }
    const char *mp = p->mounts.paths;
    int fails = 0;
    for (int i = 0; i < p->mounts.n; mp += strlen(mp) + 1, i++) {
        if (p->scratch[0] && !strcmp(mp, p->scratch))
            continue;
        if (p->proc_own && (!strcmp(mp, "/proc") || !strncmp(mp, "/proc/", 6)))
            continue; /* under the box's own read-only proc */
        if (mount(NULL, mp, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | p->mounts.flags[i], NULL) < 0 &&
            errno != ENOENT && errno != EACCES) {
            *e = errno;
            fails++;
        }
    }
    return fails ? -1 : 0; /* the scratch bind mount stays writable */
}

/* The keeper: the box's shared layers, then the worker; then its status to
 * the grader and the end of everything left. */
/* The keeper is a copy of the grader: make it unreadable (not dumpable:
 * no /proc/PID/mem, environ or exe for the worker) and rename it, its
 * command line included, so that the worker does not see "kcs" in it. */
static void keeper_disguise(void)
{
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_NAME, "init", 0, 0, 0);
    char st[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, st, sizeof st - 1);
    close(fd);
    if (n <= 0)
        return;
    st[n] = 0;
    char *q = strrchr(st, ')'); /* field 2 ends here; arg_start, arg_end are 48, 49 */
    if (!q)
        return;
    unsigned long v[2] = {0, 0};
    int field = 2;
    for (char *c = q + 1; *c && field < 49; c++)
        if (*c == ' ') {
            field++;
            if (field >= 48)
                v[field - 48] = strtoul(c + 1, NULL, 10);
        }
    if (field == 49 && v[0] && v[1] > v[0] + 5) {
        memset((void *)v[0], 0, v[1] - v[0]);
        memcpy((void *)v[0], "init", 5);
    }
}

void box_keeper(box_plan *p)
{
    int in_pidns = (p->rep.held >> KCS_BOX_PIDNS) & 1;
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    pid_t pp = getppid();
    if (in_pidns ? pp != 0 : pp != p->grader)
        _exit(126); /* the grader is already gone */
    setpgid(0, 0);
    if (dup2(p->spec->nullfd, 0) < 0 || dup2(p->spec->logfd, 1) < 0 ||
        dup2(p->spec->logfd, 2) < 0)
        _exit(126);
    if (p->userns) {
        char line[64] = "0 ", num[24];
        utoa(p->outer_uid, num);
        strcat(line, num);
        strcat(line, " 1");
        char gline[64] = "0 ";
        utoa(p->outer_gid, num);
        strcat(gline, num);
        strcat(gline, " 1");
        /* /proc/self belongs to root while the process is not dumpable
         * (kcs grade's grader is not; the keeper is its copy): dumpable for
         * the maps, before the worker exists; keeper_disguise ends it */
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        if (box_write_file("/proc/self/setgroups", "deny") < 0 ||
            box_write_file("/proc/self/uid_map", line) < 0 ||
            box_write_file("/proc/self/gid_map", gline) < 0) {
            int e = errno;
            box_not_held(&p->rep, KCS_BOX_USERNS, "cannot write uid_map", e);
            box_not_held(&p->rep, KCS_BOX_MNTNS, "no user namespace to hold it", 0);
        }
    }
    /* after the maps: a process that is not dumpable cannot write them */
    keeper_disguise();
    /* the cgroup first: the read-only remount below covers cgroupfs too */
    if (p->cgroup[0]) {
        char path[4200];
        strcpy(path, p->cgroup);
        strcat(path, "/cgroup.procs");
        if (box_write_file(path, "0") == 0)
            box_held(&p->rep, KCS_BOX_CGROUP);
        else
            box_not_held(&p->rep, KCS_BOX_CGROUP, "cannot join the cgroup", errno);
    }
    if (p->rep.held & (1u << KCS_BOX_MNTNS)) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
            box_not_held(&p->rep, KCS_BOX_MNTNS, "cannot make the mounts private", errno);
        } else {
            if (in_pidns && !(p->off & (1u << KCS_BOX_PROC))) {
                if (mount("proc", "/proc", "proc",
                          MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) == 0) {
                    box_held(&p->rep, KCS_BOX_PROC);
                    p->proc_own = 1;
                }
                else
                    box_not_held(&p->rep, KCS_BOX_PROC, "cannot mount proc", errno);
            }
            if (p->ruleset < 0 && !(p->off & (1u << KCS_BOX_ROFS))) {
                int e = 0;
                if (remount_ro(p, &e) == 0)
                    box_held(&p->rep, KCS_BOX_ROFS);
                else
                    box_not_held(&p->rep, KCS_BOX_ROFS, "a read-only remount failed", e);
            }
        }
    }
    if (in_pidns || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        box_held(&p->rep, KCS_BOX_REAPER);
    else
        box_not_held(&p->rep, KCS_BOX_REAPER, "PR_SET_CHILD_SUBREAPER failed", errno);
    pid_t self = getpid();
    if (p->scratch[0] && !in_pidns && geteuid() == 0 && !(p->off & (1u << KCS_BOX_UID)) &&
        !(p->rep.held & (1u << KCS_BOX_USERNS))) {
        uid_t u = (uid_t)((1u << 30) + (unsigned)self);
        if (chown(p->scratch, u, u) < 0) {
            /* the worker's uid layer reports what it can */
        }
    }
    pid_t w = box_raw_fork(0);
    if (w == 0)
        box_worker(p, self);
    /* the keeper keeps nothing of the grader's but the status pipe */
    if (p->st_w != 3) {
        if (dup2(p->st_w, 3) < 0)
            _exit(126);
        p->st_w = 3;
    }
    close_from(4);
    int status = 0;
    if (w < 0) {
        status = 126 << 8;
    } else {
        for (;;) {
            pid_t got = waitpid(-1, &status, 0);
            if (got == w)
                break;
            if (got < 0 && errno != EINTR) {
                status = 126 << 8;
                break;
            }
        }
    }
    write_all(p->st_w, &status, sizeof status);
    if (!in_pidns)
        kill_children();
    _exit(0); /* in a PID namespace: the kernel kills everything left */
}
