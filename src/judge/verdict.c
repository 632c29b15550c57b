/* Tolerance evaluation and signature matching. */
#include "verdict.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const verdict_names[] = {
    [KCS_VERDICT_WITHIN] = "within_tolerance", [KCS_VERDICT_VIOLATION] = "violation",
    [KCS_VERDICT_UNDER] = "under_specified",   [KCS_VERDICT_ERROR] = "error",
    [KCS_VERDICT_UNAVAILABLE] = "unavailable", [KCS_VERDICT_NOT_CLAIMED] = "not_claimed",
};

const char *kcs_verdict_name(kcs_verdict_kind v)
{
    return (v >= 0 && v <= KCS_VERDICT_NOT_CLAIMED) ? verdict_names[v] : "?";
}

/* The metrics each symbol binds to: a double, int64_t ('l') or int ('i')
 * member of kcs_metrics. */
#define MSYM(sym, member, kind) {KCS_SYM_##sym, offsetof(kcs_metrics, member), kind}
static const struct {
    int sym;
    size_t offset;
    char kind;
} metric_syms[] = {
    MSYM(MAX_ABS, max_abs, 'd'),
    MSYM(MAX_REL, max_rel, 'd'),
    MSYM(MAX_ULP, max_ulp, 'd'),
    MSYM(MEAN_ULP, mean_ulp, 'd'),
    MSYM(BACKWARD_ERR, backward_err, 'd'),
    MSYM(MAX_SCALED, max_scaled, 'd'),
    MSYM(RMS_SCALED, rms_scaled, 'd'),
    MSYM(EFFECTIVE_ACC_BITS, effective_acc_bits, 'd'),
    MSYM(INPUT_BITS, input_bits, 'i'),
    MSYM(ZERO_FRAC, zero_frac, 'd'),
    MSYM(REF_CORR, ref_corr, 'd'),
    MSYM(PEAK_SHARE, peak_share, 'd'),
    MSYM(SCALE_FIT, scale_fit, 'd'),
    MSYM(EDGE_SHARE, edge_share, 'd'),
    MSYM(REF_SCALE, ref_scale, 'd'),
    MSYM(MIXED_SIGNS, mixed_signs, 'd'),
    MSYM(P_BITS, p_bits, 'i'),
    MSYM(CANCEL_BITS, cancel_bits, 'd'),
    MSYM(ROW_SCALE_FIT, row_scale_fit, 'd'),
    MSYM(NAN_COUNT, nan_count, 'l'),
    MSYM(INF_COUNT, inf_count, 'l'),
    MSYM(SENTINEL_COUNT, sentinel_count, 'l'),
    MSYM(MISMATCH_NONFINITE, mismatch_nonfinite, 'l'),
    MSYM(INPUT_RZ, input_rz, 'i'),
    MSYM(OUT_BITS, out_bits, 'i'),
    MSYM(OUT_RZ, out_rz, 'i'),
    MSYM(CONST_OUTPUT, const_output, 'd'),
    MSYM(OFFSET_SHARE, offset_share, 'd'),
};
#undef MSYM

static double metric_value(const kcs_metrics *m, size_t i)
{
    const char *p = (const char *)m + metric_syms[i].offset;
    double d;
    int64_t l;
    int n;
    switch (metric_syms[i].kind) {
    case 'l': memcpy(&l, p, sizeof l); return (double)l;
    case 'i': memcpy(&n, p, sizeof n); return (double)n;
    default: memcpy(&d, p, sizeof d); return d;
    }
}

