/* Three-state calibration and the cross matrix (calibrate.h): each
 * contract measured through its own protocol (kcs_plan_build +
 * kcs_protocol_trial) on the calibration variants of one backend. */
#include "calibrate.h"
#include "precondition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_wrap.h"
#include "declares.h"
#include "protocol.h"

#define OPBIT(o) (1u << (o))
#define GEMMS (OPBIT(KCS_OP_GEMM) | OPBIT(KCS_OP_BATCHED_GEMM))

const char *kcs_calib_state_name(int state)
{
    static const char *const names[] = {"baseline", "bad", "good"};
    return state >= 0 && state < KCS_CALIB_N_STATES ? names[state] : "?";
}

uint32_t kcs_calib_ops(const kcs_contract *c, uint32_t offered)
{
    uint32_t ops = c->ops & offered;
    if ((ops & GEMMS) == GEMMS) {
        int batched = 0;
        for (int i = 0; i < c->n_shapes; i++)
            batched |= c->shapes[i].batch > 0;
        for (int i = 0; i < c->n_held_out; i++)
            batched |= c->held_out[i].batch > 0;
        ops &= ~OPBIT(batched ? KCS_OP_GEMM : KCS_OP_BATCHED_GEMM);
    }
    return ops;
}

kcs_format kcs_calib_dtype(const kcs_contract *c)
{
    const kcs_calib_entry *e = kcs_calib_find(c->id);
    if (e && (c->dtype_in & (1u << e->dtype_in)))
        return e->dtype_in;
    if (c->dtype_in & (1u << KCS_FMT_FP32))
        return KCS_FMT_FP32;
    for (int f = 0; f < KCS_FMT_COUNT; f++)
        if (c->dtype_in & (1u << f))
            return (kcs_format)f;
    return KCS_FMT_FP32;
}

static void add_name(char *list, size_t cap, const char *name, size_t len)
{
    char tmp[96];
    if (len == 0 || len >= sizeof tmp)
        return;
    memcpy(tmp, name, len);
    tmp[len] = 0;
    if (kcs_calib_has_sig(list, tmp))
        return;
    size_t used = strlen(list);
    if (used + len + 2 <= cap)
        snprintf(list + used, cap - used, "%s%s", used ? "," : "", tmp);
}

/* Add every name of a comma-separated list (the last one may have been
 * truncated by the 64-byte result field: only names the contract has are
 * kept). */
static void add_sigs(char *list, size_t cap, const char *sigs, const kcs_contract *c)
{
    for (const char *p = sigs; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        for (int i = 0; i < c->n_sigs; i++)
            if (strlen(c->sigs[i].name) == n && strncmp(c->sigs[i].name, p, n) == 0)
                add_name(list, cap, p, n);
        p = end ? end + 1 : NULL;
    }
}

static void ops_str(uint32_t ops, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int op = 0; op < KCS_OP_COUNT; op++)
        if (ops & OPBIT(op))
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                     used ? "," : "", kcs_op_name((kcs_op)op));
}

/* The per-signature counts of one failed trial (kcs_calib_outcome.sig_*):
 * under_specified counts as a name of its own. */
static void count_sigs(kcs_calib_outcome *out, const char *verdict, const char *sigs,
                       const kcs_contract *c)
{
    int first = 1;
    const char *p = strcmp(verdict, "under_specified") == 0 ? "under_specified" : sigs;
    while (p && *p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        int known = n == 15 && strncmp(p, "under_specified", 15) == 0;
        for (int i = 0; i < c->n_sigs && !known; i++)
            known = strlen(c->sigs[i].name) == n && strncmp(c->sigs[i].name, p, n) == 0;
        if (known && n < sizeof out->sig_name[0]) {
            int j = 0;
            while (j < out->n_sig && !(strlen(out->sig_name[j]) == n &&
                                       strncmp(out->sig_name[j], p, n) == 0))
                j++;
            if (j == out->n_sig && j < KCS_MAX_SIGNATURES + 1) {
                snprintf(out->sig_name[j], sizeof out->sig_name[j], "%.*s", (int)n, p);
                out->n_sig++;
            }
            if (j < out->n_sig) {
                out->sig_any[j]++;
                out->sig_first[j] += first;
            }
        }
        first = 0;
        p = end ? end + 1 : NULL;
    }
}

