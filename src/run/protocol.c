#include "protocol.h"
#include "batch_sizes.h"
#include "effective_bits.h"
#include "error_shape.h"
#include "input_bits.h"
#include "output_evidence.h"
#include "norm_evidence.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "callguard.h"
#include "freivalds.h"
#include "freivalds_device.h"
#include "inputs.h"
#include "metrics.h"
#include "oracle.h"
#include "oracle_shared.h"
#include "tensor.h"
#include "verdict.h"
#include "stage_time.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void kcs_protocol_blank(kcs_result_rec *r, const kcs_case *cs, int rank, int trial,
                        kcs_status status, const char *verdict)
{
    memset(r, 0, sizeof *r);
    r->case_id = cs->id;
    r->rank = rank;
    r->trial = trial;
    KCS_SET_STATUS(r->status, status);
    snprintf(r->verdict, sizeof r->verdict, "%s", verdict);
    r->tau = r->eta = r->max_abs = r->max_rel = r->max_ulp = r->mean_ulp = NAN;
    r->backward_err = r->max_scaled = r->effective_acc_bits = NAN;
}

/* One guarded kernel call into a freshly poisoned output. On a timeout the
 * output is leaked (a hung worker may still write it) and *out zeroed. */
static int guarded(kcs_rank_binding *b, kcs_call *call, kcs_tensor *out, double timeout_s,
                   int64_t *ns_p, kcs_error *err)
{
    kcs_tensor_poison(out);
    call->out = out->data;
    call->out_len = out->len;
    int64_t t0 = now_ns();
    int rc = kcs_callguard_run(b->ops, b->ctx, call, timeout_s, err);
    if (ns_p)
        *ns_p = now_ns() - t0;
    /* A backend whose kernel writes into a buffer of its own (the plugins)
     * found that buffer's guards overwritten, and handed the output back:
     * the breach is carried into this tensor's guard region, so that the
     * trial is judged (guard_ok = 0: a violation, C-EXC-02's
     * write-past-output) instead of ending as an error of the run. */
    if (rc == KCS_E_OVERRUN) {
        /* before or past the end, as the backend's message says (a
         * negative byte offset: before) */
        int before = strstr(err->msg, "(bytes -") != NULL;
        double *g = before ? &out->base[0] : &out->data[out->len];
        *g = out->sentinel == 0.0 ? 1.0 : 0.0;
        rc = 0;
    }
    /* An isolated backend (a worker process) lost only this call. */
    if ((rc == KCS_E_TIMEOUT || rc == KCS_E_CRASHED) && !b->ops->isolated) {
        b->broken = 1;
        snprintf(b->why, sizeof b->why, "%s", err->msg);
        if (rc == KCS_E_TIMEOUT)
            memset(out, 0, sizeof *out);
    }
    return rc;
}

/* Max ULP distance between two outputs (NaN positions must agree). */
static double spread(const double *a, const double *b, size_t n, kcs_format f)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i]))
            continue;
        double d = kcs_format_ulp_distance(f, a[i], b[i]);
        if (!(d <= s))
            s = d;
    }
    return s;
}

/* repeat: more runs on the same inputs (a runtime may reorder between
 * runs: each repetition gets its own seed). */
static int run_repeats(const kcs_contract *c, kcs_rank_binding *b, kcs_call *call,
                       const kcs_tensor *first, double timeout_s, kcs_observation *o,
                       kcs_error *err)
{
    uint64_t digests[64];
    int nd = 1;
    digests[0] = kcs_digest_values(first->data, first->len, call->dtype_out);
    kcs_tensor rep;
    int rc = kcs_tensor_alloc(&rep, first->len, call->dtype_out, err);
    if (rc)
        return rc;
    uint64_t seed0 = call->seed;
    for (int r = 1; r < c->repetitions; r++) {
        call->seed = seed0 ^ (KCS_GOLDEN64 * (uint64_t)r);
        kcs_error e = {0};
        if ((rc = guarded(b, call, &rep, timeout_s, NULL, &e)) != 0) {
            *err = e;
            break;
        }
        o->guard_ok &= kcs_tensor_guards_ok(&rep);
        uint64_t d = kcs_digest_values(rep.data, rep.len, call->dtype_out);
        int seen = 0;
        for (int i = 0; i < nd; i++)
            seen |= digests[i] == d;
        if (!seen && nd < 64)
            digests[nd++] = d;
        double sp = spread(first->data, rep.data, rep.len, call->dtype_out);
        if (!(sp <= o->spread_ulp))
            o->spread_ulp = sp;
    }
    call->seed = seed0;
    o->distinct_digests = nd;
    kcs_tensor_free(&rep);
    return rc;
}

