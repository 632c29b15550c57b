/* The worker's box (backends/worker_box.c) around /bin/sh instead of a
 * worker program: the script checks what it can see from inside and
 * answers with its exit status; the box reports its wait status through
 * the keeper, and nothing the script started is alive after the reap. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit_helpers.h"
#include "worker_box.h"

static char dir[512];

/* Run `sh -c script` in a box (KCS_WORKER_BOX=box, NULL: unset); the wait
 * status and the report. Returns the start's rc. */
static int boxed(const char *box, const char *script, int *status, kcs_box_report *rep)
{
    if (box)
        setenv("KCS_WORKER_BOX", box, 1);
    else
        unsetenv("KCS_WORKER_BOX");
    int sv[2];
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    int logfd = open(ut_path(dir, "log"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    int nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    kcs_box_spec spec = {argv, sv[1], logfd, nullfd, (uint64_t)1 << 30, 60.0, NULL};
    kcs_box *b = NULL;
    kcs_error err = {0};
    int rc = kcs_box_start(&spec, &b, rep, &err);
    close(sv[1]);
    close(logfd);
    close(nullfd);
    if (!rc) {
        /* the script ends by itself; the reap waits for the whole box */
        while (!kcs_box_ended(b)) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        CU_ASSERT_EQUAL(kcs_box_reap(b, status), 0);
        kcs_box_free(b);
    }
    close(sv[0]);
    unsetenv("KCS_WORKER_BOX");
    return rc;
}

static int has(const kcs_box_report *r, kcs_box_layer l)
{
    return (r->held >> l) & 1;
}

static void test_status_through_keeper(void)
{
    kcs_box_report rep;
    int st = 0;
    CU_ASSERT_EQUAL_FATAL(boxed(NULL, "exit 7", &st, &rep), 0);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    CU_ASSERT(has(&rep, KCS_BOX_RLIMIT) && has(&rep, KCS_BOX_ENV) && has(&rep, KCS_BOX_NAME));
    /* a death by a signal reaches the grader as that signal */
    CU_ASSERT_EQUAL_FATAL(boxed(NULL, "kill -SEGV $$", &st, &rep), 0);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    CU_ASSERT_EQUAL_FATAL(boxed("off", "kill -ABRT $$", &st, &rep), 0);
    CU_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CU_ASSERT_EQUAL(rep.held & ((1u << KCS_BOX_ENV) | (1u << KCS_BOX_PIDNS)), 0u);
}

static void test_inside(void)
{
    /* inside: no KCS_ variable, TMPDIR writable, argv[0] plugin-host; in a
     * PID namespace the shell is pid 2; writes outside fail under Landlock
     * or rofs */
    setenv("KCS_UNIT_SECRET", "1", 1);
    char script[2048];
    snprintf(script, sizeof script,
             "env | grep -q '^KCS_' && exit 3; "
             "touch \"$TMPDIR/x\" || exit 4; "
             "[ \"$0\" = " KCS_BOX_PROCESS_NAME " ] || exit 5; "
             "echo $$ > \"$TMPDIR/pid\"; read p < \"$TMPDIR/pid\"; echo \"pid $p\"; "
             "if touch '%s/outside' 2>/dev/null; then echo wrote; fi; exit 0",
             dir);
    kcs_box_report rep;
    int st = 0;
    CU_ASSERT_EQUAL_FATAL(boxed(NULL, script, &st, &rep), 0);
    unsetenv("KCS_UNIT_SECRET");
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char log[4096] = "";
    FILE *f = fopen(ut_path(dir, "log"), "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n = fread(log, 1, sizeof log - 1, f);
    log[n] = 0;
    fclose(f);
    if (has(&rep, KCS_BOX_PIDNS))
        CU_ASSERT_PTR_NOT_NULL(strstr(log, "pid 2\n"));
    struct stat sb;
    int wrote = stat(ut_path(dir, "outside"), &sb) == 0;
    if (has(&rep, KCS_BOX_LANDLOCK) || has(&rep, KCS_BOX_ROFS))
        CU_ASSERT_FALSE(wrote);
    char line[1024];
    kcs_box_describe(&rep, line, sizeof line);
    printf("\n  box: %s\n", line);
}

static void test_descendants_die(void)
{
    /* a setsid() grandchild that would outlive the shell: after the reap no
     * process of the box is alive (it prints its pid to the log) */
    const char *script = "setsid sh -c 'sleep 30 & echo \"child $!\"; wait' & sleep 0.2; exit 0";
    for (int cfg = 0; cfg < 2; cfg++) {
        unlink(ut_path(dir, "log"));
        kcs_box_report rep;
        int st = 0;
        CU_ASSERT_EQUAL_FATAL(boxed(cfg ? "-pidns,-ipcns,-mntns,-landlock,-cgroup" : NULL,
                                    script, &st, &rep), 0);
        FILE *f = fopen(ut_path(dir, "log"), "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        int pid = 0;
        CU_ASSERT_EQUAL(fscanf(f, "child %d", &pid), 1);
        fclose(f);
        /* outside a PID namespace the pid is one of this namespace: gone */
        if (cfg == 1)
            CU_ASSERT(!has(&rep, KCS_BOX_PIDNS) && has(&rep, KCS_BOX_REAPER));
        if (pid > 0 && !has(&rep, KCS_BOX_PIDNS))
            CU_ASSERT(kill(pid, 0) < 0 && errno == ESRCH);
    }
}

static void test_bad_setting(void)
{
    kcs_box_report rep;
    int st = 0;
    CU_ASSERT_EQUAL(boxed("-bogus", "exit 0", &st, &rep), KCS_E_INVAL);
}

static void test_summary(void)
{
    kcs_box_report r;
    memset(&r, 0, sizeof r);
    r.tried = r.held = (1u << KCS_BOX_PIDNS) | (1u << KCS_BOX_LANDLOCK) | (1u << KCS_BOX_ENV);
    r.tried |= 1u << KCS_BOX_CGROUP;
    snprintf(r.why[KCS_BOX_CGROUP], sizeof r.why[0], "not writable");
    char s[256];
    kcs_box_summary(&r, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "pidns,landlock"); /* env holds everywhere: not in it */
    kcs_box_describe(&r, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "pidns landlock env; no cgroup: not writable");
    memset(&r, 0, sizeof r);
    kcs_box_summary(&r, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "none");
}

int main(void)
{
    ut_tmpdir(dir, sizeof dir, "box");
    static const ut_test tests[] = {
        {"summary", test_summary},
        {"status through the keeper", test_status_through_keeper},
        {"inside the box", test_inside},
        {"descendants die", test_descendants_die},
        {"bad setting", test_bad_setting},
    };
    int rc = ut_run("worker_box", tests);
    ut_rmdir(dir);
    return rc;
}
