/* The worker's box: see worker_box.h and docs/isolation.md.
 *
 * Three processes:
 *   grader  prepares everything that needs the C library (scratch
 *           directory, cgroup, Landlock ruleset, mount list, environment)
 *           and clone()s the keeper with new namespaces;
 *   keeper  pid 1 of the box's PID namespace (or a plain child where there
 *           is none): mounts, cgroup, subreaper; forks the worker, waits for
 *           it, sends its wait status to the grader and exits, which kills
 *           whatever the worker left in the namespace (or, without one,
 *           kills the children the subreaper collected);
 *   worker  applies its own layers, reports them all, exec()s the program.
 * Between clone and exec only system calls run (no malloc, no stdio): the
 * grader may have threads. */
#define _GNU_SOURCE
#include "worker_box.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
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

/* ------------------------------------------------------------ the layers */

static const struct {
    const char *name;
    int variable; /* depends on the kernel and privileges (in the summary) */
} layers[KCS_BOX_N_LAYERS] = {
    [KCS_BOX_PIDNS] = {"pidns", 1},     [KCS_BOX_IPCNS] = {"ipcns", 1},
    [KCS_BOX_MNTNS] = {"mntns", 1},     [KCS_BOX_USERNS] = {"userns", 1},
    [KCS_BOX_PROC] = {"proc", 1},       [KCS_BOX_LANDLOCK] = {"landlock", 1},
    [KCS_BOX_ROFS] = {"rofs", 1},       [KCS_BOX_CGROUP] = {"cgroup", 1},
    [KCS_BOX_REAPER] = {"reaper", 0},   [KCS_BOX_PDEATH] = {"pdeath", 0},
    [KCS_BOX_UID] = {"uid", 1},         [KCS_BOX_RLIMIT] = {"rlimit", 0},
    [KCS_BOX_ENV] = {"env", 0},         [KCS_BOX_NAME] = {"name", 0},
};

const char *kcs_box_layer_name(kcs_box_layer l)
{
    return (unsigned)l < KCS_BOX_N_LAYERS ? layers[l].name : "?";
}

void kcs_box_summary(const kcs_box_report *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int l = 0; l < KCS_BOX_N_LAYERS; l++)
        if (layers[l].variable && (r->held & (1u << l)) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     layers[l].name);
    if (!buf[0])
        snprintf(buf, len, "none");
}

void kcs_box_describe(const kcs_box_report *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int l = 0; l < KCS_BOX_N_LAYERS && used < len; l++)
        if (r->held & (1u << l))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
                                     layers[l].name);
    if (!used && len)
        used += (size_t)snprintf(buf, len, "no layer");
    for (int l = 0; l < KCS_BOX_N_LAYERS && used < len; l++)
        if ((r->tried & (1u << l)) && !(r->held & (1u << l)))
            used += (size_t)snprintf(buf + used, len - used, "; no %s%s%s", layers[l].name,
                                     r->why[l][0] ? ": " : "", r->why[l]);
}

/* Async-signal-safe: mark a layer held, or not held with why (+ errno). */
static void held(kcs_box_report *r, kcs_box_layer l)
{
    r->tried |= 1u << l;
    r->held |= 1u << l;
    r->why[l][0] = 0;
}

static void not_held(kcs_box_report *r, kcs_box_layer l, const char *why, int e)
{
    r->tried |= 1u << l;
    r->held &= ~(1u << l);
    char *o = r->why[l];
    size_t n = 0;
    while (why[n] && n < KCS_BOX_WHY_LEN - 16) {
        o[n] = why[n];
        n++;
    }
    if (e > 0) {
        const char *p = " (errno ";
        while (*p)
            o[n++] = *p++;
        char d[12];
        int k = 0;
        for (int v = e; v > 0 && k < 11; v /= 10)
            d[k++] = (char)('0' + v % 10);
        while (k)
            o[n++] = d[--k];
        o[n++] = ')';
    }
    o[n] = 0;
}

/* ----------------------------------------------------- the box's config */

