/* Study YAML loading. Contracts are named by path relative to the study
 * file; cases reference contracts by id. */
#include "study.h"
#include "backend_names.h"
#include "grow.h"
#include "precondition.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declares.h"
#include "profile.h"
#include "yamlx.h"

static const char *const study_keys[] = {"name",  "seed",    "samples",     "contracts", "placement",
                                         "cases", "timeout", "description", "max_memory_mib",
                                         "record_order", NULL};
static const char *const placement_keys[] = {"backend", "device", "profile", "variant", "schedule",
                                             "acc", "options", "plugin", "declares", NULL};
static const char *const case_keys[] = {"contract", "op", "dtype_in", "dtype_out", "shapes",
                                        "inputs", "trials", NULL};

static void placement_defaults(kcs_placement *p)
{
    memset(p, 0, sizeof *p);
    p->device = -1;
    snprintf(p->variant, sizeof p->variant, "native");
    p->schedule.kind = KCS_SCHED_SEQUENTIAL;
}

/* Every backend kcs has, compiled in here or not: a study written for a
 * GPU cluster still loads on a laptop, where those ranks are unavailable.
 * (Which of them this build and node can open is the registry's business,
 * backends/registry.c; a placement is checked against it when run.) */
#define KCS_BACKEND_NAME(name, kind, gpu) #name,
static const char *const known_backend_names[] = {KCS_BACKEND_LIST(KCS_BACKEND_NAME)};
#undef KCS_BACKEND_NAME
#define N_KNOWN_BACKENDS (sizeof known_backend_names / sizeof known_backend_names[0])

int kcs_study_backend_known(const char *name)
{
    for (size_t i = 0; i < N_KNOWN_BACKENDS; i++)
        if (strcmp(name, known_backend_names[i]) == 0)
            return 1;
    return 0;
}

/* The implementations a placement can name (backends refuse the ones
 * they do not offer for an op: "not offered by this backend"). */
static int variant_known(const char *v)
{
    return strcmp(v, "native") == 0 || strcmp(v, "own") == 0 || strcmp(v, "fused") == 0 ||
           strcmp(v, "fault:hang") == 0 || strcmp(v, "fault:segv") == 0 ||
           (strncmp(v, "calib:", 6) == 0 && v[6]);
}

static void known_backends(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < N_KNOWN_BACKENDS && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 known_backend_names[i]);
}

int kcs_placement_parse(const char *text, kcs_placement *p, kcs_error *err)
{
    placement_defaults(p);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", text);
    char *save = NULL;
    char *tok = strtok_r(tmp, ":", &save);
    if (!tok || !*tok)
        return kcs_fail(err, KCS_E_INVAL, "empty placement");
    snprintf(p->backend, sizeof p->backend, "%s", tok);
    if (strcmp(p->backend, "plugin") == 0) {
        const char *rest = text + strlen("plugin");
        if (*rest != ':' || !rest[1])
            return kcs_fail(err, KCS_E_INVAL, "placement '%s': plugin needs a path (plugin:PATH)",
                            text);
        snprintf(p->path, sizeof p->path, "%s", rest + 1);
        p->device = 0;
        return 0;
    }
    tok = strtok_r(NULL, ":", &save);
    if (tok) {
        char *end;
        long d = strtol(tok, &end, 10);
        if (*end || d < 0 || d >= KCS_MAX_DEVICES)
            return kcs_fail(err, KCS_E_INVAL, "placement '%s': device '%s' is not an index 0..%d",
                            text, tok, KCS_MAX_DEVICES - 1);
        p->device = (int)d;
        tok = strtok_r(NULL, ":", &save);
        if (tok && strlen(tok) >= sizeof p->profile)
            return kcs_fail(err, KCS_E_INVAL, "placement '%s': profile '%s' is longer than %zu "
                            "characters", text, tok, sizeof p->profile - 1);
        if (tok)
            snprintf(p->profile, sizeof p->profile, "%s", tok);
    }
    return 0;
}

