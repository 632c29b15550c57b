/* kcs publish: the bundle built all-or-nothing (outdir.h), and
 * kcs publish --verify. */
#define _GNU_SOURCE
#include "publish.h"
#include "pub_csv.h"
#include "pub_hash.h"
#include "pub_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5out.h"
#include "outdir.h"
#include "store_read.h"

static int copy_file(const char *from, const char *to, kcs_error *err)
{
    int a = open(from, O_RDONLY | O_CLOEXEC);
    if (a < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: cannot read: %s", from, strerror(errno));
    int b = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (b < 0) {
        close(a);
        return kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", to, strerror(errno));
    }
    char buf[1 << 16];
    ssize_t got;
    int bad = 0;
    while ((got = read(a, buf, sizeof buf)) > 0)
        if (write(b, buf, (size_t)got) != got) {
            bad = 1;
            break;
        }
    bad |= got < 0;
    bad |= fsync(b) != 0;
    close(a);
    bad |= close(b) != 0;
    return bad ? kcs_fail(err, KCS_E_IO, "%s: cannot copy %s to it", to, from) : 0;
}

static int mk(const char *d, kcs_error *err)
{
    if (mkdir(d, 0777) && errno != EEXIST)
        return kcs_fail(err, KCS_E_IO, "%s: cannot create: %s", d, strerror(errno));
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int list_dir(const char *sub, const char *suffix, char ***out, int *n, kcs_error *err)
{
    kcs_pub_files f;
    *out = NULL;
    *n = 0;
    struct stat st;
    if (stat(sub, &st) != 0)
        return 0;
    int rc = kcs_pub_walk(".", sub, &f, err);
    if (rc)
        return rc;
    char **v = calloc((size_t)(f.n ? f.n : 1), sizeof *v);
    if (!v) {
        kcs_pub_files_free(&f);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < f.n; i++) {
        size_t l = strlen(f.path[i]), sl = strlen(suffix);
        if (suffix[0] && (l < sl || strcmp(f.path[i] + l - sl, suffix)))
            continue;
        if (!suffix[0]) {
            /* a silicon run: the folder silicon/NAME holding study-verdicts.csv */
            if (strcmp(base_name(f.path[i]), "study-verdicts.csv"))
                continue;
            f.path[i][l - strlen("/study-verdicts.csv")] = '\0';
        }
        v[(*n)++] = strdup(f.path[i]);
    }
    kcs_pub_files_free(&f);
    *out = v;
    return 0;
}

int kcs_pub_inputs_list(kcs_pub_inputs *in, kcs_error *err)
{
    memset(in, 0, sizeof *in);
    int rc;
    if ((rc = list_dir("data", ".h5", &in->data, &in->n_data, err)) ||
        (rc = list_dir("probes", ".json", &in->probes, &in->n_probes, err)) ||
        (rc = list_dir("silicon", "", &in->silicon, &in->n_silicon, err)))
        kcs_pub_inputs_free(in);
    return rc;
}

void kcs_pub_inputs_free(kcs_pub_inputs *in)
{
    for (int i = 0; i < in->n_data; i++)
        free(in->data[i]);
    for (int i = 0; i < in->n_probes; i++)
        free(in->probes[i]);
    for (int i = 0; i < in->n_silicon; i++)
        free(in->silicon[i]);
    free(in->data);
    free(in->probes);
    free(in->silicon);
    memset(in, 0, sizeof *in);
}

/* Every dataset verified by the store's reader before it is copied. */
static int verify_dataset(const char *path, kcs_error *err)
{
    char *content = NULL;
    if (kcs_h5in_root_str(path, "content", &content, err) == 0 && content &&
        !strcmp(content, "detection")) {
        /* a kcs detect dataset carries no raw results and no content
         * digests: its tables are read (and checked field by field) by the
         * reducer's reader when the bundle is generated */
        free(content);
        return 0;
    }
    free(content);
    kcs_store_reader *r = NULL;
    int rc = kcs_store_open_read(path, &r, err);
    if (rc) {
        if (rc != KCS_E_INVAL) { /* unreadable input is bad input here */
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            rc = kcs_fail(err, KCS_E_INVAL, "%s", msg);
        }
        return rc;
    }
    int sealed = kcs_store_reader_info(r)->sealed;
    kcs_store_reader_close(r);
    if (!sealed)
        return kcs_fail(err, KCS_E_INVAL,
                        "%s: carries no content digests (written by a kcs before they existed); "
                        "a published dataset must be verifiable: rerun its study",
                        path);
    return 0;
}

static int copy_inputs(const kcs_publish_opts *o, const char *tmp, kcs_error *err)
{
    char p[4400], q[4400];
    int rc;
    snprintf(p, sizeof p, "%s/data", tmp);
    if ((rc = mk(p, err)))
        return rc;
    for (int i = 0; i < o->n_datasets; i++) {
        if (!o->quiet)
            fprintf(stderr, "kcs publish: verifying and copying %s (%d/%d)\n", o->datasets[i],
                    i + 1, o->n_datasets);
        if ((rc = verify_dataset(o->datasets[i], err)))
            return rc;
        const char *b = base_name(o->datasets[i]);
        size_t l = strlen(b);
        /* NN-NAME.h5: the order given is the rank order of the merged view */
        snprintf(q, sizeof q, "%s/data/%02d-%.*s.h5", tmp, i + 1,
                 (int)(l > 3 && !strcmp(b + l - 3, ".h5") ? l - 3 : l), b);
        if ((rc = copy_file(o->datasets[i], q, err)))
            return rc;
    }
    if (o->n_probes) {
        snprintf(p, sizeof p, "%s/probes", tmp);
        if ((rc = mk(p, err)))
            return rc;
    }
    for (int i = 0; i < o->n_probes; i++) {
        snprintf(q, sizeof q, "%s/probes/%02d-%s", tmp, i + 1, base_name(o->probes[i]));
        size_t l = strlen(q);
        if (l < 5 || strcmp(q + l - 5, ".json"))
            strncat(q, ".json", sizeof q - l - 1);
        if ((rc = copy_file(o->probes[i], q, err)))
            return rc;
    }
    for (int i = 0; i < o->n_silicon; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", o->silicon[i]);
        size_t l = strlen(dir);
        while (l > 1 && dir[l - 1] == '/')
            dir[--l] = '\0';
        snprintf(p, sizeof p, "%s/study-verdicts.csv", dir);
        kcs_csv c;
        if ((rc = kcs_csv_read(p, &c, err))) {
            if (rc == KCS_E_IO)
                rc = kcs_fail(err, KCS_E_INVAL,
                              "%s: no study-verdicts.csv (--silicon takes a report-only run's "
                              "folder, such as docs/silicon/nvidia-h200/run1)",
                              dir);
            return rc;
        }
        kcs_csv_free(&c);
        /* silicon/PARENT-NAME: nvidia-h200/run1 -> nvidia-h200-run1 */
        char *last = strrchr(dir, '/');
        char name[512];
        if (last) {
            *last = '\0';
            snprintf(name, sizeof name, "%s-%s", base_name(dir), last + 1);
            *last = '/';
        } else {
            snprintf(name, sizeof name, "%s", dir);
        }
        snprintf(p, sizeof p, "%s/silicon", tmp);
        if ((rc = mk(p, err)))
            return rc;
        snprintf(p, sizeof p, "%s/silicon/%s", tmp, name);
        if (mkdir(p, 0777) != 0)
            return kcs_fail(err, errno == EEXIST ? KCS_E_INVAL : KCS_E_IO,
                            "%s: %s (two --silicon folders with the same name?)", p,
                            strerror(errno));
        kcs_pub_files f;
        if ((rc = kcs_pub_walk(dir, "", &f, err)))
            return rc;
        for (int j = 0; j < f.n && !rc; j++) {
            if (strchr(f.path[j], '/'))
                continue; /* the run's own files only */
            char from[4400], to[8800];
            snprintf(from, sizeof from, "%s/%s", dir, f.path[j]);
            snprintf(to, sizeof to, "%s/%s", p, f.path[j]);
            rc = copy_file(from, to, err);
        }
        kcs_pub_files_free(&f);
        if (rc)
            return rc;
    }
    return 0;
}

/* Run fn with the current directory at dir, then come back. */
int kcs_pub_in_dir(const char *dir, int (*fn)(void *), void *ctx, kcs_error *err)
{
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (here < 0)
        return kcs_fail(err, KCS_E_IO, "cannot open the current directory");
    if (chdir(dir) != 0) {
        close(here);
        return kcs_fail(err, KCS_E_INVAL, "%s: cannot enter: %s", dir, strerror(errno));
    }
    int rc = fn(ctx);
    if (fchdir(here) != 0 && !rc)
        rc = kcs_fail(err, KCS_E_IO, "cannot return to the working directory");
    close(here);
    return rc;
}

int kcs_pub_gen_here(void *p)
{
    kcs_pub_gen_ctx *g = p;
    kcs_pub_inputs in;
    int rc = kcs_pub_inputs_list(&in, g->err);
    if (rc)
        return rc;
    rc = kcs_pub_generate(&in, g->out, g->quiet, g->err);
    kcs_pub_inputs_free(&in);
    if (!rc && !strcmp(g->out, ".")) {
        if (!g->quiet)
            fprintf(stderr, "kcs publish: hashing every file (datapackage.json)\n");
        rc = kcs_pub_package(".", g->err);
    }
    return rc;
}

int kcs_publish_run(const kcs_publish_opts *o, kcs_error *err)
{
    if (o->n_datasets < 1)
        return kcs_fail(err, KCS_E_INVAL, "no dataset to publish");
    if (o->n_datasets > 99)
        return kcs_fail(err, KCS_E_INVAL, "at most 99 datasets in one bundle");
    char dir[4096], tmp[4200];
    size_t n = (size_t)snprintf(dir, sizeof dir, "%s", o->out_dir);
    while (n > 1 && dir[n - 1] == '/')
        dir[--n] = '\0';
    static const char *const ours[] = {"datapackage.json", NULL};
    int rc = kcs_outdir_begin(dir, ours, "kcs bundle (no datapackage.json)", "kcs publish", tmp,
                              sizeof tmp, err);
    if (rc)
        return rc;
    kcs_pub_gen_ctx g = {".", o->quiet, err};
    if ((rc = copy_inputs(o, tmp, err)) || (rc = kcs_pub_in_dir(tmp, kcs_pub_gen_here, &g, err))) {
        kcs_outdir_remove(tmp);
        return rc;
    }
    return kcs_outdir_publish(tmp, dir, err);
}
