/* The judge (src/judge/verdict.c) on constructed observations: the
 * quantity each tolerance structure bounds, tau = measured / eta with eta
 * from the case (hand-computed here from the expression in the contract),
 * eta = 0 and NaN, composites, the within/violation/under_specified
 * decision (tau, guards, sentinels, raised calls), signature selection and
 * order, the Freivalds oracle's score, and every symbol a `when` may read
 * bound from the observation. Expected values are computed in the test
 * from the definitions in contracts/README.md, never read off the judge. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unit_helpers.h"
#include "declares.h"
#include "verdict.h"

static kcs_case mkcase(int64_t m, int64_t n, int64_t k, int64_t batch, kcs_format in)
{
    kcs_case cs;
    memset(&cs, 0, sizeof cs);
    cs.op = KCS_OP_GEMM;
    cs.shape = (kcs_shape){m, n, k, batch};
    cs.dtype_in = in;
    cs.dtype_out = KCS_FMT_FP32;
    cs.acc.fmt = KCS_FMT_FP32;
    cs.trials = 1;
    return cs;
}

/* A conforming observation: nothing measured, guards intact. */
static kcs_observation clean(void)
{
    kcs_observation o;
    memset(&o, 0, sizeof o);
    o.guard_ok = 1;
    o.distinct_digests = 1;
    return o;
}

static kcs_contract *with_tolerance(const char *tol, const char *sigs)
{
    ut_contract s = {.tolerance = tol, .signatures = sigs};
    return ut_contract_load(&s);
}

/* Each structure bounds its own metric: the four metrics carry different
 * values and tau must be the chosen one over eta = 2 k u(fp32). */
static void test_structures_pick_their_metric(void)
{
    static const struct {
        const char *name;
        int metric; /* 0 backward_err, 1 max_scaled, 2 max_abs, 3 max_ulp */
    } rows[] = {{"backward_error", 0}, {"pointwise_relative", 1},
                {"pointwise_absolute", 2}, {"ulp", 3}};
    const int64_t k = 256;
    const double eta = 2.0 * (double)k * ldexp(1.0, -24); /* u(fp32) = 2^-24 */
    const double vals[4] = {3 * ldexp(1.0, -17), 5 * ldexp(1.0, -17), 7 * ldexp(1.0, -16),
                            9 * ldexp(1.0, -15)};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        char tol[256];
        snprintf(tol, sizeof tol, "  structure: %s\n  eta: \"2 * k * u(dtype_acc)\"\n",
                 rows[r].name);
        kcs_contract *c = with_tolerance(tol, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        kcs_case cs = mkcase(8, 8, k, 0, KCS_FMT_FP32);
        kcs_observation o = clean();
        o.m.backward_err = vals[0];
        o.m.max_scaled = vals[1];
        o.m.max_abs = vals[2];
        o.m.max_ulp = vals[3];
        o.m.max_rel = 1e6; /* bounded by no structure */
        kcs_verdict v;
        kcs_verdict_judge(c, &cs, &o, &v);
        double tau = vals[rows[r].metric] / eta;
        CU_ASSERT_EQUAL(v.eta, eta);
        CU_ASSERT_EQUAL(v.tau, tau);
        CU_ASSERT_EQUAL(v.kind, tau <= 1.0 ? KCS_VERDICT_WITHIN : KCS_VERDICT_VIOLATION);
        CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), eta);
        kcs_contract_free(c);
    }
}

