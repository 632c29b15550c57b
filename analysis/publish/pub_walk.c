/* The files of a bundle (pub_walk.h). */
#define _GNU_SOURCE
#include "pub_walk.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int add(kcs_pub_files *o, const char *p)
{
    char **q = realloc(o->path, (size_t)(o->n + 1) * sizeof *q);
    if (!q)
        return -1;
    o->path = q;
    if (!(o->path[o->n] = strdup(p)))
        return -1;
    o->n++;
    return 0;
}

static int walk(const char *root, const char *rel, kcs_pub_files *o, kcs_error *err)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d)
        return kcs_fail(err, KCS_E_IO, "%s: cannot list", dir);
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char r[4400], full[8800];
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, r);
        struct stat st;
        if (lstat(full, &st))
            rc = kcs_fail(err, KCS_E_IO, "%s: cannot stat", full);
        else if (S_ISDIR(st.st_mode))
            rc = walk(root, r, o, err);
        else if (S_ISREG(st.st_mode))
            rc = add(o, r) ? kcs_fail(err, KCS_E_NOMEM, "out of memory") : 0;
        else
            rc = kcs_fail(err, KCS_E_INVAL, "%s: not a regular file (a bundle holds only its own "
                                            "files)", full);
    }
    closedir(d);
    return rc;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int kcs_pub_walk(const char *root, const char *sub, kcs_pub_files *out, kcs_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = walk(root, sub, out, err);
    if (rc) {
        kcs_pub_files_free(out);
        return rc;
    }
    if (out->n)
        qsort(out->path, (size_t)out->n, sizeof *out->path, cmp);
    return 0;
}

void kcs_pub_files_free(kcs_pub_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
    memset(f, 0, sizeof *f);
}