/* batch_invariance: the op on the first b rows alone, for each batch size
 * b of kcs_batch_sizes (drawn from the trial's seed), against the first b rows of the full output, bitwise
 * (largest ULP spread). Rows are along m. */
static int run_first_row(kcs_rank_binding *b, const kcs_call *full, const kcs_tensor *out,
                         double timeout_s, kcs_observation *o, kcs_error *err)
{
    int64_t bs[KCS_BATCH_SIZES_MAX];
    int nb = kcs_batch_sizes(full->m, full->seed, bs, KCS_BATCH_SIZES_MAX);
    int rc = 0;
    for (int i = 0; i < nb && !rc; i++) {
        kcs_call one = *full;
        one.m = bs[i];
        size_t row = kcs_op_out_len(&one);
        if (row == 0 || row > out->len)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "batch invariance: op %s has no rows",
                            kcs_op_name(full->op));
        for (int j = 0; j < KCS_MAX_INPUTS; j++)
            one.in_len[j] = kcs_op_in_len(&one, j); /* row-major: the first rows are a prefix */
        kcs_tensor t;
        if ((rc = kcs_tensor_alloc(&t, row, full->dtype_out, err)))
            return rc;
        if ((rc = guarded(b, &one, &t, timeout_s, NULL, err)) == 0) {
            o->guard_ok &= kcs_tensor_guards_ok(&t);
            double sp = spread(out->data, t.data, row, full->dtype_out);
            if (!(sp <= o->spread_ulp))
                o->spread_ulp = sp;
        }
        kcs_tensor_free(&t);
    }
    return rc;
}

/* oracle freivalds:k:mode: check D = A·B per batch on fp32 copies; the
 * thresholds come from the declared accumulator's unit roundoff. */
/* The Freivalds oracle: on the rank's device when its backend has a
 * device verifier (cuda, hip: backends/freivalds_device.h), else on the
 * CPU; both apply the same thresholds. NaN when the check cannot run. */
static double freivalds_tau(const kcs_contract *c, const kcs_case *cs, const kcs_call *call,
                            const double *out, int trial, const kcs_rank_binding *bind)
{
    kcs_fv_device_fn dev = bind && bind->ops ? kcs_freivalds_device(bind->ops->name) : NULL;
    int64_t m = cs->shape.m, n = cs->shape.n, k = cs->shape.k;
    int64_t nb = cs->op == KCS_OP_BATCHED_GEMM && cs->shape.batch > 0 ? cs->shape.batch : 1;
    float *A = malloc((size_t)(m * k) * sizeof *A), *B = malloc((size_t)(k * n) * sizeof *B);
    float *D = malloc((size_t)(m * n) * sizeof *D);
    double tau = NAN;
    if (!A || !B || !D)
        goto out;
    kcs_fv_params p;
    kcs_fv_params_default(&p);
    p.probes = c->fv_probes;
    p.mode = (kcs_fv_mode)c->fv_mode;
    p.seed = cs->seed;
    p.stream = (uint64_t)trial;
    p.u_acc = cs->acc.bits > 0 ? ldexp(1.0, -cs->acc.bits) : kcs_format_u(cs->acc.fmt);
    p.u_out = kcs_format_u(cs->dtype_out) > p.u_acc ? kcs_format_u(cs->dtype_out) : 0.0;
    p.threads = 1;
    tau = 0.0;
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t i = 0; i < m * k; i++)
            A[i] = (float)call->in[0][b * m * k + i];
        for (int64_t i = 0; i < k * n; i++)
            B[i] = (float)call->in[1][b * k * n + i];
        for (int64_t i = 0; i < m * n; i++)
            D[i] = (float)out[b * m * n + i];
        kcs_fv_result r;
        kcs_error e = {0};
        if (dev ? dev(bind->info.index, A, B, D, (long)m, (long)k, (long)n, &p, NULL, &r, &e)
                : kcs_freivalds_verify(A, B, D, (long)m, (long)k, (long)n, &p, NULL, &r, &e)) {
            tau = NAN;
            break;
        }
        if (!(r.tau <= tau))
            tau = r.tau;
    }