struct kcs_box {
    pid_t pid;          /* keeper (or the worker when the box is off); 0 once reaped */
    int keeper;         /* 1: pid is a keeper that reports the worker's status */
    int status_fd;      /* read end of the keeper's status pipe, -1: none */
    int pidns;          /* the PID namespace held */
    char scratch[4096]; /* "" when none */
    char cgroup[4096];  /* the cgroup's directory, "" when none */
};

static uint32_t disabled_layers(int *off, kcs_error *err, int *bad)
{
    const char *s = getenv("KCS_WORKER_BOX");
    *off = 0;
    *bad = 0;
    if (!s || !*s || !strcmp(s, "on"))
        return 0;
    if (!strcmp(s, "off")) {
        *off = 1;
        return ~0u;
    }
    uint32_t mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int l = -1;
        if (t[0] == '-')
            for (int k = 0; k < KCS_BOX_N_LAYERS; k++)
                if (!strcmp(t + 1, layers[k].name))
                    l = k;
        if (l < 0) {
            *bad = 1;
            kcs_fail(err, KCS_E_INVAL, "KCS_WORKER_BOX=%s: expected on, off or -LAYER,... "
                     "(layers: pidns ipcns mntns userns proc landlock rofs cgroup uid)", s);
            return 0;
        }
        mask |= 1u << l;
    }
    return mask;
}

/* -------------------------------------------------------------- Landlock */

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* The uapi structures as of ABI 6 (the system's header may be older). */
struct box_ll_attr {
    uint64_t handled_access_fs, handled_access_net, scoped;
};
struct box_ll_path {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define LL_WRITE_FILE (1ull << 1)
#define LL_REMOVE_DIR (1ull << 4)
#define LL_REMOVE_FILE (1ull << 5)
#define LL_MAKE_ALL (0x7Full << 6) /* char dir reg sock fifo block sym */
#define LL_REFER (1ull << 13)      /* ABI 2 */
#define LL_TRUNCATE (1ull << 14)   /* ABI 3 */
#define LL_SCOPE_SIGNAL (1ull << 1) /* ABI 6 */
#define LL_RULE_PATH_BENEATH 1

static int ll_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* VERSION */);
    return v < 0 ? 0 : (int)v;
}

static void ll_allow(int ruleset, const char *path, uint64_t access)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            access &= LL_WRITE_FILE | LL_TRUNCATE; /* the rights a file can hold */
        struct box_ll_path pb = {access, fd};
        syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    }
    close(fd);
}

/* A ruleset: writes only beneath scratch and to the harmless and GPU
 * device nodes; no signal out of the domain (ABI 6). -1 with why. */
static int ll_ruleset(const char *scratch, char *why, size_t len, int *e)
{
    int abi = ll_abi();
    *e = 0;
    if (abi < 1) {
        *e = errno;
        snprintf(why, len, "the kernel offers no Landlock");
        return -1;
    }
    struct box_ll_attr a = {0};
    a.handled_access_fs = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_ALL;
    if (abi >= 2)
        a.handled_access_fs |= LL_REFER;
    if (abi >= 3)
        a.handled_access_fs |= LL_TRUNCATE;
    size_t size = sizeof(uint64_t);
    if (abi >= 6) {
        a.scoped = LL_SCOPE_SIGNAL;
        size = sizeof a;
    }
    int fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
    if (fd < 0) {
        *e = errno;
        snprintf(why, len, "landlock_create_ruleset failed");
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (scratch[0])
        ll_allow(fd, scratch, a.handled_access_fs);
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/kfd",
                                       "/dev/dri"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        ll_allow(fd, devs[i], LL_WRITE_FILE | (abi >= 3 ? LL_TRUNCATE : 0));
    DIR *d = opendir("/dev");
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, "nvidia", 6)) {
            char p[300];
            snprintf(p, sizeof p, "/dev/%s", de->d_name);
            ll_allow(fd, p, LL_WRITE_FILE);
        }
    if (d)
        closedir(d);
    return fd;
}