const char *kcs_placement_str(const kcs_placement *p, char *buf, size_t len)
{
    char sch[32], acc[16];
    kcs_schedule_str(&p->schedule, sch, sizeof sch);
    if (p->acc_set)
        kcs_acc_str(&p->acc, acc, sizeof acc);
    else
        snprintf(acc, sizeof acc, "declared");
    if (p->profile[0])
        snprintf(buf, len, "%s:%d profile=%s", p->backend, p->device, p->profile);
    else if (strcmp(p->variant, "own") == 0)
        snprintf(buf, len, "%s:%d own schedule=%s acc=%s", p->backend, p->device, sch, acc);
    else
        snprintf(buf, len, "%s:%d %s", p->backend, p->device, p->variant);
    if (p->declares) {
        char d[64];
        size_t used = strlen(buf);
        snprintf(buf + used, used < len ? len - used : 0, " declares=%s",
                 kcs_decls_str(p->declares, d, sizeof d));
    }
    return buf;
}

/* The value of key in the mapping n, or NULL; f = its field name,
 * "<field>.<key>". */
static struct fy_node *entry_get(kcs_yctx *y, struct fy_node *n, const char *field,
                                 const char *key, bool required, char *f, size_t flen)
{
    snprintf(f, flen, "%s.%s", field, key);
    return kcs_yaml_get(y, n, key, required, field);
}

/* A string value of key in the mapping n into dst (left as it is when absent). */
static void entry_str(kcs_yctx *y, struct fy_node *n, const char *field, const char *key,
                      bool required, char *dst, size_t len)
{
    char f[96];
    struct fy_node *v = entry_get(y, n, field, key, required, f, sizeof f);
    if (v)
        kcs_yaml_str(y, v, f, dst, len);
}