/* tau = 1 conforms, the next double above does not. */
static void test_tau_boundary(void)
{
    kcs_contract *c = with_tolerance("  structure: pointwise_absolute\n  eta: \"k / 4\"\n", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(2, 2, 12, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    kcs_verdict v;
    o.m.max_abs = 3.0; /* eta = 12 / 4 */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 1.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    CU_ASSERT_STRING_EQUAL(v.signature, "");
    o.m.max_abs = nextafter(3.0, 4.0);
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(v.tau > 1.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "any-failure");
    o.m.max_abs = NAN; /* nothing measured is no pass */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau) && v.tau > 0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    kcs_contract_free(c);
}

/* eta is evaluated on the case: shape, batch (1 when absent), formats. */
static void test_eta_binds_the_case(void)
{
    kcs_contract *c = with_tolerance("  structure: pointwise_absolute\n"
                                     "  eta: \"m + 10 * n + 100 * k + 1000 * batch\"\n",
                                     NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(3, 5, 7, 0, KCS_FMT_FP32);
    CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), 3 + 50 + 700 + 1000);
    cs.shape.batch = 6;
    CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), 3 + 50 + 700 + 6000);
    kcs_contract_free(c);

    c = with_tolerance("  structure: pointwise_absolute\n  eta: \"u(dtype_in) + bits(dtype_out)\"\n",
                       NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const struct {
        kcs_format f;
        int p; /* significand bits incl. the implicit one (IEEE 754 / bfloat16) */
    } fm[] = {{KCS_FMT_FP32, 24}, {KCS_FMT_BF16, 8}, {KCS_FMT_FP16, 11}};
    for (int i = 0; i < 3; i++) {
        cs = mkcase(4, 4, 64, 0, fm[i].f);
        cs.dtype_out = fm[i].f;
        CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), ldexp(1.0, -fm[i].p) + fm[i].p);
    }
    kcs_contract_free(c);

    /* a bits:N accumulator: u = 2^-N, bits = N (contracts/README.md) */
    c = with_tolerance("  structure: pointwise_absolute\n"
                       "  eta: \"u(dtype_acc) * 2^30 + bits(dtype_acc)\"\n",
                       NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), ldexp(1.0, 30 - 24) + 24);
    CU_ASSERT_EQUAL(kcs_acc_parse("bits:14", &cs.acc), 0);
    CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), ldexp(1.0, 30 - 14) + 14);
    cs.acc = (kcs_acc){.fmt = KCS_FMT_BF16};
    CU_ASSERT_EQUAL(kcs_verdict_eta(c, &cs), ldexp(1.0, 30 - 8) + 8);
    kcs_contract_free(c);
}

/* An invariant bounds its quantity; eta = 0: tau 0 when it is 0, else inf. */
static void test_invariant(void)
{
    kcs_contract *c = with_tolerance("  structure: invariant\n"
                                     "  quantity: \"distinct_digests - 1\"\n"
                                     "  eta: \"0\"\n",
                                     "  - { name: reordered, when: \"distinct_digests > 1\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    o.m.backward_err = 1e3; /* no structure of this contract reads it */
    kcs_verdict v;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.eta, 0.0);
    CU_ASSERT_EQUAL(v.tau, 0.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    o.distinct_digests = 3;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau) && v.tau > 0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "reordered");
    kcs_contract_free(c);

    /* a positive eta: an ordinary ratio */
    c = with_tolerance("  structure: invariant\n  quantity: \"rowsum_err\"\n  eta: \"k / 128\"\n",
                       NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    o = clean();
    o.rowsum_err = 0.125;
    kcs_verdict_judge(c, &cs, &o, &v); /* eta = 64 / 128 */
    CU_ASSERT_EQUAL(v.eta, 0.5);
    CU_ASSERT_EQUAL(v.tau, 0.25);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    kcs_contract_free(c);
}

/* A composite's tau is the largest of its clauses'; eta is clause 0's. */
static void test_composite(void)
{
    kcs_contract *c = with_tolerance(
        "  structure: composite\n"
        "  all:\n"
        "    - { structure: pointwise_relative, eta: \"4 * u(dtype_acc)\" }\n"
        "    - { structure: invariant, eta: \"0\", quantity: \"mismatch_nonfinite\" }\n"
        "    - { structure: ulp, eta: \"8\" }\n",
        "  - { name: too-far, when: \"max_scaled > eta\", explain: e }\n"
        "  - { name: nonfinite, when: \"mismatch_nonfinite > 0\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    const double eta0 = 4.0 * ldexp(1.0, -24);
    kcs_observation o = clean();
    kcs_verdict v;
    o.m.max_scaled = eta0 / 4; /* clause 0: 0.25 */
    o.m.max_ulp = 6;           /* clause 2: 0.75 */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.eta, eta0);
    CU_ASSERT_EQUAL(v.tau, 0.75);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);

    o.m.max_scaled = 3 * eta0; /* clause 0 fails alone */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 3.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "too-far");

    o.m.max_scaled = 0;
    o.m.max_ulp = 20; /* clause 2 fails alone: no signature names it */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 2.5);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_UNDER);
    CU_ASSERT_STRING_EQUAL(v.signature, "");

    o.m.max_ulp = 0;
    o.m.mismatch_nonfinite = 2; /* the exact invariant */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau));
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "nonfinite");
    kcs_contract_free(c);
}