/* --------------------------------------------------------- mounts, cgroup */

/* The mount points of this process with their per-mount flags, for the
 * read-only remount (rofs): NUL-separated paths, one flags word each. */
typedef struct mount_list {
    char *paths;
    unsigned long *flags;
    int n;
} mount_list;

static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] && p[3]) {
            *o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
}

static void mounts_read(mount_list *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return;
    size_t cap = 0, used = 0;
    int ncap = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char mp[4096], opts[512];
        if (sscanf(line, "%*s %*s %*s %*s %4095s %511s", mp, opts) != 2)
            continue;
        unescape(mp);
        unsigned long fl = 0;
        if (strstr(opts, "nosuid"))
            fl |= MS_NOSUID;
        if (strstr(opts, "nodev"))
            fl |= MS_NODEV;
        if (strstr(opts, "noexec"))
            fl |= MS_NOEXEC;
        if (strstr(opts, "noatime"))
            fl |= MS_NOATIME;
        else if (strstr(opts, "relatime"))
            fl |= MS_RELATIME;
        if (strstr(opts, "nodiratime"))
            fl |= MS_NODIRATIME;
        size_t l = strlen(mp) + 1;
        if (used + l > cap) {
            size_t nc = (cap + l) * 2;
            char *p = realloc(m->paths, nc);
            if (!p)
                break;
            m->paths = p;
            cap = nc;
        }
        if (m->n == ncap) {
            int nn = ncap ? 2 * ncap : 64;
            unsigned long *q = realloc(m->flags, (size_t)nn * sizeof *q);
            if (!q)
                break;
            m->flags = q;
            ncap = nn;
        }
        memcpy(m->paths + used, mp, l);
        used += l;
        m->flags[m->n++] = fl;
    }
    fclose(f);
}

static void mounts_free(mount_list *m)
{
    free(m->paths);
    free(m->flags);
    memset(m, 0, sizeof *m);
}

/* The cgroup v2 hierarchy's directory of this process ("" when none). */
static void cgroup_here(char *out, size_t len)
{
    out[0] = 0;
    char mnt[4096] = "", rel[4096] = "", line[8192];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f)) {
        char mp[4096], fstype[64];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(dash + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
            continue;
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1) {
            unescape(mp);
            snprintf(mnt, sizeof mnt, "%s", mp);
            break;
        }
    }
    if (f)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            snprintf(rel, sizeof rel, "%s", line + 3);
            rel[strcspn(rel, "\n")] = 0;
        }
    if (f)
        fclose(f);
    if (mnt[0] && rel[0])
        snprintf(out, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
}

/* ---------------------------------------------------- the box's processes */

/* Everything the keeper and the worker read, prepared by the grader. */
typedef struct box_plan {
    const kcs_box_spec *spec;
    uint32_t off;            /* layers left out */
    char *const *argv;       /* argv[0] renamed */
    char *const *envp;
    const char *scratch;     /* "" when none */
    const char *cgroup;      /* "" when none */
    int ruleset;             /* Landlock, -1: none */
    mount_list mounts;
    int userns;              /* CLONE_NEWUSER in the flags */
    uid_t outer_uid;
    gid_t outer_gid;
    pid_t grader;
    int rep_w, st_w;         /* the report and status pipes' write ends */
    int boxoff;              /* KCS_WORKER_BOX=off: the worker is a plain child */
    int proc_own;            /* the keeper mounted the box's own proc */
    kcs_box_report rep;
} box_plan;

static pid_t raw_fork(unsigned long flags)
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

static int write_file(const char *path, const char *text)
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
        held(&p->rep, KCS_BOX_RLIMIT);
    else
        not_held(&p->rep, KCS_BOX_RLIMIT, "setrlimit failed", errno);
}

