/* The measurement protocol (src/run/protocol.c) on the CPU backend: one
 * trial of a case against a conforming implementation and a known-bad one
 * for each protocol (oracle, repeat, batch_invariance), stale-result
 * replay across trials, kernels that raise on purpose, and trials that do
 * not run (unsupported variant, unavailable device, broken backend). The
 * bad implementations are the CPU backend's own: a bf16 accumulator under
 * a declared fp32 one, and the calibration variants (backends/cpu/calib.h)
 * whose defects are known by construction. Expected verdicts follow from
 * the contracts written here and from those defects, and eta from the
 * contract's expression on the case. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "protocol.h"
#include "unit_helpers.h"

#define STUDY_SEED 4242u

/* A rank binding on the CPU backend with an implementation. */
static void bind_cpu(kcs_rank_binding *b, const char *variant, const char *acc)
{
    memset(b, 0, sizeof *b);
    snprintf(b->pl.backend, sizeof b->pl.backend, "cpu");
    snprintf(b->pl.variant, sizeof b->pl.variant, "%s", variant);
    b->pl.schedule.kind = KCS_SCHED_SEQUENTIAL;
    if (acc) {
        CU_ASSERT_EQUAL(kcs_acc_parse(acc, &b->pl.acc), 0);
        b->pl.acc_set = 1;
    }
    b->ops = kcs_backend_find("cpu");
    CU_ASSERT_PTR_NOT_NULL_FATAL(b->ops);
    kcs_backend_config cfg = {0};
    kcs_error e = {0};
    CU_ASSERT_EQUAL_FATAL(b->ops->open(0, &cfg, &b->ctx, &e), 0);
}

static kcs_case mkcase(const kcs_contract *c, kcs_op op, int64_t id, kcs_shape shape)
{
    kcs_case cs;
    memset(&cs, 0, sizeof cs);
    cs.id = id;
    cs.op = op;
    cs.dtype_in = KCS_FMT_FP32;
    cs.dtype_out = c->dtype_out;
    cs.acc = c->dtype_acc;
    cs.shape = shape;
    cs.dist = c->dists[0];
    cs.trials = c->trials;
    cs.seed = 0x1234567ull + (uint64_t)id;
    return cs;
}

/* Run trials [0, n) of a case with one case memory; 0 or the first error. */
static int run_trials(const kcs_contract *c, const kcs_case *cs, kcs_rank_binding *b, int n,
                      kcs_result_rec *recs)
{
    kcs_case_memory mem;
    memset(&mem, 0, sizeof mem);
    uint64_t digest = 0;
    kcs_trial_io io = {.study_seed = STUDY_SEED, .timeout_s = 60, .memory = &mem,
                       .input_digest = &digest};
    for (int t = 0; t < n; t++) {
        kcs_error err = {0};
        int rc = kcs_protocol_trial(c, cs, t, b, &io, &recs[t], &err);
        if (rc) {
            fprintf(stderr, "\n  trial %d: %s\n", t, err.msg);
            return rc;
        }
    }
    return 0;
}

static void show(const char *who, const kcs_result_rec *r)
{
    if (getenv("KCS_TEST_VERBOSE"))
        printf("\n  %-28s trial %d %-8s %-17s tau %-10.4g eta %-10.4g [%s]", who, r->trial,
               r->status, r->verdict, r->tau, r->eta, r->signature);
}

/* Run n trials of cs on the cpu kernel `variant` into r, shown. */
static void run_variant(const kcs_contract *c, const kcs_case *cs, const char *variant, int n,
                        kcs_result_rec *r)
{
    kcs_rank_binding b;
    bind_cpu(&b, variant, NULL);
    CU_ASSERT_EQUAL_FATAL(run_trials(c, cs, &b, n, r), 0);
    for (int t = 0; t < n; t++)
        show(variant, &r[t]);
    kcs_binding_close(&b);
}

/* Each of the n kernels gives the same result every time: within
 * tolerance, tau 0. */
static void expect_exact(const kcs_contract *c, const kcs_case *cs, const char *const *kernels,
                         int n)
{
    for (int i = 0; i < n; i++) {
        kcs_result_rec r[1];
        run_variant(c, cs, kernels[i], 1, r);
        CU_ASSERT_STRING_EQUAL(r[0].verdict, "within_tolerance");
        CU_ASSERT_EQUAL(r[0].tau, 0.0);
    }
}