/* Failure without a large tau: broken guards, unwritten outputs (unless
 * the kernel raised on purpose); a raised call leaves only invariant
 * clauses something to measure. */
static void test_guards_sentinels_raised(void)
{
    kcs_contract *c = with_tolerance("  structure: backward_error\n  eta: \"k * u(dtype_acc)\"\n",
                                     "  - { name: guard, when: \"guard_ok == 0\", explain: e }\n"
                                     "  - { name: unwritten, when: \"sentinel_count > 0\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    kcs_verdict v;
    o.guard_ok = 0;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 0.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "guard");
    o = clean();
    o.m.sentinel_count = 1;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "unwritten");
    o = clean();
    o.raised = 1; /* no output: backward_error has nothing to bound */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau));
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_UNDER);
    kcs_contract_free(c);

    /* raise iff out of range (C-EXC-02's invariant) */
    c = with_tolerance("  structure: invariant\n"
                       "  quantity: \"(oob_count > 0 && raised == 0) + (oob_count == 0 && raised == 1)\"\n"
                       "  eta: \"0\"\n",
                       "  - { name: silently-answered, when: \"oob_count > 0 && raised == 0\", explain: e }\n"
                       "  - { name: raised-needlessly, when: \"oob_count == 0 && raised == 1\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    o = clean();
    o.oob_count = 3;
    o.raised = 1;
    o.m.sentinel_count = 16; /* the raised call wrote nothing: due */
    /* a raise the declared semantics do not allow is a violation whatever
     * the clauses say ... */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau) && v.tau > 0);
    /* a failure; no signature of this contract names it, so under-specified */
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_UNDER);
    /* ... and with oob=raise declared, the invariant decides */
    snprintf(c->attrs, sizeof c->attrs, "oob=raise");
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 0.0);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    o.raised = 0;
    o.m.sentinel_count = 0;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "silently-answered");
    o.oob_count = 0;
    o.raised = 1;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "raised-needlessly");
    kcs_contract_free(c);
}

/* Signatures: evaluated only on failures, every match recorded in
 * declaration order, tau and eta bound; no match: under_specified. */
static void test_signature_selection(void)
{
    kcs_contract *c = with_tolerance("  structure: pointwise_absolute\n  eta: \"k\"\n",
                                     "  - { name: always, when: \"trial >= 0\", explain: e }\n"
                                     "  - { name: far, when: \"tau > 10\", explain: e }\n"
                                     "  - { name: near, when: \"tau <= 10 && eta == k\", explain: e }\n"
                                     "  - { name: nan-out, when: \"nan_count > 0\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    kcs_verdict v;
    o.m.max_abs = 32; /* tau 0.5: `always` holds but a conforming trial has no signature */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    CU_ASSERT_STRING_EQUAL(v.signature, "");
    o.m.max_abs = 64 * 5; /* tau 5 */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "always,near");
    o.m.max_abs = 64 * 20; /* tau 20 */
    o.m.nan_count = 1;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_STRING_EQUAL(v.signature, "always,far,nan-out");
    kcs_contract_free(c);

    /* the same failure, no explanation */
    c = with_tolerance("  structure: pointwise_absolute\n  eta: \"k\"\n",
                       "  - { name: far, when: \"tau > 10\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    o.m.max_abs = 64 * 5;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_UNDER);
    CU_ASSERT_STRING_EQUAL(v.signature, "");
    CU_ASSERT_EQUAL(v.tau, 5.0);
    kcs_contract_free(c);
}

/* The Freivalds oracle's score replaces the elementwise clauses' tau. */
static void test_freivalds_score(void)
{
    kcs_contract *c = with_tolerance("  structure: backward_error\n  eta: \"k * u(dtype_acc)\"\n",
                                     NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    c->oracle = KCS_ORACLE_FREIVALDS;
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    kcs_verdict v;
    o.m.backward_err = 1.0; /* not computed under freivalds: ignored */
    o.fv_tau = 0.5;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 0.5);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    o.fv_tau = 1.5;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.tau, 1.5);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    o.fv_tau = NAN; /* the check could not run */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT(isinf(v.tau));
    CU_ASSERT(v.kind != KCS_VERDICT_WITHIN);
    kcs_contract_free(c);
}

