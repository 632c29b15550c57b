/* kcs detect: error injection and detection curves (detect.h). */
#define _POSIX_C_SOURCE 200809L

#include "detect.h"
#include "grow.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build_info.h"
#include "freivalds.h"
#include "h5out.h"
#include "inputs.h"
#include "metrics.h"
#include "oracle.h"
#include "placement.h"
#include "rng.h"
#include "spool.h"
#include "study.h"
#include "tensor.h"
#include "verdict.h"

enum { D_ORACLE = 0, D_DIGEST, D_TORCH, D_FV_RIG, D_FV_PROB, D_FV_FIXED };
enum { N_KINDS = 3 };
static const char *const kind_names[N_KINDS] = {"single", "dense", "row"};
/* Mechanisms: corrupted outputs made by something other than an additive
 * injection, judged by every detector (magnitude NaN in the table; their
 * size in units of the data is measured). */
enum { M_COERCE = 0, M_STALE, N_MECH };
static const char *const mech_names[N_MECH] = {"coerce-bf16", "stale-row"};
/* The magnitude structure errors are injected against: the contract's, or
 * clause 0's for a composite (C-PRC-01: backward_error + an exact invariant
 * that binds only exact-sum inputs). */
static kcs_tol_structure mag_structure(const kcs_contract *c)
{
    return c->tol_structure == KCS_TOL_COMPOSITE && c->n_clauses > 0 ? c->clauses[0].structure
                                                                      : c->tol_structure;
}

/* Everything about one input set of one case. */
typedef struct det_input {
    const kcs_contract *c;
    const kcs_case *cs;
    kcs_call call;
    size_t n;            /* outputs */
    double *ref, *absref, scale, eta;
    double *ref_out;     /* ref rounded to dtype_out (torch's expected tensor) */
    float *A, *B;        /* fp32 copies for Freivalds */
    float *C;            /* scratch: the output under test */
    double *resid, *cr;  /* Freivalds detail for the fixed criterion */
    uint64_t digest0;    /* the conforming output's */
    double rtol, atol;
    double fixed_tol;    /* the author's harness atol = rtol for dtype_in */
    int probes;
    uint64_t fv_stream;
} det_input;

static double weight(const det_input *d, size_t i, const double *y)
{
    switch (mag_structure(d->c)) {
    case KCS_TOL_POINTWISE_RELATIVE: return d->absref[i];
    case KCS_TOL_BACKWARD_ERROR: return d->scale;
    case KCS_TOL_ULP: {
        const kcs_format_info *fi = kcs_format_get(d->cs->dtype_out);
        double a = fabs(y[i]);
        return exp2((a > 0.0 ? floor(log2(a)) : (double)fi->emin) - (fi->p - 1));
    }
    default: return 1.0;
    }
}