/* 16 x 16 x 512 gemm under 2 k u(dtype_acc), a narrow accumulator named */
static const ut_contract narrow_acc_contract = {
    .shapes = "[[16, 16, 512]]",
    .trials = 2,
    .signatures = "  - name: accumulator-narrower-than-declared\n"
                  "    when: \"tau > 1 && effective_acc_bits < bits(dtype_acc) - 4\"\n"
                  "    explain: e\n",
};

/* oracle: fp32 accumulation conforms to 2 k u(fp32); a bf16 accumulator
 * under the same declaration is ~sqrt(k) 2^-9 off and named. */
static void test_oracle_good_and_bad(void)
{
    ut_contract s = narrow_acc_contract;
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 0, (kcs_shape){16, 16, 512, 0});
    const double eta = 2.0 * 512 * ldexp(1.0, -24);
    kcs_rank_binding good, bad;
    bind_cpu(&good, "own", NULL);
    bind_cpu(&bad, "own", "bf16");
    kcs_result_rec g[2], x[2];
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &good, 2, g), 0);
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &bad, 2, x), 0);
    for (int t = 0; t < 2; t++) {
        show("own fp32", &g[t]);
        show("own, bf16 accumulator", &x[t]);
        CU_ASSERT_EQUAL(g[t].case_id, 0);
        CU_ASSERT_EQUAL(g[t].trial, t);
        CU_ASSERT_STRING_EQUAL(g[t].status, "ok");
        CU_ASSERT_STRING_EQUAL(g[t].verdict, "within_tolerance");
        CU_ASSERT_STRING_EQUAL(g[t].signature, "");
        CU_ASSERT_EQUAL(g[t].eta, eta);
        CU_ASSERT_EQUAL(g[t].tau, g[t].backward_err / eta);
        CU_ASSERT(g[t].tau < 1.0);
        CU_ASSERT(g[t].backward_err > 0.0); /* fp32 sums of random products round */
        CU_ASSERT_EQUAL(g[t].guard_ok, 1);
        CU_ASSERT_EQUAL(g[t].nan_count, 0);
        CU_ASSERT_STRING_EQUAL(x[t].status, "ok");
        CU_ASSERT_STRING_EQUAL(x[t].verdict, "violation");
        CU_ASSERT_STRING_EQUAL(x[t].signature, "accumulator-narrower-than-declared");
        CU_ASSERT_EQUAL(x[t].eta, eta);
        CU_ASSERT_EQUAL(x[t].tau, x[t].backward_err / eta);
        CU_ASSERT(x[t].tau > 1.0);
        CU_ASSERT(x[t].effective_acc_bits < 20.0);
        CU_ASSERT(g[t].effective_acc_bits > 20.0);
    }
    /* fresh inputs every trial: other outputs */
    CU_ASSERT(g[0].output_digest != g[1].output_digest);
    /* the same trial again: the same bits and numbers */
    kcs_result_rec again[1];
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &good, 1, again), 0);
    CU_ASSERT_EQUAL(again[0].output_digest, g[0].output_digest);
    CU_ASSERT_EQUAL(again[0].tau, g[0].tau);
    kcs_binding_close(&good);
    kcs_binding_close(&bad);
    kcs_contract_free(c);
}

/* Run trial t of a case with the diagnostics policy `mode`. */
static void one_trial(const kcs_contract *c, const kcs_case *cs, kcs_rank_binding *b, int t,
                      int mode, kcs_result_rec *r)
{
    kcs_case_memory mem;
    memset(&mem, 0, sizeof mem);
    uint64_t digest = 0;
    kcs_trial_io io = {.study_seed = STUDY_SEED, .timeout_s = 60, .memory = &mem,
                       .input_digest = &digest, .verdict_only = mode};
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_protocol_trial(c, cs, t, b, &io, r, &err), 0);
}

/* verdict_only: deferring the mechanism diagnostics changes no verdict, no
 * tau and no digest; KCS_IO_SIGNATURE names a failed trial as the full
 * protocol does; a passing trial's diagnostics are not computed (the
 * record keeps the metrics' fallback); a contract whose tolerance reads
 * them always gets them. */
