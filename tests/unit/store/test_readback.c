/* The read-back process of `kcs run` (store_readback.h): the stall limit
 * kills a child that makes no progress, progress keeps a slow one alive,
 * a child killed by a signal or one that cannot start is an error naming
 * the file, and a real child's code and message come back whole (BOTH:
 * the FILE step's). The test
 * binary is its own child: `test_readback _readback` runs
 * kcs_readback_child_main, as `kcs _readback` does. */
#define _GNU_SOURCE

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_h5.h"
#include "store_readback.h"
#include "unit_helpers.h"

/* mkdtemp() template: main() replaces the Xs with the directory it creates */
static char dir[] = "/tmp/kcs-readback.XXXXXX";
static char self[4096];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A fake child: a shell script with the given body. */
static const char *script(const char *name, const char *body)
{
    static char path[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
    FILE *f = fopen(path[i], "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path[i], 0755);
    return path[i];
}

static const int64_t ids[2] = {0, 1};
static const uint64_t digests[2] = {11, 22};

static kcs_readback_spec spec(const char *path, int mode)
{
    kcs_readback_spec sp = {.path = path, .mode = mode, .rank = 0, .n_ranks = 1,
                            .max_trials = 2, .n_samples = 0, .n_cases = 2,
                            .case_ids = ids, .digests = digests};
    snprintf(sp.plan_hash, sizeof sp.plan_hash, "0123456789abcdef");
    return sp;
}

static void test_stall_kills(void)
{
    const char *exe = script("hang", "exec sleep 60");
    kcs_readback_spec sp = spec("/data/out.h5.partial", KCS_READBACK_ROWS);
    kcs_error err = {0};
    double t0 = now_s();
    int rc = kcs_readback_spawn(exe, &sp, 1.0, &err);
    double took = now_s() - t0;
    CU_ASSERT_EQUAL(rc, KCS_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "made no progress reading /data/out.h5.partial for 1 s"));
    CU_ASSERT(took >= 0.9 && took < 10.0);
}

static void test_progress_keeps_alive(void)
{
    /* 6 steps 0.4 s apart (2.4 s in all) under a 1 s stall limit, then
     * success: code 0, message length 0 */
    const char *exe = script("slow", "for i in 1 2 3 4 5 6; do sleep 0.4; printf P; done\n"
                                     "printf 'R\\000\\000\\000\\000\\000\\000\\000\\000'");
    kcs_readback_spec sp = spec("/data/out.h5.partial", KCS_READBACK_ROWS);
    kcs_error err = {0};
    double t0 = now_s();
    int rc = kcs_readback_spawn(exe, &sp, 1.0, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(now_s() - t0 >= 2.0);
}

/* The child script NAME (BODY) reading /data/x.h5 row by row fails the
 * read-back (KCS_E_IO) with a message naming want; returns the message. */
static const char *child_fails(const char *name, const char *body, const char *want)
{
    static kcs_error err;
    const char *exe = script(name, body);
    kcs_readback_spec sp = spec("/data/x.h5", KCS_READBACK_ROWS);
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(kcs_readback_spawn(exe, &sp, 5.0, &err), KCS_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    return err.msg;
}

static void test_killed_child(void)
{
    const char *msg =
        child_fails("dies", "printf P; kill -SEGV $$", "killed the read-back process (signal 11");
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "/data/x.h5"));
}

static void test_silent_child(void)
{
    child_fails("silent", "exit 0", "ended without a result (exit 0)");
}

static void test_cannot_start(void)
{
    kcs_readback_spec sp = spec("/data/x.h5", KCS_READBACK_FILE);
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_readback_spawn("/nonexistent/kcs", &sp, 5.0, &err), KCS_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot start the read-back process /nonexistent/kcs"));
}

/* The real child (this binary): its checks' code and message come back. */
static void test_real_child_errors(void)
{
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    kcs_readback_spec sp = spec(missing, KCS_READBACK_FILE);
    kcs_error err = {0}, local = {0};
    CU_ASSERT_EQUAL(kcs_readback_spawn(self, &sp, 30.0, &err), KCS_E_IO);
    CU_ASSERT_EQUAL(kcs_store_check(&sp, NULL, NULL, &local), KCS_E_IO);
    CU_ASSERT_STRING_EQUAL(err.msg, local.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot reopen the closed dataset"));
    sp.mode = KCS_READBACK_ROWS;
    CU_ASSERT_EQUAL(kcs_readback_spawn(self, &sp, 30.0, &err), KCS_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the dataset written does not read back"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, missing));
    /* BOTH (a one-rank run, one process): the FILE step's failure, and ROWS
     * does not run after it */
    sp.mode = KCS_READBACK_BOTH;
    kcs_error both = {0}, both_local = {0};
    CU_ASSERT_EQUAL(kcs_readback_spawn(self, &sp, 30.0, &both), KCS_E_IO);
    CU_ASSERT_EQUAL(kcs_store_check(&sp, NULL, NULL, &both_local), KCS_E_IO);
    CU_ASSERT_STRING_EQUAL(both.msg, both_local.msg);
    CU_ASSERT_STRING_EQUAL(both.msg, local.msg);
}

static void test_stall_env(void)
{
    setenv("KCS_READBACK_STALL_S", "2.5", 1);
    CU_ASSERT_DOUBLE_EQUAL(kcs_readback_stall_s(), 2.5, 0.0);
    setenv("KCS_READBACK_STALL_S", "soon", 1);
    CU_ASSERT_DOUBLE_EQUAL(kcs_readback_stall_s(), 60.0, 0.0);
    setenv("KCS_READBACK_STALL_S", "-1", 1);
    CU_ASSERT_DOUBLE_EQUAL(kcs_readback_stall_s(), 60.0, 0.0);
    unsetenv("KCS_READBACK_STALL_S");
    CU_ASSERT_DOUBLE_EQUAL(kcs_readback_stall_s(), 60.0, 0.0);
}

/* kcs_h5_vlen_contain (what `kcs _readback` calls first): in a forked copy,
 * the address-space limit it reports is the one in force, a mapping of
 * that size fails, and a limit already lower is never raised. */
static void test_contain_limit(void)
{
    int pipefd[2];
    CU_ASSERT_FATAL(pipe(pipefd) == 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        int bad = 0;
        unsigned long long lim = kcs_h5_vlen_contain(1 << 20);
        struct rlimit rl;
        if (lim == 0 || getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur != lim)
            bad |= 1;
        /* a mapping of the whole limit cannot fit (mmap, not malloc: under
         * ASan a refused malloc aborts instead of returning NULL) */
        void *big = mmap(NULL, (size_t)lim, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (big != MAP_FAILED) {
            bad |= 2;
            munmap(big, (size_t)lim);
        }
        struct rlimit lower = {lim / 2, lim / 2};
        if (setrlimit(RLIMIT_AS, &lower) != 0 || kcs_h5_vlen_contain(0) > lim / 2)
            bad |= 4;
        if (write(pipefd[1], &bad, sizeof bad) != (ssize_t)sizeof bad)
            _exit(1);
        _exit(0);
    }
    close(pipefd[1]);
    int bad = -1;
    CU_ASSERT_EQUAL(read(pipefd[0], &bad, sizeof bad), (ssize_t)sizeof bad);
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static const ut_test tests[] = {
    {"the read-back process limits its own address space", test_contain_limit},
    {"a child without progress is killed at the stall limit", test_stall_kills},
    {"progress keeps a slow child alive", test_progress_keeps_alive},
    {"a child killed by a signal is an error naming the file", test_killed_child},
    {"a child that ends without a result", test_silent_child},
    {"an executable that cannot start", test_cannot_start},
    {"the real child's code and message come back", test_real_child_errors},
    {"KCS_READBACK_STALL_S", test_stall_env},
};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "_readback") == 0)
        return kcs_readback_child_main(0, 1);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || !mkdtemp(dir))
        return 1;
    self[n] = '\0';
    unsigned failed = (unsigned)ut_run("readback", tests);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        failed++;
    return failed ? 1 : 0;
}
