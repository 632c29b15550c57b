/* kcs calibrate --sweep for the protocol and exceptional-value contracts:
 * see calib_sweep_proto.h. */
#include "calib_sweep_proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_sizes.h"
#include "callguard.h"
#include "inputs.h"
#include "precondition.h"
#include "protocol.h"
#include "rng.h"
#include "stats.h"

enum { MF_VALUE, MF_REPEAT, MF_BATCH };
enum { K_CONF, K_BAD };

typedef struct pkern {
    const char *variant; /* own | native | defect:... | calib (the contract's good/bad) */
    const char *acc, *schedule;
    int bad;             /* K_CONF | K_BAD */
    int mf;              /* how its defect shows (MF_*) */
} pkern;

#define OWN(a, s) {"own", a, s, K_CONF, MF_VALUE}
#define GEMM_CONF                                                                              \
    OWN("fp32", "sequential"), OWN("fp32", "pairwise"), OWN("fp32", "blocked:64"),            \
        OWN("fp32", "splitk:4"), OWN("fp32:rz", "sequential"), OWN("fp32:rz", "pairwise"),     \
        OWN("fp64", "sequential"), {"native", NULL, NULL, K_CONF, MF_VALUE},                   \
        {"calib:good", NULL, NULL, K_CONF, MF_VALUE}

static const pkern ord02[] = {
    GEMM_CONF,
    {"own", "fp32", "atomic", K_BAD, MF_REPEAT},
    {"calib:bad", NULL, NULL, K_BAD, MF_REPEAT},
    {"defect:rare-reorder", NULL, NULL, K_BAD, MF_REPEAT},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
};
/* native and the atomic schedule do not declare batch invariance: they
 * are conforming kernels the contract does not bind (unclaimed) */