/* Every symbol a `when` may read is bound from the observation (or the
 * case): a signature "SYM == value" matches once the field holds value
 * and not before. */
static void set_field(kcs_observation *o, kcs_case *cs, int which, double x)
{
    switch (which) {
    case 0: o->m.max_abs = x; break;
    case 1: o->m.max_rel = x; break;
    case 2: o->m.max_ulp = x; break;
    case 3: o->m.mean_ulp = x; break;
    case 4: o->m.backward_err = x; break;
    case 5: o->m.max_scaled = x; break;
    case 6: o->m.rms_scaled = x; break;
    case 7: o->m.effective_acc_bits = x; break;
    case 8: o->m.nan_count = (int64_t)x; break;
    case 9: o->m.inf_count = (int64_t)x; break;
    case 10: o->m.sentinel_count = (int64_t)x; break;
    case 11: o->m.mismatch_nonfinite = (int64_t)x; break;
    case 12: o->guard_ok = (int)x; break;
    case 13: o->raised = (int)x; break;
    case 14: o->oob_count = (int64_t)x; break;
    case 15: o->nan_ref_count = (int64_t)x; break;
    case 16: o->distinct_digests = (int)x; break;
    case 17: o->spread_ulp = x; break;
    case 18: o->rowsum_err = x; break;
    case 19: o->bad_frac = x; break;
    case 20: o->replayed = (int)x; break;
    case 21: o->trial = (int)x; break;
    case 22: cs->held_out = (int)x; break;
    default: break;
    }
}

static void test_symbols_bound(void)
{
    static const struct {
        const char *sym;
        double value;
    } syms[] = {
        {"max_abs", 0.375},       {"max_rel", 0.625},     {"max_ulp", 12},
        {"mean_ulp", 2.5},        {"backward_err", 0.75}, {"max_scaled", 0.875},
        {"rms_scaled", 0.3125},   {"effective_acc_bits", 13.5}, {"nan_count", 5},
        {"inf_count", 6},         {"sentinel_count", 7},  {"mismatch_nonfinite", 8},
        {"guard_ok", 0},          {"raised", 1},          {"oob_count", 9},
        {"nan_ref_count", 10},    {"distinct_digests", 4}, {"spread_ulp", 11},
        {"rowsum_err", 0.0625},   {"bad_frac", 0.1875},   {"replayed", 1},
        {"trial", 3},             {"held_out", 1},
    };
    /* every trial fails through an invariant no symbol below feeds */
    const char *tol = "  structure: invariant\n  quantity: \"trial + 1\"\n  eta: \"0\"\n";
    for (int i = 0; i < (int)(sizeof syms / sizeof syms[0]); i++) {
        char sig[160];
        snprintf(sig, sizeof sig, "  - { name: probe, when: \"%s == %.17g\", explain: e }\n", syms[i].sym,
                 syms[i].value);
        kcs_contract *c = with_tolerance(tol, sig);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
        kcs_observation o = clean();
        kcs_verdict v;
        kcs_verdict_judge(c, &cs, &o, &v);
        if (v.kind != KCS_VERDICT_UNDER)
            fprintf(stderr, "\n  %s: matched before it was set\n", syms[i].sym);
        CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_UNDER);
        set_field(&o, &cs, i, syms[i].value);
        kcs_verdict_judge(c, &cs, &o, &v);
        if (v.kind != KCS_VERDICT_VIOLATION)
            fprintf(stderr, "\n  %s: not bound\n", syms[i].sym);
        CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
        CU_ASSERT_STRING_EQUAL(v.signature, "probe");
        kcs_contract_free(c);
    }
}