static void tally(const kcs_contract *c, const kcs_result_rec *rec, kcs_calib_outcome *out,
                  int *unsupported)
{
    out->trials++;
    int ran = kcs_status_of(rec->status) == KCS_ST_OK || kcs_status_of(rec->status) == KCS_ST_RAISED;
    if (!ran) {
        kcs_status st = kcs_status_of(rec->status);
        if (st == KCS_ST_UNSUPPORTED)
            (*unsupported)++;
        else
            out->errors++;
        if (st == KCS_ST_CRASHED || st == KCS_ST_TIMEOUT)
            out->deaths++;
        if (!out->detail[0])
            snprintf(out->detail, sizeof out->detail, "%s: %s", rec->status,
                     rec->message[0] ? rec->message : rec->signature);
        return;
    }
    if (!isnan(rec->tau) && !(rec->tau <= out->max_tau))
        out->max_tau = rec->tau;
    if (strcmp(rec->verdict, "within_tolerance") == 0)
        return;
    if (strcmp(rec->verdict, "not_claimed") == 0) {
        out->unclaimed++;
        return;
    }
    out->failed++;
    /* a judged trial's message: where the guards were written */
    if (!out->detail[0] && rec->message[0])
        snprintf(out->detail, sizeof out->detail, "%s", rec->message);
    count_sigs(out, rec->verdict, rec->signature, c);
    if (strcmp(rec->verdict, "under_specified") == 0) {
        add_name(out->signatures, sizeof out->signatures, "under_specified", 15);
        add_name(out->primary, sizeof out->primary, "under_specified", 15);
    } else {
        add_sigs(out->signatures, sizeof out->signatures, rec->signature, c);
        const char *end = strchr(rec->signature, ',');
        char first[sizeof rec->signature];
        snprintf(first, sizeof first, "%.*s",
                 (int)(end ? (size_t)(end - rec->signature) : strlen(rec->signature)),
                 rec->signature);
        add_sigs(out->primary, sizeof out->primary, first, c);
    }
}

int kcs_calib_measure(const kcs_contract *c, uint32_t ops, kcs_rank_binding *b,
                      const kcs_calib_run *run, kcs_calib_outcome *out, kcs_error *err)
{
    kcs_calib_scope sc = {0};
    return kcs_calib_measure_scoped(c, ops, b, run, &sc, out, err);
}

/* One input format's cases of a scoped measurement, tallied into o. */
static int measure_dtype(const kcs_contract *c, uint32_t ops, kcs_format f, kcs_rank_binding *b,
                         const kcs_calib_run *run, const kcs_calib_scope *sc,
                         kcs_calib_outcome *o, int *unsupported, uint32_t *ran, kcs_error *err)
{
    kcs_sweep sw[KCS_OP_COUNT];
    int nsw = 0;
    for (int op = 0; op < KCS_OP_COUNT; op++)
        if (ops & OPBIT(op)) {
            /* precondition.per_op: an op measures only the formats and
             * the given shapes its own precondition admits */
            if (!(kcs_precondition_op_dtypes(c, (kcs_op)op) & (1u << f)))
                continue;
            kcs_sweep *w = &sw[nsw];
            *w = (kcs_sweep){.contract = 0, .op = (kcs_op)op, .dtype_in = f,
                             .dtype_out = sc->set_formats ? sc->dtype_out : c->dtype_out};
            int ns = sc->n_shapes < KCS_MAX_SHAPES ? sc->n_shapes : KCS_MAX_SHAPES;
            for (int i = 0; i < ns; i++)
                if (kcs_precondition_op_ok(c, (kcs_op)op, f, &sc->shapes[i]))
                    w->shapes[w->n_shapes++] = sc->shapes[i];
            if (ns > 0 && w->n_shapes == 0)
                continue;
            nsw++;
            *ran |= OPBIT(op);
        }
    if (nsw == 0)
        return 0;
    kcs_study s = {0};
    s.path = c->path;
    s.seed = run->seed;
    s.max_memory_mib = 8192;
    s.timeout_s = run->timeout_s;
    s.contracts[0] = (kcs_contract *)c; /* read only: the plan keeps a const view */
    s.n_contracts = 1;
    s.sweeps = sw;
    s.n_sweeps = nsw;
    kcs_plan plan;
    int rc = kcs_plan_build(&s, &plan, err);
    if (rc)
        return rc;
    for (int64_t i = 0; i < plan.n_cases && !rc; i++) {
        const kcs_case *cs = &plan.cases[i];
        kcs_case_memory mem = {0};
        uint64_t digest = 0;
        kcs_trial_io io = {.study_seed = run->seed,
                           .timeout_s = run->timeout_s,
                           .rank = 0,
                           .verbose = run->verbose,
                           .memory = &mem,
                           .input_digest = &digest,
                           .verdict_only = KCS_IO_SIGNATURE}; /* tally reads verdict, signature, tau */
        for (int t = 0; t < cs->trials && !rc; t++) {
            kcs_result_rec rec;
            rc = kcs_protocol_trial(c, cs, t, b, &io, &rec, err);
            if (!rc)
                tally(c, &rec, o, unsupported);
        }
    }
    kcs_plan_free(&plan);
    return rc;
}

