/* The grader's side of the worker protocol: see worker_host.h and
 * include/kcs_worker.h. */
#define _GNU_SOURCE
#include "worker_host.h"
#include "worker_box.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#endif

struct kcs_worker {
    kcs_box *box;       /* the worker's box (worker_box.h); NULL once reaped */
    pid_t pid;          /* the box's process (kcs_box_pid); 0 once reaped */
    int fd;             /* the channel; -1 once closed */
    uint32_t seq;
    int region_fd;      /* memfd of the current region, -1: none */
    unsigned char *region;
    size_t region_len;
    int region_sent;    /* the worker has the current region */
    char log[PATH_MAX];
    off_t log_start;    /* the log's size when this worker started */
    kcs_box_report report; /* what of the box held */
};

/* ---------------------------------------------------------------- limits */

static int env_num(const char *name, double *v, kcs_error *err)
{
    const char *s = getenv(name);
    *v = 0.0;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || !(x >= 0.0))
        return kcs_fail(err, KCS_E_INVAL, "%s=%s: not a non-negative number", name, s);
    *v = x;
    return 0;
}

static uint64_t default_as_bytes(void)
{
    uint64_t lim = (uint64_t)KCS_WORKER_MEM_DEFAULT_MIB << 20;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        uint64_t half = (uint64_t)pages * (uint64_t)page / 2;
        if (half < lim)
            lim = half;
    }
    if (lim < ((uint64_t)2 << 30))
        lim = (uint64_t)2 << 30;
    return lim;
}

int kcs_worker_limits_env(kcs_worker_limits *l, kcs_error *err)
{
    memset(l, 0, sizeof *l);
    double mem, cpu;
    int rc = env_num("KCS_WORKER_MEM", &mem, err);
    if (!rc)
        rc = env_num("KCS_WORKER_CPU", &cpu, err);
    if (rc)
        return rc;
    const char *ms = getenv("KCS_WORKER_MEM"), *cs = getenv("KCS_WORKER_CPU");
    l->as_default = !ms || !*ms;
    l->cpu_default = !cs || !*cs;
    l->as_bytes = l->as_default ? default_as_bytes() : (uint64_t)(mem * 1048576.0);
    l->cpu_s = l->cpu_default ? KCS_WORKER_CPU_DEFAULT_S : cpu;
    const char *log = getenv("KCS_WORKER_LOG");
    if (log && *log) {
        snprintf(l->log_path, sizeof l->log_path, "%s", log);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(l->log_path, sizeof l->log_path, "%s/kcs-worker-%d.log",
                 tmp && *tmp ? tmp : "/tmp", (int)getpid());
        l->log_default = 1;
    }
    return 0;
}

void kcs_worker_log_tidy(const kcs_worker_limits *l)
{
    struct stat st;
    if (l->log_default && l->log_path[0] && stat(l->log_path, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size == 0)
        unlink(l->log_path);
}

void kcs_worker_protect_grader(void)
{
#if defined(__linux__)
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}

/* ------------------------------------------------------------- the child */

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#if defined(__x86_64__)
#define KCS_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define KCS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
/* Refuse (EPERM) ptrace, process_vm_readv and process_vm_writev: the
 * worker cannot read another process's memory through them. */
static void child_seccomp(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KCS_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 3, 0), /* x32 numbers */
#else
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xFFFFFFFFu, 3, 0), /* never */
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#else
static void child_seccomp(void)
{
}
#endif

/* Drop every capability (a root grader's worker cannot read non-dumpable
 * processes or bypass file permissions). */
static void child_drop_caps(void)
{
#if defined(__linux__)
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
            break;
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    syscall(SYS_capset, &h, d);
#endif
}

/* The host's last steps in the worker, after the box's layers (worker_box.c
 * calls it between fork and exec: system calls only). */
static void child_last(void)
{
    child_drop_caps();
    child_seccomp();
}

