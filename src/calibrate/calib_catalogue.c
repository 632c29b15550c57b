/* The calibration catalogue (calibrate.h): for every contract, the
 * baseline, bad and good implementations that three-state calibration
 * runs, as variants of the CPU backend or host wrappers (calib_wrap.c).
 * The catalogue is data: contracts/<ID>/calibration.yaml of every contract
 * folder, read strictly (src/lang/yamlx.h: unknown and missing keys, bad op
 * and format names are errors at file:line:col naming the field). */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "yamlx.h"

/* Whether the comma-separated list holds name (calibrate.h). */
int kcs_calib_has_sig(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, len) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

void kcs_calib_entry_free(kcs_calib_entry *e)
{
    if (!e)
        return;
    free((char *)e->id);
    free((char *)e->expected);
    free((char *)e->bad_cpu);
    free((char *)e->bad_wrap);
    free((char *)e->family);
    for (int i = 0; i < e->n_narrow; i++)
        free(e->narrow[i].what);
    memset(e, 0, sizeof *e);
}

/* A non-empty flow or block list; NULL after recording why not. */
static struct fy_node *list_node(kcs_yctx *y, struct fy_node *root, const char *key)
{
    struct fy_node *n = kcs_yaml_get(y, root, key, true, "");
    if (!n)
        return NULL;
    if (!fy_node_is_sequence(n) || fy_node_sequence_item_count(n) == 0) {
        kcs_yaml_error(y, n, key, "expected a non-empty list");
        return NULL;
    }
    return n;
}

static void load_ops(kcs_yctx *y, struct fy_node *root, uint32_t *ops_p)
{
    struct fy_node *n = list_node(y, root, "ops"), *it_n;
    void *it = NULL;
    for (int i = 0; n && (it_n = fy_node_sequence_iterate(n, &it)); i++) {
        char f[32], name[32];
        snprintf(f, sizeof f, "ops[%d]", i);
        if (!kcs_yaml_str(y, it_n, f, name, sizeof name))
            continue;
        kcs_op op;
        if (kcs_op_parse(name, &op)) {
            kcs_yaml_error(y, it_n, f, "unknown op '%s'", name);
            continue;
        }
        if (*ops_p & (1u << op))
            kcs_yaml_error(y, it_n, f, "'%s' is listed twice", name);
        *ops_p |= 1u << op;
    }
}

/* expected: signature names, stored comma-separated as the table's
 * `expected` (kcs_calib_row.expected holds 63 characters). */
static char *load_names(kcs_yctx *y, struct fy_node *root, const char *key, int required)
{
    if (!required && !kcs_yaml_get(y, root, key, false, ""))
        return strdup("");
    struct fy_node *n = list_node(y, root, key), *it_n;
    char list[192] = ""; /* expected: at most 63 (kcs_calib_row.expected) */
    size_t cap = required ? 64 : sizeof list;
    size_t used = 0;
    void *it = NULL;
    for (int i = 0; n && (it_n = fy_node_sequence_iterate(n, &it)); i++) {
        char f[32], name[96];
        snprintf(f, sizeof f, "%s[%d]", key, i);
        if (!kcs_yaml_str(y, it_n, f, name, sizeof name))
            continue;
        if (strchr(name, ',') || strchr(name, ' ')) {
            kcs_yaml_error(y, it_n, f, "'%s' is not a signature name", name);
            continue;
        }
        if (kcs_calib_has_sig(list, name)) {
            kcs_yaml_error(y, it_n, f, "'%s' is listed twice", name);
            continue;
        }
        int w = snprintf(list + used, cap - used, "%s%s", used ? "," : "", name);
        if (w < 0 || (size_t)w >= cap - used) {
            kcs_yaml_error(y, it_n, f, "the names together exceed %zu characters",
                           cap - 1);
            return NULL;
        }
        used += (size_t)w;
    }
    return n && used ? strdup(list) : NULL;
}