int kcs_calib_measure_scoped(const kcs_contract *c, uint32_t ops, kcs_rank_binding *b,
                             const kcs_calib_run *run, const kcs_calib_scope *sc,
                             kcs_calib_outcome *out, kcs_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->verdict, sizeof out->verdict, "N/A");
    kcs_contract sem;
    c = kcs_calib_semantics(c, b, &ops, &sem, out->semantics, sizeof out->semantics);
    ops_str(ops, out->ops, sizeof out->ops);
    kcs_format din = sc->set_formats ? sc->dtype_in : kcs_calib_dtype(c);
    int unsupported = 0;
    uint32_t ran = 0; /* the ops measured: per-op preconditions may leave some out */
    char skipped[64] = "";
    for (int f = 0; f < KCS_FMT_COUNT; f++) {
        if (sc->all_dtypes ? !(c->dtype_in & (1u << f)) : f != (int)din)
            continue;
        kcs_calib_outcome o;
        memset(&o, 0, sizeof o);
        int uns = 0;
        int rc = measure_dtype(c, ops, (kcs_format)f, b, run, sc, &o, &uns, &ran, err);
        if (rc)
            return rc;
        /* Grading every admitted format: one that no call ran on, every
         * call refused (unsupported, or the library's own failure return:
         * the plugin ABI's way to say it cannot handle these dtypes), is a
         * format the implementation does not offer: skipped and named. A
         * call that crashed, exited or timed out is an ERROR whatever the
         * format: a kernel that dies must not pass as "not offered". The
         * contract's first format (what grading always ran) is never
         * skipped: failing there is an ERROR. */
        if (sc->all_dtypes && f != (int)din && o.trials > 0 && o.errors + uns == o.trials &&
            o.deaths == 0) {
            const char *fn = kcs_format_name((kcs_format)f);
            add_name(skipped, sizeof skipped, fn, strlen(fn));
            continue;
        }
        if (o.failed) {
            const char *fn = kcs_format_name((kcs_format)f);
            add_name(out->failed_dtypes, sizeof out->failed_dtypes, fn, strlen(fn));
        }
        for (int j = 0; j < o.n_sig; j++) {
            int i = 0;
            while (i < out->n_sig && strcmp(out->sig_name[i], o.sig_name[j]) != 0)
                i++;
            if (i == out->n_sig && i < KCS_MAX_SIGNATURES + 1)
                snprintf(out->sig_name[out->n_sig++], sizeof out->sig_name[0], "%s",
                         o.sig_name[j]);
            if (i < out->n_sig) {
                out->sig_any[i] += o.sig_any[j];
                out->sig_first[i] += o.sig_first[j];
            }
        }
        out->trials += o.trials;
        out->failed += o.failed;
        out->errors += o.errors;
        out->unclaimed += o.unclaimed;
        unsupported += uns;
        if (!(o.max_tau <= out->max_tau))
            out->max_tau = o.max_tau;
        for (const char *p = o.signatures; *p;) { /* every name, under_specified too */
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            add_name(out->signatures, sizeof out->signatures, p, len);
            p = end ? end + 1 : p + len;
        }
        for (const char *p = o.primary; *p;) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            add_name(out->primary, sizeof out->primary, p, len);
            p = end ? end + 1 : p + len;
        }
        if (!out->detail[0] && o.detail[0])
            snprintf(out->detail, sizeof out->detail, "%s", o.detail);
    }
    if (ran)
        ops_str(ran, out->ops, sizeof out->ops);
    const char *v = unsupported == out->trials       ? "N/A"
                    : out->errors || unsupported > 0 ? "ERROR"
                    : out->failed                    ? "FAIL"
                    : out->unclaimed > 0             ? "NOT-CLAIMED"
                                                     : "PASS";
    snprintf(out->verdict, sizeof out->verdict, "%s", v);
    if (skipped[0] && !out->detail[0])
        snprintf(out->detail, sizeof out->detail, "not offered for dtype_in %s", skipped);
    if (strcmp(out->verdict, "NOT-CLAIMED") == 0) {
        char d[64], prev[sizeof out->detail];
        snprintf(prev, sizeof prev, "%s", out->detail);
        snprintf(out->detail, sizeof out->detail, "the kernel does not declare %s (binds only "
                 "kernels that do; measured max tau %.3g)%s%s",
                 kcs_decls_str(c->declares, d, sizeof d), out->max_tau, prev[0] ? "; " : "",
                 prev);
    }
    return 0;
}

