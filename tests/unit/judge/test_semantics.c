/* Declared semantics are judged as declared: a raise the contract's attrs
 * do not allow is a violation (C-EXC-01 under nan=propagate, C-ORD-02/03
 * without attrs), a raise they allow is judged by the contract's own
 * invariant (C-EXC-02 under oob=raise); rows of an oob=undefined gather
 * read through an out-of-range index are not judged; C-EXC-02's odd trials
 * hold no out-of-range index. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "metrics.h"
#include "oracle_ops.h"
#include "tensor.h"
#include "verdict.h"
#include "unit_helpers.h"

static void judge_raised(const char *id, int oob_count, kcs_verdict_kind want,
                         const char *want_sig)
{
    kcs_contract *c = ut_contract_load_id(id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = {0};
    cs.op = KCS_OP_GEMM;
    cs.dtype_in = cs.dtype_out = KCS_FMT_FP32;
    cs.acc.fmt = KCS_FMT_FP32;
    cs.shape = (kcs_shape){8, 8, 64, 0};
    kcs_observation o = {0};
    o.guard_ok = 1;
    o.raised = 1;
    o.distinct_digests = 1;
    o.oob_count = oob_count;
    kcs_verdict v;
    kcs_verdict_judge(c, &cs, &o, &v);
    CU_ASSERT_EQUAL(v.kind, want);
    if (want_sig)
        CU_ASSERT_PTR_NOT_NULL(strstr(v.signature, want_sig));
    kcs_contract_free(c);
}

static void test_raises(void)
{
    /* not allowed by the declared semantics: violations with their names */
    judge_raised("C-EXC-01", 0, KCS_VERDICT_VIOLATION, "raised-instead-of-propagating");
    judge_raised("C-ORD-02", 0, KCS_VERDICT_VIOLATION, "raised-without-cause");
    judge_raised("C-ORD-03", 0, KCS_VERDICT_VIOLATION, "raised-without-cause");
    /* oob=raise: due with an out-of-range index, a violation without one */
    judge_raised("C-EXC-02", 3, KCS_VERDICT_WITHIN, NULL);
    judge_raised("C-EXC-02", 0, KCS_VERDICT_VIOLATION, "raised-without-cause");
}

static void test_oob_undefined(void)
{
    double table[3 * 2] = {1, 2, 3, 4, 5, 6}, idx[4] = {0, 7, 2, -1};
    kcs_call c = {0};
    c.op = KCS_OP_GATHER;
    c.m = 3;
    c.k = 2;
    c.n = 4;
    c.attrs = "oob=undefined";
    c.in[0] = table;
    c.in[1] = idx;
    double ref[8], absref[8], scale;
    kcs_error err = {0};
    CU_ASSERT_EQUAL_FATAL(kcs_oracle_fp64_op(&c, ref, absref, &scale, &err), 0);
    CU_ASSERT(absref[2] < 0 && absref[3] < 0 && absref[6] < 0 && absref[7] < 0);
    CU_ASSERT(absref[0] >= 0 && absref[5] >= 0);
    /* a kernel that zero-fills (or clamps) the undefined rows is correct */
    double zero_fill[8] = {1, 2, 0, 0, 5, 6, 0, 0}, clamp[8] = {1, 2, 5, 6, 5, 6, 1, 2};
    double wrong[8] = {1, 2, 0, 0, 5, 7, 0, 0};
    kcs_metrics m;
    kcs_metrics_compute(zero_fill, ref, absref, 8, KCS_FMT_FP32, scale, 2, -9999.0, &m);
    CU_ASSERT(m.max_abs == 0.0 && m.mismatch_nonfinite == 0 && m.nan_count == 0);
    kcs_metrics_compute(clamp, ref, absref, 8, KCS_FMT_FP32, scale, 2, -9999.0, &m);
    CU_ASSERT(m.max_abs == 0.0 && m.mismatch_nonfinite == 0);
    /* an in-range row is still judged */
    kcs_metrics_compute(wrong, ref, absref, 8, KCS_FMT_FP32, scale, 2, -9999.0, &m);
    CU_ASSERT_EQUAL(m.max_abs, 1.0);
    /* clamp is still clamp */
    c.attrs = "oob=clamp";
    CU_ASSERT_EQUAL_FATAL(kcs_oracle_fp64_op(&c, ref, absref, &scale, &err), 0);
    CU_ASSERT(ref[2] == 5 && ref[3] == 6 && ref[6] == 1 && absref[2] >= 0);
}