out:
    free(A);
    free(B);
    free(D);
    return tau;
}

static double rowsum_err(const double *y, int64_t m, int64_t k)
{
    double worst = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double s = 0.0;
        for (int64_t j = 0; j < k; j++)
            s += y[i * k + j];
        double e = fabs(s - 1.0);
        if (!(e <= worst))
            worst = e;
    }
    return worst;
}

static void fill_rec(kcs_result_rec *rec, const kcs_case *cs, int rank, int trial,
                     const kcs_observation *o, const kcs_verdict *v, uint64_t digest,
                     int64_t ns)
{
    memset(rec, 0, sizeof *rec);
    rec->case_id = cs->id;
    rec->rank = rank;
    rec->trial = trial;
    KCS_SET_STATUS(rec->status, o->raised ? KCS_ST_RAISED : KCS_ST_OK);
    rec->output_digest = digest;
    rec->tau = v->tau;
    rec->eta = v->eta;
    rec->max_abs = o->m.max_abs;
    rec->max_rel = o->m.max_rel;
    rec->max_ulp = o->m.max_ulp;
    rec->mean_ulp = o->m.mean_ulp;
    rec->backward_err = o->m.backward_err;
    rec->max_scaled = o->m.max_scaled;
    rec->effective_acc_bits = o->m.effective_acc_bits;
    rec->nan_count = o->m.nan_count;
    rec->inf_count = o->m.inf_count;
    rec->guard_ok = o->guard_ok;
    rec->time_ns = ns;
    snprintf(rec->verdict, sizeof rec->verdict, "%s", kcs_verdict_name(v->kind));
    snprintf(rec->signature, sizeof rec->signature, "%s", v->signature);
}

/* The mechanism diagnostics of a sum (signatures' evidence, dearer than
 * the metrics: each re-sums sampled outputs over k): the effective
 * accumulator width (the unbiased random-walk estimate, effective_bits.h),
 * inputs rounded to 11 or 8 bits before the sum (input_bits.h), attention's
 * P rounded likewise. */
static void diagnose(const kcs_call *call, const kcs_case *cs, const double *y,
                     const double *ref, size_t n, kcs_metrics *m)
{
    if (m->mismatch_nonfinite != 0)
        return;
    m->effective_acc_bits = kcs_effective_acc_bits(call, y, ref, n, m->effective_acc_bits);
    m->input_bits = kcs_input_coerced_bits(call, y, ref, n, &m->input_rz);
    /* an output declared wider than 16 bits that holds y_ref rounded once */
    if (kcs_format_get(cs->dtype_out)->bits >= 32)
        m->out_bits = kcs_output_rounded_bits(y, ref, n, &m->out_rz);
    if (cs->op == KCS_OP_ATTENTION)
        m->p_bits = kcs_attention_p_bits(call, y, ref, n);
}

/* Can the diagnostics wait for a failed verdict? Only when no tolerance
 * clause reads them: then they choose a failed trial's signature and
 * nothing else, and a passing trial's verdict is the same without them. */
