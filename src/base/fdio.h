/* Whole-buffer reads and writes on a pipe or socket to a child process,
 * retried across EINTR and short transfers (the store's read-back and
 * variable-length-string children). Header-only: the store's sources are
 * also built alone (the HDF5 reader's fuzz target). */
#ifndef KCS_FDIO_H
#define KCS_FDIO_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC, seconds. */
static inline double kcs_fd_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Writes n bytes; on a socket without SIGPIPE (MSG_NOSIGNAL). 0, or -1. */
static inline int kcs_fd_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    int sock = 1;
    while (n > 0) {
        ssize_t w = sock ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
        if (w < 0 && sock && errno == ENOTSOCK) {
            sock = 0;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads n bytes. deadline (CLOCK_MONOTONIC seconds) < 0: none, else a peer
 * that sends nothing until then is given up on. 0, -1 on an error or end of
 * file, -2 on the deadline. */
static inline int kcs_fd_read_all(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n > 0) {
        if (deadline >= 0) {
            double left = deadline - kcs_fd_now();
            if (left <= 0)
                return -2;
            struct pollfd pf = {fd, POLLIN, 0};
            int pr = poll(&pf, 1, (int)(left * 1000.0) + 1);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr == 0)
                return -2;
            if (pr < 0)
                return -1;
        }
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

#endif
