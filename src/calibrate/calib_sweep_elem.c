/* kcs calibrate --sweep on the elementwise exp contract: see
 * calib_sweep_elem.h. */
#include "calib_sweep_elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"
#include "precondition.h"
#include "protocol.h"
#include "stats.h"

typedef struct ekern {
    const char *variant; /* native | own | calib:good | calib:bad | exp:... | defect:exp-... */
    int bad;
} ekern;

/* Conforming first: a bad kernel's defect shows where its output differs
 * from every one of them (backends/cpu/defect_exp.c says what each is). */
static const ekern kernels[] = {
    {"native", 0},           {"own", 0},
    {"calib:good", 0},       {"exp:cr", 0},
    {"exp:cephes", 0},       {"exp:ulp3", 0},
    {"calib:bad", 1},        {"defect:exp-fast", 1},
    {"defect:exp-poly4", 1}, {"defect:exp-bf16", 1},
    {"defect:exp-fp16", 1},  {"defect:exp-ftz", 1},
    {"defect:exp-satmax", 1}, {"defect:exp-ovfnan", 1},
    {"defect:exp-log2e32", 1},
};
#define N_EK ((int)(sizeof kernels / sizeof kernels[0]))

static int applies(const kcs_contract *c)
{
    kcs_ew_fn f;
    kcs_error e = {0};
    return c->protocol == KCS_PROTO_ORACLE && (c->ops & (1u << KCS_OP_ELEMENTWISE)) &&
           !kcs_contract_injects_nonfinite(c) && c->special_oob <= 0 &&
           kcs_ew_fn_of(c->attrs, &f, &e) == 0 && f == KCS_EW_EXP;
}

enum { KCS_SWEEP_ELEM_MIN_VALUES = 64 };

int kcs_sweep_elem_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_shape *shapes,
                          int max)
{
    if (!applies(c))
        return 0;
    int64_t lo = c->k_min > 1 ? c->k_min : 1, hi = c->k_max;
    if (o->max_k > 0 && o->max_k < hi)
        hi = o->max_k;
    int n = 0, f = o->k_factor > 1 ? o->k_factor : 4;
    for (int64_t v = lo; v <= hi && n < max;) {
        /* rows enough for 64 values per call, as the contract's own
         * shapes hold: a defect on part of the argument range shows with
         * probability 1 - (1 - p)^(m k), and one value (k = 1, m = 1) is
         * no sample (contracts/C-PRC-05/README.md, its power sweep) */
        int64_t rows = v >= KCS_SWEEP_ELEM_MIN_VALUES ? 1
                                                      : (KCS_SWEEP_ELEM_MIN_VALUES + v - 1) / v;
        kcs_shape sh = {rows, 1, v, 0};
        if (v >= o->min_k && kcs_precondition_shape_ok(c, &sh))
            shapes[n++] = sh;
        if (v >= hi)
            break;
        v = v > hi / f ? hi : v * f;
    }
    return n;
}

/* The distributions a point measures: every one the precondition admits
 * (the contract's measurement inputs when it admits any). */
static int point_dists(const kcs_contract *c, kcs_dist *d)
{
    int n = 0;
    if (c->value_dists && c->value_dists != (1u << KCS_DIST_COUNT) - 1) {
        for (int i = 0; i < KCS_DIST_COUNT && n < KCS_MAX_DISTS; i++)
            if (c->value_dists & (1u << i))
                d[n++] = (kcs_dist)i;
        return n;
    }
    for (int i = 0; i < c->n_dists && n < KCS_MAX_DISTS; i++)
        d[n++] = c->dists[i];
    return n;
}

static int plan_point(const kcs_contract *c, kcs_format f, kcs_shape sh, const kcs_calib_run *run,
                      int T, kcs_plan *plan, kcs_error *err)
{
    kcs_dist d[KCS_MAX_DISTS];
    int nd = point_dists(c, d);
    return kcs_sweep_point_plan_dists(c, KCS_OP_ELEMENTWISE, f, sh, d, nd, run, T, plan, err);
}

static int bind(const kcs_contract *c, const ekern *ek, kcs_rank_binding *b, kcs_error *err)
{
    int rc = kcs_calib_bind("cpu", 0, NULL, 0, b, NULL, err);
    if (rc)
        return rc;
    if (!strncmp(ek->variant, "calib:", 6))
        snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:%s", c->id, ek->variant + 6);
    else
        snprintf(b->pl.variant, sizeof b->pl.variant, "%s", ek->variant);
    return 0;
}

