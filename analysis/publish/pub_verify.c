/* kcs publish --verify DIR: regenerate every derived file from the
 * bundle's inputs into a scratch directory and compare byte for byte
 * (CSV: the first differing row and column named); check every file
 * against datapackage.json's sha256 and size (and that it lists every
 * file); check that every internal link of the HTML resolves. */
#define _GNU_SOURCE
#include "publish.h"
#include "pub_csv.h"
#include "pub_hash.h"
#include "pub_walk.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outdir.h"
#include "pub_tables.h"

typedef struct vstate {
    const char *dir;
    int quiet;
    int mismatches;
} vstate;

static void mismatch(vstate *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(vstate *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kcs publish --verify: MISMATCH: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    v->mismatches++;
}

static void compare_csv(vstate *v, const char *rel, const char *a, size_t la, const char *b,
                        size_t lb)
{
    kcs_csv x, y;
    kcs_error e = {0};
    if (kcs_csv_parse(rel, a, la, &x, &e)) {
        mismatch(v, "%s: %s", rel, e.msg);
        return;
    }
    if (kcs_csv_parse(rel, b, lb, &y, &e)) {
        kcs_csv_free(&x);
        mismatch(v, "%s: %s", rel, e.msg);
        return;
    }
    int found = 0;
    for (int j = 0; j < x.n_cols && j < y.n_cols && !found; j++)
        if (strcmp(x.header[j], y.header[j])) {
            mismatch(v, "%s: header, column %d: '%s', recomputed '%s'", rel, j + 1, x.header[j],
                     y.header[j]);
            found = 1;
        }
    for (int i = 0; i < x.n_rows && i < y.n_rows && !found; i++)
        for (int j = 0; j < x.n_cols && j < y.n_cols && !found; j++)
            if (strcmp(x.rows[i][j], y.rows[i][j])) {
                mismatch(v, "%s: line %d (row %d), column %s: '%s', recomputed '%s'", rel,
                         x.line[i], i, y.header[j], x.rows[i][j], y.rows[i][j]);
                found = 1;
            }
    if (!found && (x.n_rows != y.n_rows || x.n_cols != y.n_cols))
        mismatch(v, "%s: %d rows x %d columns, recomputed %d x %d", rel, x.n_rows, x.n_cols,
                 y.n_rows, y.n_cols);
    else if (!found)
        mismatch(v, "%s: differs from the recomputed file in its bytes (quoting or line ends)",
                 rel);
    kcs_csv_free(&x);
    kcs_csv_free(&y);
}

static void compare_file(vstate *v, const char *rel, const char *regen_root)
{
    char pa[8800], pb[8800];
    snprintf(pa, sizeof pa, "%s/%s", v->dir, rel);
    snprintf(pb, sizeof pb, "%s/%s", regen_root, rel);
    size_t la = 0, lb = 0;
    char *a = kcs_pub_slurp(pa, &la), *b = kcs_pub_slurp(pb, &lb);
    if (!a)
        mismatch(v, "%s: missing from the bundle (recomputed, it exists)", rel);
    else if (la != lb || memcmp(a, b, la)) {
        size_t l = strlen(rel);
        if (l > 4 && !strcmp(rel + l - 4, ".csv")) {
            compare_csv(v, rel, a, la, b, lb);
        } else {
            size_t i = 0;
            int line = 1;
            while (i < la && i < lb && a[i] == b[i])
                line += a[i++] == '\n';
            mismatch(v, "%s: line %d differs from the recomputed file", rel, line);
        }
    }
    free(a);
    free(b);
}

/* ---- links ---- */
typedef struct idset {
    char *file;
    char **ids;
    int n;
} idset;

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static idset *ids_of(idset **cache, int *n_cache, const char *file)
{
    for (int i = 0; i < *n_cache; i++)
        if (!strcmp((*cache)[i].file, file))
            return &(*cache)[i];
    idset *c = realloc(*cache, (size_t)(*n_cache + 1) * sizeof *c);
    if (!c)
        return NULL;
    *cache = c;
    idset *s = &c[(*n_cache)++];
    memset(s, 0, sizeof *s);
    s->file = strdup(file);
    char *text = kcs_pub_slurp(file, NULL);
    for (char *p = text; p && (p = strstr(p, " id=\"")); p += 5) {
        char *q = strchr(p + 5, '"');
        if (!q)
            break;
        char **ids = realloc(s->ids, (size_t)(s->n + 1) * sizeof *ids);
        if (!ids)
            break;
        s->ids = ids;
        s->ids[s->n++] = strndup(p + 5, (size_t)(q - p - 5));
    }
    free(text);
    if (s->n)
        qsort(s->ids, (size_t)s->n, sizeof *s->ids, cmpstr);
    return s;
}

static void check_links(vstate *v, const char *rel, idset **cache, int *n_cache)
{
    char path[8800];
    snprintf(path, sizeof path, "%s/%s", v->dir, rel);
    char *text = kcs_pub_slurp(path, NULL);
    if (!text)
        return;
    char base[4400];
    snprintf(base, sizeof base, "%s", rel);
    char *slash = strrchr(base, '/');
    if (slash)
        slash[1] = '\0';
    else
        base[0] = '\0';
    int line = 1;
    char *lp = text;
    const char *attrs[] = {" href=\"", " src=\""};
    for (char *p = text; *p; p++) {
        if (*p == '\n')
            line++;
        int which = -1;
        for (int a = 0; a < 2; a++)
            if (!strncmp(p, attrs[a], strlen(attrs[a])))
                which = a;
        if (which < 0)
            continue;
        for (; lp < p; lp++)
            ;
        char *s = p + strlen(attrs[which]), *q = strchr(s, '"');
        if (!q)
            break;
        char url[4096];
        snprintf(url, sizeof url, "%.*s", (int)(q - s), s);
        p = q;
        if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
            if (which == 1)
                mismatch(v, "%s:%d: fetches %s from the network", rel, line, url);
            continue;
        }
        if (!strncmp(url, "mailto:", 7))
            continue;
        char *hash = strchr(url, '#');
        char frag[512] = "";
        if (hash) {
            snprintf(frag, sizeof frag, "%s", hash + 1);
            *hash = '\0';
        }
        /* &amp; in attribute values */
        char target[8800];
        if (url[0])
            snprintf(target, sizeof target, "%s/%s%s", v->dir, base, url);
        else
            snprintf(target, sizeof target, "%s", path);
        char real_t[PATH_MAX], real_d[PATH_MAX];
        struct stat st;
        if (stat(target, &st) != 0 || !S_ISREG(st.st_mode)) {
            mismatch(v, "%s:%d: dead link %s%s%s", rel, line, url, frag[0] ? "#" : "", frag);
            continue;
        }
        if (!realpath(target, real_t) || !realpath(v->dir, real_d) ||
            strncmp(real_t, real_d, strlen(real_d))) {
            mismatch(v, "%s:%d: link %s leaves the bundle", rel, line, url);
            continue;
        }
        if (frag[0]) {
            idset *s2 = ids_of(cache, n_cache, target);
            char *key = frag;
            if (!s2 || !bsearch(&key, s2->ids, (size_t)s2->n, sizeof *s2->ids, cmpstr))
                mismatch(v, "%s:%d: dead link %s#%s (no such id)", rel, line, url, frag);
        }
    }
    free(text);
}