int kcs_calib_bind(const char *backend, int device, const char *path, int wrap,
                   kcs_rank_binding *b, int *wrapped_p, kcs_error *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->pl.backend, sizeof b->pl.backend, "%s", backend);
    b->pl.device = device;
    b->pl.schedule.kind = KCS_SCHED_SEQUENTIAL;
    snprintf(b->pl.variant, sizeof b->pl.variant, "native");
    if (path)
        snprintf(b->pl.path, sizeof b->pl.path, "%s", path);
    const kcs_backend_ops *inner = kcs_backend_find(backend);
    if (!inner)
        return kcs_fail(err, KCS_E_NODEV, "backend %s is %s", backend,
                        kcs_backend_why(backend));
    kcs_backend_config cfg = {.path = path};
    int direct = (strcmp(backend, "cpu") == 0 && !wrap) || strcmp(backend, "plugin") == 0;
    int rc = direct ? inner->open(device, &cfg, &b->ctx, err)
                    : kcs_calib_wrap_open(inner, device, &cfg, &b->ctx, err);
    if (rc) {
        b->ctx = NULL;
        return rc;
    }
    b->ops = direct ? inner : &kcs_calib_wrap_ops;
    kcs_error e = {0};
    if (b->ops->describe(b->ctx, &b->info, &e) != 0)
        snprintf(b->why, sizeof b->why, "describe: %s", e.msg);
    KCS_SET_STATUS(b->status, KCS_ST_OK);
    if (wrapped_p)
        *wrapped_p = !direct;
    return 0;
}

static void fill_row(kcs_calib_row *r, const kcs_rank_binding *b, int wrapped,
                     const char *contract, const char *state, const kcs_calib_outcome *o)
{
    memset(r, 0, sizeof *r);
    snprintf(r->backend, sizeof r->backend, "%s", b->pl.backend);
    snprintf(r->contract, sizeof r->contract, "%s", contract);
    snprintf(r->state, sizeof r->state, "%s", state);
    snprintf(r->implementation, sizeof r->implementation, "%s", b->pl.variant);
    r->wrapper = wrapped;
    r->sound = -1;
    if (!o) {
        snprintf(r->verdict, sizeof r->verdict, "N/A");
        return;
    }
    snprintf(r->ops, sizeof r->ops, "%s", o->ops);
    snprintf(r->verdict, sizeof r->verdict, "%s", o->verdict);
    snprintf(r->signatures, sizeof r->signatures, "%s", o->signatures);
    snprintf(r->primary, sizeof r->primary, "%s", o->primary);
    snprintf(r->detail, sizeof r->detail, "%s", o->detail);
    r->n_sig = o->n_sig;
    for (int i = 0; i < o->n_sig; i++) {
        snprintf(r->sig_name[i], sizeof r->sig_name[i], "%s", o->sig_name[i]);
        r->sig_any[i] = o->sig_any[i];
        r->sig_first[i] = o->sig_first[i];
    }
    r->trials = o->trials;
    r->failed = o->failed;
    r->errors = o->errors;
    r->max_tau = o->max_tau;
}

/* Every name of `expected` in `got`. */
static int has_all(const char *got, const char *expected)
{
    for (const char *p = expected; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        if (!kcs_calib_has_sig(got, name))
            return 0;
        p = end ? end + 1 : NULL;
    }
    return 1;
}