/* Many long names: the list is cut inside the buffer, never past it. */
static void test_signature_list_bounded(void)
{
    char sigs[2048] = "";
    for (int i = 0; i < 8; i++) {
        char line[160];
        snprintf(line, sizeof line,
                 "  - { name: signature-with-a-rather-long-name-number-%d, when: \"tau > 1\", explain: e }\n",
                 i);
        strcat(sigs, line);
    }
    kcs_contract *c = with_tolerance("  structure: pointwise_absolute\n  eta: \"k\"\n", sigs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(4, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    o.m.max_abs = 1e9;
    kcs_verdict v;
    memset(&v, 0x5a, sizeof v);
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT(memchr(v.signature, 0, sizeof v.signature) != NULL);
    const char *first = "signature-with-a-rather-long-name-number-0";
    CU_ASSERT(strncmp(v.signature, first, strlen(first)) == 0);
    kcs_contract_free(c);
}

/* A contract that binds only kernels declaring a property
 * (precondition.declares): an undeclared kernel is not_claimed whatever it
 * measured (tau kept), a declaring one is judged as usual. */
static void test_not_claimed(void)
{
    kcs_contract *c = with_tolerance("  structure: invariant\n"
                                     "  quantity: \"spread_ulp\"\n"
                                     "  eta: \"0\"\n",
                                     "  - { name: batch-dep, when: \"spread_ulp > 0\", explain: e }\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    c->declares = KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT);
    kcs_case cs = mkcase(8, 4, 64, 0, KCS_FMT_FP32);
    kcs_observation o = clean();
    o.spread_ulp = 2.0;
    o.undeclared = c->declares; /* the kernel declares nothing */
    kcs_verdict v;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_NOT_CLAIMED);
    CU_ASSERT(isinf(v.tau) && v.tau > 0); /* measured, kept */
    CU_ASSERT_STRING_EQUAL(v.signature, "");
    o.spread_ulp = 0.0; /* invariant but undeclared: still not a pass */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_NOT_CLAIMED);
    o.undeclared = 0; /* declared: judged */
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_WITHIN);
    o.spread_ulp = 1.0;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, KCS_VERDICT_VIOLATION);
    CU_ASSERT_STRING_EQUAL(v.signature, "batch-dep");
    kcs_contract_free(c);
}

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_NOT_CLAIMED), "not_claimed");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_WITHIN), "within_tolerance");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_VIOLATION), "violation");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_UNDER), "under_specified");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_ERROR), "error");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name(KCS_VERDICT_UNAVAILABLE), "unavailable");
    CU_ASSERT_STRING_EQUAL(kcs_verdict_name((kcs_verdict_kind)99), "?");
}

static const ut_test tests[] = {
    {"structures pick their metric", test_structures_pick_their_metric},
    {"tau = 1 conforms, above does not, NaN fails", test_tau_boundary},
    {"eta binds the case", test_eta_binds_the_case},
    {"invariant clauses, eta 0", test_invariant},
    {"composite: max over clauses, eta of clause 0", test_composite},
    {"guards, sentinels, raised calls", test_guards_sentinels_raised},
    {"signature selection and order", test_signature_selection},
    {"freivalds oracle score", test_freivalds_score},
    {"every symbol bound", test_symbols_bound},
    {"signature list bounded", test_signature_list_bounded},
    {"not claimed: undeclared kernels are not judged", test_not_claimed},
    {"verdict names", test_names},
};

UT_MAIN("verdict", tests)
