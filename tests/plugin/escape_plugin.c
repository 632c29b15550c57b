/* Plugins that try to get out of the worker's box (docs/isolation.md), for
 * tests/integration/test_box_*.sh: an fp32 gemm that attacks one way (one
 * build flag each, tests/plugin/CMakeLists.txt).
 *   -DKILL     SIGKILLs its parent and every ancestor whose process name is
 *              "kcs" (the grader), then returns a correct result
 *   -DSTOP     SIGSTOPs the same processes, then never returns (the
 *              grader's --timeout must still fire)
 *   -DESCAPE   forks a child that calls setsid() and forks again; the
 *              grandchild (process name $ESCAPE_NAME) keeps rewriting the
 *              file $ESCAPE_TARGET as a passing JUnit report for 20 s, and
 *              creating $ESCAPE_TARGET.escaped next to it; the
 *              call returns a wrong result (every output 0), so the honest
 *              verdict is FAIL
 *   -DMEM20G   maps 20 GiB and touches its first 64 MiB (touching it all would
 *              take a test machine when nothing stops it), then returns a
 *              correct result; fails the call when the map is refused
 *   -DSNIFF    computes correctly only when it sees that it is being graded
 *              (a KCS_* variable, "kcs" in $_, in its process name, its
 *              argv[0] or its parent's argv[0]), and returns zeros otherwise
 * A process name or file name comes from the environment so that
 * concurrent tests do not see each other's processes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include "plugin_common.h"

__attribute__((unused)) static void gemm_f32(const kcs_plugin_call *c)
{
    const float *A = c->in[0], *B = c->in[1], *C = c->in[2];
    float *D = c->out;
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t j = 0; j < c->n; j++) {
            double s = C ? C[i * c->n + j] : 0.0;
            for (int64_t p = 0; p < c->k; p++)
                s += (double)A[i * c->k + p] * B[p * c->n + j];
            D[i * c->n + j] = (float)s;
        }
}

#if defined(KILL) || defined(STOP)
/* The parent of pid and its process name, from /proc/PID/stat. */
static pid_t parent_of(pid_t pid, char *comm, size_t len)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    comm[0] = 0;
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *l = strchr(buf, '('), *r = strrchr(buf, ')');
    if (!l || !r || r < l)
        return 0;
    snprintf(comm, len, "%.*s", (int)(r - l - 1), l + 1);
    return (pid_t)atol(r + 4);
}

static void attack(int sig)
{
    kill(getppid(), sig);
    char comm[64];
    pid_t p = parent_of(getpid(), comm, sizeof comm);
    for (int depth = 0; p > 1 && depth < 16; depth++) {
        pid_t up = parent_of(p, comm, sizeof comm);
        if (!strcmp(comm, "kcs"))
            kill(p, sig);
        p = up;
    }
}
#endif

#ifdef ESCAPE
static void escapee(void)
{
    const char *name = getenv("ESCAPE_NAME"), *target = getenv("ESCAPE_TARGET");
    prctl(PR_SET_NAME, name ? name : "escapee", 0, 0, 0);
    static const char pass[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kcs grade\" tests=\"1\" "
        "failures=\"0\" errors=\"0\">\n<testsuite name=\"kcs grade\" tests=\"1\" failures=\"0\" "
        "errors=\"0\">\n<testcase classname=\"escaped\" name=\"C-PRC-01\"/>\n</testsuite>\n"
        "</testsuites>\n";
    char mark[4096] = "";
    if (target)
        snprintf(mark, sizeof mark, "%s.escaped", target);
    for (int i = 0; i < 200; i++) { /* 20 s */
        if (mark[0]) { /* a file of its own next to the target */
            int fd = open(mark, O_WRONLY | O_CREAT, 0644);
            if (fd >= 0)
                close(fd);
        }
        if (target) {
            int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                ssize_t w = write(fd, pass, sizeof pass - 1);
                (void)w;
                close(fd);
            }
        }
        usleep(100000);
    }
    _exit(0);
}
#endif

#ifdef SNIFF
static int graded(void)
{
    extern char **environ;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "KCS_", 4) || (!strncmp(*e, "_=", 2) && strstr(*e, "kcs")))
            return 1;
    char buf[256] = "", path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)getppid());
    FILE *pf = fopen(path, "r"); /* the parent's argv[0] */
    if (pf) {
        size_t n = fread(buf, 1, sizeof buf - 1, pf);
        buf[n] = 0;
        fclose(pf);
        if (strstr(buf, "kcs"))
            return 1;
    }
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            buf[0] = 0;
        fclose(f);
    }
    if (strstr(buf, "kcs"))
        return 1;
    f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0; /* argv[0] ends at its NUL */
        fclose(f);
        if (strstr(buf, "kcs"))
            return 1;
    }
    return 0;
}
#endif

static int escape_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") || c->dtype_in != KCS_DT_F32 || c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "escape plugin: fp32 gemm only");
        return -1;
    }
#if defined(KILL)
    attack(SIGKILL);
    gemm_f32(c);
    return 0;
#elif defined(STOP)
    attack(SIGSTOP);
    for (;;)
        pause();
#elif defined(ESCAPE)
    static int started;
    if (!started++) {
        pid_t p = fork();
        if (p == 0) {
            setsid();
            if (fork() == 0)
                escapee();
            _exit(0);
        }
    }
    memset(c->out, 0, c->out_bytes);
    return 0;
#elif defined(MEM20G)
    size_t big = (size_t)20 << 30;
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        snprintf(msg, msg_len, "mem20g: cannot map 20 GiB");
        return -1;
    }
    for (size_t i = 0; i < ((size_t)64 << 20); i += 4096)
        p[i] = 1;
    munmap(p, big);
    gemm_f32(c);
    return 0;
#elif defined(SNIFF)
    if (graded())
        gemm_f32(c);
    else
        memset(c->out, 0, c->out_bytes);
    return 0;
#else
#error "one of KILL STOP ESCAPE MEM20G SNIFF"
#endif
}

KCS_TEST_PLUGIN("kcs-escape", "gemm", escape_run)