int kcs_calib_states(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                     const kcs_calib_run *run, kcs_calib_row *rows, int *unsound_p,
                     kcs_error *err)
{
    int unsound = 0;
    for (int i = 0; i < n; i++) {
        const kcs_contract *c = cs[i];
        const kcs_calib_entry *e = kcs_calib_find(c->id);
        uint32_t ops = e ? kcs_calib_ops(c, e->ops) : 0;
        kcs_calib_outcome o[KCS_CALIB_N_STATES];
        for (int st = 0; st < KCS_CALIB_N_STATES; st++) {
            snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:%s", c->id,
                     kcs_calib_state_name(st));
            int rc = kcs_calib_measure(c, ops, b, run, &o[st], err);
            if (rc)
                return rc;
            fill_row(&rows[3 * i + st], b, wrapped, c->id, kcs_calib_state_name(st),
                     ops ? &o[st] : NULL);
            if (!ops)
                snprintf(rows[3 * i + st].detail, sizeof rows[3 * i + st].detail, "%s",
                         e ? "the contract's scope holds none of its calibration ops"
                           : "no calibration kernels for this contract");
        }
        if (e)
            snprintf(rows[3 * i + 1].expected, sizeof rows[3 * i + 1].expected, "%s",
                     e->expected);
        int na = !ops || strcmp(o[0].verdict, "N/A") == 0 || strcmp(o[1].verdict, "N/A") == 0 ||
                 strcmp(o[2].verdict, "N/A") == 0;
        int sound = -1;
        if (!na) {
            sound = strcmp(o[0].verdict, "FAIL") == 0 && strcmp(o[1].verdict, "FAIL") == 0 &&
                    strcmp(o[2].verdict, "PASS") == 0 && has_all(o[1].signatures, e->expected);
            unsound += !sound;
        }
        for (int st = 0; st < KCS_CALIB_N_STATES; st++)
            rows[3 * i + st].sound = sound;
    }
    *unsound_p = unsound;
    return 0;
}

int kcs_calib_narrow_states(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                            const kcs_calib_run *run, kcs_calib_row **rows_p, int *n_p,
                            int *unsound_p, kcs_error *err)
{
    int total = 0, nr = 0, unsound = 0;
    for (int i = 0; i < n; i++) {
        const kcs_calib_entry *e = kcs_calib_find(cs[i]->id);
        total += e ? e->n_narrow : 0;
    }
    kcs_calib_row *rows = calloc((size_t)total + 1, sizeof *rows);
    if (!rows)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for the narrow-output states");
    for (int i = 0; i < n; i++) {
        const kcs_contract *c = cs[i];
        const kcs_calib_entry *e = kcs_calib_find(c->id);
        for (int s = 0; e && s < e->n_narrow; s++) {
            const kcs_calib_narrow *ns = &e->narrow[s];
            kcs_calib_row *r = &rows[nr++];
            snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:%s", c->id, ns->kernel);
            uint32_t ops = kcs_calib_ops(c, e->ops);
            kcs_error pe = {0};
            const char *why = wrapped ? "narrow-output states run on the CPU backend's own "
                                        "calibration kernels only"
                              : !ops ? "the contract's scope holds none of its calibration ops"
                              : NULL;
            char buf[KCS_ERRMSG_MAX];
            if (!why && (kcs_precondition_dtype_out(c, ns->dtype_out, &pe) ||
                         kcs_precondition_dtype(c, ns->dtype_in, &pe))) {
                snprintf(buf, sizeof buf, "%s", pe.msg);
                why = buf;
            }
            if (why) {
                fill_row(r, b, wrapped, c->id, ns->state, NULL);
                snprintf(r->detail, sizeof r->detail, "%s", why);
                continue;
            }
            kcs_calib_scope sc = {.set_formats = 1, .dtype_in = ns->dtype_in,
                                  .dtype_out = ns->dtype_out};
            kcs_calib_outcome o;
            int rc = kcs_calib_measure_scoped(c, ops, b, run, &sc, &o, err);
            if (rc) {
                free(rows);
                return rc;
            }
            fill_row(r, b, wrapped, c->id, ns->state, &o);
            snprintf(r->expected, sizeof r->expected, "%s", ns->expected);
            if (strcmp(o.verdict, "N/A") != 0) {
                r->sound = ns->pass ? strcmp(o.verdict, "PASS") == 0
                                    : strcmp(o.verdict, "FAIL") == 0 &&
                                          has_all(o.signatures, ns->expected);
                unsound += !r->sound;
            }
            if (!r->detail[0])
                snprintf(r->detail, sizeof r->detail, "dtype_in %s, dtype_out %s: %s",
                         kcs_format_name(ns->dtype_in), kcs_format_name(ns->dtype_out),
                         ns->what ? ns->what : "");
        }
    }
    *rows_p = rows;
    *n_p = nr;
    *unsound_p = unsound;
    return 0;
}