/* Run every detector on y; flags[i] = 1 when detector i rejects it. */
static void judge(det_input *d, const double *y, uint64_t trial_seed, int flags[KCS_DETECTORS])
{
    kcs_format fo = d->cs->dtype_out;
    kcs_observation o = {0};
    o.guard_ok = 1;
    o.distinct_digests = 1;
    kcs_metrics_compute(y, d->ref, d->absref, d->n, fo, d->scale, d->cs->shape.k,
                        kcs_sentinel(fo), &o.m);
    size_t above = 0;
    for (size_t i = 0; i < d->n; i++) {
        double e = fabs(y[i] - d->ref[i]);
        above += d->absref[i] > 0.0 ? e > d->eta * d->absref[i] : e > 0.0;
    }
    o.bad_frac = d->n ? (double)above / (double)d->n : 0.0;
    kcs_verdict v;
    kcs_verdict_judge(d->c, d->cs, &o, &v);
    flags[D_ORACLE] = v.kind != KCS_VERDICT_WITHIN;
    flags[D_DIGEST] = kcs_digest_values(y, d->n, fo) != d->digest0;
    int bad = 0;
    for (size_t i = 0; i < d->n && !bad; i++)
        bad = !(fabs(y[i] - d->ref_out[i]) <= d->atol + d->rtol * fabs(d->ref_out[i]));
    flags[D_TORCH] = bad;
    for (size_t i = 0; i < d->n; i++)
        d->C[i] = (float)y[i];
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    p.probes = d->probes;
    p.seed = 0x5eedull ^ trial_seed;
    p.stream = d->fv_stream;
    p.threads = 1;
    const kcs_acc *acc = &d->cs->acc;
    p.u_acc = acc->bits > 0 ? exp2(-(double)acc->bits) : kcs_format_u(acc->fmt);
    p.u_out = fo == acc->fmt && acc->bits == 0 ? 0.0 : kcs_format_u(fo);
    long m = (long)d->call.m, kk = (long)d->call.k, n = (long)d->call.n;
    for (int mode = 0; mode < 2; mode++) {
        p.mode = mode ? KCS_FV_PROBABILISTIC : KCS_FV_RIGOROUS;
        kcs_fv_detail det = {0};
        det.resid = d->resid;
        det.cr = d->cr;
        kcs_fv_result res;
        kcs_error e = {0};
        int rc = kcs_freivalds_verify(d->A, d->B, d->C, m, kk, n, &p, mode ? NULL : &det, &res,
                                      &e);
        flags[mode ? D_FV_PROB : D_FV_RIG] = rc != 0 || !res.pass;
        if (!mode) {
            bool pass = false;
            double ratio = 0.0;
            kcs_freivalds_fixed(d->resid, d->cr, m, p.probes, d->fixed_tol, d->fixed_tol, &pass,
                                &ratio);
            flags[D_FV_FIXED] = rc != 0 || !pass;
        }
    }
}

/* y = round(y0 + injection of kind at magnitude mag). */
static void inject(const det_input *d, const double *y0, double *y, int kind, double mag,
                   kcs_rng *r)
{
    kcs_format fo = d->cs->dtype_out;
    memcpy(y, y0, d->n * sizeof *y);
    double amp = mag * d->eta;
    if (kind == 2) {
        /* localized: every element of one random row (a tile, a warp's rows) */
        size_t cols = (size_t)(d->call.n > 0 ? d->call.n : 1), rows = d->n / cols;
        size_t row = (size_t)(kcs_rng_uniform(r) * (double)rows);
        if (row >= rows)
            row = rows - 1;
        for (size_t j = 0; j < cols; j++) {
            size_t i = row * cols + j;
            double s = (kcs_rng_u32(r) & 1) ? 1.0 : -1.0;
            double w = mag_structure(d->c) == KCS_TOL_BACKWARD_ERROR ? d->scale / sqrt((double)cols)
                                                                      : weight(d, i, y0);
            y[i] = kcs_format_round(fo, y0[i] + s * amp * w, KCS_ROUND_DEFAULT);
        }
        return;
    }
    if (kind == 0) {
        size_t i = (size_t)(kcs_rng_uniform(r) * (double)d->n);
        if (i >= d->n)
            i = d->n - 1;
        double s = (kcs_rng_u32(r) & 1) ? 1.0 : -1.0;
        y[i] = kcs_format_round(fo, y0[i] + s * amp * weight(d, i, y0), KCS_ROUND_DEFAULT);
        return;
    }
    if (mag_structure(d->c) == KCS_TOL_BACKWARD_ERROR) {
        /* a Gaussian direction with ||E||_F = amp * scale */
        double nrm = 0.0;
        for (size_t i = 0; i < d->n; i++) {
            y[i] = kcs_rng_normal(r);
            nrm += y[i] * y[i];
        }
        double f = nrm > 0.0 ? amp * d->scale / sqrt(nrm) : 0.0;
        for (size_t i = 0; i < d->n; i++)
            y[i] = kcs_format_round(fo, y0[i] + f * y[i], KCS_ROUND_DEFAULT);
        return;
    }
    for (size_t i = 0; i < d->n; i++) {
        double s = (kcs_rng_u32(r) & 1) ? 1.0 : -1.0;
        y[i] = kcs_format_round(fo, y0[i] + s * amp * weight(d, i, y0), KCS_ROUND_DEFAULT);
    }
}

