/* Contract loading and validation: the eight parts of a kernel contract
 * from YAML (see contracts/README.md), with every problem of a file
 * reported at once as "file:line:col: field: message". Printing the
 * normalized form lives in contract_print.c. */
#include "contract.h"
#include "freivalds.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contract_load.h"
#include "declares.h"
#include "symbols.h"

void kcs_contract_free(kcs_contract *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->text);
    free(c->title);
    free(c->postcondition);
    kcs_contract_free_tolerance(c);
    for (int i = 0; i < c->n_sigs; i++) {
        free(c->sigs[i].when_text);
        if (c->sigs[i].when)
            kcs_expr_free(c->sigs[i].when);
        free(c->sigs[i].explain);
    }
    free(c);
}

/* ---- helpers ------------------------------------------------------------ */

static int parse_format_v(const char *s, void *o) { return kcs_format_parse(s, o); }
static int parse_op_v(const char *s, void *o) { return kcs_op_parse(s, o); }
static int parse_acc_v(const char *s, void *o) { return kcs_acc_parse(s, o); }
static int parse_dist_v(const char *s, void *o) { return kcs_dist_parse(s, o); }

static void load_identifier(loader *L, struct fy_node *root)
{
    kcs_contract *c = L->c;
    static const char *const families[] = {"PRC", "ORD", "CMP", "EXC"};
    static const char *const primitives[] = {"path_dependence", "domain_violation",
                                             "resource_contention"};
    struct fy_node *idn = kcs_yaml_get(L->y, root, "id", true, "");
    bool id_ok = kcs_yaml_str(L->y, idn, "id", c->id, sizeof c->id);
    if (id_ok &&
        !(strlen(c->id) == 8 && !strncmp(c->id, "C-", 2) && isupper((unsigned char)c->id[2]) &&
          isupper((unsigned char)c->id[3]) && isupper((unsigned char)c->id[4]) && c->id[5] == '-' &&
          isdigit((unsigned char)c->id[6]) && isdigit((unsigned char)c->id[7]))) {
        kcs_yaml_error(L->y, idn, "id", "'%s' is not of the form C-<family>-NN", c->id);
        id_ok = false;
    }
    c->title = kcs_yaml_strdup(L->y, kcs_yaml_get(L->y, root, "title", true, ""), "title");
    struct fy_node *fn = kcs_yaml_get(L->y, root, "family", true, "");
    int fam = fn ? kcs_contract_keyword(L, fn, "family", families, 4) : -1;
    if (fam >= 0) {
        snprintf(c->family, sizeof c->family, "%s", families[fam]);
        if (id_ok && strncmp(c->id + 2, c->family, 3))
            kcs_yaml_error(L->y, idn, "id", "'%s' does not match family %s", c->id, c->family);
    }
    struct fy_node *pn = kcs_yaml_get(L->y, root, "primitive", true, "");
    int prim = pn ? kcs_contract_keyword(L, pn, "primitive", primitives, 3) : -1;
    if (prim >= 0)
        snprintf(c->primitive, sizeof c->primitive, "%s", primitives[prim]);
}

static void load_scope(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"ops", NULL};
    struct fy_node *s = kcs_contract_section(L, root, "scope", true, "", keys);
    if (!s)
        return;
    struct fy_node *items[KCS_OP_COUNT * 2];
    int n = kcs_contract_list_items(L, kcs_yaml_get(L->y, s, "ops", true, "scope"),
                                    "scope.ops", items, KCS_OP_COUNT * 2);
    for (int i = 0; i < n; i++) {
        char f[32];
        snprintf(f, sizeof f, "scope.ops[%d]", i);
        kcs_op op;
        if (!kcs_contract_parse_name(L, items[i], f, "op", parse_op_v, &op))
            continue;
        if (L->c->ops & (1u << op))
            kcs_yaml_error(L->y, items[i], f, "'%s' is listed twice", kcs_op_name(op));
        L->c->ops |= 1u << op;
    }
}