/* One kernel on every case (distribution) of the point's plan: per
 * (distribution i, trial t) whether the call ran, was flagged, and its
 * output digest. */
static int run_kernel(const kcs_contract *c, const kcs_plan *plan, kcs_rank_binding *b,
                      const kcs_calib_run *run, int T, kcs_sweep_out *po, kcs_error *err)
{
    if (!kcs_sweep_out_alloc(po, plan->n_cases, T)) {
        kcs_sweep_out_free(po);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    int rc = kcs_sweep_point_calls(c, plan, b, run, T, po->ok, po->flag, NULL, po->dig, err);
    if (rc)
        kcs_sweep_out_free(po);
    return rc;
}

/* Kernel ek's row at the point (conf: the conforming kernels run so far). */
static int kernel_row(const kcs_contract *c, const ekern *ek, kcs_format f, kcs_shape sh,
                      const kcs_plan *plan, const kcs_calib_run *run, int T, kcs_sweep_out *conf,
                      int *n_conf, kcs_sweep_row *r, int *have_row, kcs_error *err)
{
    kcs_rank_binding b;
    *have_row = 0;
    int rc = bind(c, ek, &b, err);
    if (rc)
        return rc;
    char name[40];
    snprintf(name, sizeof name, "%s", b.pl.variant);
    kcs_sweep_out po = {0};
    rc = run_kernel(c, plan, &b, run, T, &po, err);
    kcs_binding_close(&b);
    if (rc)
        return rc;
    int ran = 0, fl = 0, inert = 0;
    for (int t = 0; t < T; t++) {
        int ok = po.n_dist > 0, flag = 0, shows = 0;
        for (int64_t i = 0; i < po.n_dist; i++) {
            size_t at = (size_t)(i * T + t);
            ok &= po.ok[at];
            flag |= po.flag[at];
            int same = 0;
            for (int j = 0; j < *n_conf && !same; j++)
                same = conf[j].n_dist == po.n_dist && conf[j].ok[at] &&
                       conf[j].dig[at] == po.dig[at];
            shows |= !same;
        }
        if (!ok)
            continue;
        if (ek->bad && !shows) {
            inert++;
            continue;
        }
        ran++;
        fl += flag;
    }
    if (ek->bad)
        kcs_sweep_out_free(&po);
    else
        conf[(*n_conf)++] = po;
    if (ran + inert == 0)
        return 0;
    kcs_sweep_row_fill(r, c->id, name, ek->bad ? "bad" : "conforming", KCS_OP_ELEMENTWISE, f, sh,
                       ran, fl, inert);
    *have_row = 1;
    return 0;
}

int kcs_sweep_elem_run(const kcs_contract *c, const kcs_calib_run *run, const kcs_sweep_opts *o,
                       kcs_sweep_row **rows_p, int *n_rows_p, int *cap_p, kcs_progress *progress,
                       int64_t *done_p, kcs_error *err)
{
    enum { MAX_PTS = 64 };
    kcs_shape pts[MAX_PTS];
    int np = kcs_sweep_elem_points(c, o, pts, MAX_PTS), rc = 0, T = o->trials;
    for (int pi = 0; pi < np && !rc; pi++) {
        for (int f = 0; f < KCS_FMT_COUNT && !rc; f++) {
            if (!(c->dtype_in & (1u << f)))
                continue;
            kcs_plan plan;
            if ((rc = plan_point(c, (kcs_format)f, pts[pi], run, T, &plan, err)))
                break;
            kcs_sweep_out conf[N_EK];
            int n_conf = 0;
            for (int kk = 0; kk < N_EK && !rc; kk++) {
                const ekern *ek = &kernels[kk];
                /* a point of 2^20 values runs for minutes: a line per kernel */
                kcs_progress_part(progress, *done_p, (double)kk / N_EK);
                if (!strncmp(ek->variant, "calib:", 6) && !kcs_calib_find(c->id))
                    continue;
                kcs_sweep_row r;
                int have = 0;
                rc = kernel_row(c, ek, (kcs_format)f, pts[pi], &plan, run, T, conf, &n_conf, &r,
                                &have, err);
                if (rc || !have)
                    continue;
                if ((rc = kcs_sweep_rows_room(rows_p, n_rows_p, cap_p, err)))
                    break;
                (*rows_p)[(*n_rows_p)++] = r;
            }
            for (int j = 0; j < n_conf; j++)
                kcs_sweep_out_free(&conf[j]);
            kcs_plan_free(&plan);
            kcs_progress_step(progress, ++*done_p);
        }
    }
    return rc;
}