/* The injection in units of the data: max_i |y_i - y0_i| / max_j |y0| over
 * the row of i (gemm: m rows of n). */
static double data_magnitude(const det_input *d, const double *y0, const double *y)
{
    size_t cols = (size_t)(d->call.n > 0 ? d->call.n : 1), rows = d->n / cols;
    double worst = 0.0;
    for (size_t r = 0; r < rows; r++) {
        double scale = 0.0, dy = 0.0;
        for (size_t j = 0; j < cols; j++) {
            scale = fmax(scale, fabs(y0[r * cols + j]));
            dy = fmax(dy, fabs(y[r * cols + j] - y0[r * cols + j]));
        }
        if (dy > 0.0)
            worst = fmax(worst, scale > 0.0 ? dy / scale : INFINITY);
    }
    return worst;
}

static void fixed_tols(kcs_format in, double *tol)
{
    /* the author's torch Freivalds harness: fp32 1e-4; bf16/fp16 1e-2 (atol)
     * and 5e-2 (rtol) are approximated by their larger value */
    *tol = in == KCS_FMT_FP32 || in == KCS_FMT_FP64 ? 1e-4 : 5e-2;
}

typedef struct det_ctx {
    const kcs_detect_opts *o;
    kcs_study *s;
    kcs_rank_binding *impl;
    int n_impl;
    kcs_spool rows, fa, sum;
} det_ctx;

static int free_input(det_input *d)
{
    KCS_FREE(d->ref, d->absref, d->ref_out, d->A, d->B, d->C, d->resid, d->cr);
    return 0;
}

/* One case: every input set, the placements' own outputs, then the
 * injections. */
/* A detection row's key columns: the case, the detector and the kind. */
static void row_head(kcs_det_row *row, const kcs_case *cs, const kcs_contract *c,
                     kcs_tol_structure st, double eta, const char *detector, const char *kind)
{
    memset(row, 0, sizeof *row);
    row->case_id = cs->id;
    row->m = cs->shape.m;
    row->n = cs->shape.n;
    row->k = cs->shape.k;
    row->eta = eta;
    snprintf(row->contract, sizeof row->contract, "%s", c->id);
    snprintf(row->op, sizeof row->op, "%s", kcs_op_name(cs->op));
    snprintf(row->dtype_in, sizeof row->dtype_in, "%s", kcs_format_name(cs->dtype_in));
    snprintf(row->structure, sizeof row->structure, "%s", kcs_tol_structure_name(st));
    snprintf(row->detector, sizeof row->detector, "%s", detector);
    snprintf(row->kind, sizeof row->kind, "%s", kind);
}