static void load_placement_entry(kcs_yctx *y, struct fy_node *n, const char *field,
                                 kcs_placement *p)
{
    kcs_error e = {0};
    if (fy_node_is_scalar(n)) {
        char text[256];
        if (kcs_yaml_str(y, n, field, text, sizeof text) && kcs_placement_parse(text, p, &e))
            kcs_yaml_error(y, n, field, "%s", e.msg);
    } else if (fy_node_is_mapping(n)) {
        placement_defaults(p);
        kcs_yaml_check_keys(y, n, field, placement_keys);
        char f[96], buf[256];
        struct fy_node *v;
        entry_str(y, n, field, "backend", true, p->backend, sizeof p->backend);
        if ((v = entry_get(y, n, field, "device", false, f, sizeof f))) {
            int64_t d;
            if (kcs_yaml_int(y, v, f, 0, KCS_MAX_DEVICES - 1, &d))
                p->device = (int)d;
        }
        entry_str(y, n, field, "profile", false, p->profile, sizeof p->profile);
        entry_str(y, n, field, "variant", false, p->variant, sizeof p->variant);
        if ((v = entry_get(y, n, field, "schedule", false, f, sizeof f)) &&
            kcs_yaml_str(y, v, f, buf, sizeof buf) && kcs_schedule_parse(buf, &p->schedule))
            kcs_yaml_error(y, v, f,
                           "unknown schedule '%s' (sequential, pairwise, blocked:B, splitk:S, "
                           "atomic)",
                           buf);
        if ((v = entry_get(y, n, field, "acc", false, f, sizeof f)) &&
            kcs_yaml_str(y, v, f, buf, sizeof buf)) {
            if (kcs_acc_parse(buf, &p->acc))
                kcs_yaml_error(y, v, f, "unknown accumulator '%s' (a format or bits:N)", buf);
            else
                p->acc_set = 1;
        }
        entry_str(y, n, field, "options", false, p->options, sizeof p->options);
        entry_str(y, n, field, "plugin", false, p->path, sizeof p->path);
        if ((v = entry_get(y, n, field, "declares", false, f, sizeof f)) &&
            kcs_yaml_str(y, v, f, buf, sizeof buf)) {
            char bad[64];
            if (kcs_decls_parse(buf, &p->declares, bad, sizeof bad))
                kcs_yaml_error(y, v, f, "unknown declaration '%s' (expected %s)", bad,
                               kcs_decls_known());
        }
    } else {
        kcs_yaml_error(y, n, field, "expected a mapping or \"backend[:device[:profile]]\"");
        return;
    }
    {
        int col;
        kcs_yaml_pos(n, &p->line, &col);
    }
    /* a misspelt profile or variant is found here, not at run time */
    if (p->profile[0]) {
        char pname[KCS_PROFILE_SPEC_MAX];
        kcs_libpath lp;
        kcs_error perr = {0};
        if (kcs_profile_spec_parse(p->profile, pname, &lp, &perr))
            kcs_yaml_error(y, n, field, "%s", perr.msg);
        else if (p->backend[0] && strcmp(p->backend, "cpu") != 0)
            kcs_yaml_error(y, n, field,
                           "profile '%s' on backend %s: emulated profiles run on the cpu backend",
                           p->profile, p->backend);
    }
    if (!variant_known(p->variant))
        kcs_yaml_error(y, n, field,
                       "unknown variant '%s' (native, own, fused, fault:hang, fault:segv, "
                       "calib:NAME)",
                       p->variant);
    if (p->backend[0] && !kcs_study_backend_known(p->backend)) {
        char known[256];
        known_backends(known, sizeof known);
        kcs_yaml_error(y, n, field,
                       "unknown backend '%s' (kcs has cpu, opencl, cuda, hip, level_zero, "
                       "plugin; compiled in here: %s)",
                       p->backend, known);
    }
    if (strcmp(p->backend, "plugin") == 0 && !p->path[0])
        kcs_yaml_error(y, n, field, "a plugin placement needs `plugin: PATH`");
    /* like contracts, a relative plugin path is relative to the study file */
    if (p->path[0] && p->path[0] != '/') {
        char dir[4096], full[8192];
        snprintf(dir, sizeof dir, "%s", y->path);
        snprintf(full, sizeof full, "%s/%s", dirname(dir), p->path);
        if (strlen(full) >= sizeof p->path)
            kcs_yaml_error(y, n, field, "plugin path too long");
        else
            snprintf(p->path, sizeof p->path, "%s", full);
    }
}

static void load_placement(kcs_yctx *y, struct fy_node *n, kcs_study *s)
{
    if (fy_node_is_scalar(n)) {
        char text[32];
        if (kcs_yaml_str(y, n, "placement", text, sizeof text)) {
            if (strcmp(text, "auto") == 0)
                s->placement_auto = 1;
            else
                kcs_yaml_error(y, n, "placement", "expected `auto` or a list of placements");
        }
        return;
    }
    if (!fy_node_is_sequence(n) || fy_node_sequence_item_count(n) == 0) {
        kcs_yaml_error(y, n, "placement", "expected `auto` or a non-empty list");
        return;
    }
    int count = fy_node_sequence_item_count(n);
    if (count > KCS_MAX_PLACEMENT) {
        kcs_yaml_error(y, n, "placement", "%d entries; at most %d", count, KCS_MAX_PLACEMENT);
        return;
    }
    void *it = NULL;
    struct fy_node *e;
    while ((e = fy_node_sequence_iterate(n, &it))) {
        char field[32];
        snprintf(field, sizeof field, "placement[%d]", s->n_placement);
        load_placement_entry(y, e, field, &s->placement[s->n_placement++]);
    }
}

