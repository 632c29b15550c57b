/* Finding and loading the contracts `kcs calibrate` and `kcs grade` run
 * (calibrate.h). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_info.h"
#include "calibrate.h"

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *kcs_calib_contracts_dir(char *buf, size_t len)
{
    const char *env = getenv("KCS_CONTRACTS");
    if (env && env[0]) {
        snprintf(buf, len, "%s", env);
        return buf;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0; /* <prefix>/bin */
            char cand[PATH_MAX + 32];
            snprintf(cand, sizeof cand, "%s/../share/kcs/contracts", exe);
            if (is_dir(cand)) {
                snprintf(buf, len, "%s", cand);
                return buf;
            }
        }
    }
    snprintf(buf, len, "%s/contracts", KCS_SOURCE_DIR);
    return buf;
}

/* The order of DESIGN §3's table: PRC, ORD, CMP, EXC, then by name. */
static int family_rank(const char *name)
{
    static const char *const fam[] = {"C-PRC-", "C-ORD-", "C-CMP-", "C-EXC-"};
    for (int i = 0; i < 4; i++)
        if (strncmp(name, fam[i], 6) == 0)
            return i;
    return 4;
}

static int by_name(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int fx = family_rank(x), fy = family_rank(y);
    return fx != fy ? fx - fy : strcmp(x, y);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Every contract folder of dir (C-*, holding <ID>/<ID>.yaml), sorted. */
int kcs_calib_list_contracts(const char *dir, char ***ids_p, int *n_p, kcs_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return kcs_fail(err, KCS_E_IO, "%s: cannot open the contracts directory", dir);
    char **names = NULL;
    int n = 0, cap = 0, flat = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (strncmp(de->d_name, "C-", 2) != 0)
            continue;
        if (l > 7 && strcmp(de->d_name + l - 5, ".yaml") == 0) {
            flat++;
            continue;
        }
        char yaml[PATH_MAX];
        if (snprintf(yaml, sizeof yaml, "%s/%s/%s.yaml", dir, de->d_name, de->d_name) >=
                (int)sizeof yaml ||
            !is_file(yaml))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, (size_t)cap * sizeof *nn);
            if (!nn)
                goto nomem;
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name)))
            goto nomem;
        n++;
    }
    closedir(d);
    if (n == 0) {
        free(names);
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: no contract folders (C-*/ holding <ID>.yaml)%s", dir,
                        flat ? "; contracts are folders now: move ID.yaml to ID/ID.yaml "
                               "(contracts/README.md)"
                             : "");
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    *ids_p = names;
    *n_p = n;
    return 0;
nomem:
    closedir(d);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return kcs_fail(err, KCS_E_NOMEM, "out of memory listing %s", dir);
}

void kcs_calib_contracts_free(kcs_contract **cs, int n)
{
    if (!cs)
        return;
    for (int i = 0; i < n; i++)
        kcs_contract_free(cs[i]);
    free(cs);
}

int kcs_calib_load(const char *dir, char *const *names, int n_names, kcs_contract ***cs_p,
                   int *n_p, kcs_error *err)
{
    char **listed = NULL;
    int n = n_names, rc = 0;
    if (n_names == 0) {
        if ((rc = kcs_calib_list_contracts(dir, &listed, &n, err)))
            return rc;
    }
    kcs_contract **cs = calloc((size_t)n + 1, sizeof *cs);
    if (!cs) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory loading contracts");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const char *name = listed ? listed[i] : names[i];
        char path[PATH_MAX];
        size_t l = strlen(name);
        int is_path = strchr(name, '/') || (l > 5 && strcmp(name + l - 5, ".yaml") == 0);
        if (is_path && !listed)
            snprintf(path, sizeof path, "%s", name);
        else /* an id: its folder */
            snprintf(path, sizeof path, "%s/%s/%s.yaml", dir, name, name);
        if ((rc = kcs_contract_load(path, &cs[i], err))) {
            kcs_calib_contracts_free(cs, i);
            cs = NULL;
            goto out;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(cs[j]->id, cs[i]->id) == 0) {
                rc = kcs_fail(err, KCS_E_INVAL, "%s: contract %s is named twice", path,
                              cs[i]->id);
                kcs_calib_contracts_free(cs, i + 1);
                cs = NULL;
                goto out;
            }
    }
    *cs_p = cs;
    *n_p = n;
out:
    if (listed) {
        for (int i = 0; i < n; i++)
            free(listed[i]);
        free(listed);
    }
    return rc;
}