static int detect_case(det_ctx *x, const kcs_case *cs, kcs_error *err)
{
    const kcs_detect_opts *o = x->o;
    const kcs_contract *c = x->s->contracts[cs->contract];
    int n_in = o->inputs > 0 ? o->inputs : (cs->trials < 4 ? cs->trials : 4);
    if (n_in < 1)
        n_in = 1;
    int nm = o->n_magnitudes;
    int64_t det[N_KINDS][64][KCS_DETECTORS] = {{{0}}}, tri[N_KINDS][64] = {{0}};
    double dmag[N_KINDS][64] = {{0}}; /* sum over trials of the data-unit magnitude */
    int64_t mdet[N_MECH][KCS_DETECTORS] = {{0}}, mtri[N_MECH] = {0};
    double mmag[N_MECH] = {0};
    double *y_prev = NULL; /* the previous input set's conforming output */
    size_t n_prev = 0;
    int64_t *fa_out = calloc((size_t)x->n_impl * KCS_DETECTORS, sizeof *fa_out);
    int64_t *fa_flag = calloc((size_t)x->n_impl * KCS_DETECTORS, sizeof *fa_flag);
    int *conf = calloc((size_t)x->n_impl, sizeof *conf);
    if (!fa_out || !fa_flag || !conf) {
        free(fa_out);
        free(fa_flag);
        free(conf);
        return kcs_fail(err, KCS_E_NOMEM, "out of memory");
    }
    for (int p = 0; p < x->n_impl; p++)
        conf[p] = x->impl[p].ctx != NULL;
    double eta_first = NAN;
    int rc = 0;
    for (int t = 0; t < n_in && !rc; t++) {
        det_input d = {0};
        d.c = c;
        d.cs = cs;
        kcs_call *call = &d.call;
        kcs_trial_call(c, cs, t, call);
        kcs_inputs in;
        if ((rc = kcs_inputs_make(c, cs, t, x->s->seed, call, &in, err)))
            break;
        d.n = kcs_op_out_len(call);
        size_t mk = (size_t)(call->m * call->k), kn = (size_t)(call->k * call->n);
        d.ref = malloc(d.n * sizeof *d.ref);
        d.absref = malloc(d.n * sizeof *d.absref);
        d.ref_out = malloc(d.n * sizeof *d.ref_out);
        d.A = malloc(mk * sizeof *d.A);
        d.B = malloc(kn * sizeof *d.B);
        d.C = malloc(d.n * sizeof *d.C);
        d.probes = o->probes;
        d.resid = malloc((size_t)call->m * (size_t)d.probes * sizeof *d.resid);
        d.cr = malloc((size_t)call->m * (size_t)d.probes * sizeof *d.cr);
        double *y0 = malloc(d.n * sizeof *y0), *y = malloc(d.n * sizeof *y);
        kcs_tensor out = {0};
        if (!d.ref || !d.absref || !d.ref_out || !d.A || !d.B || !d.C || !d.resid || !d.cr ||
            !y0 || !y || (rc = kcs_tensor_alloc(&out, d.n, cs->dtype_out, err))) {
            rc = rc ? rc : kcs_fail(err, KCS_E_NOMEM, "out of memory for case %" PRId64, cs->id);
            goto next;
        }
        for (size_t i = 0; i < mk; i++)
            d.A[i] = (float)call->in[0][i];
        for (size_t i = 0; i < kn; i++)
            d.B[i] = (float)call->in[1][i];
        kcs_error e = {0};
        if ((rc = kcs_oracle_run(c->oracle, c->oracle_profile, call, d.ref, d.absref, &d.scale,
                                 &e)) ||
            (rc = kcs_oracle_magnitude(c->oracle_magnitude, call, d.ref, d.absref, &e))) {
            rc = kcs_fail(err, rc, "case %" PRId64 ": oracle: %s", cs->id, e.msg);
            goto next;
        }
        for (size_t i = 0; i < d.n; i++)
            d.ref_out[i] = kcs_format_round(cs->dtype_out, d.ref[i], KCS_ROUND_DEFAULT);
        d.eta = kcs_verdict_eta(c, cs);
        if (t == 0)
            eta_first = d.eta;
        kcs_torch_tol(kcs_format_name(cs->dtype_out), &d.rtol, &d.atol);
        fixed_tols(cs->dtype_in, &d.fixed_tol);
        d.fv_stream = (uint64_t)cs->id << 16 | (uint64_t)t;
        /* every placement's own output: magnitude 0 */
        for (int p = 0; p < x->n_impl; p++) {
            if (!x->impl[p].ctx)
                continue;
            kcs_binding_apply(&x->impl[p], call);
            kcs_tensor_poison(&out);
            call->out = out.data;
            call->out_len = out.len;
            if (x->impl[p].ops->run(x->impl[p].ctx, call, &e) != 0) {
                conf[p] = 0;
                fprintf(stderr, "kcs detect: case %" PRId64 ": %s: %s\n", cs->id,
                        x->impl[p].pl.variant, e.msg);
                if (p == 0) {
                    rc = kcs_fail(err, KCS_E_INVAL,
                                  "case %" PRId64 ": the first placement (the conforming "
                                  "output) failed: %s",
                                  cs->id, e.msg);
                    goto next;
                }
                continue;
            }
            if (p == 0) {
                memcpy(y0, out.data, d.n * sizeof *y0);
                d.digest0 = kcs_digest_values(y0, d.n, cs->dtype_out);
            }
            int fl[KCS_DETECTORS];
            judge(&d, out.data, 0x1000u + (uint64_t)p, fl);
            conf[p] &= !fl[D_ORACLE];
            for (int k = 0; k < KCS_DETECTORS; k++) {
                fa_out[p * KCS_DETECTORS + k]++;
                fa_flag[p * KCS_DETECTORS + k] += fl[k];
            }
        }
        /* mechanisms: the first placement on inputs coerced to bf16 (a kernel
         * that silently narrows its inputs), judged against the fp32 inputs'
         * reference; one row of the previous input set's output (a stale
         * buffer) */
        if (x->impl[0].ctx && call->in[0] && call->in[1]) {
            double *ca = malloc(call->in_len[0] * sizeof *ca);
            double *cb = malloc(call->in_len[1] * sizeof *cb);
            const double *ia = call->in[0], *ib = call->in[1];
            if (ca && cb) {
                for (size_t i = 0; i < call->in_len[0]; i++)
                    ca[i] = kcs_format_round(KCS_FMT_BF16, ia[i], KCS_ROUND_DEFAULT);
                for (size_t i = 0; i < call->in_len[1]; i++)
                    cb[i] = kcs_format_round(KCS_FMT_BF16, ib[i], KCS_ROUND_DEFAULT);
                call->in[0] = ca;
                call->in[1] = cb;
                kcs_binding_apply(&x->impl[0], call);
                kcs_tensor_poison(&out);
                call->out = out.data;
                call->out_len = out.len;
                if (x->impl[0].ops->run(x->impl[0].ctx, call, &e) == 0) {
                    int fl[KCS_DETECTORS];
                    judge(&d, out.data, 0xC0E5u ^ (uint64_t)t, fl);
                    mtri[M_COERCE]++;
                    mmag[M_COERCE] += data_magnitude(&d, y0, out.data);
                    for (int k = 0; k < KCS_DETECTORS; k++)
                        mdet[M_COERCE][k] += fl[k];
                }
                call->in[0] = ia;
                call->in[1] = ib;
            }
            free(ca);
            free(cb);
        }
        if (y_prev && n_prev == d.n && call->n > 0) {
            size_t cols = (size_t)call->n, rows = d.n / cols;
            kcs_rng r;
            kcs_rng_init(&r, x->s->seed ^ 0x57A1Eull, (uint64_t)cs->id, (uint64_t)t);
            size_t row = (size_t)(kcs_rng_uniform(&r) * (double)rows);
            if (row >= rows)
                row = rows - 1;
            memcpy(y, y0, d.n * sizeof *y);
            memcpy(y + row * cols, y_prev + row * cols, cols * sizeof *y);
            int fl[KCS_DETECTORS];
            judge(&d, y, 0x57A1Eu ^ (uint64_t)t, fl);
            mtri[M_STALE]++;
            mmag[M_STALE] += data_magnitude(&d, y0, y);
            for (int k = 0; k < KCS_DETECTORS; k++)
                mdet[M_STALE][k] += fl[k];
        }
        if (!y_prev)
            y_prev = malloc(d.n * sizeof *y_prev);
        if (y_prev) {
            memcpy(y_prev, y0, d.n * sizeof *y_prev);
            n_prev = d.n;
        }
        /* injections into the first placement's output */
        int per = (o->trials + n_in - 1) / n_in;
        if (t == n_in - 1)
            per = o->trials - per * (n_in - 1);
        for (int kind = 0; kind < N_KINDS; kind++)
            for (int mi = 0; mi < nm; mi++) {
                double mag = nm == 1 ? o->mag_min
                                     : o->mag_min * pow(o->mag_max / o->mag_min,
                                                        (double)mi / (double)(nm - 1));
                kcs_rng r;
                kcs_rng_init(&r, x->s->seed ^ 0xDE7EC7ull, (uint64_t)cs->id,
                             ((uint64_t)t << 32) | (uint64_t)(kind * 64 + mi));
                for (int j = 0; j < per; j++) {
                    inject(&d, y0, y, kind, mag, &r);
                    dmag[kind][mi] += data_magnitude(&d, y0, y);
                    int fl[KCS_DETECTORS];
                    judge(&d, y, ((uint64_t)(kind * 64 + mi) << 32) ^ (uint64_t)j ^
                                     ((uint64_t)t << 48), fl);
                    tri[kind][mi]++;
                    for (int k = 0; k < KCS_DETECTORS; k++)
                        det[kind][mi][k] += fl[k];
                }
            }
    next:
        kcs_tensor_free(&out);
        free(y0);
        free(y);
        kcs_inputs_free(&in);
        free_input(&d);
    }
    free(y_prev);
    for (int k = 0; k < KCS_DETECTORS && !rc; k++) {
        for (int mech = 0; mech < N_MECH && !rc; mech++) {
            if (mtri[mech] == 0)
                continue;
            kcs_det_row row;
            row_head(&row, cs, c, c->tol_structure, eta_first, kcs_detector_names[k],
                     mech_names[mech]);
            row.magnitude = NAN;
            row.trials = mtri[mech];
            row.detected = mdet[mech][k];
            row.p_detect = (double)row.detected / (double)row.trials;
            row.magnitude_data = mmag[mech] / (double)row.trials;
            rc = kcs_spool_put(&x->rows, &row, 1, err);
        }
        for (int kind = 0; kind < N_KINDS && !rc; kind++) {
            kcs_det_summary_row sm = {0};
            sm.case_id = cs->id;
            snprintf(sm.detector, sizeof sm.detector, "%s", kcs_detector_names[k]);
            snprintf(sm.kind, sizeof sm.kind, "%s", kind_names[kind]);
            sm.min_magnitude_99 = NAN;
            for (int p = 0; p < x->n_impl; p++)
                if (conf[p]) {
                    sm.fa_outputs += fa_out[p * KCS_DETECTORS + k];
                    sm.fa_flagged += fa_flag[p * KCS_DETECTORS + k];
                }
            for (int mi = 0; mi < nm && !rc; mi++) {
                double mag = nm == 1 ? o->mag_min
                                     : o->mag_min * pow(o->mag_max / o->mag_min,
                                                        (double)mi / (double)(nm - 1));
                kcs_det_row row;
                row_head(&row, cs, c, mag_structure(c), eta_first, kcs_detector_names[k],
                         kind_names[kind]);
                row.magnitude = mag;
                row.trials = tri[kind][mi];
                row.detected = det[kind][mi][k];
                row.p_detect = row.trials ? (double)row.detected / (double)row.trials : NAN;
                row.magnitude_data = row.trials ? dmag[kind][mi] / (double)row.trials : NAN;
                if (isnan(sm.min_magnitude_99) && row.trials && row.p_detect >= 0.99)
                    sm.min_magnitude_99 = mag;
                rc = kcs_spool_put(&x->rows, &row, 1, err);
            }
            sm.usable = !isnan(sm.min_magnitude_99) && sm.fa_flagged == 0 && sm.fa_outputs > 0;
            if (!rc)
                rc = kcs_spool_put(&x->sum, &sm, 1, err);
        }
        for (int p = 0; p < x->n_impl && !rc; p++) {
            kcs_fa_row fr = {0};
            fr.case_id = cs->id;
            fr.rank = p;
            kcs_placement_str(&x->impl[p].pl, fr.impl, sizeof fr.impl);
            fr.conforming = conf[p];
            snprintf(fr.detector, sizeof fr.detector, "%s", kcs_detector_names[k]);
            fr.outputs = fa_out[p * KCS_DETECTORS + k];
            fr.flagged = fa_flag[p * KCS_DETECTORS + k];
            rc = kcs_spool_put(&x->fa, &fr, 1, err);
        }
    }
    free(fa_out);
    free(fa_flag);
    free(conf);
    return rc;
}