static const pkern ord03[] = {
    GEMM_CONF,
    {"own", "fp32", "atomic", K_CONF, MF_VALUE},
    {"calib:bad", NULL, NULL, K_BAD, MF_BATCH},
    {"defect:batch-gemv", NULL, NULL, K_BAD, MF_BATCH},
    {"defect:batch-splitk", NULL, NULL, K_BAD, MF_BATCH},
    {"defect:batch-tile", NULL, NULL, K_BAD, MF_BATCH},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
};
static const pkern ord04[] = {
    GEMM_CONF,
    {"own", "fp32", "atomic", K_BAD, MF_REPEAT},
    {"calib:bad", NULL, NULL, K_BAD, MF_REPEAT},
    {"defect:rare-reorder", NULL, NULL, K_BAD, MF_REPEAT},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
    {"own", "bf16", "sequential", K_BAD, MF_VALUE},
    {"own", "fp16", "sequential", K_BAD, MF_VALUE},
    {"own", "bits:18", "sequential", K_BAD, MF_VALUE},
    {"own", "bits:21", "sequential", K_BAD, MF_VALUE},
    {"own", "bits:22", "pairwise", K_BAD, MF_VALUE},
};
static const pkern exc01[] = {
    GEMM_CONF,
    {"calib:bad", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:nan-raise", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:nansum", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:nan-inf", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:nan-spread", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
};
static const pkern exc01_softmax[] = {
    OWN("fp32", "sequential"), OWN("fp32", "pairwise"), OWN("fp32:rz", "sequential"),
    OWN("fp64", "sequential"), {"native", NULL, NULL, K_CONF, MF_VALUE},
    {"defect:softmax-nanmask", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:softmax-nanzero", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:nan-raise", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
};
static const pkern exc02[] = {
    {"native", NULL, NULL, K_CONF, MF_VALUE},
    {"own", NULL, NULL, K_CONF, MF_VALUE},
    {"calib:good", NULL, NULL, K_CONF, MF_VALUE},
    {"calib:bad", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:gather-clamp", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:gather-zero", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:gather-offby1", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:gather-negwrap", NULL, NULL, K_BAD, MF_VALUE},
    {"defect:always-raise", NULL, NULL, K_BAD, MF_VALUE},
};

/* Each contract's op, swept axis (k, m or n: the precondition's range;
 * n, the gather's index count, which no precondition bounds, over
 * [1, 65536]) and the other dimensions held fixed. */
typedef struct pspec {
    const char *id;
    kcs_op op;
    char axis;
    int64_t m, n, k;
    const pkern *kern;
    int n_kern;
} pspec;

#define SPEC(id, op, ax, m, n, k, list) {id, op, ax, m, n, k, list, sizeof list / sizeof list[0]}
static const pspec specs[] = {
    SPEC("C-ORD-02", KCS_OP_GEMM, 'k', 2, 2, 0, ord02),
    SPEC("C-ORD-03", KCS_OP_GEMM, 'm', 0, 2, 16, ord03),
    SPEC("C-ORD-04", KCS_OP_ALLREDUCE, 'm', 0, 1, 16, ord04),
    SPEC("C-EXC-01", KCS_OP_GEMM, 'k', 4, 4, 0, exc01),
    SPEC("C-EXC-01", KCS_OP_SOFTMAX, 'k', 4, 1, 0, exc01_softmax),
    SPEC("C-EXC-02", KCS_OP_GATHER, 'n', 1024, 0, 8, exc02),
};

#define N_SPECS ((int)(sizeof specs / sizeof specs[0]))

static int spec_applies(const pspec *p, const kcs_contract *c)
{
    return !strcmp(p->id, c->id) && (c->ops & (1u << p->op));
}

static int spec_points(const pspec *p, const kcs_contract *c, const kcs_sweep_opts *o,
                       kcs_shape *shapes, int max)
{
    int64_t lo = p->axis == 'k' ? c->k_min : p->axis == 'm' ? c->m_min : 1;
    int64_t hi = p->axis == 'k' ? c->k_max : p->axis == 'm' ? c->m_max : 65536;
    if (lo < 1)
        lo = 1;
    if (o->max_k > 0 && o->max_k < hi)
        hi = o->max_k;
    int n = 0;
    for (int64_t v = lo; v <= hi && n < max;) {
        kcs_shape sh = {p->m, p->n, p->k, 0};
        if (p->axis == 'k')
            sh.k = v;
        else if (p->axis == 'm')
            sh.m = v;
        else
            sh.n = v;
        if (kcs_precondition_shape_ok(c, &sh) && v >= o->min_k)
            shapes[n++] = sh;
        int64_t next = v * (o->k_factor > 1 ? o->k_factor : 4);
        v = (v < hi && next > hi) ? hi : next;
    }
    return n;
}

int kcs_sweep_proto_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_shape *shapes,
                           int max)
{
    int n = 0;
    for (int i = 0; i < N_SPECS; i++)
        if (spec_applies(&specs[i], c))
            n += spec_points(&specs[i], c, o, shapes + n, max - n);
    return n;
}

static int bind(const kcs_contract *c, const pkern *pk, kcs_rank_binding *b, char *name,
                size_t len, kcs_error *err)
{
    int rc = kcs_calib_bind("cpu", 0, NULL, 0, b, NULL, err);
    if (rc)
        return rc;
    if (!strncmp(pk->variant, "calib:", 6)) {
        snprintf(b->pl.variant, sizeof b->pl.variant, "calib:%s:%s", c->id, pk->variant + 6);
        snprintf(name, len, "%s", b->pl.variant);
        return 0;
    }
    kcs_sweep_bind_kernel(b, pk->variant, pk->acc, pk->schedule, name, len);
    return 0;
}

static int plan_point(const kcs_contract *c, const pspec *p, kcs_format f, kcs_shape sh,
                      const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err)
{
    return kcs_sweep_point_plan(c, p->op, f, sh, run, T, plan, err);
}

/* Every kernel of a point on each trial's inputs, generated once (the
 * trial's inputs and reference cached, a fresh copy per call): per
 * distribution, trial and kernel, as the gemm sweep (calib_sweep.c). Each
 * kernel keeps one replay memory for the point's distributions and sees
 * its calls in the same order as when it ran alone. */
static int run_point_all(const kcs_contract *c, const kcs_plan *plan, kcs_rank_binding *bs,
                         int nk, const kcs_calib_run *run, int T, kcs_sweep_out *po,
                         kcs_progress *prog, int64_t done, kcs_error *err)
{
    int64_t nd = plan->n_cases;
    kcs_case_memory *mem = calloc((size_t)nk + 1, sizeof *mem);
    int rc = mem ? 0 : kcs_fail(err, KCS_E_NOMEM, "out of memory");
    for (int j = 0; j < nk && !rc; j++)
        if (!kcs_sweep_out_alloc(&po[j], nd, T))
            rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
    kcs_inputs_cache cache = {0};
    int64_t steps = nd * T, step = 0;
    for (int64_t i = 0; i < nd && !rc; i++) {
        const kcs_case *cs = &plan->cases[i];
        uint64_t digest = 0;
        kcs_trial_io io = {.study_seed = run->seed, .timeout_s = run->timeout_s,
                           .verbose = run->verbose, .input_digest = &digest,
                           .verdict_only = KCS_IO_PASS_FAIL, .inputs_cache = &cache};
        for (int t = 0; t < T && t < cs->trials && !rc; t++, step++) {
            /* a long point runs for minutes: progress per trial */
            kcs_progress_part(prog, done, (double)step / (double)(steps > 0 ? steps : 1));
            for (int j = 0; j < nk && !rc; j++) {
                kcs_result_rec rec;
                io.memory = &mem[j];
                if ((rc = kcs_protocol_trial(c, cs, t, &bs[j], &io, &rec, err)))
                    break;
                if (strcmp(rec.status, "ok") && strcmp(rec.status, "raised"))
                    continue;
                size_t at = (size_t)(i * T + t);
                int nc = !strcmp(rec.verdict, "not_claimed");
                po[j].ok[at] = 1;
                po[j].dig[at] = rec.output_digest;
                po[j].unclaimed[at] = (unsigned char)nc;
                po[j].flag[at] = !nc && strcmp(rec.verdict, "within_tolerance") != 0;
            }
        }
    }
    kcs_inputs_cache_free(&cache);
    free(mem);
    if (rc)
        for (int j = 0; j < nk; j++)
            kcs_sweep_out_free(&po[j]);
    return rc;
}

static int same_out(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i] || (isnan(a[i]) && isnan(b[i]))))
            return 0;
    return 1;
}