static void test_verdict_only(void)
{
    ut_contract s = narrow_acc_contract;
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ut_contract s2 = s;
    s2.tolerance = "  structure: invariant\n"
                   "  quantity: \"effective_acc_bits < 12\"\n"
                   "  eta: \"0\"\n";
    kcs_contract *c2 = ut_contract_load(&s2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 0, (kcs_shape){16, 16, 512, 0});
    kcs_rank_binding good, bad;
    bind_cpu(&good, "own", NULL);
    bind_cpu(&bad, "own", "bf16");
    for (int t = 0; t < 2; t++) {
        kcs_result_rec g[3], x[3], y[3];
        for (int mode = KCS_IO_FULL; mode <= KCS_IO_PASS_FAIL; mode++) {
            one_trial(c, &cs, &good, t, mode, &g[mode]);
            one_trial(c, &cs, &bad, t, mode, &x[mode]);
            one_trial(c2, &cs, &bad, t, mode, &y[mode]);
        }
        for (int mode = KCS_IO_SIGNATURE; mode <= KCS_IO_PASS_FAIL; mode++) {
            CU_ASSERT_STRING_EQUAL(g[mode].verdict, "within_tolerance");
            CU_ASSERT_EQUAL(g[mode].tau, g[KCS_IO_FULL].tau);
            CU_ASSERT_EQUAL(g[mode].output_digest, g[KCS_IO_FULL].output_digest);
            CU_ASSERT_EQUAL(x[mode].tau, x[KCS_IO_FULL].tau);
            CU_ASSERT_EQUAL(x[mode].output_digest, x[KCS_IO_FULL].output_digest);
            CU_ASSERT_STRING_NOT_EQUAL(x[mode].verdict, "within_tolerance");
            /* the clause reads effective_acc_bits: computed whatever the mode */
            CU_ASSERT_EQUAL(y[mode].effective_acc_bits, y[KCS_IO_FULL].effective_acc_bits);
            CU_ASSERT_STRING_EQUAL(y[mode].verdict, y[KCS_IO_FULL].verdict);
            /* deferred on a passing trial: the estimate was not made */
            CU_ASSERT(g[mode].effective_acc_bits != g[KCS_IO_FULL].effective_acc_bits);
        }
        CU_ASSERT_STRING_EQUAL(y[KCS_IO_FULL].verdict, "violation"); /* bf16 reads < 12 bits */
        CU_ASSERT_STRING_EQUAL(x[KCS_IO_FULL].signature, "accumulator-narrower-than-declared");
        CU_ASSERT_STRING_EQUAL(x[KCS_IO_SIGNATURE].verdict, x[KCS_IO_FULL].verdict);
        CU_ASSERT_STRING_EQUAL(x[KCS_IO_SIGNATURE].signature, x[KCS_IO_FULL].signature);
        CU_ASSERT_EQUAL(x[KCS_IO_SIGNATURE].effective_acc_bits, x[KCS_IO_FULL].effective_acc_bits);
    }
    kcs_binding_close(&good);
    kcs_binding_close(&bad);
    kcs_contract_free(c);
    kcs_contract_free(c2);
}

/* inputs_cache: a trial's inputs are generated once and every later call
 * of the same trial gets a fresh copy; verdicts, tau, output and input
 * digests are those of calls that generate their own. */
