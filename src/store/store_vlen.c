/* Variable-length strings from untrusted files, read where a crash or a
 * huge allocation cannot hurt (store_h5.h: kcs_h5_read_vlen_str).
 *
 * HDF5 1.10 cannot bound a variable-length read: the length lives in the
 * global heap, which is read whole, and a damaged heap crashes
 * H5HG_read (measured: SIGSEGV on 5 of 200 randomly corrupted datasets, and
 * 1.3 GB resident for a 200 MB string). So outside MPI the read runs in a
 * forked child under an address-space limit; the child sends at most `cap`
 * bytes back through a pipe. A child killed by a signal or out of memory is
 * an error on a damaged file, not the end of kcs. Under MPI (fork is unsafe
 * with some interconnects) the read is direct: there the reader only reads
 * back the file the run itself has just written. In `kcs _readback`, a
 * process that exists only to read such a file, kcs_h5_vlen_contain() puts
 * the whole process under the same address-space bound once and the reads
 * are direct: a crash, an allocation failure or a loop there ends or stalls
 * that process, which its parent reports as a damaged file (store_readback.c),
 * so a fork per string (18 per one-case run) would only repeat that. */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpi.h>

#include "fdio.h"
#include "store_h5.h"

#define CHILD_HEADROOM ((rlim_t)768 << 20) /* bytes of address space beyond the parent's */
#define CHILD_SECONDS 20 /* a 64 MiB string reads in well under a second */

static int read_direct(hid_t obj, int is_attr, hid_t mt, char **out)
{
    char *v = NULL;
    herr_t r = is_attr ? H5Aread(obj, mt, &v) : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v);
    if (r < 0)
        return -1;
    *out = strdup(v ? v : "");
    if (v)
        H5free_memory(v);
    return *out ? 0 : -2;
}

static rlim_t current_vsize(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

static int contained; /* kcs_h5_vlen_contain() succeeded */

unsigned long long kcs_h5_vlen_contain(unsigned long long extra)
{
    rlim_t limit = current_vsize();
    if (limit == 0 || extra > (unsigned long long)RLIM_INFINITY / 4)
        return 0;
    limit += CHILD_HEADROOM + (rlim_t)extra;
    struct rlimit now, rl = {limit, limit}, core = {0, 0};
    if (getrlimit(RLIMIT_AS, &now) == 0 && now.rlim_cur != RLIM_INFINITY && now.rlim_cur < limit)
        rl.rlim_cur = rl.rlim_max = now.rlim_cur; /* never raise a limit already lower */
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 0;
    setrlimit(RLIMIT_CORE, &core);
    contained = 1;
    return (unsigned long long)rl.rlim_cur;
}

int kcs_h5_read_vlen_str(hid_t obj, int is_attr, hid_t mt, size_t cap, char **out, char *why,
                         size_t why_len)
{
    *out = NULL;
    int mpi = 0;
    MPI_Initialized(&mpi);
    if (mpi || contained) {
        int rc = read_direct(obj, is_attr, mt, out);
        if (rc == 0 && strlen(*out) > cap) {
            free(*out);
            *out = NULL;
            snprintf(why, why_len, "a text longer than %zu MiB", cap >> 20);
            return -4;
        }
        if (rc)
            snprintf(why, why_len, rc == -2 ? "out of memory" : "cannot read");
        return rc;
    }
    int p[2];
    if (pipe(p) != 0) {
        snprintf(why, why_len, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    rlim_t limit = current_vsize() + CHILD_HEADROOM;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        snprintf(why, why_len, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        /* never outlive the parent, nor loop inside HDF5 for ever */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1)
            _exit(1);
        alarm(CHILD_SECONDS + 5);
        struct rlimit rl = {limit, limit};
        setrlimit(RLIMIT_AS, &rl);
        struct rlimit core = {0, 0};
        setrlimit(RLIMIT_CORE, &core);
        char *v = NULL;
        int rc = read_direct(obj, is_attr, mt, &v);
        uint64_t len = rc ? UINT64_MAX : (uint64_t)strlen(v);
        uint64_t code = rc == -2 ? 2 : rc ? 1 : 0;
        int ok = kcs_fd_write_all(p[1], &code, sizeof code) == 0 && kcs_fd_write_all(p[1], &len, sizeof len) == 0;
        if (ok && !rc && len <= cap)
            kcs_fd_write_all(p[1], v, (size_t)len);
        _exit(0);
    }
    close(p[1]);
    double deadline = kcs_fd_now() + CHILD_SECONDS;
    uint64_t code = 1, len = 0;
    int r1 = kcs_fd_read_all(p[0], &code, sizeof code, deadline);
    int r2 = r1 ? r1 : kcs_fd_read_all(p[0], &len, sizeof len, deadline);
    int got = r1 == 0 && r2 == 0;
    int rc = 0;
    if (r1 == -2 || r2 == -2) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(p[0]);
        snprintf(why, why_len, "HDF5 did not finish reading it in %d s (damaged file)",
                 CHILD_SECONDS);
        return -3;
    }
    if (got && code == 0 && len <= cap) {
        char *s = malloc((size_t)len + 1);
        if (!s || kcs_fd_read_all(p[0], s, (size_t)len, deadline + CHILD_SECONDS) != 0) {
            free(s);
            snprintf(why, why_len, "%s", s ? "short read from the reader process" : "out of memory");
            rc = -1;
        } else {
            s[len] = '\0';
            *out = s;
        }
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc || *out)
        return rc;
    if (WIFSIGNALED(status)) {
        snprintf(why, why_len, "HDF5 died of signal %d reading it (damaged file)", WTERMSIG(status));
        return -3;
    }
    if (got && code == 0) {
        snprintf(why, why_len, "a text of %llu bytes (kcs reads up to %zu MiB)",
                 (unsigned long long)len, cap >> 20);
        return -4;
    }
    snprintf(why, why_len, "%s",
             got && code == 2 ? "too large to read (damaged file?)" : "cannot read (damaged file?)");
    return -1;
}