void kcs_verdict_bind(const kcs_case *cs, const kcs_observation *o, double tau, double eta,
                      double v[KCS_SYM_COUNT])
{
    memset(v, 0, sizeof(double) * KCS_SYM_COUNT);
    v[KCS_SYM_M] = (double)cs->shape.m;
    v[KCS_SYM_N] = (double)cs->shape.n;
    v[KCS_SYM_K] = (double)cs->shape.k;
    v[KCS_SYM_BATCH] = (double)(cs->shape.batch > 0 ? cs->shape.batch : 1);
    v[KCS_SYM_DTYPE_IN] = (double)cs->dtype_in;
    /* A bits:N accumulator binds as -N (expr.h: u = 2^-N, bits = N), as
     * the loader binds it when it checks eta. */
    v[KCS_SYM_DTYPE_ACC] = cs->acc.bits > 0 ? -(double)cs->acc.bits : (double)cs->acc.fmt;
    v[KCS_SYM_DTYPE_OUT] = (double)cs->dtype_out;
    v[KCS_SYM_TAU] = tau;
    v[KCS_SYM_ETA] = eta;
    v[KCS_SYM_GUARD_OK] = 1.0;
    v[KCS_SYM_DISTINCT_DIGESTS] = 1.0;
    v[KCS_SYM_HELD_OUT] = cs->held_out ? 1.0 : 0.0;
    v[KCS_SYM_EXACT_INPUTS] = cs->dist == KCS_DIST_EXACT ? 1.0 : 0.0;
    if (o) {
        for (size_t i = 0; i < sizeof metric_syms / sizeof *metric_syms; i++)
            v[metric_syms[i].sym] = metric_value(&o->m, i);
        v[KCS_SYM_GUARD_OK] = o->guard_ok ? 1.0 : 0.0;
        v[KCS_SYM_RAISED] = o->raised ? 1.0 : 0.0;
        v[KCS_SYM_OOB_COUNT] = (double)o->oob_count;
        v[KCS_SYM_NAN_REF_COUNT] = (double)o->nan_ref_count;
        v[KCS_SYM_INF_REF_COUNT] = (double)o->inf_ref_count;
        v[KCS_SYM_INF_ZEROED] = (double)o->inf_zeroed;
        v[KCS_SYM_NAN_ZEROED] = (double)o->nan_zeroed;
        v[KCS_SYM_GUARD_BEFORE] = o->guard_before ? 1.0 : 0.0;
        v[KCS_SYM_DISTINCT_DIGESTS] = (double)o->distinct_digests;
        v[KCS_SYM_SPREAD_ULP] = o->spread_ulp;
        v[KCS_SYM_ROWSUM_ERR] = o->rowsum_err;
        v[KCS_SYM_BAD_FRAC] = o->bad_frac;
        v[KCS_SYM_REPLAYED] = o->replayed ? 1.0 : 0.0;
        v[KCS_SYM_TRIAL] = (double)o->trial;
    }
    for (int f = 0; f < KCS_FMT_COUNT; f++)
        v[KCS_SYM_FMT_FIRST + f] = (double)f;
}

double kcs_verdict_clause_eta(const kcs_tol_clause *cl, const kcs_case *cs)
{
    double v[KCS_SYM_COUNT];
    kcs_verdict_bind(cs, NULL, 0.0, 0.0, v);
    return kcs_expr_eval(cl->eta, v);
}

double kcs_verdict_eta(const kcs_contract *c, const kcs_case *cs)
{
    if (c->n_clauses > 0)
        return kcs_verdict_clause_eta(&c->clauses[0], cs);
    double v[KCS_SYM_COUNT];
    kcs_verdict_bind(cs, NULL, 0.0, 0.0, v);
    return kcs_expr_eval(c->eta, v);
}

/* The measured quantity a clause bounds. */
static double measured(const kcs_tol_clause *cl, const kcs_observation *o, const double *vals)
{
    const kcs_metrics *m = &o->m;
    switch (cl->structure) {
    case KCS_TOL_BACKWARD_ERROR: return m->backward_err;
    case KCS_TOL_POINTWISE_RELATIVE: return m->max_scaled;
    case KCS_TOL_POINTWISE_ABSOLUTE: return m->max_abs;
    case KCS_TOL_ULP: return m->max_ulp;
    case KCS_TOL_INVARIANT: return cl->quantity ? kcs_expr_eval(cl->quantity, vals) : NAN;
    default: return NAN;
    }
}