/* Batch sizes of the batch probe: every size the protocol visits
 * (kcs_batch_sizes, from the same seed), and more of each kind: every
 * b <= 128, P + 1 for each power of two P in [128, m), and 16 sizes drawn
 * uniformly in (64, m - 1) on a stream of their own. */
static int probe_sizes(int64_t m, uint64_t call_seed, uint64_t seed, int64_t *bs, int cap)
{
    int n = kcs_batch_sizes(m, call_seed, bs, cap);
    int64_t more[KCS_BATCH_SIZES_MAX];
    int nm = 0;
    for (int64_t b = 65; b < m && b <= 128; b++)
        more[nm++] = b;
    for (int64_t p = 128; p + 1 < m && p > 0 && nm < KCS_BATCH_SIZES_MAX; p *= 2)
        more[nm++] = p + 1;
    kcs_rng r;
    kcs_rng_init(&r, seed, 0x5ee9, (uint64_t)m);
    for (int i = 0; i < 16 && m - 1 > 65 && nm < KCS_BATCH_SIZES_MAX; i++)
        more[nm++] = 65 + (int64_t)(kcs_rng_uniform(&r) * (double)(m - 66));
    for (int i = 0; i < nm && n < cap; i++) {
        int seen = 0;
        for (int j = 0; j < n && !seen; j++)
            seen = bs[j] == more[i];
        if (!seen)
            bs[n++] = more[i];
    }
    return n;
}

/* Whether the defect of a repeat- or batch-kind kernel shows on the
 * inputs of trial t of case cs (1), or not (0); -1: the probe's call
 * failed (the trial is not counted). */