/* "[m, n, k]" or "[m, n, k, batch]" */
static void load_shapes(kcs_yctx *y, struct fy_node *n, const char *field, kcs_shape *shapes,
                        int *n_p)
{
    if (!fy_node_is_sequence(n)) {
        kcs_yaml_error(y, n, field, "expected a list of [m, n, k] or [m, n, k, batch]");
        return;
    }
    void *it = NULL;
    struct fy_node *e;
    int count = 0;
    while ((e = fy_node_sequence_iterate(n, &it))) {
        char f[64];
        snprintf(f, sizeof f, "%s[%d]", field, count);
        int len = fy_node_is_sequence(e) ? fy_node_sequence_item_count(e) : 0;
        if (len != 3 && len != 4) {
            kcs_yaml_error(y, e, f, "expected [m, n, k] or [m, n, k, batch]");
            continue;
        }
        if (count >= KCS_MAX_SHAPES) {
            kcs_yaml_error(y, e, f, "more than %d shapes", KCS_MAX_SHAPES);
            break;
        }
        int64_t v[4] = {0, 0, 0, 0};
        for (int i = 0; i < len; i++)
            kcs_yaml_int(y, fy_node_sequence_get_by_index(e, i), f, 1, (int64_t)1 << 24, &v[i]);
        shapes[count++] = (kcs_shape){v[0], v[1], v[2], len == 4 ? v[3] : 0};
    }
    *n_p = count;
}

static int find_contract(const kcs_study *s, const char *id)
{
    for (int i = 0; i < s->n_contracts; i++)
        if (strcmp(s->contracts[i]->id, id) == 0)
            return i;
    return -1;
}