/* The worker: its own layers, the report, the exec. */
static void worker(box_plan *p, pid_t keeper)
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
            held(&p->rep, KCS_BOX_UID);
        else
            not_held(&p->rep, KCS_BOX_UID, "setresuid failed", errno);
    }
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (p->ruleset >= 0) {
        if (syscall(SYS_landlock_restrict_self, p->ruleset, 0) == 0)
            held(&p->rep, KCS_BOX_LANDLOCK);
        else
            not_held(&p->rep, KCS_BOX_LANDLOCK, "landlock_restrict_self failed", errno);
        close(p->ruleset);
    }
    if (s->last)
        s->last();
    held(&p->rep, KCS_BOX_PDEATH);
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

static void keeper(box_plan *p)
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
        if (write_file("/proc/self/setgroups", "deny") < 0 ||
            write_file("/proc/self/uid_map", line) < 0 ||
            write_file("/proc/self/gid_map", gline) < 0) {
            int e = errno;
            not_held(&p->rep, KCS_BOX_USERNS, "cannot write uid_map", e);
            not_held(&p->rep, KCS_BOX_MNTNS, "no user namespace to hold it", 0);
        }
    }
    /* after the maps: a process that is not dumpable cannot write them */
    keeper_disguise();
    /* the cgroup first: the read-only remount below covers cgroupfs too */
    if (p->cgroup[0]) {
        char path[4200];
        strcpy(path, p->cgroup);
        strcat(path, "/cgroup.procs");
        if (write_file(path, "0") == 0)
            held(&p->rep, KCS_BOX_CGROUP);
        else
            not_held(&p->rep, KCS_BOX_CGROUP, "cannot join the cgroup", errno);
    }
    if (p->rep.held & (1u << KCS_BOX_MNTNS)) {
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
            not_held(&p->rep, KCS_BOX_MNTNS, "cannot make the mounts private", errno);
        } else {
            if (in_pidns && !(p->off & (1u << KCS_BOX_PROC))) {
                if (mount("proc", "/proc", "proc",
                          MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) == 0) {
                    held(&p->rep, KCS_BOX_PROC);
                    p->proc_own = 1;
                }
                else
                    not_held(&p->rep, KCS_BOX_PROC, "cannot mount proc", errno);
            }
            if (p->ruleset < 0 && !(p->off & (1u << KCS_BOX_ROFS))) {
                int e = 0;
                if (remount_ro(p, &e) == 0)
                    held(&p->rep, KCS_BOX_ROFS);
                else
                    not_held(&p->rep, KCS_BOX_ROFS, "a read-only remount failed", e);
            }
        }
    }
    if (in_pidns || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        held(&p->rep, KCS_BOX_REAPER);
    else
        not_held(&p->rep, KCS_BOX_REAPER, "PR_SET_CHILD_SUBREAPER failed", errno);
    pid_t self = getpid();
    if (p->scratch[0] && !in_pidns && geteuid() == 0 && !(p->off & (1u << KCS_BOX_UID)) &&
        !(p->rep.held & (1u << KCS_BOX_USERNS))) {
        uid_t u = (uid_t)((1u << 30) + (unsigned)self);
        if (chown(p->scratch, u, u) < 0) {
            /* the worker's uid layer reports what it can */
        }
    }
    pid_t w = raw_fork(0);
    if (w == 0)
        worker(p, self);
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

/* ------------------------------------------------------------ the grader */

static kcs_box_report last_report;
static int have_last;

int kcs_box_last_report(kcs_box_report *rep)
{
    if (have_last)
        *rep = last_report;
    return have_last;
}

/* Live keepers of this process (the grader's sweep spares them). */
#define MAX_LIVE 256
static pid_t live[MAX_LIVE];

static void live_add(pid_t p)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = p;
            return;
        }
}

static void live_del(pid_t p)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == p)
            live[i] = 0;
}

static int is_live(pid_t p)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == p)
            return 1;
    return 0;
}

/* The grader is a subreaper: orphans of a box without a PID namespace whose
 * keeper died come here; kill and reap every child that is not a live
 * keeper. */