static int diagnostics_deferrable(const kcs_contract *c)
{
    static const int syms[] = {KCS_SYM_EFFECTIVE_ACC_BITS, KCS_SYM_INPUT_BITS, KCS_SYM_P_BITS};
    for (size_t s = 0; s < sizeof syms / sizeof syms[0]; s++) {
        if (c->eta && kcs_expr_uses(c->eta, syms[s]))
            return 0;
        for (int i = 0; i < c->n_clauses; i++)
            if ((c->clauses[i].eta && kcs_expr_uses(c->clauses[i].eta, syms[s])) ||
                (c->clauses[i].quantity && kcs_expr_uses(c->clauses[i].quantity, syms[s])))
                return 0;
    }
    return 1;
}

void kcs_inputs_cache_free(kcs_inputs_cache *k)
{
    kcs_inputs_free(&k->in);
    free(k->ref);
    free(k->absref);
    memset(k, 0, sizeof *k);
}

/* Does io's cache hold this trial's inputs? */
static kcs_inputs_cache *cache_for(const kcs_contract *c, const kcs_case *cs, int trial,
                                   const kcs_trial_io *io)
{
    kcs_inputs_cache *k = io->inputs_cache;
    return k && k->valid && k->c == c && k->cs == cs && k->case_id == cs->id &&
                   k->trial == trial && k->study_seed == io->study_seed
               ? k
               : NULL;
}

/* The trial's reference (kcs_oracle_run, then the contract's magnitude
 * where it has one): from io's cache when it holds this trial's, else
 * computed and, where the cache holds this trial's inputs and the oracle
 * answered (0 or KCS_E_RAISED), kept there. */
static int reference(const kcs_contract *c, const kcs_case *cs, int trial, const kcs_trial_io *io,
                     const kcs_call *call, double *ref, double *absref, size_t out_len,
                     double *scale, kcs_error *oerr)
{
    kcs_inputs_cache *k = cache_for(c, cs, trial, io);
    if (k && k->ref_valid && k->ref_len == out_len) {
        memcpy(ref, k->ref, out_len * sizeof *ref);
        memcpy(absref, k->absref, out_len * sizeof *absref);
        *scale = k->scale;
        return k->ref_rc;
    }
    kcs_stage_mark t0 = kcs_stage_begin();
    int orc = kcs_oracle_run(c->oracle, c->oracle_profile, call, ref, absref, scale, oerr);
    if (!orc && c->oracle_magnitude != KCS_MAG_FIRST_ORDER)
        orc = kcs_oracle_magnitude(c->oracle_magnitude, call, ref, absref, oerr);
    kcs_stage_add(KCS_STAGE_ORACLE, t0);
    if (k && (orc == 0 || orc == KCS_E_RAISED)) {
        size_t nb = (out_len ? out_len : 1) * sizeof(double);
        double *r = malloc(nb), *a = malloc(nb);
        if (r && a) { /* else: no cache, not an error */
            memcpy(r, ref, out_len * sizeof *ref);
            memcpy(a, absref, out_len * sizeof *absref);
            free(k->ref);
            free(k->absref);
            k->ref = r;
            k->absref = a;
            k->ref_len = out_len;
            k->scale = *scale;
            k->ref_rc = orc;
            k->ref_valid = 1;
        } else {
            free(r);
            free(a);
        }
    }
    return orc;
}

/* The trial's inputs: generated, or copied from io's cache when it holds
 * this trial's (and kept there when it does not). */
static int make_inputs(const kcs_contract *c, const kcs_case *cs, int trial,
                       const kcs_trial_io *io, kcs_call *call, kcs_inputs *in, kcs_error *err)
{
    kcs_inputs_cache *k = io->inputs_cache;
    if (cache_for(c, cs, trial, io))
        return kcs_inputs_copy(&k->in, call, in, err);
    int rc = kcs_inputs_make(c, cs, trial, io->study_seed, call, in, err);
    if (rc || !k)
        return rc;
    kcs_inputs_cache_free(k);
    kcs_call scratch = *call;
    kcs_error ce = {0};
    if (kcs_inputs_copy(in, &scratch, &k->in, &ce) == 0) /* else: no cache, not an error */
        *k = (kcs_inputs_cache){.c = c, .cs = cs, .case_id = cs->id, .trial = trial,
                                .study_seed = io->study_seed, .valid = 1, .in = k->in};
    return 0;
}