static void test_exc02_both_directions(void)
{
    kcs_contract *c = ut_contract_load_id("C-EXC-02");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    kcs_case cs = {0};
    cs.op = KCS_OP_GATHER;
    cs.dtype_in = cs.dtype_out = KCS_FMT_FP32;
    cs.acc.fmt = KCS_FMT_FP32;
    cs.shape = c->shapes[0];
    cs.dist = KCS_DIST_NORMAL;
    int with = 0, without = 0;
    for (int t = 0; t < 8; t++) {
        kcs_call call = {0};
        call.op = cs.op;
        call.m = cs.shape.m;
        call.n = cs.shape.n;
        call.k = cs.shape.k;
        kcs_inputs in;
        kcs_error err = {0};
        CU_ASSERT_EQUAL_FATAL(kcs_inputs_make(c, &cs, t, 11, &call, &in, &err), 0);
        if (t % 2)
            without += in.oob_count == 0;
        else
            with += in.oob_count > 0;
        kcs_inputs_free(&in);
    }
    CU_ASSERT_EQUAL(without, 4);
    CU_ASSERT(with >= 3);
    kcs_contract_free(c);
}

/* C-PRC-02's offset inputs are not constant rows in any admitted format:
 * fp32 4096 + N(0, 1); bf16 and fp16 the two adjacent values 4096 and
 * 4096 + ulp in antithetic pairs, so every row of k >= 2 (rows start at
 * multiples of k: a row of even k holds whole pairs, one of odd k >= 3 at
 * least one) holds both, and the cancellation E[x^2] / var is 2^(2p). */
static void test_offset_not_degenerate(void)
{
    const kcs_format fs[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};
    for (size_t i = 0; i < 3; i++) {
        double x[64];
        kcs_fill(x, 64, KCS_DIST_OFFSET, fs[i], 5, 6, 7);
        int distinct = 0;
        double mean = 0, sq = 0;
        for (int j = 0; j < 64; j++) {
            int seen = 0;
            for (int l = 0; l < j; l++)
                seen |= x[l] == x[j];
            distinct += !seen;
            mean += x[j] / 64;
            sq += x[j] * x[j] / 64;
            CU_ASSERT(kcs_format_exact(fs[i], x[j]));
        }
        CU_ASSERT(fabs(mean - 4096.0) < 128.0);
        if (fs[i] == KCS_FMT_FP32) {
            CU_ASSERT(distinct >= 8);
            continue;
        }
        int p = kcs_format_get(fs[i])->p;
        double ulp = ldexp(4096.0, 1 - p);
        CU_ASSERT_EQUAL(distinct, 2);
        for (int j = 0; j < 64; j++)
            CU_ASSERT(x[j] == 4096.0 || x[j] == 4096.0 + ulp);
        for (int j = 0; j + 1 < 64; j += 2)
            CU_ASSERT(x[j] != x[j + 1]); /* every pair holds both values */
        for (int k = 2; k <= 9; k++) /* rows of every length: never constant */
            for (int r = 0; (r + 1) * k <= 64; r++) {
                int same = 1;
                for (int j = r * k + 1; j < (r + 1) * k; j++)
                    same &= x[j] == x[r * k];
                CU_ASSERT_FALSE(same);
            }
        /* var = ulp^2 / 4 over whole pairs, mean 4096 + ulp / 2:
         * E[x^2] / var = mean^2 / var + 1 = (2^p + 1)^2 + 1 */
        double var = sq - mean * mean, want = ldexp(1.0, p) + 1.0;
        CU_ASSERT(fabs(var - ulp * ulp / 4) < 1e-6 * ulp * ulp);
        CU_ASSERT(fabs(sq / var / (want * want + 1.0) - 1.0) < 1e-9);
    }
}

static const ut_test tests[] = {
    {"raises the semantics do not allow are violations", test_raises},
    {"oob=undefined rows are not judged", test_oob_undefined},
    {"C-EXC-02: trials with and without out-of-range indices", test_exc02_both_directions},
    {"offset inputs are not degenerate in bf16/fp16", test_offset_not_degenerate},
};

UT_MAIN("declared semantics", tests)