static void test_inputs_cache(void)
{
    ut_contract s = {.shapes = "[[16, 16, 512]]", .trials = 2};
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 0, (kcs_shape){16, 16, 512, 0});
    kcs_rank_binding good, bad;
    bind_cpu(&good, "own", NULL);
    bind_cpu(&bad, "own", "bf16");
    kcs_rank_binding *bs[2] = {&good, &bad};
    kcs_inputs_cache cache = {0};
    for (int t = 0; t < 2; t++) {
        for (int j = 0; j < 2; j++) {
            kcs_case_memory m1, m2;
            memset(&m1, 0, sizeof m1);
            memset(&m2, 0, sizeof m2);
            uint64_t d1 = 0, d2 = 0;
            kcs_trial_io plain = {.study_seed = STUDY_SEED, .timeout_s = 60, .memory = &m1,
                                  .input_digest = &d1};
            kcs_trial_io cached = {.study_seed = STUDY_SEED, .timeout_s = 60, .memory = &m2,
                                   .input_digest = &d2, .inputs_cache = &cache};
            kcs_result_rec a, b;
            kcs_error err = {0};
            CU_ASSERT_EQUAL(kcs_protocol_trial(c, &cs, t, bs[j], &plain, &a, &err), 0);
            CU_ASSERT_EQUAL(kcs_protocol_trial(c, &cs, t, bs[j], &cached, &b, &err), 0);
            CU_ASSERT_EQUAL(d1, d2);
            CU_ASSERT_EQUAL(a.output_digest, b.output_digest);
            CU_ASSERT_EQUAL(a.tau, b.tau);
            CU_ASSERT_STRING_EQUAL(a.verdict, b.verdict);
            CU_ASSERT(cache.valid && cache.trial == t && cache.case_id == 0);
        }
    }
    /* a copy is the caller's own: writing into it leaves the cache as it was */
    kcs_call call = {0};
    kcs_inputs cp;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_inputs_copy(&cache.in, &call, &cp, &err), 0);
    CU_ASSERT_PTR_EQUAL(call.in[0], cp.t[0]);
    CU_ASSERT(cp.t[0] != cache.in.t[0] && cp.len[0] == 16 * 512);
    double was = cache.in.t[0][7];
    cp.t[0][7] = was + 1.0;
    CU_ASSERT_EQUAL(cache.in.t[0][7], was);
    CU_ASSERT_EQUAL(cp.digest, cache.in.digest);
    kcs_inputs_free(&cp);
    kcs_inputs_cache_free(&cache);
    CU_ASSERT(!cache.valid);
    kcs_binding_close(&good);
    kcs_binding_close(&bad);
    kcs_contract_free(c);
}

/* repeat: a deterministic kernel gives one digest over the repetitions,
 * one whose order follows the call's seed gives one per repetition. */
static void test_repeat(void)
{
    ut_contract s = {
        .tolerance = "  structure: invariant\n"
                     "  quantity: \"distinct_digests - 1\"\n"
                     "  eta: \"0\"\n",
        .shapes = "[[4, 4, 256]]",
        .extra = "  protocol: repeat\n  repetitions: 6\n",
        .signatures = "  - { name: reordered, when: \"distinct_digests > 1\", explain: e }\n"
                      "  - { name: all-distinct, when: \"distinct_digests == 6\", explain: e }\n"
                      "  - { name: spread, when: \"spread_ulp > 0\", explain: e }\n",
    };
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 1, (kcs_shape){4, 4, 256, 0});
    const char *conforming[] = {"native", "own", "calib:C-ORD-02:good"};
    expect_exact(c, &cs, conforming, 3);
    kcs_result_rec r[2];
    run_variant(c, &cs, "calib:C-ORD-02:bad", 2, r);
    for (int t = 0; t < 2; t++) {
        CU_ASSERT_STRING_EQUAL(r[t].status, "ok");
        CU_ASSERT_STRING_EQUAL(r[t].verdict, "violation");
        /* 6 random orders of 256 products per output, 16 outputs: all 6
         * runs differ (a coincidence has probability far below 1e-30) */
        CU_ASSERT_STRING_EQUAL(r[t].signature, "reordered,all-distinct,spread");
        CU_ASSERT(isinf(r[t].tau));
        /* each run is an accurate fp32 sum: nothing else is wrong */
        CU_ASSERT(r[t].backward_err < 2.0 * 256 * ldexp(1.0, -24));
    }
    kcs_contract_free(c);
}

/* batch_invariance: op(x[:1]) against op(x)[:1]. The bad kernel splits K
 * when m < 4, so the first row alone takes another summation order. */
