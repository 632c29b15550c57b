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

static char *load_text(kcs_yctx *y, struct fy_node *root, const char *key)
{
    struct fy_node *n = kcs_yaml_get(y, root, key, true, "");
    return n ? kcs_yaml_strdup(y, n, key) : NULL;
}

int kcs_calib_entry_load(const char *path, const char *id, kcs_calib_entry *e, kcs_error *err)
{
    static const char *const keys[] = {"ops",     "dtype_in", "expected", "bad_cpu",
                                       "bad_wrap", "family",  NULL};
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
