/* All-or-nothing output directories (outdir.h). */
#define _GNU_SOURCE
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) ? -1 : 0;
}

void kcs_outdir_remove(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int has(const char *dir, const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n == 0;
}

int kcs_outdir_begin(const char *dir, const char *const *markers, const char *what,
                     const char *cmd, char *tmp, size_t len, kcs_error *err)
{
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: a symbolic link; give the output directory itself with -o", dir);
        if (!S_ISDIR(st.st_mode))
            return kcs_fail(err, KCS_E_INVAL, "%s: exists and is not a directory", dir);
        int ours = dir_empty(dir);
        for (int i = 0; markers[i] && !ours; i++)
            ours = has(dir, markers[i]);
        if (!ours)
            return kcs_fail(err, KCS_E_INVAL,
                            "%s: exists and is not a %s; %s replaces its output directory "
                            "whole, so it refuses this one: choose another -o",
                            dir, what, cmd);
    }
    if ((size_t)snprintf(tmp, len, "%s.partial-%ld", dir, (long)getpid()) >= len)
        return kcs_fail(err, KCS_E_INVAL, "%s: path too long", dir);
    if (lstat(tmp, &st) == 0)
        kcs_outdir_remove(tmp); /* an earlier run of this pid that died */
    if (mkdir(tmp, 0777) != 0)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create the output directory: %s", tmp,
                        strerror(errno));
    return 0;
}

int kcs_outdir_publish(const char *tmp, const char *dir, kcs_error *err)
{
    struct stat st;
    int rc = 0;
    if (lstat(dir, &st) != 0) {
        if (rename(tmp, dir) != 0)
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot rename %s to it: %s", dir, tmp,
                          strerror(errno));
    } else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
        kcs_outdir_remove(tmp); /* now the old output */
    } else {
        char old[4200];
        snprintf(old, sizeof old, "%s.old-%ld", dir, (long)getpid());
        if (rename(dir, old) != 0 || rename(tmp, dir) != 0) {
            int e = errno;
            if (access(dir, F_OK) != 0)
                rename(old, dir);
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot put the new output in place: %s", dir,
                          strerror(e));
        } else {
            kcs_outdir_remove(old);
        }
    }
    if (rc) {
        kcs_outdir_remove(tmp);
        return rc;
    }
    char parent[4200];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    if (slash == parent)
        parent[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(parent, sizeof parent, ".");
    int fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    return 0;
}