static double ratio(double q, double eta)
{
    if (isnan(q))
        return INFINITY;
    if (eta > 0.0)
        return q / eta;
    return q > 0.0 ? INFINITY : 0.0;
}

/* Whether the contract's declared semantics let a kernel raise at all
 * (oob=raise, nan=raise); when they do, invariant clauses say whether a
 * given raise was due. */
static int raise_declared(const char *attrs)
{
    return strstr(attrs, "oob=raise") != NULL || strstr(attrs, "nan=raise") != NULL;
}

void kcs_verdict_judge(const kcs_contract *c, const kcs_case *cs, const kcs_observation *o,
                       kcs_verdict *out)
{
    kcs_verdict v = {0};
    double vals[KCS_SYM_COUNT];
    kcs_verdict_bind(cs, o, 0.0, 0.0, vals);
    /* the semantics judged: the contract's attrs (as the kernel declared
     * them, src/run/semantics.c) */
    vals[KCS_SYM_OOB_RAISE] = strstr(c->attrs, "oob=raise") != NULL;
    kcs_tol_clause legacy = {.structure = c->tol_structure, .eta = c->eta};
    const kcs_tol_clause *cls = c->n_clauses > 0 ? c->clauses : &legacy;
    int n = c->n_clauses > 0 ? c->n_clauses : 1;
    v.tau = 0.0;
    for (int i = 0; i < n; i++) {
        double eta = kcs_expr_eval(cls[i].eta, vals);
        if (i == 0)
            v.eta = eta;
        /* A raised call produced no output: only invariant clauses (which
         * can say whether raising was due) have something to measure. */
        double q = o->raised && cls[i].structure != KCS_TOL_INVARIANT ? NAN
                                                                        : measured(&cls[i], o, vals);
        double t = ratio(q, eta);
        /* A Freivalds oracle replaces the elementwise comparison: its
         * per-row thresholds come from the declared accumulator (the same
         * gamma_k derivation), projected through the probes. */
        if (c->oracle == KCS_ORACLE_FREIVALDS && cls[i].structure != KCS_TOL_INVARIANT)
            t = o->raised ? INFINITY : (isnan(o->fv_tau) ? INFINITY : o->fv_tau);
        if (t > v.tau)
            v.tau = t;
    }
    /* A raise the declared semantics do not allow is a violation: the
     * kernel produced no result where one was due. */
    if (o->raised && !raise_declared(c->attrs))
        v.tau = INFINITY;
    /* A contract that binds only kernels declaring a property: a kernel
     * that does not declare it is measured (tau is kept) but not judged. */
    if (o->undeclared) {
        v.kind = KCS_VERDICT_NOT_CLAIMED;
        *out = v;
        return;
    }
    int fails = v.tau > 1.0 || !o->guard_ok || (!o->raised && o->m.sentinel_count > 0);
    if (!fails) {
        v.kind = KCS_VERDICT_WITHIN;
        *out = v;
        return;
    }
    vals[KCS_SYM_TAU] = v.tau;
    vals[KCS_SYM_ETA] = v.eta;
    size_t used = 0;
    for (int i = 0; i < c->n_sigs; i++) {
        if (kcs_expr_eval(c->sigs[i].when, vals) != 0.0) {
            int w = snprintf(v.signature + used, sizeof v.signature - used, "%s%s",
                             used ? "," : "", c->sigs[i].name);
            if (w > 0)
                used += (size_t)w < sizeof v.signature - used ? (size_t)w
                                                               : sizeof v.signature - used - 1;
        }
    }
    v.kind = used ? KCS_VERDICT_VIOLATION : KCS_VERDICT_UNDER;
    *out = v;
}