/* ------------------------------------------------------------ messaging */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void close_chan(kcs_worker *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

/* The last non-empty line the worker wrote to its log (since it started). */
static void log_tail(const kcs_worker *w, char *out, size_t len)
{
    out[0] = 0;
    int fd = open(w->log, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > w->log_start) {
        char buf[512];
        off_t from = st.st_size - (off_t)(sizeof buf - 1);
        if (from < w->log_start)
            from = w->log_start;
        ssize_t n = pread(fd, buf, sizeof buf - 1, from);
        if (n > 0) {
            buf[n] = 0;
            while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
                buf[--n] = 0;
            char *line = strrchr(buf, '\n');
            line = line ? line + 1 : buf;
            for (char *p = line; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    *p = '?';
            snprintf(out, len, "%s", line);
        }
    }
    close(fd);
}

/* Reap the worker's box (SIGKILL to all of it if it does not end within
 * grace_s) and describe how the worker ended. Returns 1 when it was killed
 * here. When this returns, no process of the box is left. */
static int reap(kcs_worker *w, double grace_s, char *how, size_t len)
{
    how[0] = 0;
    if (!w->box)
        return 0;
    int st = 0, killed = 0;
    double until = now_s() + grace_s;
    while (!kcs_box_ended(w->box) && now_s() < until) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (!kcs_box_ended(w->box)) {
        kcs_box_kill(w->box);
        killed = 1;
    }
    int got = kcs_box_reap(w->box, &st);
    kcs_box_free(w->box);
    w->box = NULL;
    if (got < 0) {
        snprintf(how, len, "ended (its status was collected elsewhere)");
    } else if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        snprintf(how, len, "exited with status %d%s", code,
                 code == 127 ? " (the worker program could not be executed)" : "");
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        snprintf(how, len, "was killed by signal %d (%s)%s", sig, strsignal(sig),
                 killed ? ""
                 : sig == SIGKILL ? " (from outside: the out-of-memory killer, the CPU-time "
                                    "limit or another process)"
                 : sig == SIGXCPU ? " (its CPU-time limit, KCS_WORKER_CPU)"
                 : sig == SIGSYS  ? " (a refused system call)"
                                  : "");
    }
    w->pid = 0;
    return killed;
}

/* The worker is gone or must go: close, reap, and fail with the whole story. */
static int worker_lost(kcs_worker *w, int code, const char *what, double grace_s,
                       kcs_error *err)
{
    int pid = (int)w->pid;
    close_chan(w);
    char how[256], tail[512];
    reap(w, grace_s, how, sizeof how);
    log_tail(w, tail, sizeof tail);
    return kcs_fail(err, code, "%s; worker %d %s%s%s%s (its output: %s)", what, pid, how,
                    tail[0] ? "; last line it printed: \"" : "", tail, tail[0] ? "\"" : "",
                    w->log);
}

static int send_fd_msg(kcs_worker *w, const void *buf, size_t len, int fd)
{
    struct iovec iov = {(void *)buf, len};
    struct msghdr mh = {0};
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof ctl.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    ssize_t n;
    do
        n = sendmsg(w->fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

/* Receive one message within the deadline (deadline <= 0: none).
 * Returns its length, 0 on EOF, -1 on error, -2 on timeout. */
static ssize_t recv_msg(kcs_worker *w, unsigned char *buf, size_t cap, double deadline)
{
    for (;;) {
        int ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0)
                return -2;
            ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
        }
        struct pollfd p = {w->fd, POLLIN, 0};
        int pr = poll(&p, 1, ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (pr == 0)
            continue; /* re-check the deadline */
        ssize_t n = recv(w->fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n > (ssize_t)cap)
            return -1;
        return n;
    }
}

/* Check a message's header; returns its payload or NULL. */
static const unsigned char *check_hdr(const unsigned char *buf, ssize_t n, uint16_t type,
                                      uint32_t seq, size_t min_payload, kcs_worker_hdr *h)
{
    if (n < (ssize_t)sizeof *h)
        return NULL;
    memcpy(h, buf, sizeof *h);
    if (h->magic != KCS_WORKER_MAGIC || h->version != KCS_WORKER_PROTOCOL_VERSION ||
        h->type != type || h->seq != seq || h->length != (size_t)n - sizeof *h ||
        h->length < min_payload)
        return NULL;
    return buf + sizeof *h;
}

/* Copy the i-th NUL-terminated string after a payload's fixed part. */
static void nth_str(const unsigned char *p, size_t len, size_t fixed, int i, char *out,
                    size_t out_len)
{
    size_t off = fixed;
    out[0] = 0;
    for (int k = 0; off < len; k++) {
        const unsigned char *e = memchr(p + off, 0, len - off);
        size_t n = e ? (size_t)(e - (p + off)) : len - off;
        if (k == i) {
            snprintf(out, out_len, "%.*s", (int)n, (const char *)p + off);
            return;
        }
        off += n + 1;
    }
}

/* ------------------------------------------------------------- public */

int kcs_worker_start(char *const argv[], const kcs_worker_limits *lim, double start_timeout_s,
                     kcs_worker **w_p, kcs_worker_info *info, kcs_error *err)
{
    memset(info, 0, sizeof *info);
    *w_p = NULL;
    kcs_worker *w = calloc(1, sizeof *w);
    if (!w)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for a worker");
    w->fd = -1;
    w->region_fd = -1;
    snprintf(w->log, sizeof w->log, "%s", lim->log_path);
    int sv[2] = {-1, -1};
    int logfd = open(w->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (logfd < 0 || nullfd < 0) {
        int rc = kcs_fail(err, KCS_E_IO, "worker: cannot open %s: %s",
                          logfd < 0 ? w->log : "/dev/null", strerror(errno));
        if (logfd >= 0)
            close(logfd);
        if (nullfd >= 0)
            close(nullfd);
        free(w);
        return rc;
    }
    struct stat st;
    w->log_start = fstat(logfd, &st) == 0 ? st.st_size : 0;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int rc = kcs_fail(err, KCS_E_INTERNAL, "worker: socketpair: %s", strerror(errno));
        close(logfd);
        close(nullfd);
        free(w);
        return rc;
    }
    /* The box: namespaces, Landlock, cgroup, limits, a clean environment
     * (worker_box.h); the channel is descriptor 3. */
    kcs_box_spec spec = {argv, sv[1], logfd, nullfd, lim->as_bytes, lim->cpu_s, child_last};
    int rc0 = kcs_box_start(&spec, &w->box, &w->report, err);
    close(sv[1]);
    close(logfd);
    close(nullfd);
    if (rc0) {
        close(sv[0]);
        free(w);
        return rc0;
    }
    pid_t pid = kcs_box_pid(w->box);
    w->pid = pid;
    w->fd = sv[0];
    info->box = w->report;

    unsigned char buf[KCS_WORKER_MAX_MSG];
    ssize_t n = recv_msg(w, buf, sizeof buf,
                         start_timeout_s > 0 ? now_s() + start_timeout_s : 0.0);
    int rc = 0;
    char what[PATH_MAX + 128];
    if (n == -2) {
        snprintf(what, sizeof what, "worker %s: no HELLO within %.3g s (killed)", argv[0],
                 start_timeout_s);
        rc = worker_lost(w, KCS_E_TIMEOUT, what, 0.0, err);
    } else if (n <= 0) {
        snprintf(what, sizeof what, "worker %s ended before it said HELLO", argv[0]);
        rc = worker_lost(w, KCS_E_CRASHED, what, 1.0, err);
    } else {
        kcs_worker_hdr h;
        const unsigned char *p = check_hdr(buf, n, KCS_WORKER_HELLO, 0,
                                           sizeof(kcs_worker_hello), &h);
        if (!p) {
            snprintf(what, sizeof what, "worker %s: its first message is not a protocol %d "
                     "HELLO", argv[0], KCS_WORKER_PROTOCOL_VERSION);
            rc = worker_lost(w, KCS_E_CRASHED, what, 0.0, err);
        } else {
            kcs_worker_hello hello;
            memcpy(&hello, p, sizeof hello);
            info->status = hello.status;
            info->pid = hello.pid;
            nth_str(p, h.length, sizeof hello, 0, info->name, sizeof info->name);
            nth_str(p, h.length, sizeof hello, 1, info->ops, sizeof info->ops);
            nth_str(p, h.length, sizeof hello, 2, info->msg, sizeof info->msg);
            nth_str(p, h.length, sizeof hello, 3, info->file, sizeof info->file);
            nth_str(p, h.length, sizeof hello, 4, info->declares, sizeof info->declares);
        }
    }
    if (rc) {
        kcs_worker_stop(w);
        return rc;
    }
    *w_p = w;
    return 0;
}

unsigned char *kcs_worker_region(kcs_worker *w, size_t bytes, kcs_error *err)
{
    if (w->region && bytes <= w->region_len)
        return w->region;
    size_t len = w->region_len * 2 > bytes ? w->region_len * 2 : bytes;
    len = (len + 4095) & ~(size_t)4095;
    int fd = memfd_create("kcs-worker-region", MFD_CLOEXEC);
    if (fd < 0) {
        kcs_fail(err, KCS_E_NOMEM, "worker: memfd_create: %s", strerror(errno));
        return NULL;
    }
    if (ftruncate(fd, (off_t)len) < 0) {
        kcs_fail(err, KCS_E_NOMEM, "worker: cannot size a %zu-byte shared region: %s", len,
                 strerror(errno));
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        kcs_fail(err, KCS_E_NOMEM, "worker: cannot map a %zu-byte shared region: %s", len,
                 strerror(errno));
        close(fd);
        return NULL;
    }
    if (w->region)
        munmap(w->region, w->region_len);
    if (w->region_fd >= 0)
        close(w->region_fd);
    w->region = p;
    w->region_len = len;
    w->region_fd = fd;
    w->region_sent = 0;
    return w->region;
}

int kcs_worker_invoke(kcs_worker *w, kcs_worker_call *wc, const char *op, const char *attrs,
                    double timeout_s, int *status_p, char *msg, size_t msg_len, kcs_error *err)
{
    if (w->fd < 0 || w->pid <= 0 || !w->region)
        return kcs_fail(err, KCS_E_INTERNAL, "worker: call on a worker that is gone");
    unsigned char buf[KCS_WORKER_MAX_MSG];
    size_t lo = strlen(op) + 1, la = strlen(attrs) + 1;
    kcs_worker_hdr h = {KCS_WORKER_MAGIC, KCS_WORKER_PROTOCOL_VERSION, KCS_WORKER_CALL, 0, 0};
    if (sizeof h + sizeof *wc + lo + la > sizeof buf)
        return kcs_fail(err, KCS_E_INVAL, "worker: the call's attrs are too long (%zu bytes)",
                        la);
    wc->flags = w->region_sent ? 0 : KCS_WORKER_CALL_NEW_REGION;
    wc->region_bytes = w->region_len;
    wc->time_limit_s = timeout_s > 0 ? timeout_s : 0.0;
    h.length = (uint32_t)(sizeof *wc + lo + la);
    h.seq = ++w->seq;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, wc, sizeof *wc);
    memcpy(buf + sizeof h + sizeof *wc, op, lo);
    memcpy(buf + sizeof h + sizeof *wc + lo, attrs, la);
    double t0 = now_s();
    if (send_fd_msg(w, buf, sizeof h + h.length, w->region_sent ? -1 : w->region_fd))
        return worker_lost(w, KCS_E_CRASHED, "the worker's channel was closed before the call "
                           "could be sent", 1.0, err);
    w->region_sent = 1;
    ssize_t n = recv_msg(w, buf, sizeof buf, timeout_s > 0 ? t0 + timeout_s : 0.0);
    char what[256];
    if (n == -2) {
        snprintf(what, sizeof what, "the kernel call exceeded its %.3g s limit", timeout_s);
        return worker_lost(w, KCS_E_TIMEOUT, what, 0.0, err);
    }
    if (n == 0)
        return worker_lost(w, KCS_E_CRASHED, "the worker ended during the call (channel closed)",
                           1.0, err);
    if (n < 0)
        return worker_lost(w, KCS_E_CRASHED, "the worker's channel failed during the call",
                           0.0, err);
    kcs_worker_hdr rh;
    const unsigned char *p = check_hdr(buf, n, KCS_WORKER_RESULT, h.seq,
                                       sizeof(kcs_worker_result), &rh);
    if (!p)
        return worker_lost(w, KCS_E_CRASHED, "the worker answered the call with a malformed "
                           "message (protocol violation)", 0.0, err);
    kcs_worker_result r;
    memcpy(&r, p, sizeof r);
    *status_p = r.status;
    if (msg && msg_len)
        nth_str(p, rh.length, sizeof r, 0, msg, msg_len);
    return 0;
}

int kcs_worker_alive(const kcs_worker *w)
{
    return w && w->fd >= 0 && w->pid > 0;
}

int kcs_worker_pid(const kcs_worker *w)
{
    return w ? (int)w->pid : 0;
}

void kcs_worker_stop(kcs_worker *w)
{
    if (!w)
        return;
    close_chan(w);
    char how[256];
    reap(w, 0.5, how, sizeof how);
    if (w->region)
        munmap(w->region, w->region_len);
    if (w->region_fd >= 0)
        close(w->region_fd);
    free(w);
}