/* ---- datapackage.json ---- */
static void check_package(vstate *v, const kcs_pub_files *files)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/datapackage.json", v->dir);
    char *dp = kcs_pub_slurp(p, NULL);
    if (!dp) {
        mismatch(v, "datapackage.json: cannot be read");
        return;
    }
    char *listed = calloc((size_t)(files->n ? files->n : 1), 1);
    int n_res = 0;
    for (char *s = dp; (s = strstr(s, "\"path\": \"")); ) {
        s += 9;
        char *q = strchr(s, '"');
        if (!q)
            break;
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)(q - s), s);
        s = q;
        if (!strncmp(path, "https://", 8))
            continue; /* the licence's */
        n_res++;
        char *hs = strstr(s, "\"hash\": \"sha256:"), *bs = strstr(s, "\"bytes\": ");
        char *next = strstr(s, "\"path\": \"");
        if (!hs || !bs || (next && (hs > next || bs > next))) {
            mismatch(v, "datapackage.json: resource %s has no sha256 hash or bytes", path);
            continue;
        }
        char want[65];
        snprintf(want, sizeof want, "%.64s", hs + 16);
        int64_t want_bytes = strtoll(bs + 9, NULL, 10), bytes = 0;
        char full[8800], hex[65];
        snprintf(full, sizeof full, "%s/%s", v->dir, path);
        kcs_error e = {0};
        if (kcs_sha256_file(full, hex, &bytes, &e)) {
            mismatch(v, "%s: listed in datapackage.json, cannot be read", path);
            continue;
        }
        if (strcmp(hex, want) || bytes != want_bytes)
            mismatch(v, "%s: sha256 %s (%" PRId64 " bytes), datapackage.json says %s (%" PRId64
                        " bytes)",
                     path, hex, bytes, want, want_bytes);
        for (int i = 0; i < files->n; i++)
            if (!strcmp(files->path[i], path))
                listed[i] = 1;
    }
    for (int i = 0; i < files->n; i++)
        if (!listed[i] && strcmp(files->path[i], "datapackage.json"))
            mismatch(v, "%s: in the bundle but not in datapackage.json", files->path[i]);
    if (n_res == 0)
        mismatch(v, "datapackage.json: no resources");
    free(listed);
    free(dp);
}