static int probe(const kcs_contract *c, const kcs_case *cs, int t, int mf, kcs_rank_binding *b,
                 const kcs_calib_run *run, kcs_error *err, int *rc_p)
{
    kcs_call call;
    kcs_trial_call(c, cs, t, &call);
    kcs_binding_apply(b, &call);
    char msg[256] = "";
    call.msg = msg;
    call.msg_len = sizeof msg;
    kcs_inputs in;
    if ((*rc_p = kcs_inputs_make(c, cs, t, run->seed, &call, &in, err)))
        return -1;
    size_t len = kcs_op_out_len(&call);
    double *y0 = malloc((len + 1) * sizeof *y0), *y = malloc((len + 1) * sizeof *y);
    int shows = -1;
    if (!y0 || !y) {
        *rc_p = kcs_fail(err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    call.out = y0;
    call.out_len = len;
    kcs_error e = {0};
    int krc = kcs_callguard_run(b->ops, b->ctx, &call, run->timeout_s, &e);
    if (krc) {
        shows = krc == KCS_E_RAISED ? 1 : -1; /* no declared semantics allow a raise here */
        goto out;
    }
    shows = 0;
    if (mf == MF_REPEAT) {
        uint64_t seed0 = call.seed;
        call.out = y;
        int runs = 3 * c->repetitions > KCS_PROBE_RUNS ? 3 * c->repetitions : KCS_PROBE_RUNS;
        for (int r = 1; r < runs && !shows; r++) {
            call.seed = seed0 ^ (KCS_GOLDEN64 * (uint64_t)r); /* the protocol's seeds first */
            krc = kcs_callguard_run(b->ops, b->ctx, &call, run->timeout_s, &e);
            shows = krc == KCS_E_RAISED ? 1 : krc ? -1 : !same_out(y0, y, len);
        }
    } else {
        int64_t bs[2 * KCS_BATCH_SIZES_MAX];
        int nb = probe_sizes(cs->shape.m, call.seed, cs->seed ^ (uint64_t)t, bs,
                             2 * KCS_BATCH_SIZES_MAX);
        for (int i = 0; i < nb && !shows; i++) {
            kcs_call one = call;
            one.m = bs[i];
            for (int j = 0; j < KCS_MAX_INPUTS; j++)
                one.in_len[j] = kcs_op_in_len(&one, j);
            one.out = y;
            one.out_len = kcs_op_out_len(&one);
            krc = kcs_callguard_run(b->ops, b->ctx, &one, run->timeout_s, &e);
            shows = krc == KCS_E_RAISED ? 1 : krc ? -1 : !same_out(y0, y, one.out_len);
        }
    }
out:
    free(y0);
    free(y);
    kcs_inputs_free(&in);
    return shows;
}

/* One kernel's row at one point, from its results po (kept in conf[] when
 * it is a conforming kernel): conf[] holds the conforming kernels listed
 * before it (the value rule compares against them). */
static int kernel_row(const kcs_contract *c, const pspec *p, const pkern *pk, const char *name,
                      kcs_rank_binding *bp, kcs_format f, kcs_shape sh, const kcs_plan *plan,
                      const kcs_calib_run *run, int T, kcs_sweep_out *pop, kcs_sweep_out *conf,
                      int *n_conf, kcs_sweep_row *r, int *have_row, kcs_error *err)
{
    kcs_sweep_out po = *pop;
    memset(pop, 0, sizeof *pop); /* owned here now */
    *have_row = 0;
    int rc = 0;
    int ran = 0, fl = 0, inert = 0, unclaimed = 0;
    for (int t = 0; t < T && !rc; t++) {
        int ok = po.n_dist > 0, flag = 0, unc = 0;
        for (int64_t i = 0; i < po.n_dist; i++) {
            size_t at = (size_t)(i * T + t);
            ok &= po.ok[at];
            flag |= po.flag[at];
            unc |= po.unclaimed[at];
        }
        if (!ok)
            continue;
        if (pk->bad == K_BAD) {
            int shows = 0;
            if (pk->mf == MF_VALUE) {
                for (int64_t i = 0; i < po.n_dist && !shows; i++) {
                    size_t at = (size_t)(i * T + t);
                    int same = 0;
                    for (int j = 0; j < *n_conf && !same; j++)
                        same = conf[j].n_dist == po.n_dist && conf[j].ok[at] &&
                               conf[j].dig[at] == po.dig[at];
                    shows = !same;
                }
            } else if (flag) {
                shows = 1; /* the probe holds the protocol's runs */
            } else {
                for (int64_t i = 0; i < po.n_dist && shows == 0 && !rc; i++)
                    shows = probe(c, &plan->cases[i], t, pk->mf, bp, run, err, &rc);
                if (shows < 0)
                    continue;
            }
            if (!shows) {
                inert++;
                continue;
            }
        }
        ran++;
        fl += flag;
        unclaimed += unc;
    }
    if (rc) {
        kcs_sweep_out_free(&po);
        return rc;
    }
    if (pk->bad == K_CONF)
        conf[(*n_conf)++] = po;
    else
        kcs_sweep_out_free(&po);
    if (ran + inert == 0)
        return 0;
    /* a conforming kernel the contract does not bind (it declares no
     * batch invariance): every trial must be judged not_claimed, and the
     * row counts those that were not */
    int unbound = pk->bad == K_CONF && ran > 0 && unclaimed == ran;
    kcs_sweep_row_fill(r, c->id, name,
                       pk->bad == K_BAD ? "bad" : unbound ? "unclaimed" : "conforming", p->op, f,
                       sh, ran,
                       unbound ? ran - unclaimed : pk->bad == K_CONF ? fl + unclaimed : fl,
                       inert);
    *have_row = 1;
    return 0;
}

static int spec_run(const pspec *p, const kcs_contract *c, const kcs_calib_run *run,
                    const kcs_sweep_opts *o, kcs_sweep_row **rows_p, int *n_rows_p, int *cap_p,
                    kcs_progress *progress, int64_t *done_p, kcs_error *err)
{
    enum { MAX_PTS = 64 };
    kcs_shape pts[MAX_PTS];
    int np = spec_points(p, c, o, pts, MAX_PTS), rc = 0, T = o->trials;
    for (int pi = 0; pi < np && !rc; pi++) {
        for (int f = 0; f < KCS_FMT_COUNT && !rc; f++) {
            if (!(c->dtype_in & (1u << f)))
                continue;
            kcs_plan plan;
            if ((rc = plan_point(c, p, (kcs_format)f, pts[pi], run, T, &plan, err)))
                break;
            enum { MAX_KERN = 32 };
            _Static_assert(sizeof ord04 / sizeof ord04[0] <= MAX_KERN, "catalogue too long");
            kcs_sweep_out conf[MAX_KERN], po[MAX_KERN];
            kcs_rank_binding bs[MAX_KERN];
            char names[MAX_KERN][40];
            const pkern *pks[MAX_KERN];
            int n_conf = 0, nk = 0;
            if (p->n_kern > MAX_KERN)
                rc = kcs_fail(err, KCS_E_INVAL, "%s: %d kernels in the sweep's catalogue, at most %d",
                              c->id, p->n_kern, MAX_KERN);
            for (int kk = 0; kk < p->n_kern && !rc; kk++) {
                const pkern *pk = &p->kern[kk];
                if (!strncmp(pk->variant, "calib:", 6) && !kcs_calib_find(c->id))
                    continue;
                if ((rc = bind(c, pk, &bs[nk], names[nk], sizeof names[nk], err)))
                    break;
                pks[nk++] = pk;
            }
            memset(po, 0, sizeof po);
            if (!rc)
                rc = run_point_all(c, &plan, bs, nk, run, T, po, progress, *done_p, err);
            for (int j = 0; j < nk && !rc; j++) {
                kcs_sweep_row r;
                int have = 0;
                rc = kernel_row(c, p, pks[j], names[j], &bs[j], (kcs_format)f, pts[pi], &plan,
                                run, T, &po[j], conf, &n_conf, &r, &have, err);
                if (rc || !have)
                    continue;
                if ((rc = kcs_sweep_rows_room(rows_p, n_rows_p, cap_p, err)))
                    break;
                (*rows_p)[(*n_rows_p)++] = r;
            }
            for (int j = 0; j < nk; j++) {
                kcs_sweep_out_free(&po[j]);
                kcs_binding_close(&bs[j]);
            }
            for (int j = 0; j < n_conf; j++)
                kcs_sweep_out_free(&conf[j]);
            kcs_plan_free(&plan);
            kcs_progress_step(progress, ++*done_p);
        }
    }
    return rc;
}

int kcs_sweep_proto_run(const kcs_contract *c, const kcs_calib_run *run, const kcs_sweep_opts *o,
                        kcs_sweep_row **rows_p, int *n_rows_p, int *cap_p,
                        kcs_progress *progress, int64_t *done_p, kcs_error *err)
{
    int rc = 0;
    for (int i = 0; i < N_SPECS && !rc; i++)
        if (spec_applies(&specs[i], c))
            rc = spec_run(&specs[i], c, run, o, rows_p, n_rows_p, cap_p, progress, done_p, err);
    return rc;
}