int kcs_calib_cross(kcs_contract *const *cs, int n, kcs_rank_binding *b, int wrapped,
                    const kcs_calib_run *run, kcs_calib_row **rows_p, int *n_rows_p,
                    int *misses_p, kcs_error *err)
{
    int n_def = 0;
    const kcs_calib_defect *def = kcs_calib_defects(&n_def);
    int defects = strcmp(b->pl.backend, "cpu") == 0 && !wrapped;
    kcs_calib_row *rows = calloc((size_t)(n * n + (defects ? n_def * n : 0) + 1), sizeof *rows);
    if (!rows)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for the cross matrix");
    int nr = 0, misses = 0;
    for (int i = 0; i < n; i++) {
        const kcs_calib_entry *e = kcs_calib_find(cs[i]->id);
        if (!e)
            continue;
        snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:bad", e->id);
        for (int j = 0; j < n; j++) {
            const kcs_contract *c = cs[j];
            uint32_t ops = kcs_calib_ops(c, e->ops);
            if (!ops)
                continue;
            kcs_calib_outcome o;
            int rc = kcs_calib_measure(c, ops, b, run, &o, err);
            if (rc) {
                free(rows);
                return rc;
            }
            kcs_calib_row *r = &rows[nr++];
            fill_row(r, b, wrapped, c->id, "bad", &o);
            if (i == j) {
                snprintf(r->expected, sizeof r->expected, "%s", e->expected);
                if (strcmp(o.verdict, "N/A") != 0) {
                    r->sound = strcmp(o.verdict, "FAIL") == 0 && has_all(o.signatures, e->expected);
                    misses += !r->sound;
                }
            }
        }
    }
    /* the CPU backend's defect kernels, under every contract whose scope
     * holds gemm (batched_gemm where its shapes have a batch) or reduce_sum */
    for (int d = 0; defects && d < n_def; d++) {
        snprintf(b->pl.variant, sizeof b->pl.variant, "%s", def[d].variant);
        for (int j = 0; j < n; j++) {
            uint32_t ops = kcs_calib_ops(cs[j], GEMMS | OPBIT(KCS_OP_REDUCE_SUM));
            if (!ops)
                continue;
            kcs_calib_outcome o;
            int rc = kcs_calib_measure(cs[j], ops, b, run, &o, err);
            if (rc) {
                free(rows);
                return rc;
            }
            fill_row(&rows[nr++], b, wrapped, cs[j]->id, "bad", &o);
        }
    }
    *rows_p = rows;
    *n_rows_p = nr;
    *misses_p = misses;
    return 0;
}

const kcs_field *kcs_calib_row_fields(int *n_p)
{
    static const kcs_field f[] = {
        KCS_FIELD(kcs_calib_row, backend, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, contract, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, state, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, implementation, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, wrapper, KCS_FIELD_I32),
        KCS_FIELD(kcs_calib_row, ops, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, verdict, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, signatures, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, primary, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, expected, KCS_FIELD_STR),
        KCS_FIELD(kcs_calib_row, trials, KCS_FIELD_I32),
        KCS_FIELD(kcs_calib_row, failed, KCS_FIELD_I32),
        KCS_FIELD(kcs_calib_row, errors, KCS_FIELD_I32),
        KCS_FIELD(kcs_calib_row, max_tau, KCS_FIELD_F64),
        KCS_FIELD(kcs_calib_row, sound, KCS_FIELD_I32),
        KCS_FIELD(kcs_calib_row, detail, KCS_FIELD_STR),
    };
    *n_p = (int)(sizeof f / sizeof f[0]);
    return f;
}