static void grader_sweep(void)
{
    pid_t self = getpid();
    for (int round = 0; round < 100; round++) {
        int found = 0;
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (de->d_name[0] < '1' || de->d_name[0] > '9')
                continue;
            char path[300], st[512];
            snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
            FILE *f = fopen(path, "re");
            if (!f)
                continue;
            size_t r = fread(st, 1, sizeof st - 1, f);
            fclose(f);
            st[r] = 0;
            char *p = strrchr(st, ')');
            if (!p || strlen(p) < 4)
                continue;
            pid_t pid = (pid_t)atol(de->d_name);
            if ((pid_t)atol(p + 4) == self && !is_live(pid)) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                found = 1;
            }
        }
        if (d)
            closedir(d);
        if (!found)
            return;
    }
}

static int make_scratch(char *out, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, len, "%s/scratch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(out)) {
        out[0] = 0;
        return -1;
    }
    char real[4096];
    if (realpath(out, real) && strlen(real) < len)
        snprintf(out, len, "%s", real);
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static void cgroup_remove(kcs_box *b)
{
    if (!b->cgroup[0])
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/cgroup.kill", b->cgroup);
    for (int i = 0; i < 200; i++) {
        if (rmdir(b->cgroup) == 0 || errno == ENOENT)
            break;
        write_file(path, "1");
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    b->cgroup[0] = 0;
}

/* The environment: this process's without KCS_* and _, TMPDIR the scratch. */
static char **box_env(const char *scratch, int clean, char *tmpvar, size_t tmplen)
{
    extern char **environ;
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **envp = calloc(ne + 2, sizeof *envp);
    if (!envp)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        /* KCS_*, and "_" (the path of the command a shell started: kcs) */
        if (clean && (!strncmp(environ[i], "KCS_", 4) || !strncmp(environ[i], "_=", 2) ||
                      (scratch[0] && !strncmp(environ[i], "TMPDIR=", 7))))
            continue;
        envp[k++] = environ[i];
    }
    if (clean && scratch[0]) {
        snprintf(tmpvar, tmplen, "TMPDIR=%s", scratch);
        envp[k++] = tmpvar;
    }
    envp[k] = NULL;
    return envp;
}