/* A format name at key of map into *f (required). */
static void load_format(kcs_yctx *y, struct fy_node *map, const char *key, const char *parent,
                        kcs_format *f)
{
    struct fy_node *n = kcs_yaml_get(y, map, key, true, parent);
    char fname[32], field[64];
    snprintf(field, sizeof field, "%s.%s", parent, key);
    if (n && kcs_yaml_str(y, n, field, fname, sizeof fname) && kcs_format_parse(fname, f))
        kcs_yaml_error(y, n, field, "unknown format '%s'", fname);
}

/* narrow: the narrow-output states, each a map of state, kernel,
 * dtype_in, dtype_out, verdict (PASS | FAIL), expected (FAIL only: the
 * state's own signatures) and what. */
static void load_narrow(kcs_yctx *y, struct fy_node *root, kcs_calib_entry *e)
{
    static const char *const keys[] = {"state", "kernel", "dtype_in", "dtype_out", "verdict",
                                       "expected", "what", NULL};
    static const char *const kernels[] = {"good", "bad", "narrow-sum", "blocks256", NULL};
    struct fy_node *n = kcs_yaml_get(y, root, "narrow", false, ""), *it_n;
    if (!n)
        return;
    if (!fy_node_is_sequence(n)) {
        kcs_yaml_error(y, n, "narrow", "expected a list of states");
        return;
    }
    void *it = NULL;
    for (int i = 0; (it_n = fy_node_sequence_iterate(n, &it)); i++) {
        char f[48], buf[96];
        snprintf(f, sizeof f, "narrow[%d]", i);
        if (i >= KCS_CALIB_MAX_NARROW) {
            kcs_yaml_error(y, it_n, f, "at most %d narrow-output states", KCS_CALIB_MAX_NARROW);
            return;
        }
        if (!fy_node_is_mapping(it_n)) {
            kcs_yaml_error(y, it_n, f, "expected a map (state, kernel, dtype_in, dtype_out, "
                           "verdict, expected, what)");
            continue;
        }
        kcs_yaml_check_keys(y, it_n, f, keys);
        kcs_calib_narrow *s = &e->narrow[e->n_narrow++];
        char ff[64];
        struct fy_node *v;
        snprintf(ff, sizeof ff, "%s.state", f);
        if ((v = kcs_yaml_get(y, it_n, "state", true, f)) &&
            kcs_yaml_str(y, v, ff, buf, sizeof buf)) {
            if (strlen(buf) >= sizeof s->state || strchr(buf, ' ') || strchr(buf, ','))
                kcs_yaml_error(y, v, ff, "'%s': a state name of at most %zu characters, no "
                               "blank or comma", buf, sizeof s->state - 1);
            else if (!strcmp(buf, "baseline") || !strcmp(buf, "bad") || !strcmp(buf, "good"))
                kcs_yaml_error(y, v, ff, "'%s' is one of the three states; name the narrow one "
                               "apart (e.g. good-bf16-out)", buf);
            for (int j = 0; j < e->n_narrow - 1; j++)
                if (!strcmp(e->narrow[j].state, buf))
                    kcs_yaml_error(y, v, ff, "'%s' is listed twice", buf);
            snprintf(s->state, sizeof s->state, "%s", buf);
        }
        snprintf(ff, sizeof ff, "%s.kernel", f);
        if ((v = kcs_yaml_get(y, it_n, "kernel", true, f)) &&
            kcs_yaml_str(y, v, ff, buf, sizeof buf)) {
            int ok = 0;
            for (const char *const *k = kernels; *k; k++)
                ok |= !strcmp(*k, buf);
            if (!ok)
                kcs_yaml_error(y, v, ff, "unknown kernel '%s' (good, bad, narrow-sum, "
                               "blocks256)", buf);
            snprintf(s->kernel, sizeof s->kernel, "%s", buf);
        }
        s->dtype_in = s->dtype_out = KCS_FMT_FP32;
        load_format(y, it_n, "dtype_in", f, &s->dtype_in);
        load_format(y, it_n, "dtype_out", f, &s->dtype_out);
        snprintf(ff, sizeof ff, "%s.verdict", f);
        if ((v = kcs_yaml_get(y, it_n, "verdict", true, f)) &&
            kcs_yaml_str(y, v, ff, buf, sizeof buf)) {
            if (strcmp(buf, "PASS") && strcmp(buf, "FAIL"))
                kcs_yaml_error(y, v, ff, "'%s': PASS or FAIL", buf);
            s->pass = !strcmp(buf, "PASS");
        }
        struct fy_node *ex = kcs_yaml_get(y, it_n, "expected", false, f);
        snprintf(ff, sizeof ff, "%s.expected", f);
        if (s->pass && ex)
            kcs_yaml_error(y, ex, ff, "a PASS state expects no signature");
        else if (!s->pass && !ex)
            kcs_yaml_error(y, it_n, ff, "missing: a FAIL state names its own signature(s)");
        else if (ex && (!fy_node_is_sequence(ex) || fy_node_sequence_item_count(ex) == 0))
            kcs_yaml_error(y, ex, ff, "expected a non-empty list");
        else if (ex) {
            void *it2 = NULL;
            struct fy_node *sn;
            size_t used = 0;
            for (int j = 0; (sn = fy_node_sequence_iterate(ex, &it2)); j++) {
                char fj[80];
                snprintf(fj, sizeof fj, "%s[%d]", ff, j);
                if (!kcs_yaml_str(y, sn, fj, buf, sizeof buf))
                    continue;
                int w = snprintf(s->expected + used, sizeof s->expected - used, "%s%s",
                                 used ? "," : "", buf);
                if (w < 0 || (size_t)w >= sizeof s->expected - used) {
                    kcs_yaml_error(y, sn, fj, "the names together exceed %zu characters",
                                   sizeof s->expected - 1);
                    break;
                }
                used += (size_t)w;
            }
        }
        snprintf(ff, sizeof ff, "%s.what", f);
        if ((v = kcs_yaml_get(y, it_n, "what", true, f)))
            s->what = kcs_yaml_strdup(y, v, ff);
    }
}