int kcs_protocol_trial(const kcs_contract *c, const kcs_case *cs, int trial,
                       kcs_rank_binding *b, const kcs_trial_io *io, kcs_result_rec *rec,
                       kcs_error *err)
{
    int lean = io->verdict_only && diagnostics_deferrable(c);
    kcs_call call;
    kcs_trial_call(c, cs, trial, &call);
    kcs_binding_apply(b, &call);
    char msg[256] = "";
    call.msg = msg;
    call.msg_len = sizeof msg;

    kcs_inputs in;
    kcs_stage_mark t0 = kcs_stage_begin();
    int rc = make_inputs(c, cs, trial, io, &call, &in, err);
    kcs_stage_add(KCS_STAGE_INPUTS, t0);
    if (rc) {
        if (io->share_oracle) /* the other ranks' reference still needs this one */
            kcs_oracle_run_shared(io->comm, 0, c->oracle, c->oracle_profile, NULL, NULL, NULL,
                                  NULL, NULL);
        return rc;
    }
    *io->input_digest = kcs_input_digest_fold(*io->input_digest, in.digest, trial);
    size_t out_len = kcs_op_out_len(&call);
    double *ref = malloc((out_len ? out_len : 1) * sizeof *ref);
    double *absref = malloc((out_len ? out_len : 1) * sizeof *absref);
    kcs_tensor out = {0};
    int local_ok = ref && absref && !(rc = kcs_tensor_alloc(&out, out_len, cs->dtype_out, err));
    double scale = 0.0;
    kcs_error oerr = {0};
    int orc = 0;
    if (io->share_oracle) { /* collective: before anything that skips the oracle */
        /* a rank whose backend is unavailable still computes its rows;
         * (it books its time as oracle and sync itself) */
        orc = kcs_oracle_run_shared(io->comm, local_ok, c->oracle, c->oracle_profile, &call, ref,
                                    absref, &scale, &oerr);
    }
    if (!ref || !absref || rc) {
        rc = rc ? rc : kcs_fail(err, KCS_E_NOMEM, "out of memory for case %lld", (long long)cs->id);
        goto done;
    }
    if (!b->ctx) {
        kcs_protocol_blank(rec, cs, io->rank, trial, KCS_ST_UNAVAILABLE, "unavailable");
        snprintf(rec->message, sizeof rec->message, "%s", b->why);
        goto done;
    }
    if (b->broken) {
        kcs_protocol_blank(rec, cs, io->rank, trial, KCS_ST_ERROR, "error");
        snprintf(rec->signature, sizeof rec->signature, "backend unusable: %.40s", b->why);
        snprintf(rec->message, sizeof rec->message, "backend unusable: %s", b->why);
        goto done;
    }
    if (!io->share_oracle) {
        orc = reference(c, cs, trial, io, &call, ref, absref, out_len, &scale, &oerr);
    } else if (!orc && c->oracle_magnitude != KCS_MAG_FIRST_ORDER) {
        t0 = kcs_stage_begin();
        orc = kcs_oracle_magnitude(c->oracle_magnitude, &call, ref, absref, &oerr);
        kcs_stage_add(KCS_STAGE_ORACLE, t0);
    }
    int ref_raises = orc == KCS_E_RAISED;
    if (orc && !ref_raises) {
        kcs_protocol_blank(rec, cs, io->rank, trial, KCS_ST_ERROR, "error");
        snprintf(rec->signature, sizeof rec->signature, "oracle: %.54s", oerr.msg);
        snprintf(rec->message, sizeof rec->message, "oracle: %s", oerr.msg);
        goto done;
    }

    kcs_error kerr = {0};
    char breach[sizeof rec->message] = "";
    int64_t ns = 0;
    t0 = kcs_stage_begin();
    int krc = guarded(b, &call, &out, io->timeout_s, &ns, &kerr);
    kcs_stage_add(KCS_STAGE_KERNEL, t0);
    kcs_observation o = {0};
    o.trial = trial;
    o.held_out = cs->held_out;
    o.oob_count = in.oob_count;
    o.distinct_digests = 1;
    if (krc == KCS_E_RAISED) {
        o.raised = 1;
        o.guard_ok = out.base ? kcs_tensor_guards_ok(&out) : 1;
    } else if (krc) {
        kcs_status st = krc == KCS_E_UNSUPPORTED ? KCS_ST_UNSUPPORTED
                        : krc == KCS_E_TIMEOUT   ? KCS_ST_TIMEOUT
                        : krc == KCS_E_CRASHED   ? KCS_ST_CRASHED
                                                 : KCS_ST_ERROR;
        kcs_protocol_blank(rec, cs, io->rank, trial, st, "error");
        snprintf(rec->signature, sizeof rec->signature, "%.63s", kerr.msg);
        snprintf(rec->message, sizeof rec->message, "%s", kerr.msg);
        rec->time_ns = ns;
        if (krc == KCS_E_TIMEOUT || krc == KCS_E_CRASHED || io->verbose)
            fprintf(stderr, "kcs: rank %d: case %lld trial %d: %s\n", io->rank,
                    (long long)cs->id, trial, kerr.msg);
        if (krc == KCS_E_TIMEOUT && !b->ops->isolated)
            memset(&in, 0, sizeof in); /* the hung worker may still read them */
        goto done;
    } else {
        o.guard_ok = kcs_tensor_guards_ok(&out);
        long long gf = 0, gl = 0;
        if (!o.guard_ok && kcs_tensor_guard_breach(&out, &gf, &gl)) {
            o.guard_before = gf < 0;
            /* the backend's own account (byte offsets in its buffer) or
             * the elements of this tensor's guards that changed */
            if (kerr.msg[0])
                snprintf(breach, sizeof breach, "%s", kerr.msg);
            else
                snprintf(breach, sizeof breach, "wrote outside its output: elements %lld..%lld "
                         "relative to an output of %zu elements", gf, gl, out_len);
        }
        if (ref_raises) {
            /* the reference raises (e.g. an out-of-range index under
             * oob=raise) and the kernel answered: nothing to compare */
            for (size_t i = 0; i < out_len; i++) {
                ref[i] = NAN;
                absref[i] = 0.0;
            }
        }
        t0 = kcs_stage_begin();
        kcs_metrics_compute(out.data, ref, absref, out_len, cs->dtype_out, scale, cs->shape.k,
                            out.sentinel, &o.m);
        if (!lean)
            diagnose(&call, cs, out.data, ref, out_len, &o.m);
        if (cs->op == KCS_OP_LAYERNORM || cs->op == KCS_OP_RMSNORM) {
            o.m.cancel_bits = kcs_norm_cancel_bits(&call);
            o.m.row_scale_fit = kcs_norm_row_scale_fit(&call, out.data, ref, out_len);
        }
        if (cs->op == KCS_OP_GEMM || cs->op == KCS_OP_BATCHED_GEMM)
            o.m.edge_share = kcs_edge_share(out.data, ref, out_len, cs->shape.m, cs->shape.n);
        for (size_t i = 0; i < out_len; i++) {
            o.nan_ref_count += isnan(ref[i]);
            o.inf_ref_count += isinf(ref[i]);
            o.inf_zeroed += isinf(ref[i]) && out.data[i] == 0.0;
            o.nan_zeroed += isnan(ref[i]) && out.data[i] == 0.0;
        }
        double eta0 = kcs_verdict_eta(c, cs);
        size_t above = 0;
        for (size_t i = 0; i < out_len; i++) {
            double d = fabs(out.data[i] - ref[i]);
            if (absref[i] < 0.0)
                continue; /* undefined by the declared semantics: not judged */
            above += absref[i] > 0.0 ? d > eta0 * absref[i] : d > 0.0;
        }
        o.bad_frac = out_len ? (double)above / (double)out_len : 0.0;
        if (cs->op == KCS_OP_SOFTMAX)
            o.rowsum_err = rowsum_err(out.data, cs->shape.m, cs->shape.k);
        kcs_stage_add(KCS_STAGE_METRICS, t0);
        t0 = kcs_stage_begin();
        if (c->oracle == KCS_ORACLE_FREIVALDS)
            o.fv_tau = freivalds_tau(c, cs, &call, out.data, trial, b);
        int xrc = 0;
        kcs_stage_add(KCS_STAGE_ORACLE, t0);
        t0 = kcs_stage_begin();
        if (c->protocol == KCS_PROTO_REPEAT && c->repetitions > 1)
            xrc = run_repeats(c, b, &call, &out, io->timeout_s, &o, &kerr);
        else if (c->protocol == KCS_PROTO_BATCH_INVARIANCE && cs->shape.m > 1)
            xrc = run_first_row(b, &call, &out, io->timeout_s, &o, &kerr);
        kcs_stage_add(KCS_STAGE_KERNEL, t0);
        /* An isolated backend is not broken by a lost call, but the trial is. */
        if (b->broken || xrc == KCS_E_TIMEOUT || xrc == KCS_E_CRASHED) {
            kcs_protocol_blank(rec, cs, io->rank, trial,
                               b->broken                ? KCS_ST_ERROR
                               : xrc == KCS_E_TIMEOUT   ? KCS_ST_TIMEOUT
                                                        : KCS_ST_CRASHED,
                               "error");
            snprintf(rec->signature, sizeof rec->signature, "%.63s", kerr.msg);
            snprintf(rec->message, sizeof rec->message, "%s", kerr.msg);
            goto done;
        }
    }
    t0 = kcs_stage_begin();
    uint64_t digest = o.raised ? 0 : kcs_digest_values(out.data, out_len, cs->dtype_out);
    kcs_stage_add(KCS_STAGE_METRICS, t0);
    t0 = kcs_stage_begin();
    /* stale-result replay: the same output for different inputs */
    kcs_case_memory *mem = io->memory;
    if (mem && !o.raised) {
        for (int i = 0; i < mem->n; i++)
            o.replayed |= mem->output_digest[i] == digest && mem->input_digest[i] != in.digest;
        if (mem->n < KCS_REPLAY_MAX) {
            mem->input_digest[mem->n] = in.digest;
            mem->output_digest[mem->n++] = digest;
        }
    }
    /* A contract that binds only kernels declaring some property
     * (precondition.declares): what this one declares. */
    o.undeclared = c->declares & ~kcs_binding_declares(b, &call);
    kcs_verdict v;
    kcs_verdict_judge(c, cs, &o, &v);
    int failed = v.kind == KCS_VERDICT_VIOLATION || v.kind == KCS_VERDICT_UNDER;
    if (lean && io->verdict_only == KCS_IO_SIGNATURE && !o.raised && failed) {
        /* the diagnostics choose among the signatures of a failed trial */
        diagnose(&call, cs, out.data, ref, out_len, &o.m);
        kcs_verdict_judge(c, cs, &o, &v);
    }
    fill_rec(rec, cs, io->rank, trial, &o, &v, digest, ns);
    if (breach[0]) /* where the guards were written (dataset.md: message) */
        snprintf(rec->message, sizeof rec->message, "%s", breach);
    else if (o.raised) /* the kernel's own reason for refusing the call, whole */
        snprintf(rec->message, sizeof rec->message, "%s", kerr.msg);
    kcs_stage_add(KCS_STAGE_VERDICT, t0);
    if (trial == 0 && io->samples) {
        for (int j = 0; j < io->n_samples; j++) {
            size_t idx = out_len ? (size_t)((double)j * (double)out_len / io->n_samples) : 0;
            io->samples[j] = !o.raised && idx < out_len ? out.data[idx] : NAN;
        }
    }
done:
    kcs_inputs_free(&in);
    free(ref);
    free(absref);
    kcs_tensor_free(&out);
    return rc;
}