int kcs_box_start(const kcs_box_spec *spec, kcs_box **box_p, kcs_box_report *rep,
                  kcs_error *err)
{
    *box_p = NULL;
    memset(rep, 0, sizeof *rep);
    int boxoff = 0, bad = 0;
    uint32_t off = disabled_layers(&boxoff, err, &bad);
    if (bad)
        return err->code;
    kcs_box *b = calloc(1, sizeof *b);
    if (!b)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for a worker box");
    b->status_fd = -1;
    static int reaper_set;
    if (!reaper_set && !boxoff) {
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        reaper_set = 1;
    }
    box_plan p;
    memset(&p, 0, sizeof p);
    p.spec = spec;
    p.off = off;
    p.ruleset = -1;
    p.grader = getpid();
    p.outer_uid = geteuid();
    p.outer_gid = getegid();
    if (!boxoff && make_scratch(b->scratch, sizeof b->scratch))
        b->scratch[0] = 0;
    p.scratch = b->scratch;
    p.cgroup = b->cgroup;
    /* argv with a neutral argv[0] */
    size_t na = 0;
    while (spec->argv[na])
        na++;
    char **argv = calloc(na + 1, sizeof *argv);
    char tmpvar[4200];
    char **envp = box_env(b->scratch, !boxoff, tmpvar, sizeof tmpvar);
    if (!argv || !envp) {
        free(argv);
        free(envp);
        kcs_box_free(b);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for a worker box");
    }
    for (size_t i = 0; i < na; i++)
        argv[i] = spec->argv[i];
    if (!boxoff)
        argv[0] = (char *)KCS_BOX_PROCESS_NAME;
    p.argv = argv;
    p.envp = envp;
    unsigned long ns = 0;
    if (!boxoff) {
        held(&p.rep, KCS_BOX_ENV);
        held(&p.rep, KCS_BOX_NAME);
        char why[KCS_BOX_WHY_LEN];
        int e = 0;
        if (!(off & (1u << KCS_BOX_LANDLOCK))) {
            p.ruleset = ll_ruleset(b->scratch, why, sizeof why, &e);
            if (p.ruleset < 0)
                not_held(&p.rep, KCS_BOX_LANDLOCK, why, e);
        }
        if (!(off & (1u << KCS_BOX_CGROUP))) {
            char here[4096];
            cgroup_here(here, sizeof here);
            static unsigned seq;
            if (!here[0]) {
                not_held(&p.rep, KCS_BOX_CGROUP, "no cgroup v2 hierarchy", 0);
            } else {
                snprintf(b->cgroup, sizeof b->cgroup, "%s/box-%d-%u", here, (int)getpid(), seq++);
                if (mkdir(b->cgroup, 0700) < 0) {
                    not_held(&p.rep, KCS_BOX_CGROUP, "the cgroup is not writable", errno);
                    b->cgroup[0] = 0;
                }
            }
        }
        if (p.ruleset < 0 && !(off & (1u << KCS_BOX_ROFS)))
            mounts_read(&p.mounts);
        if (!(off & (1u << KCS_BOX_PIDNS)))
            ns |= CLONE_NEWPID;
        if (!(off & (1u << KCS_BOX_IPCNS)))
            ns |= CLONE_NEWIPC;
        if (!(off & (1u << KCS_BOX_MNTNS)))
            ns |= CLONE_NEWNS;
    }
    int rp[2] = {-1, -1}, sp[2] = {-1, -1};
    if (pipe2(rp, O_CLOEXEC) < 0 || pipe2(sp, O_CLOEXEC) < 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (rp[i] >= 0)
                close(rp[i]);
            if (sp[i] >= 0)
                close(sp[i]);
        }
        free(argv);
        free(envp);
        if (p.ruleset >= 0)
            close(p.ruleset);
        mounts_free(&p.mounts);
        kcs_box_free(b);
        return kcs_fail(err, KCS_E_INTERNAL, "worker box: pipe: %s", strerror(e));
    }
    p.rep_w = rp[1];
    p.st_w = sp[1];
    p.boxoff = boxoff;
    for (int l = 0; l < KCS_BOX_N_LAYERS && !boxoff; l++)
        if (off & (1u << l))
            not_held(&p.rep, (kcs_box_layer)l, "left out (KCS_WORKER_BOX)", 0);
    fflush(NULL);
    pid_t pid = -1;
    int clone_errno = 0;
    if (boxoff) {
        pid = raw_fork(0);
        if (pid == 0) {
            p.rep.held = p.rep.tried = 0;
            worker(&p, p.grader);
        }
    } else {
        /* the namespaces: all, then (not root) with a user namespace, then none */
        unsigned long tries[3] = {ns, ns ? ns | CLONE_NEWUSER : 0, 0};
        for (int t = 0; t < 3 && pid < 0; t++) {
            if (t == 1 && (!ns || (off & (1u << KCS_BOX_USERNS))))
                continue;
            if (t == 2 && !ns)
                break;
            unsigned long fl = t == 2 ? 0 : tries[t];
            kcs_box_report r0 = p.rep;
            for (int l = KCS_BOX_PIDNS; l <= KCS_BOX_USERNS; l++) {
                unsigned long bit = l == KCS_BOX_PIDNS   ? CLONE_NEWPID
                                    : l == KCS_BOX_IPCNS ? CLONE_NEWIPC
                                    : l == KCS_BOX_MNTNS ? CLONE_NEWNS
                                                         : CLONE_NEWUSER;
                if (fl & bit)
                    held(&p.rep, (kcs_box_layer)l);
                else if (t == 2 && !(off & (1u << l)))
                    not_held(&p.rep, (kcs_box_layer)l, "clone refused the namespaces",
                             clone_errno);
            }
            p.userns = (fl & CLONE_NEWUSER) != 0;
            pid = raw_fork(fl);
            if (pid == 0)
                keeper(&p);
            if (pid < 0) {
                clone_errno = errno;
                p.rep = r0;
            }
        }
        if (pid < 0 && !ns) {
            pid = raw_fork(0);
            if (pid == 0)
                keeper(&p);
        }
    }
    int fork_errno = errno;
    close(rp[1]);
    close(sp[1]);
    free(argv);
    free(envp);
    if (p.ruleset >= 0)
        close(p.ruleset);
    mounts_free(&p.mounts);
    if (pid < 0) {
        close(rp[0]);
        close(sp[0]);
        kcs_box_free(b);
        return kcs_fail(err, KCS_E_INTERNAL, "worker: cannot start %s: %s", spec->argv[0],
                        strerror(fork_errno));
    }
    b->pid = pid;
    b->keeper = !boxoff;
    b->pidns = !boxoff && (p.rep.held & (1u << KCS_BOX_PIDNS));
    b->status_fd = boxoff ? -1 : sp[0];
    if (boxoff)
        close(sp[0]);
    live_add(pid);
    /* The report: written by the worker just before its exec. */
    size_t got = 0;
    unsigned char *dst = (unsigned char *)rep;
    while (got < sizeof *rep) {
        struct pollfd pf = {rp[0], POLLIN, 0};
        if (poll(&pf, 1, 10000) <= 0)
            break;
        ssize_t n = read(rp[0], dst + got, sizeof *rep - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(rp[0]);
    if (got != sizeof *rep)
        *rep = p.rep; /* the worker died before reporting: what the grader knows */
    if (!boxoff) {
        last_report = *rep;
        have_last = 1;
        b->pidns = (rep->held >> KCS_BOX_PIDNS) & 1;
        if (!(rep->held & (1u << KCS_BOX_CGROUP)) && b->cgroup[0]) {
            rmdir(b->cgroup);
            b->cgroup[0] = 0;
        }
    }
    *box_p = b;
    return 0;
}

pid_t kcs_box_pid(const kcs_box *b)
{
    return b ? b->pid : 0;
}

int kcs_box_ended(const kcs_box *b)
{
    if (!b || b->pid <= 0)
        return 1;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_PID, (id_t)b->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    return (r == 0 && si.si_pid != 0) || (r < 0 && errno == ECHILD);
}

void kcs_box_kill(kcs_box *b)
{
    if (!b || b->pid <= 0)
        return;
    kill(-b->pid, SIGKILL);
    kill(b->pid, SIGKILL);
    if (b->cgroup[0]) {
        char path[4200];
        snprintf(path, sizeof path, "%s/cgroup.kill", b->cgroup);
        write_file(path, "1");
    }
}

int kcs_box_reap(kcs_box *b, int *status)
{
    *status = 0;
    if (!b || b->pid <= 0)
        return -1;
    /* the keeper's (or worker's) process group: whatever is left in it */
    kill(-b->pid, SIGKILL);
    if (b->cgroup[0]) {
        char path[4200];
        snprintf(path, sizeof path, "%s/cgroup.kill", b->cgroup);
        write_file(path, "1");
    }
    int st = 0;
    pid_t got;
    while ((got = waitpid(b->pid, &st, 0)) < 0 && errno == EINTR)
        ;
    live_del(b->pid);
    b->pid = 0;
    int rc = got < 0 ? -1 : 0;
    *status = st;
    if (b->status_fd >= 0) {
        int ws;
        ssize_t n = read(b->status_fd, &ws, sizeof ws);
        if (n == (ssize_t)sizeof ws)
            *status = ws;
        close(b->status_fd);
        b->status_fd = -1;
    }
    cgroup_remove(b);
    if (b->keeper && !b->pidns)
        grader_sweep();
    return rc;
}

void kcs_box_free(kcs_box *b)
{
    if (!b)
        return;
    if (b->pid > 0) {
        int st;
        kcs_box_kill(b);
        kcs_box_reap(b, &st);
    }
    if (b->status_fd >= 0)
        close(b->status_fd);
    cgroup_remove(b);
    if (b->scratch[0])
        nftw(b->scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    free(b);
}