static char *load_text(kcs_yctx *y, struct fy_node *root, const char *key)
{
    struct fy_node *n = kcs_yaml_get(y, root, key, true, "");
    return n ? kcs_yaml_strdup(y, n, key) : NULL;
}

int kcs_calib_entry_load(const char *path, const char *id, kcs_calib_entry *e, kcs_error *err)
{
    static const char *const keys[] = {"ops",     "dtype_in", "expected", "bad_cpu",
                                       "bad_wrap", "family",  "narrow",   NULL};
    memset(e, 0, sizeof *e);
    kcs_yctx y;
    int rc = kcs_yaml_open(&y, path, err);
    if (rc)
        return rc;
    struct fy_node *root = kcs_yaml_root(&y);
    kcs_yaml_check_keys(&y, root, "", keys);
    uint32_t ops = 0;
    load_ops(&y, root, &ops);
    struct fy_node *dn = kcs_yaml_get(&y, root, "dtype_in", true, "");
    char fname[32];
    kcs_format fmt = KCS_FMT_FP32;
    if (dn && kcs_yaml_str(&y, dn, "dtype_in", fname, sizeof fname) &&
        kcs_format_parse(fname, &fmt))
        kcs_yaml_error(&y, dn, "dtype_in", "unknown format '%s'", fname);
    char *expected = load_names(&y, root, "expected", 1);
    char *family = load_names(&y, root, "family", 0);
    char *bad_cpu = load_text(&y, root, "bad_cpu");
    char *bad_wrap = load_text(&y, root, "bad_wrap");
    load_narrow(&y, root, e);
    char *idc = strdup(id);
    rc = kcs_yaml_finish(&y, err);
    e->id = idc;
    e->ops = ops;
    e->dtype_in = fmt;
    e->expected = expected;
    e->bad_cpu = bad_cpu;
    e->bad_wrap = bad_wrap;
    e->family = family;
    if (!rc && (!idc || !expected || !bad_cpu || !bad_wrap || !family))
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
    kcs_yaml_close(&y);
    if (rc)
        kcs_calib_entry_free(e);
    return rc;
}