static void load_precondition(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"dtype_in", "dtype_acc", "dtype_out", "shape", "values",
                                       "declares", "per_op", NULL};
    static const char *const shape_keys[] = {"m", "n", "k", "batch", "multiple_of", NULL};
    static const char *const value_keys[] = {"dist", "finite", NULL};
    kcs_contract *c = L->c;
    int before = L->y->n_errors;
    struct fy_node *p = kcs_contract_section(L, root, "precondition", true, "", keys);
    if (!p)
        return;
    struct fy_node *items[KCS_FMT_COUNT * 2];
    int n = kcs_contract_list_items(L, kcs_yaml_get(L->y, p, "dtype_in", true, "precondition"),
                                    "precondition.dtype_in", items, KCS_FMT_COUNT * 2);
    for (int i = 0; i < n; i++) {
        char f[40];
        snprintf(f, sizeof f, "precondition.dtype_in[%d]", i);
        kcs_format fmt;
        if (kcs_contract_parse_name(L, items[i], f, "format", parse_format_v, &fmt))
            c->dtype_in |= 1u << fmt;
    }
    struct fy_node *acc = kcs_yaml_get(L->y, p, "dtype_acc", true, "precondition");
    if (acc)
        kcs_contract_parse_name(L, acc, "precondition.dtype_acc",
                                "accumulator (a format or bits:N)", parse_acc_v, &c->dtype_acc);
    /* dtype_out: one format or a list; the first is a case's default */
    struct fy_node *on = kcs_yaml_get(L->y, p, "dtype_out", true, "precondition");
    n = kcs_contract_list_items(L, on, "precondition.dtype_out", items, KCS_FMT_COUNT * 2);
    for (int i = 0; i < n; i++) {
        char f[40];
        if (fy_node_get_type(on) == FYNT_SCALAR)
            snprintf(f, sizeof f, "precondition.dtype_out");
        else
            snprintf(f, sizeof f, "precondition.dtype_out[%d]", i);
        kcs_format fmt;
        if (!kcs_contract_parse_name(L, items[i], f, "format", parse_format_v, &fmt))
            continue;
        if (c->dtype_out_set & (1u << fmt))
            kcs_yaml_error(L->y, items[i], f, "'%s' is listed twice", kcs_format_name(fmt));
        if (!c->dtype_out_set)
            c->dtype_out = fmt;
        c->dtype_out_set |= 1u << fmt;
    }

    struct fy_node *sh = kcs_contract_section(L, p, "shape", false, "precondition", shape_keys);
    if (sh) {
        int64_t *ranges[4][2] = {{&c->m_min, &c->m_max}, {&c->n_min, &c->n_max},
                                 {&c->k_min, &c->k_max}, {&c->batch_min, &c->batch_max}};
        for (int i = 0; i < 4; i++) {
            char f[40];
            snprintf(f, sizeof f, "precondition.shape.%s", shape_keys[i]);
            struct fy_node *r = kcs_yaml_get(L->y, sh, shape_keys[i], false, "precondition.shape");
            if (r)
                kcs_contract_load_range(L, r, f, ranges[i][0], ranges[i][1]);
        }
        kcs_contract_load_shape_class(L, sh);
    }
    struct fy_node *v = kcs_contract_section(L, p, "values", false, "precondition", value_keys);
    if (v) {
        struct fy_node *d = kcs_yaml_get(L->y, v, "dist", false, "precondition.values");
        struct fy_node *ditems[KCS_DIST_COUNT + 1];
        int nd = d ? kcs_contract_list_items(L, d, "precondition.values.dist", ditems,
                                             KCS_DIST_COUNT + 1)
                   : 0;
        if (nd > 0)
            c->value_dists = 0;
        for (int i = 0; i < nd; i++) {
            char f[48], buf[32];
            snprintf(f, sizeof f, "precondition.values.dist[%d]", i);
            kcs_dist dist;
            if (kcs_yaml_str(L->y, ditems[i], f, buf, sizeof buf) && !strcmp(buf, "any"))
                c->value_dists = (1u << KCS_DIST_COUNT) - 1;
            else if (kcs_contract_parse_name(L, ditems[i], f, "distribution", parse_dist_v,
                                             &dist))
                c->value_dists |= 1u << dist;
        }
        kcs_yaml_bool(L->y, kcs_yaml_get(L->y, v, "finite", false, "precondition.values"),
                      "precondition.values.finite", &c->values_finite);
    }
    /* declares: properties the kernel must claim for the contract to bind */
    struct fy_node *dl = kcs_yaml_get(L->y, p, "declares", false, "precondition");
    struct fy_node *ditems[KCS_DECL_COUNT * 2 + 1];
    int ndl = dl ? kcs_contract_list_items(L, dl, "precondition.declares", ditems,
                                           KCS_DECL_COUNT * 2 + 1)
                 : 0;
    for (int i = 0; i < ndl; i++) {
        char f[48], buf[64];
        snprintf(f, sizeof f, "precondition.declares[%d]", i);
        kcs_decl d;
        if (!kcs_yaml_str(L->y, ditems[i], f, buf, sizeof buf))
            continue;
        if (kcs_decl_parse(buf, &d))
            kcs_yaml_error(L->y, ditems[i], f, "unknown declaration '%s' (expected %s)", buf,
                           kcs_decls_known());
        else if (c->declares & KCS_DECL_BIT(d))
            kcs_yaml_error(L->y, ditems[i], f, "'%s' is listed twice", buf);
        else
            c->declares |= KCS_DECL_BIT(d);
    }
    kcs_contract_load_per_op(L, p);
    L->pre_ok = L->y->n_errors == before;
}

