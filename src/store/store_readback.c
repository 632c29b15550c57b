/* The read-back in a process of its own (store_readback.h): the parent side.
 * The wire format is in store_readback_wire.h. */
#define _GNU_SOURCE

#include "store_readback.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_readback_wire.h"

#define DEFAULT_STALL_S 60.0

double kcs_readback_stall_s(void)
{
    const char *s = getenv("KCS_READBACK_STALL_S");
    char *end = NULL;
    double v = s && *s ? strtod(s, &end) : 0.0;
    return end && *end == '\0' && v > 0 ? v : DEFAULT_STALL_S;
}

/* ------------------------------------------------------------ the parent */

static int send_spec(int fd, const kcs_readback_spec *sp)
{
    wire_head h = {.magic = MAGIC, .path_len = (uint32_t)strlen(sp->path), .mode = sp->mode,
                   .rank = sp->rank, .n_ranks = sp->n_ranks, .max_trials = sp->max_trials,
                   .n_samples = sp->n_samples, .n_cases = sp->n_cases};
    snprintf(h.plan_hash, sizeof h.plan_hash, "%s", sp->plan_hash);
    size_t n = (size_t)sp->n_cases;
    return kcs_fd_write_all(fd, &h, sizeof h) || kcs_fd_write_all(fd, sp->path, h.path_len) ||
           kcs_fd_write_all(fd, sp->case_ids, n * sizeof *sp->case_ids) ||
           kcs_fd_write_all(fd, sp->digests, n * sizeof *sp->digests);
}

/* Read the child's answer: 1 with code/msg set, 0 when it closed without
 * one, -1 when it stalled. */
static int await_result(int fd, double stall_s, int32_t *code, char *msg, size_t msg_len)
{
    double last = kcs_fd_now();
    for (;;) {
        int wait_ms = (int)((last + stall_s - kcs_fd_now()) * 1000.0) + 1;
        if (wait_ms <= 0)
            return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, wait_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return 0;
        if (pr == 0)
            continue; /* the deadline is checked above */
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        last = kcs_fd_now();
        if (c == 'P')
            continue;
        uint32_t len = 0;
        if (c != 'R' || kcs_fd_read_all(fd, code, sizeof *code, -1.0) != 0 ||
            kcs_fd_read_all(fd, &len, sizeof len, -1.0) != 0)
            return 0;
        size_t keep = len < msg_len ? len : msg_len - 1;
        if (kcs_fd_read_all(fd, msg, keep, -1.0) != 0)
            return 0;
        msg[keep] = '\0';
        for (uint32_t i = (uint32_t)keep; i < len; i++)
            if (kcs_fd_read_all(fd, &c, 1, -1.0) != 0)
                break;
        return 1;
    }
}

int kcs_readback_spawn(const char *exe, const kcs_readback_spec *sp, double stall_s,
                       kcs_error *err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot start the read-back: socketpair: %s",
                        sp->path, strerror(errno));
    char *argv[] = {(char *)exe, "_readback", NULL};
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return kcs_fail(err, KCS_E_IO, "%s: cannot start the read-back: fork: %s", sp->path,
                        strerror(errno));
    }
    if (pid == 0) {
        /* only async-signal-safe calls until exec */
        if (dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0)
            _exit(126);
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        execv(exe, argv);
        _exit(127);
    }
    close(sv[1]);
    struct timeval tv = {.tv_sec = (time_t)stall_s, .tv_usec = 0};
    setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int sent = send_spec(sv[0], sp) == 0;
    int32_t code = 0;
    char msg[KCS_ERRMSG_MAX];
    int got = await_result(sv[0], stall_s, &code, msg, sizeof msg);
    if (got <= 0)
        kill(pid, SIGKILL);
    close(sv[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == 1)
        return code ? kcs_fail(err, (int)code, "%s", msg) : 0;
    if (got < 0)
        return kcs_fail(err, KCS_E_IO,
                        "the dataset written does not read back: HDF5 made no progress reading "
                        "%s for %.0f s (damaged file; the stall limit is KCS_READBACK_STALL_S)",
                        sp->path, stall_s);
    if (WIFSIGNALED(status))
        return kcs_fail(err, KCS_E_IO,
                        "the dataset written does not read back: reading %s killed the "
                        "read-back process (signal %d; damaged file)",
                        sp->path, WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
        return kcs_fail(err, KCS_E_IO, "%s: cannot start the read-back process %s _readback",
                        sp->path, exe);
    return kcs_fail(err, KCS_E_IO,
                    "%s: the read-back process ended without a result (exit %d)%s", sp->path,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                    sent ? "" : " before it took the request");
}