/* ---- the catalogue, loaded once ------------------------------------------ */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kcs_calib_entry *catalogue;
static int n_catalogue, loaded;
/* Catalogues replaced by a later load: kept (entries handed out stay
 * valid) and reachable. */
static struct retired {
    kcs_calib_entry *cat;
    struct retired *next;
} *retired;

static void catalogue_free(kcs_calib_entry *cat, int n)
{
    if (!cat)
        return;
    for (int i = 0; i < n; i++)
        kcs_calib_entry_free(&cat[i]);
    free(cat);
}

static int load_dir(const char *dir, kcs_calib_entry **cat_p, int *n_p, kcs_error *err)
{
    char **ids = NULL;
    int n = 0, rc = kcs_calib_list_contracts(dir, &ids, &n, err);
    if (rc)
        return rc;
    kcs_calib_entry *cat = calloc((size_t)n + 1, sizeof *cat);
    if (!cat)
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory loading the calibration catalogue");
    int i = 0;
    for (; !rc && i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s/calibration.yaml", dir, ids[i]);
        FILE *f = fopen(path, "r");
        if (!f) {
            rc = kcs_fail(err, KCS_E_INVAL,
                          "%s: missing: every contract folder holds its three-state "
                          "calibration (contracts/README.md, \"Add a contract\")",
                          path);
            break;
        }
        fclose(f);
        rc = kcs_calib_entry_load(path, ids[i], &cat[i], err);
    }
    for (int j = 0; j < n; j++)
        free(ids[j]);
    free(ids);
    if (rc) {
        catalogue_free(cat, n);
        return rc;
    }
    *cat_p = cat;
    *n_p = n;
    return 0;
}

int kcs_calib_catalogue_load(const char *dir, kcs_error *err)
{
    kcs_calib_entry *cat = NULL;
    int n = 0, rc = load_dir(dir, &cat, &n, err);
    if (rc)
        return rc;
    struct retired *r = malloc(sizeof *r);
    if (!r) {
        catalogue_free(cat, n);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory loading the calibration catalogue");
    }
    pthread_mutex_lock(&lock);
    if (catalogue) { /* it replaces the one loaded before (kept: see retired) */
        r->cat = catalogue;
        r->next = retired;
        retired = r;
        r = NULL;
    }
    catalogue = cat;
    n_catalogue = n;
    loaded = 1;
    pthread_mutex_unlock(&lock);
    free(r);
    return 0;
}

/* The catalogue of the default contracts directory, unless one was loaded:
 * a broken file is reported once on stderr and leaves the catalogue empty. */
static void ensure_loaded(void)
{
    pthread_mutex_lock(&lock);
    int done = loaded;
    pthread_mutex_unlock(&lock);
    if (done)
        return;
    char dir[PATH_MAX];
    kcs_calib_contracts_dir(dir, sizeof dir);
    kcs_error err = {0};
    if (kcs_calib_catalogue_load(dir, &err)) {
        pthread_mutex_lock(&lock);
        if (!loaded) {
            fprintf(stderr, "kcs: the calibration catalogue: %s\n", err.msg);
            loaded = 1;
        }
        pthread_mutex_unlock(&lock);
    }
}

const kcs_calib_entry *kcs_calib_catalogue(int *n_p)
{
    ensure_loaded();
    *n_p = n_catalogue;
    return catalogue;
}

const kcs_calib_entry *kcs_calib_find(const char *id)
{
    ensure_loaded();
    for (int i = 0; i < n_catalogue; i++)
        if (strcmp(catalogue[i].id, id) == 0)
            return &catalogue[i];
    return NULL;
}