/* oracle.magnitude (contract.h): random_walk is defined for attention and
 * the fp64 reference only (checked against scope and kind in
 * check_magnitude). */
static void load_magnitude(loader *L, struct fy_node *o)
{
    struct fy_node *m = kcs_yaml_get(L->y, o, "magnitude", false, "oracle");
    char buf[32];
    if (!m || !kcs_yaml_str(L->y, m, "oracle.magnitude", buf, sizeof buf))
        return;
    if (!strcmp(buf, "first_order"))
        L->c->oracle_magnitude = KCS_MAG_FIRST_ORDER;
    else if (!strcmp(buf, "random_walk"))
        L->c->oracle_magnitude = KCS_MAG_RANDOM_WALK;
    else
        kcs_yaml_error(L->y, m, "oracle.magnitude",
                       "unknown magnitude '%s' (expected first_order | random_walk)", buf);
    L->mag_node = m;
}

static void load_oracle(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"kind", "magnitude", NULL};
    kcs_contract *c = L->c;
    struct fy_node *o = kcs_yaml_get(L->y, root, "oracle", true, "");
    if (!o)
        return;
    struct fy_node *k = o;
    const char *field = "oracle";
    if (fy_node_get_type(o) == FYNT_MAPPING) {
        kcs_yaml_check_keys(L->y, o, "oracle", keys);
        k = kcs_yaml_get(L->y, o, "kind", true, "oracle");
        field = "oracle.kind";
        load_magnitude(L, o);
    }
    char buf[64];
    if (!k || !kcs_yaml_str(L->y, k, field, buf, sizeof buf))
        return;
    if (!strcmp(buf, "fp64")) {
        c->oracle = KCS_ORACLE_FP64;
    } else if (!strcmp(buf, "exact")) {
        c->oracle = KCS_ORACLE_EXACT;
    } else if (!strncmp(buf, "model:", 6)) {
        const char *prof = buf + 6;
        size_t len = strlen(prof);
        if (len == 0 || len >= sizeof c->oracle_profile ||
            strspn(prof, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != len) {
            kcs_yaml_error(L->y, k, field, "bad profile name '%s' in '%s'", prof, buf);
            return;
        }
        c->oracle = KCS_ORACLE_MODEL;
        memcpy(c->oracle_profile, prof, len + 1);
    } else if (!strncmp(buf, "freivalds", 9)) {
        kcs_fv_params fp;
        kcs_error fe = {0};
        kcs_fv_params_default(&fp);
        if (kcs_fv_oracle_parse(buf, &fp, &fe)) {
            kcs_yaml_error(L->y, k, field, "%s", fe.msg);
            return;
        }
        c->oracle = KCS_ORACLE_FREIVALDS;
        c->fv_probes = fp.probes;
        c->fv_mode = (int)fp.mode;
    } else {
        kcs_yaml_error(L->y, k, field,
                       "unknown oracle '%s' (expected fp64 | exact | model:<profile> | "
                       "freivalds[:k[:mode]])",
                       buf);
        return;
    }
    if (c->oracle_magnitude == KCS_MAG_RANDOM_WALK) {
        if (c->oracle != KCS_ORACLE_FP64)
            kcs_yaml_error(L->y, L->mag_node, "oracle.magnitude",
                           "random_walk needs oracle.kind fp64, not '%s'", buf);
        else if (c->ops & ~(1u << KCS_OP_ATTENTION))
            kcs_yaml_error(L->y, L->mag_node, "oracle.magnitude",
                           "random_walk is defined for attention only; scope.ops lists "
                           "other ops");
    }
}