/* Derived files: everything but the inputs and the package's own files. */
static int derived(const char *rel)
{
    return strncmp(rel, "data/", 5) && strncmp(rel, "probes/", 7) && strncmp(rel, "silicon/", 8) &&
           strcmp(rel, "datapackage.json") && strcmp(rel, "CITATION.cff") &&
           strcmp(rel, "LICENSE-data.txt");
}

int kcs_publish_verify(const char *dir, int quiet, int *mismatch_p, kcs_error *err)
{
    *mismatch_p = 0;
    char p[4400];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return kcs_fail(err, KCS_E_INVAL, "%s: not a directory", dir);
    snprintf(p, sizeof p, "%s/datapackage.json", dir);
    if (access(p, R_OK) != 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: not a kcs bundle (no datapackage.json)", dir);
    const char *td = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/kcs-verify-XXXXXX", td && td[0] ? td : "/tmp");
    if (!mkdtemp(tmp))
        return kcs_fail(err, KCS_E_IO, "%s: cannot create a scratch directory: %s", tmp,
                        strerror(errno));
    kcs_pub_gen_ctx g = {tmp, quiet, err};
    int rc = kcs_pub_in_dir(dir, kcs_pub_gen_here, &g, err);
    if (rc) {
        kcs_outdir_remove(tmp);
        if (rc != KCS_E_NOMEM && rc != KCS_E_INVAL) {
            /* a bundle whose inputs cannot be read back is bad input */
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            rc = kcs_fail(err, KCS_E_INVAL, "%s: %s", dir, msg);
        }
        return rc;
    }
    vstate v = {dir, quiet, 0};
    kcs_pub_files mine = {0}, again = {0};
    if ((rc = kcs_pub_walk(tmp, "", &again, err)) || (rc = kcs_pub_walk(dir, "", &mine, err)))
        goto out;
    if (!quiet)
        fprintf(stderr, "kcs publish --verify: comparing %d recomputed files\n", again.n);
    for (int i = 0; i < again.n; i++)
        compare_file(&v, again.path[i], tmp);
    for (int i = 0; i < mine.n; i++) {
        if (!derived(mine.path[i]))
            continue;
        int found = 0;
        for (int j = 0; j < again.n && !found; j++)
            found = !strcmp(mine.path[i], again.path[j]);
        if (!found)
            mismatch(&v, "%s: in the bundle, but recomputing does not produce it", mine.path[i]);
    }
    if (!quiet)
        fprintf(stderr, "kcs publish --verify: checking the sha256 of %d files\n", mine.n);
    check_package(&v, &mine);
    idset *cache = NULL;
    int n_cache = 0;
    for (int i = 0; i < mine.n; i++) {
        size_t l = strlen(mine.path[i]);
        if (l > 5 && !strcmp(mine.path[i] + l - 5, ".html"))
            check_links(&v, mine.path[i], &cache, &n_cache);
    }
    for (int i = 0; i < n_cache; i++) {
        for (int j = 0; j < cache[i].n; j++)
            free(cache[i].ids[j]);
        free(cache[i].ids);
        free(cache[i].file);
    }
    free(cache);
    *mismatch_p = v.mismatches;
out:
    kcs_pub_files_free(&mine);
    kcs_pub_files_free(&again);
    kcs_outdir_remove(tmp);
    return rc;
}