static void test_batch_invariance(void)
{
    ut_contract s = {
        .tolerance = "  structure: invariant\n  quantity: \"spread_ulp\"\n  eta: \"0\"\n",
        .shapes = "[[8, 8, 1024]]",
        .extra = "  protocol: batch_invariance\n",
        .signatures = "  - { name: batch-dependent, when: \"spread_ulp > 0\", explain: e }\n",
    };
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 2, (kcs_shape){8, 8, 1024, 0});
    const char *conforming[] = {"own", "calib:C-ORD-03:good"};
    expect_exact(c, &cs, conforming, 2);
    kcs_result_rec r[1];
    run_variant(c, &cs, "calib:C-ORD-03:bad", 1, r);
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "violation");
    CU_ASSERT_STRING_EQUAL(r[0].signature, "batch-dependent");
    CU_ASSERT(isinf(r[0].tau));
    /* the full product itself is right (m >= 4: sequential fp32) */
    CU_ASSERT_EQUAL(r[0].guard_ok, 1);
    kcs_contract_free(c);
}

/* Stale-result replay: the same output digest as an earlier trial of the
 * case while the inputs differ. The bad kernel memoises its first result
 * per shape. `replayed` is bounded by an exact invariant, so that it
 * decides the verdict even where the error alone would not. */
static void test_replay(void)
{
    ut_contract s = {
        .tolerance = "  structure: composite\n"
                     "  all:\n"
                     "    - { structure: pointwise_relative, eta: \"2 * k * u(dtype_acc)\" }\n"
                     "    - { structure: invariant, eta: \"0\", quantity: \"replayed\" }\n",
        .shapes = "[[63, 65, 127]]",
        .trials = 3,
        .signatures = "  - { name: stale, when: \"replayed == 1\", explain: e }\n",
    };
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 3, (kcs_shape){63, 65, 127, 0});
    kcs_rank_binding b;
    bind_cpu(&b, "calib:C-CMP-03:good", NULL);
    kcs_result_rec g[3];
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 3, g), 0);
    for (int t = 0; t < 3; t++) {
        show("calib:C-CMP-03:good", &g[t]);
        CU_ASSERT_STRING_EQUAL(g[t].verdict, "within_tolerance");
    }
    kcs_binding_close(&b);

    bind_cpu(&b, "calib:C-CMP-03:bad", NULL);
    kcs_result_rec r[3];
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 3, r), 0);
    show("calib:C-CMP-03:bad", &r[0]);
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "within_tolerance"); /* computed, then memoised */
    for (int t = 1; t < 3; t++) {
        show("calib:C-CMP-03:bad", &r[t]);
        CU_ASSERT_EQUAL(r[t].output_digest, r[0].output_digest);
        CU_ASSERT_STRING_EQUAL(r[t].verdict, "violation");
        CU_ASSERT_STRING_EQUAL(r[t].signature, "stale");
    }

    /* the same trial twice (same inputs, same output) is no replay */
    kcs_case_memory mem;
    memset(&mem, 0, sizeof mem);
    uint64_t digest = 0;
    kcs_trial_io io = {.study_seed = STUDY_SEED, .timeout_s = 60, .memory = &mem,
                       .input_digest = &digest};
    kcs_rank_binding d;
    bind_cpu(&d, "own", NULL);
    kcs_result_rec once, twice;
    kcs_error err = {0};
    CU_ASSERT_EQUAL(kcs_protocol_trial(c, &cs, 0, &d, &io, &once, &err), 0);
    uint64_t after_one = digest;
    CU_ASSERT_EQUAL(kcs_protocol_trial(c, &cs, 0, &d, &io, &twice, &err), 0);
    CU_ASSERT_EQUAL(once.output_digest, twice.output_digest);
    CU_ASSERT_STRING_EQUAL(twice.verdict, "within_tolerance");
    CU_ASSERT(after_one != 0 && digest != after_one); /* every trial folds in */
    kcs_binding_close(&d);
    kcs_binding_close(&b);
    kcs_contract_free(c);
}

/* A kernel that raises on purpose (an out-of-range index under oob=raise)
 * is judged by the invariant "raise iff out of range"; answering instead
 * is a violation. 256 indices, 5% out of range: every trial has some. */