static void load_signatures(loader *L, struct fy_node *root)
{
    static const char *const keys[] = {"name", "when", "explain", NULL};
    kcs_contract *c = L->c;
    struct fy_node *s = kcs_yaml_get(L->y, root, "signature", true, "");
    if (!s)
        return;
    if (fy_node_get_type(s) != FYNT_SEQUENCE) {
        kcs_yaml_error(L->y, s, "signature", "expected a list of clauses");
        return;
    }
    struct fy_node *items[KCS_MAX_SIGNATURES];
    int n = kcs_contract_list_items(L, s, "signature", items, KCS_MAX_SIGNATURES);
    for (int i = 0; i < n; i++) {
        kcs_signature *sig = &c->sigs[c->n_sigs++];
        char f[40], ff[56];
        snprintf(f, sizeof f, "signature[%d]", i);
        if (fy_node_get_type(items[i]) != FYNT_MAPPING) {
            kcs_yaml_error(L->y, items[i], f, "expected a mapping with name, when, explain");
            continue;
        }
        kcs_yaml_check_keys(L->y, items[i], f, keys);
        snprintf(ff, sizeof ff, "%s.name", f);
        struct fy_node *nn = kcs_yaml_get(L->y, items[i], "name", true, f);
        if (kcs_yaml_str(L->y, nn, ff, sig->name, sizeof sig->name)) {
            size_t len = strlen(sig->name);
            if (strspn(sig->name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != len ||
                !isalpha((unsigned char)sig->name[0]))
                kcs_yaml_error(L->y, nn, ff,
                               "'%s' must be lower-case letters, digits, '-' or '_'", sig->name);
            for (int j = 0; j < c->n_sigs - 1; j++)
                if (!strcmp(c->sigs[j].name, sig->name))
                    kcs_yaml_error(L->y, nn, ff, "'%s' is used twice", sig->name);
        }
        snprintf(ff, sizeof ff, "%s.when", f);
        struct fy_node *wn = kcs_yaml_get(L->y, items[i], "when", true, f);
        if (wn)
            kcs_contract_expr(L, wn, ff, &sig->when, &sig->when_text);
        snprintf(ff, sizeof ff, "%s.explain", f);
        sig->explain = kcs_yaml_strdup(L->y, kcs_yaml_get(L->y, items[i], "explain", true, f), ff);
    }
}

/* ---- cross-checks ------------------------------------------------------- */

static bool in_range(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

/* Measured shapes (held-out ones too) lie inside the precondition; eta's
 * checks are in contract_tolerance.c, the protocol's in contract_measure.c. */
static void in_precondition(loader *L, const kcs_shape *s, struct fy_node *n, const char *f)
{
    const kcs_contract *c = L->c;
    const char *dim = !in_range(s->m, c->m_min, c->m_max)   ? "m"
                      : !in_range(s->n, c->n_min, c->n_max) ? "n"
                      : !in_range(s->k, c->k_min, c->k_max) ? "k"
                      : (s->batch && !in_range(s->batch, c->batch_min, c->batch_max)) ? "batch"
                                                                                      : NULL;
    if (dim)
        kcs_yaml_error(L->y, n, f, "%s is outside precondition.shape.%s", dim, dim);
}

/* ---- entry points ------------------------------------------------------- */

static int load(kcs_yctx *y, kcs_contract **c_p, kcs_error *err)
{
    static const char *const top[] = {"id", "title", "family", "primitive", "scope",
                                      "precondition", "postcondition", "tolerance", "oracle",
                                      "measurement", "signature", NULL};
    kcs_contract *c = calloc(1, sizeof *c);
    if (!c)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", y->path);
    c->k_min = c->m_min = c->n_min = c->batch_min = 1;
    c->k_max = c->m_max = c->n_max = c->batch_max = INT64_MAX;
    c->value_dists = (1u << KCS_DIST_COUNT) - 1;
    c->values_finite = true;
    c->protocol = KCS_PROTO_ORACLE;
    c->repetitions = 1;
    loader L = {.y = y, .c = c, .tab = kcs_verdict_symtab()};
    struct fy_node *root = kcs_yaml_root(y);
    kcs_yaml_check_keys(y, root, "", top);
    load_identifier(&L, root);
    load_scope(&L, root);
    load_precondition(&L, root);
    c->postcondition = kcs_yaml_strdup(y, kcs_yaml_get(y, root, "postcondition", true, ""),
                                       "postcondition");
    kcs_contract_load_tolerance(&L, root);
    load_oracle(&L, root);
    kcs_contract_load_measurement(&L, root);
    load_signatures(&L, root);
    kcs_contract_check_measured_shapes(&L, root, in_precondition);
    kcs_contract_check_measured_shapes(&L, root, kcs_contract_check_shape_class);
    kcs_contract_check_per_op(&L, root);
    kcs_contract_check_measurement(&L, root);
    kcs_contract_check_eta(&L, root);
    int rc = kcs_yaml_finish(y, err);
    if (rc)
        goto err_free;
    c->path = strdup(y->path);
    c->text = strdup(y->text);
    if (!c->path || !c->text) {
        rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", y->path);
        goto err_free;
    }
    *c_p = c;
    return 0;
err_free:
    kcs_contract_free(c);
    return rc;
}

static int is_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *kcs_contract_resolve(const char *path, char *buf, size_t len)
{
    if (is_regular(path))
        return path;
    size_t l = strlen(path);
    while (l > 1 && path[l - 1] == '/') /* D/<ID>/ names the folder too */
        l--;
    size_t b = l; /* the last component: path[b, l) */
    while (b > 0 && path[b - 1] != '/')
        b--;
    size_t bl = l - b;
    if (bl > 5 && memcmp(path + b + bl - 5, ".yaml", 5) == 0)
        bl -= 5; /* D/<ID>.yaml: the folder D/<ID> */
    if (bl == 0 || bl > 256)
        return path;
    int n = snprintf(buf, len, "%.*s%.*s/%.*s.yaml", (int)b, path, (int)bl, path + b, (int)bl,
                     path + b);
    return n > 0 && (size_t)n < len && is_regular(buf) ? buf : path;
}

int kcs_contract_load(const char *path, kcs_contract **c_p, kcs_error *err)
{
    kcs_yctx y;
    char buf[4096];
    const char *file = kcs_contract_resolve(path, buf, sizeof buf);
    int rc = kcs_yaml_open(&y, file, err);
    if (rc)
        return rc;
    rc = load(&y, c_p, err);
    if (!rc && file != path) { /* c->path: the path as named (a study's /contracts/ID path) */
        char *named = strdup(path);
        if (!named) {
            kcs_contract_free(*c_p);
            *c_p = NULL;
            rc = kcs_fail(err, KCS_E_NOMEM, "%s: out of memory", path);
        } else {
            free((*c_p)->path);
            (*c_p)->path = named;
        }
    }
    kcs_yaml_close(&y);
    return rc;
}

int kcs_contract_load_string(const char *path, const char *text, kcs_contract **c_p,
                             kcs_error *err)
{
    kcs_yctx y;
    int rc = kcs_yaml_open_string(&y, path, text, err);
    if (rc)
        return rc;
    rc = load(&y, c_p, err);
    kcs_yaml_close(&y);
    return rc;
}