static void load_contracts(kcs_yctx *y, struct fy_node *n, kcs_study *s)
{
    if (!fy_node_is_sequence(n) || fy_node_sequence_item_count(n) == 0) {
        kcs_yaml_error(y, n, "contracts", "expected a non-empty list of contract files");
        return;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", s->path);
    char *d = dirname(dir);
    void *it = NULL;
    struct fy_node *e;
    int i = 0;
    while ((e = fy_node_sequence_iterate(n, &it))) {
        char field[32], rel[1024], full[8192];
        snprintf(field, sizeof field, "contracts[%d]", i++);
        if (!kcs_yaml_str(y, e, field, rel, sizeof rel))
            continue;
        if (s->n_contracts >= KCS_MAX_CONTRACTS) {
            kcs_yaml_error(y, e, field, "more than %d contracts", KCS_MAX_CONTRACTS);
            break;
        }
        if (rel[0] == '/')
            snprintf(full, sizeof full, "%s", rel);
        else
            snprintf(full, sizeof full, "%s/%s", d, rel);
        kcs_error ce = {0};
        kcs_contract *c;
        if (kcs_contract_load(full, &c, &ce)) {
            kcs_yaml_error(y, e, field, "%s", ce.msg);
            continue;
        }
        if (find_contract(s, c->id) >= 0) {
            kcs_yaml_error(y, e, field, "contract %s listed twice", c->id);
            kcs_contract_free(c);
            continue;
        }
        s->contracts[s->n_contracts++] = c;
    }
}

static void load_case(kcs_yctx *y, struct fy_node *n, const char *field, kcs_study *s,
                      kcs_sweep *w)
{
    memset(w, 0, sizeof *w);
    w->contract = -1;
    if (!fy_node_is_mapping(n)) {
        kcs_yaml_error(y, n, field, "expected a mapping");
        return;
    }
    kcs_yaml_check_keys(y, n, field, case_keys);
    char f[96], buf[64];
    struct fy_node *v;
    kcs_error pe = {0};
    if ((v = entry_get(y, n, field, "contract", true, f, sizeof f)) &&
        kcs_yaml_str(y, v, f, buf, sizeof buf)) {
        w->contract = find_contract(s, buf);
        if (w->contract < 0)
            kcs_yaml_error(y, v, f, "contract '%s' is not in the study's contracts list", buf);
    }
    const kcs_contract *c = w->contract >= 0 ? s->contracts[w->contract] : NULL;
    snprintf(f, sizeof f, "%s.op", field);
    bool op_ok = false; /* w->op is an op of c's scope: per-op preconditions apply */
    if ((v = kcs_yaml_get(y, n, "op", true, field)) && kcs_yaml_str(y, v, f, buf, sizeof buf)) {
        if (kcs_op_parse(buf, &w->op))
            kcs_yaml_error(y, v, f, "unknown op '%s'", buf);
        else if (c && !(c->ops & (1u << w->op)))
            kcs_yaml_error(y, v, f, "op '%s' is outside the scope of %s", buf, c->id);
        else
            op_ok = c != NULL;
    }
    w->dtype_in = KCS_FMT_FP32;
    if ((v = entry_get(y, n, field, "dtype_in", false, f, sizeof f)) &&
        kcs_yaml_str(y, v, f, buf, sizeof buf)) {
        if (kcs_format_parse(buf, &w->dtype_in))
            kcs_yaml_error(y, v, f, "unknown format '%s'", buf);
        else if (c && !(c->dtype_in & (1u << w->dtype_in)))
            kcs_yaml_error(y, v, f, "dtype_in '%s' violates the precondition of %s", buf, c->id);
        else if (op_ok && kcs_precondition_op_dtype(c, w->op, w->dtype_in, &pe))
            kcs_yaml_error(y, v, f, "%s", pe.msg);
    }
    w->dtype_out = c ? c->dtype_out : KCS_FMT_FP32;
    if ((v = entry_get(y, n, field, "dtype_out", false, f, sizeof f)) &&
        kcs_yaml_str(y, v, f, buf, sizeof buf)) {
        if (kcs_format_parse(buf, &w->dtype_out))
            kcs_yaml_error(y, v, f, "unknown format '%s'", buf);
        else if (c && kcs_precondition_dtype_out(c, w->dtype_out, &pe))
            kcs_yaml_error(y, v, f, "%s", pe.msg);
    }
    if ((v = entry_get(y, n, field, "shapes", false, f, sizeof f))) {
        load_shapes(y, v, f, w->shapes, &w->n_shapes);
        /* every shape inside the contract's precondition.shape ranges */
        for (int i = 0; c && i < w->n_shapes && fy_node_is_sequence(v); i++) {
            if (op_ok ? kcs_precondition_op_shape(c, w->op, &w->shapes[i], &pe)
                      : kcs_precondition_shape(c, &w->shapes[i], &pe)) {
                char fi[112];
                snprintf(fi, sizeof fi, "%s[%d]", f, i);
                kcs_yaml_error(y, fy_node_sequence_get_by_index(v, i), fi, "%s", pe.msg);
            }
        }
    }
    if ((v = entry_get(y, n, field, "inputs", false, f, sizeof f))) {
        void *it = NULL;
        struct fy_node *e;
        if (!fy_node_is_sequence(v))
            kcs_yaml_error(y, v, f, "expected a list of distributions");
        else
            while ((e = fy_node_sequence_iterate(v, &it)) && w->n_dists < KCS_MAX_DISTS) {
                if (!kcs_yaml_str(y, e, f, buf, sizeof buf))
                    continue;
                if (kcs_dist_parse(buf, &w->dists[w->n_dists++]))
                    kcs_yaml_error(y, e, f, "unknown input distribution '%s'", buf);
                else if (c && kcs_precondition_dist(c, w->dists[w->n_dists - 1], &pe))
                    kcs_yaml_error(y, e, f, "%s", pe.msg);
            }
    }
    if ((v = entry_get(y, n, field, "trials", false, f, sizeof f))) {
        int64_t t;
        if (kcs_yaml_int(y, v, f, 1, 10000, &t))
            w->trials = (int)t;
    }
}

int kcs_study_load(const char *path, kcs_study **s_p, kcs_error *err)
{
    kcs_yctx y;
    int rc = kcs_yaml_open(&y, path, err);
    if (rc)
        return rc;
    kcs_study *s = calloc(1, sizeof *s);
    if (!s) {
        kcs_yaml_close(&y);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    s->path = strdup(path);
    s->text = strdup(y.text);
    s->seed = 20260601;
    s->n_samples = 64;
    s->timeout_s = 600.0;
    s->max_memory_mib = 8192;
    const char *cap = getenv("KCS_MAX_MEMORY_MIB");
    if (cap && atoll(cap) > 0)
        s->max_memory_mib = atoll(cap);
    snprintf(s->name, sizeof s->name, "study");
    struct fy_node *root = kcs_yaml_root(&y), *v;
    kcs_yaml_check_keys(&y, root, "study", study_keys);
    if ((v = kcs_yaml_get(&y, root, "name", true, "")))
        kcs_yaml_str(&y, v, "name", s->name, sizeof s->name);
    if ((v = kcs_yaml_get(&y, root, "seed", false, ""))) {
        int64_t seed;
        if (kcs_yaml_int(&y, v, "seed", 0, INT64_MAX, &seed))
            s->seed = (uint64_t)seed;
    }
    if ((v = kcs_yaml_get(&y, root, "samples", false, ""))) {
        int64_t ns;
        if (kcs_yaml_int(&y, v, "samples", 1, 65536, &ns))
            s->n_samples = (int)ns;
    }
    if ((v = kcs_yaml_get(&y, root, "timeout", false, ""))) {
        double t;
        if (kcs_yaml_num(&y, v, "timeout", &t)) {
            if (!(t > 0.0 && t <= 1e6))
                kcs_yaml_error(&y, v, "timeout", "%g is not a time limit in (0, 1e6] seconds", t);
            else
                s->timeout_s = t;
        }
    }
    if ((v = kcs_yaml_get(&y, root, "max_memory_mib", false, ""))) {
        int64_t want = s->max_memory_mib;
        if (kcs_yaml_int(&y, v, "max_memory_mib", 1, (int64_t)1 << 30, &want))
            /* the operator's KCS_MAX_MEMORY_MIB is a ceiling a study cannot lift */
            s->max_memory_mib = cap && atoll(cap) > 0 && want > atoll(cap) ? atoll(cap) : want;
    }
    if ((v = kcs_yaml_get(&y, root, "record_order", false, ""))) {
        bool ro = false;
        if (kcs_yaml_bool(&y, v, "record_order", &ro))
            s->record_order = ro;
    }
    if ((v = kcs_yaml_get(&y, root, "contracts", true, "")))
        load_contracts(&y, v, s);
    if ((v = kcs_yaml_get(&y, root, "placement", true, "")))
        load_placement(&y, v, s);
    if ((v = kcs_yaml_get(&y, root, "cases", true, ""))) {
        if (!fy_node_is_sequence(v) || fy_node_sequence_item_count(v) == 0) {
            kcs_yaml_error(&y, v, "cases", "expected a non-empty list");
        } else {
            int count = fy_node_sequence_item_count(v);
            s->sweeps = calloc((size_t)count, sizeof *s->sweeps);
            void *it = NULL;
            struct fy_node *e;
            while (s->sweeps && (e = fy_node_sequence_iterate(v, &it))) {
                char field[32];
                snprintf(field, sizeof field, "cases[%d]", s->n_sweeps);
                load_case(&y, e, field, s, &s->sweeps[s->n_sweeps++]);
            }
        }
    }
    rc = kcs_yaml_finish(&y, err);
    kcs_yaml_close(&y);
    if (rc) {
        kcs_study_free(s);
        return rc;
    }
    *s_p = s;
    return 0;
}

void kcs_study_free(kcs_study *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_contracts; i++)
        kcs_contract_free(s->contracts[i]);
    KCS_FREE(s->sweeps, s->path, s->text, s);
}

const kcs_placement *kcs_study_placement(const kcs_study *s, int rank)
{
    if (s->n_placement == 0)
        return NULL;
    return &s->placement[rank % s->n_placement];
}