static void test_raised(void)
{
    ut_contract s = {
        .id = "C-EXC-90",
        .ops = "gather",
        .finite = "true",
        .tolerance = "  structure: invariant\n"
                     "  quantity: \"(oob_count > 0 && raised == 0) + (oob_count == 0 && raised == 1)\"\n"
                     "  eta: \"0\"\n",
        .shapes = "[[64, 256, 8]]",
        .trials = 2,
        .extra = "  attrs: \"oob=raise\"\n  special: { oob: 0.05 }\n",
        .signatures = "  - { name: silently-answered, when: \"oob_count > 0 && raised == 0\", explain: e }\n",
    };
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GATHER, 4, (kcs_shape){64, 256, 8, 0});
    kcs_rank_binding b;
    bind_cpu(&b, "native", NULL);
    kcs_result_rec r[2];
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 2, r), 0);
    /* trial 0 holds out-of-range indices, trial 1 none (both directions of
     * C-EXC-02 in every run): raise, then answer */
    show("native gather", &r[0]);
    CU_ASSERT_STRING_EQUAL(r[0].status, "raised");
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "within_tolerance");
    CU_ASSERT_EQUAL(r[0].output_digest, 0);
    show("native gather", &r[1]);
    CU_ASSERT_STRING_EQUAL(r[1].status, "ok");
    CU_ASSERT_STRING_EQUAL(r[1].verdict, "within_tolerance");
    CU_ASSERT_NOT_EQUAL(r[1].output_digest, 0);
    kcs_binding_close(&b);
    bind_cpu(&b, "calib:C-EXC-02:bad", NULL);
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 2, r), 0);
    for (int t = 0; t < 2; t++) {
        show("calib:C-EXC-02:bad", &r[t]);
        CU_ASSERT_STRING_EQUAL(r[t].status, "ok");
    }
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "violation");
    CU_ASSERT_STRING_EQUAL(r[0].signature, "silently-answered");
    CU_ASSERT_STRING_EQUAL(r[1].verdict, "within_tolerance"); /* nothing to raise for */
    kcs_binding_close(&b);
    kcs_contract_free(c);
}

/* Trials that did not run are `error` or `unavailable`, never judged. */
static void test_not_run(void)
{
    ut_contract s = {.shapes = "[[4, 4, 64]]"};
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = mkcase(c, KCS_OP_GEMM, 5, (kcs_shape){4, 4, 64, 0});
    kcs_rank_binding b;
    kcs_result_rec r[1];

    bind_cpu(&b, "calib:C-NONE-01:bad", NULL); /* no such calibration kernel */
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 1, r), 0);
    show("unknown variant", &r[0]);
    CU_ASSERT_STRING_EQUAL(r[0].status, "unsupported");
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "error");
    CU_ASSERT(strstr(r[0].signature, "C-NONE-01") != NULL); /* the reason */
    CU_ASSERT(isnan(r[0].tau));

    b.broken = 1; /* an earlier call hung or crashed */
    snprintf(b.why, sizeof b.why, "worker hung");
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &b, 1, r), 0);
    CU_ASSERT_STRING_EQUAL(r[0].status, "error");
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "error");
    CU_ASSERT(strstr(r[0].signature, "worker hung") != NULL);
    kcs_binding_close(&b);

    kcs_rank_binding none;
    memset(&none, 0, sizeof none); /* the device did not open */
    none.ops = kcs_backend_find("cpu");
    CU_ASSERT_EQUAL_FATAL(run_trials(c, &cs, &none, 1, r), 0);
    CU_ASSERT_STRING_EQUAL(r[0].status, "unavailable");
    CU_ASSERT_STRING_EQUAL(r[0].verdict, "unavailable");
    CU_ASSERT(isnan(r[0].tau) && isnan(r[0].eta));
    CU_ASSERT_EQUAL(r[0].case_id, 5);
    kcs_contract_free(c);
}

static const ut_test tests[] = {
    {"oracle: conforming vs bf16 accumulator", test_oracle_good_and_bad},
    {"verdict_only: deferred diagnostics, same verdicts", test_verdict_only},
    {"inputs_cache: one generation, the same results", test_inputs_cache},
    {"repeat: deterministic vs seed-ordered", test_repeat},
    {"batch_invariance: m-independent vs split-K for m < 4", test_batch_invariance},
    {"stale-result replay", test_replay},
    {"raise on purpose vs answer", test_raised},
    {"trials that do not run", test_not_run},
};

UT_MAIN("protocol", tests)