static int write_out(det_ctx *x, const char *path, kcs_error *err)
{
    char tmp[4096], created[32];
    snprintf(tmp, sizeof tmp, "%s.partial", path);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    kcs_h5out *o = NULL;
    int rc = kcs_h5out_create(tmp, &o, err);
    if (rc)
        return rc;
    const kcs_detect_opts *d = x->o;
    if ((rc = kcs_h5out_identity(o, created, "detection", d->command_line, err)) ||
        (rc = kcs_h5out_attr_str(o, "/", "study_name", x->s->name, err)) ||
        (rc = kcs_h5out_text(o, "/study", x->s->text, err)) ||
        (rc = kcs_h5out_group(o, "/analysis", err)) ||
        (rc = kcs_h5out_attr_i64(o, "/analysis", "trials", d->trials, err)) ||
        (rc = kcs_h5out_attr_i64(o, "/analysis", "probes", d->probes, err)) ||
        (rc = kcs_h5out_attr_f64(o, "/analysis", "magnitude_min", d->mag_min, err)) ||
        (rc = kcs_h5out_attr_f64(o, "/analysis", "magnitude_max", d->mag_max, err)) ||
        (rc = kcs_spool_flush(&x->rows, o, NULL, err)) ||
        (rc = kcs_spool_flush(&x->fa, o, NULL, err)) ||
        (rc = kcs_spool_flush(&x->sum, o, NULL, err))) {
        kcs_h5out_abort(o);
        remove(tmp);
        return rc;
    }
    if ((rc = kcs_h5out_close(o, err))) {
        remove(tmp);
        return rc;
    }
    if (rename(tmp, path) != 0) {
        remove(tmp);
        return kcs_fail(err, KCS_E_IO, "%s: cannot rename into place", path);
    }
    return 0;
}

