/* The output lock and the no-replace publication of a dataset (outlock.h). */
#define _GNU_SOURCE

#include "outlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* flock, or a POSIX record lock where flock is not supported (some
 * network file systems). 0 locked, 1 held by someone else, -1 error. */
static int try_lock(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    if (errno == EWOULDBLOCK)
        return 1;
    if (errno != ENOLCK && errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
        return -1;
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) == 0)
        return 0;
    return errno == EACCES || errno == EAGAIN ? 1 : -1;
}

static void read_owner(int fd, char *buf, size_t len)
{
    ssize_t n = pread(fd, buf, len - 1, 0);
    if (n < 0)
        n = 0;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            *p = '?'; /* the file is ours, but print it defensively */
}

int kcs_outlock_take(kcs_outlock *l, const char *out_path, kcs_error *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    snprintf(l->dir, sizeof l->dir, "%s.journal", out_path);
    snprintf(l->path, sizeof l->path, "%s/lock", l->dir);
    if (mkdir(l->dir, 0777) == 0)
        l->created_dir = 1;
    else if (errno != EEXIST)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create the journal directory: %s", l->dir,
                        strerror(errno));
    for (int attempt = 0; attempt < 5; attempt++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0)
            return kcs_fail(err, KCS_E_IO, "%s: cannot open the lock file: %s", l->path,
                            strerror(errno));
        int held = try_lock(fd);
        if (held != 0) {
            char owner[256];
            read_owner(fd, owner, sizeof owner);
            int e = errno;
            close(fd);
            if (held < 0)
                return kcs_fail(err, KCS_E_IO, "%s: cannot lock: %s", l->path, strerror(e));
            return kcs_fail(err, KCS_E_EXISTS,
                            "%s: another kcs run is writing this output (%s); wait for it to "
                            "end or stop it",
                            out_path, owner[0] ? owner : "owner unknown");
        }
        /* The holder we waited for may have removed the file after we
         * opened it: a lock on an unlinked file locks nothing. */
        struct stat a, b;
        if (fstat(fd, &a) != 0 || stat(l->path, &b) != 0 || a.st_ino != b.st_ino ||
            a.st_dev != b.st_dev) {
            close(fd);
            if (mkdir(l->dir, 0777) == 0)
                l->created_dir = 1;
            continue;
        }
        read_owner(fd, l->stale, sizeof l->stale);
        char host[128] = "?";
        gethostname(host, sizeof host - 1);
        char line[256];
        int n = snprintf(line, sizeof line, "host %s, pid %ld, started %ld\n", host,
                         (long)getpid(), (long)time(NULL));
        if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
            int e = errno;
            close(fd);
            return kcs_fail(err, KCS_E_IO, "%s: cannot write the lock file: %s", l->path,
                            strerror(e));
        }
        l->fd = fd;
        return 0;
    }
    return kcs_fail(err, KCS_E_IO, "%s: the lock file keeps disappearing", l->path);
}

static int is_journal(const char *name)
{
    size_t n = strlen(name);
    return n > 8 && !strncmp(name, "rank-", 5) && !strcmp(name + n - 3, ".kj");
}

int kcs_outlock_has_journals(const kcs_outlock *l)
{
    DIR *d = opendir(l->dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        found = is_journal(e->d_name);
    }
    closedir(d);
    return found;
}

void kcs_outlock_clear_journals(const kcs_outlock *l)
{
    DIR *d = opendir(l->dir);
    if (!d)
        return;
    struct dirent *e;
    char path[8400];
    while ((e = readdir(d)))
        if (is_journal(e->d_name)) {
            snprintf(path, sizeof path, "%s/%s", l->dir, e->d_name);
            unlink(path);
        }
    closedir(d);
}

void kcs_outlock_release(kcs_outlock *l, int remove)
{
    if (l->fd < 0)
        return;
    if (remove) {
        unlink(l->path);
        rmdir(l->dir); /* fails, harmlessly, while journals are in it */
    }
    close(l->fd); /* releases the lock */
    l->fd = -1;
}

int kcs_fsync_parent(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    /* some file systems refuse fsync on directories: not a data loss */
    if (rc != 0 && (errno == EINVAL || errno == EBADF || errno == EROFS))
        rc = 0;
    close(fd);
    return rc;
}

int kcs_publish(const char *tmp, const char *out, int force, kcs_error *err)
{
    if (force) {
        if (rename(tmp, out) != 0)
            return kcs_fail(err, KCS_E_IO, "%s: cannot rename %s into place: %s", out, tmp,
                            strerror(errno));
    } else if (link(tmp, out) == 0) {
        if (unlink(tmp) != 0)
            return kcs_fail(err, KCS_E_IO, "%s: cannot remove %s after linking it: %s", out, tmp,
                            strerror(errno));
    } else if (errno == EEXIST) {
        return kcs_fail(err, KCS_E_EXISTS,
                        "%s: appeared while this run was writing it; it is left alone and this "
                        "run's dataset is %s",
                        out, tmp);
    } else {
        /* no hard links here (some network or FUSE file systems) */
        int e = errno;
        long r = syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE);
        if (r != 0 && errno == EEXIST)
            return kcs_fail(err, KCS_E_EXISTS,
                            "%s: appeared while this run was writing it; it is left alone and "
                            "this run's dataset is %s",
                            out, tmp);
        if (r != 0)
            return kcs_fail(err, KCS_E_IO,
                            "%s: cannot move %s into place without replacing (link: %s; "
                            "renameat2: %s)",
                            out, tmp, strerror(e), strerror(errno));
    }
    if (kcs_fsync_parent(out) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot fsync its directory: %s", out, strerror(errno));
    return 0;
}

int kcs_copy_file(const char *src, const char *dst, kcs_error *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot open: %s", src, strerror(errno));
    struct stat sb;
    if (fstat(in, &sb) != 0) {
        int e = errno;
        close(in);
        return kcs_fail(err, KCS_E_IO, "%s: %s", src, strerror(e));
    }
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb.st_mode & 0777);
    if (out < 0) {
        int e = errno;
        close(in);
        return kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", dst, strerror(e));
    }
    int rc = 0;
    off_t left = sb.st_size;
    while (left > 0 && !rc) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
            char buf[1 << 16];
            n = read(in, buf, sizeof buf);
            if (n > 0 && write(out, buf, (size_t)n) != n)
                n = -1;
        }
        if (n < 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: copying %s: %s", dst, src, strerror(errno));
        else if (n == 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: %s shrank while being copied", dst, src);
        else
            left -= n;
    }
    if (!rc && fsync(out) != 0)
        rc = kcs_fail(err, KCS_E_IO, "%s: fsync: %s", dst, strerror(errno));
    close(in);
    if (close(out) != 0 && !rc)
        rc = kcs_fail(err, KCS_E_IO, "%s: %s", dst, strerror(errno));
    if (rc)
        unlink(dst);
    return rc;
}