int kcs_detect_run(const kcs_detect_opts *o, kcs_error *err)
{
    if (o->n_magnitudes < 1 || o->n_magnitudes > 64 || !(o->mag_min > 0.0) ||
        !(o->mag_max >= o->mag_min) || o->trials < 1 || o->probes < 1 ||
        o->probes > KCS_FV_MAX_PROBES)
        return kcs_fail(err, KCS_E_INVAL,
                        "bad detection settings: 1..64 magnitudes in 0 < min <= max, trials >= "
                        "1, 1..%d probes",
                        KCS_FV_MAX_PROBES);
    if (!o->force && access(o->out, F_OK) == 0)
        return kcs_fail(err, KCS_E_EXISTS, "%s: exists; refusing to overwrite (use --force)",
                        o->out);
    det_ctx x = {0};
    x.o = o;
    kcs_plan plan = {0};
    int rc = kcs_study_load(o->study, &x.s, err);
    if (rc)
        return rc;
    if ((rc = kcs_plan_build(x.s, &plan, err)))
        goto out;
    x.n_impl = x.s->n_placement > 0 ? x.s->n_placement : 1;
    x.impl = calloc((size_t)x.n_impl, sizeof *x.impl);
    if (!x.impl) {
        rc = kcs_fail(err, KCS_E_NOMEM, "out of memory");
        goto out;
    }
    for (int p = 0; p < x.n_impl; p++) {
        kcs_rank_binding *b = &x.impl[p];
        b->pl = *kcs_study_placement(x.s, p);
        if (b->pl.device < 0)
            b->pl.device = 0;
        b->ops = kcs_backend_find(b->pl.backend);
        kcs_backend_config cfg = {
            .profile = b->pl.profile[0] ? b->pl.profile : NULL,
            .path = b->pl.path[0] ? b->pl.path : NULL,
            .options = b->pl.options[0] ? b->pl.options : NULL,
        };
        kcs_error e = {0};
        if (!b->ops || b->ops->open(b->pl.device, &cfg, &b->ctx, &e) != 0) {
            b->ctx = NULL;
            fprintf(stderr, "kcs detect: placement %d (%s) unavailable: %s\n", p,
                    b->pl.backend, b->ops ? e.msg : "backend not compiled in");
            if (p == 0) {
                rc = kcs_fail(err, KCS_E_INVAL,
                              "%s: the first placement gives the conforming output and is "
                              "unavailable",
                              o->study);
                goto out;
            }
        }
    }
    int nf;
    const kcs_field *f = kcs_det_row_fields(&nf);
    if ((rc = kcs_spool_open(&x.rows, "detection", f, nf, sizeof(kcs_det_row), err)))
        goto out;
    f = kcs_fa_row_fields(&nf);
    if ((rc = kcs_spool_open(&x.fa, "detection_false_alarms", f, nf, sizeof(kcs_fa_row), err)))
        goto out;
    f = kcs_det_summary_row_fields(&nf);
    if ((rc = kcs_spool_open(&x.sum, "detection_summary", f, nf, sizeof(kcs_det_summary_row),
                             err)))
        goto out;
    int64_t done = 0;
    for (int64_t i = 0; i < plan.n_cases && !rc; i++) {
        const kcs_case *cs = &plan.cases[i];
        if (cs->op != KCS_OP_GEMM || (cs->shape.batch > 1)) {
            if (!o->quiet)
                fprintf(stderr, "kcs detect: case %" PRId64 " (%s) skipped: injection curves "
                                "cover gemm\n",
                        cs->id, kcs_op_name(cs->op));
            continue;
        }
        if (mag_structure(x.s->contracts[cs->contract]) == KCS_TOL_INVARIANT ||
            mag_structure(x.s->contracts[cs->contract]) == KCS_TOL_COMPOSITE) {
            if (!o->quiet)
                fprintf(stderr, "kcs detect: case %" PRId64 " skipped: its contract's tolerance "
                                "is not a magnitude\n", cs->id);
            continue;
        }
        rc = detect_case(&x, cs, err);
        done++;
        if (!rc && !o->quiet)
            fprintf(stderr, "kcs detect: case %" PRId64 " (%lldx%lldx%lld) done\n", cs->id,
                    (long long)cs->shape.m, (long long)cs->shape.n, (long long)cs->shape.k);
    }
    if (!rc && done == 0)
        rc = kcs_fail(err, KCS_E_INVAL, "%s: no gemm case to inject errors into", o->study);
    if (!rc)
        rc = write_out(&x, o->out, err);
    if (!rc && !o->quiet)
        printf("kcs detect: %s: %" PRId64 " cases x %d magnitudes x %d kinds x %d trials, %d "
               "detectors -> %s (kcs reduce %s renders the curves)\n",
               o->study, done, o->n_magnitudes, (int)N_KINDS, o->trials, KCS_DETECTORS, o->out,
               o->out);
out:
    kcs_spool_close(&x.rows);
    kcs_spool_close(&x.fa);
    kcs_spool_close(&x.sum);
    for (int p = 0; x.impl && p < x.n_impl; p++)
        if (x.impl[p].ctx)
            x.impl[p].ops->close(x.impl[p].ctx);
    free(x.impl);
    kcs_plan_free(&plan);
    kcs_study_free(x.s);
    return rc;
}
