/* Trial inputs (src/plan/inputs.c): bit-identical regeneration for the
 * same (study seed, case, tensor, trial) and different values when any of
 * them changes; each distribution's basic properties as contracts/README.md
 * states them (range, sign, offset, cancellation, subnormal range); every
 * value exactly representable in the declared input format (checked with
 * the formats' own definitions: significand bits, minimum normal exponent,
 * largest finite value; IEEE 754, bfloat16, OCP FP8); injected NaN / Inf
 * (either sign, +Inf only, -Inf only) / subnormal fractions in the first
 * input only; gather indices in range except the out-of-range fraction,
 * which is counted. Statistical bounds are at least 6 standard deviations
 * wide. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inputs.h"
#include "unit_helpers.h"

static kcs_contract *plain;

static kcs_case mkcase(kcs_op op, int64_t id, kcs_shape shape, kcs_format in, kcs_dist d)
{
    kcs_case cs;
    memset(&cs, 0, sizeof cs);
    cs.id = id;
    cs.op = op;
    cs.dtype_in = in;
    cs.dtype_out = KCS_FMT_FP32;
    cs.acc.fmt = KCS_FMT_FP32;
    cs.shape = shape;
    cs.dist = d;
    cs.trials = 1;
    return cs;
}

static int gen(const kcs_contract *c, const kcs_case *cs, int trial, uint64_t seed,
               kcs_inputs *in, kcs_call *call)
{
    memset(call, 0, sizeof *call);
    call->op = cs->op;
    call->dtype_in = cs->dtype_in;
    call->dtype_out = cs->dtype_out;
    call->m = cs->shape.m;
    call->n = cs->shape.n;
    call->k = cs->shape.k;
    call->batch = cs->shape.batch;
    kcs_error err = {0};
    int rc = kcs_inputs_make(c, cs, trial, seed, call, in, &err);
    if (rc)
        fprintf(stderr, "\n  inputs: %s\n", err.msg);
    return rc;
}

/* The definition of each format: p significand bits (with the implicit
 * one), minimum normal exponent, largest finite value. */
typedef struct fmt_def {
    kcs_format f;
    int p, emin;
    double max;
} fmt_def;

static const fmt_def defs[] = {
    {KCS_FMT_FP32, 24, -126, FLT_MAX},
    {KCS_FMT_TF32, 11, -126, 0x1.ffcp127},
    {KCS_FMT_BF16, 8, -126, 0x1.fep127},
    {KCS_FMT_FP16, 11, -14, 65504.0},
    {KCS_FMT_FP8_E4M3, 4, -6, 448.0},
    {KCS_FMT_FP8_E5M2, 3, -14, 57344.0},
};

/* x is a value of the format: on its grid and within its range. */
static int exact_in(const fmt_def *d, double x)
{
    if (x == 0.0)
        return 1;
    if (!isfinite(x) || fabs(x) > d->max)
        return 0;
    int e = ilogb(x);
    if (e < d->emin)
        e = d->emin; /* subnormals share the smallest normal binade's grid */
    double s = ldexp(x, d->p - 1 - e);
    return s == nearbyint(s);
}

static int same_bits(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

static void test_regeneration(void)
{
    const kcs_shape sh = {8, 8, 16, 0};
    kcs_case cs = mkcase(KCS_OP_GEMM, 3, sh, KCS_FMT_FP32, KCS_DIST_NORMAL);
    kcs_inputs a, b;
    kcs_call ca, cb;
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 2, 99, &a, &ca), 0);
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 2, 99, &b, &cb), 0);
    /* gemm: A m x k, B k x n, no C operand */
    CU_ASSERT_EQUAL(a.len[0], 8 * 16);
    CU_ASSERT_EQUAL(a.len[1], 16 * 8);
    CU_ASSERT_PTR_NULL(a.t[2]);
    CU_ASSERT(ca.in[0] == a.t[0] && ca.in_len[0] == a.len[0]);
    CU_ASSERT(ca.in[1] == a.t[1] && ca.in_len[1] == a.len[1]);
    CU_ASSERT(a.t[0] != b.t[0]); /* regenerated, not shared */
    CU_ASSERT(same_bits(a.t[0], b.t[0], a.len[0]));
    CU_ASSERT(same_bits(a.t[1], b.t[1], a.len[1]));
    CU_ASSERT_EQUAL(a.digest, b.digest);
    /* the two tensors of one trial are different draws */
    CU_ASSERT(!same_bits(a.t[0], a.t[1], a.len[0]));

    /* any key changed: other values, another digest */
    struct {
        const char *what;
        int64_t id;
        int trial;
        uint64_t seed;
    } keys[] = {{"study seed", 3, 2, 100}, {"case", 4, 2, 99}, {"trial", 3, 3, 99},
                {"trial 0", 3, 0, 99}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        kcs_case other = cs;
        other.id = keys[i].id;
        kcs_inputs o;
        kcs_call co;
        CU_ASSERT_EQUAL_FATAL(gen(plain, &other, keys[i].trial, keys[i].seed, &o, &co), 0);
        int differ = !same_bits(a.t[0], o.t[0], a.len[0]) && !same_bits(a.t[1], o.t[1], a.len[1]);
        if (!differ)
            fprintf(stderr, "\n  another %s gave the same inputs", keys[i].what);
        CU_ASSERT(differ);
        CU_ASSERT(o.digest != a.digest);
        kcs_inputs_free(&o);
    }
    /* the case seed (a contract's `seed` mixed in) is the kernel's, not the inputs' key */
    kcs_case reseeded = cs;
    reseeded.seed ^= 0xabcdef;
    kcs_inputs r;
    kcs_call cr;
    CU_ASSERT_EQUAL_FATAL(gen(plain, &reseeded, 2, 99, &r, &cr), 0);
    CU_ASSERT(same_bits(a.t[0], r.t[0], a.len[0]));
    kcs_inputs_free(&r);
    kcs_inputs_free(&a);
    kcs_inputs_free(&b);
    CU_ASSERT_PTR_NULL(a.t[0]);
}

typedef struct stats {
    double mean, var, min, max, amin; /* amin: smallest nonzero |x| */
    size_t neg, pos, zero, nonfinite;
} stats;

static stats stats_of(const double *x, size_t n)
{
    stats s = {0, 0, INFINITY, -INFINITY, INFINITY, 0, 0, 0, 0};
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            s.nonfinite++;
            continue;
        }
        sum += x[i];
        sq += x[i] * x[i];
        s.min = fmin(s.min, x[i]);
        s.max = fmax(s.max, x[i]);
        if (x[i] != 0)
            s.amin = fmin(s.amin, fabs(x[i]));
        s.neg += x[i] < 0;
        s.pos += x[i] > 0;
        s.zero += x[i] == 0;
    }
    s.mean = sum / (double)n;
    s.var = sq / (double)n - s.mean * s.mean;
    return s;
}

/* 4096 fp32 values of each distribution (reduce_sum, 64 rows of 64). */
static void test_distributions(void)
{
    const size_t n = 4096;
    for (int d = 0; d < KCS_DIST_COUNT; d++) {
        kcs_case cs = mkcase(KCS_OP_REDUCE_SUM, 7, (kcs_shape){64, 1, 64, 0}, KCS_FMT_FP32,
                             (kcs_dist)d);
        kcs_inputs in;
        kcs_call call;
        CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 0, 1234, &in, &call), 0);
        CU_ASSERT_EQUAL_FATAL(in.len[0], n);
        const double *x = in.t[0];
        stats s = stats_of(x, n);
        CU_ASSERT_EQUAL(s.nonfinite, 0);
        const double sd_mean = 1.0 / sqrt((double)n); /* of a unit-variance mean */
        switch ((kcs_dist)d) {
        case KCS_DIST_NORMAL: /* N(0, 1) */
            CU_ASSERT(fabs(s.mean) < 6 * sd_mean);
            CU_ASSERT(fabs(s.var - 1.0) < 6 * sqrt(2.0 / (double)n));
            CU_ASSERT(s.neg > 0 && s.pos > 0);
            break;
        case KCS_DIST_UNIFORM_PM1: /* U(-1, 1): mean 0, variance 1/3 */
            CU_ASSERT(s.min >= -1.0 && s.max <= 1.0);
            CU_ASSERT(fabs(s.mean) < 6 * sd_mean);
            CU_ASSERT(fabs(s.var - 1.0 / 3.0) < 0.05);
            break;
        case KCS_DIST_WIDE_RANGE: { /* random sign x 2^e over many binades */
            CU_ASSERT(s.neg > n / 4 && s.pos > n / 4);
            CU_ASSERT(s.zero == 0);
            double lo = INFINITY, hi = 0;
            for (size_t i = 0; i < n; i++) {
                lo = fmin(lo, fabs(x[i]));
                hi = fmax(hi, fabs(x[i]));
            }
            CU_ASSERT(log2(hi / lo) > 16.0);
            break;
        }
        case KCS_DIST_CANCELLATION: { /* pairs of large values of opposite sign + small part */
            double sum = 0, sum_abs = 0;
            for (size_t i = 0; i + 1 < n; i += 2) {
                CU_ASSERT((x[i] > 0) != (x[i + 1] > 0));
                CU_ASSERT(fabs(x[i] + x[i + 1]) < 0.25 * fabs(x[i]));
                sum += x[i] + x[i + 1];
                sum_abs += fabs(x[i]) + fabs(x[i + 1]);
            }
            CU_ASSERT(fabs(sum) < 0.01 * sum_abs); /* the sum cancels */
            break;
        }
        case KCS_DIST_LARGE: /* random sign x U[64, 128) */
            for (size_t i = 0; i < n; i++)
                CU_ASSERT(fabs(x[i]) >= 64.0 && fabs(x[i]) <= 128.0);
            CU_ASSERT(s.neg > n / 4 && s.pos > n / 4);
            break;
        case KCS_DIST_OFFSET: /* 4096 + N(0, 1) */
            CU_ASSERT(fabs(s.mean - 4096.0) < 6 * sd_mean + 0.01);
            CU_ASSERT(fabs(s.var - 1.0) < 0.15);
            CU_ASSERT(s.min > 4096.0 - 8 && s.max < 4096.0 + 8);
            break;
        case KCS_DIST_SUBNORMAL: /* random sign x U(0, 2^emin): below fp32's smallest normal */
            CU_ASSERT(s.max < FLT_MIN && s.min > -FLT_MIN);
            CU_ASSERT(s.zero < n / 100);
            CU_ASSERT(s.neg > n / 4 && s.pos > n / 4);
            break;
        case KCS_DIST_POSITIVE: /* |N(0, 1)|: mean sqrt(2/pi) */
            CU_ASSERT(s.min >= 0.0);
            CU_ASSERT(fabs(s.mean - sqrt(2.0 / M_PI)) < 6 * sd_mean);
            break;
        case KCS_DIST_EXACT: /* exact-sum inputs: nonzero integers (inputs_exact.c) */
            CU_ASSERT(s.zero == 0);
            CU_ASSERT(s.min == floor(s.min) && s.max == floor(s.max));
            break;
        case KCS_DIST_SPREAD: { /* random sign x 2^U(-12, 12) */
            CU_ASSERT(s.neg > n / 4 && s.pos > n / 4);
            size_t bins[24] = {0};
            for (size_t i = 0; i < n; i++) {
                double a = fabs(x[i]);
                CU_ASSERT_FATAL(a >= ldexp(1.0, -12) && a <= ldexp(1.0, 12));
                int e = (int)floor(log2(a)) + 12;
                bins[e < 23 ? e : 23]++;
            }
            for (int e = 0; e < 24; e++) /* every binade holds about n / 24 */
                CU_ASSERT(bins[e] > n / 48 && bins[e] < n / 12);
            break;
        }
        default:
            CU_FAIL("a distribution this test does not know");
        }
        kcs_inputs_free(&in);
    }
}

/* What spread inputs are for: with bf16 inputs, a 16-term dot product
 * summed in fp32 forwards and backwards gives different bits in most
 * outputs (normal inputs: in few of them), so an order change shows. */
static int order_sensitive_outputs(kcs_dist d)
{
    kcs_case cs = mkcase(KCS_OP_GEMM, 13, (kcs_shape){32, 32, 16, 0}, KCS_FMT_BF16, d);
    kcs_inputs in;
    kcs_call call;
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 0, 77, &in, &call), 0);
    int differ = 0;
    for (int i = 0; i < 32; i++)
        for (int j = 0; j < 32; j++) {
            float fwd = 0.0f, bwd = 0.0f;
            for (int p = 0; p < 16; p++) {
                fwd += (float)(in.t[0][i * 16 + p] * in.t[1][p * 32 + j]);
                bwd += (float)(in.t[0][i * 16 + 15 - p] * in.t[1][(15 - p) * 32 + j]);
            }
            differ += fwd != bwd;
        }
    kcs_inputs_free(&in);
    return differ;
}

static void test_spread_order_sensitive(void)
{
    int spread = order_sensitive_outputs(KCS_DIST_SPREAD);
    int normal = order_sensitive_outputs(KCS_DIST_NORMAL);
    CU_ASSERT(spread > 1024 / 2);
    CU_ASSERT(spread > 2 * normal);
}

/* Every generated value lies on the declared format's grid. */
static void test_exact_in_format(void)
{
    /* the grid check itself, on values next to each format's limits */
    CU_ASSERT(exact_in(&defs[0], 1 + ldexp(1.0, -23)) && !exact_in(&defs[0], 1 + ldexp(1.0, -24)));
    CU_ASSERT(exact_in(&defs[2], 1 + ldexp(1.0, -7)) && !exact_in(&defs[2], 1 + ldexp(1.0, -8)));
    CU_ASSERT(exact_in(&defs[3], ldexp(1.0, -24)) && !exact_in(&defs[3], ldexp(1.0, -25)));
    CU_ASSERT(exact_in(&defs[3], 65504.0) && !exact_in(&defs[3], 65536.0));
    CU_ASSERT(exact_in(&defs[4], 448.0) && !exact_in(&defs[4], 480.0));
    CU_ASSERT(exact_in(&defs[4], ldexp(1.0, -9)) && !exact_in(&defs[4], ldexp(1.0, -10)));
    for (size_t f = 0; f < sizeof defs / sizeof defs[0]; f++) {
        for (int d = 0; d < KCS_DIST_COUNT; d++) {
            kcs_case cs = mkcase(KCS_OP_GEMM, 11, (kcs_shape){16, 16, 32, 0}, defs[f].f,
                                 (kcs_dist)d);
            kcs_inputs in;
            kcs_call call;
            CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 1, 5, &in, &call), 0);
            size_t bad = 0, nonfinite = 0, subnormal = 0;
            for (int t = 0; t < 2; t++)
                for (size_t i = 0; i < in.len[t]; i++) {
                    double v = in.t[t][i];
                    if (!isfinite(v)) {
                        nonfinite++;
                        continue;
                    }
                    bad += !exact_in(&defs[f], v);
                    subnormal += v != 0 && fabs(v) < ldexp(1.0, defs[f].emin);
                }
            if (bad)
                fprintf(stderr, "\n  %s / %s: %zu values off the format's grid",
                        kcs_format_name(defs[f].f), kcs_dist_name((kcs_dist)d), bad);
            CU_ASSERT_EQUAL(bad, 0);
            /* 4096 + N(0, 1) is beyond fp8_e4m3's range (448): the one
             * combination whose values cannot all be finite */
            if (!(d == KCS_DIST_OFFSET && defs[f].max < 4096))
                CU_ASSERT_EQUAL(nonfinite, 0);
            if (d == KCS_DIST_SUBNORMAL) /* in this format's subnormal range */
                CU_ASSERT(subnormal > (in.len[0] + in.len[1]) / 2);
            kcs_inputs_free(&in);
        }
    }
}

/* NaN, Inf and subnormal fractions go into the first input only. */
static void test_special_values(void)
{
    ut_contract s = {.finite = "false",
                     .extra = "  special: { nan: 0.1, inf: 0.05, subnormal: 0.1 }\n"};
    kcs_contract *c = ut_contract_load(&s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const fmt_def *bf16 = &defs[2];
    kcs_case cs = mkcase(KCS_OP_GEMM, 2, (kcs_shape){64, 64, 64, 0}, bf16->f, KCS_DIST_NORMAL);
    kcs_inputs in;
    kcs_call call;
    CU_ASSERT_EQUAL_FATAL(gen(c, &cs, 0, 77, &in, &call), 0);
    for (int t = 0; t < 2; t++) {
        size_t n = in.len[t], nan = 0, pinf = 0, ninf = 0, sub = 0, off_grid = 0;
        for (size_t i = 0; i < n; i++) {
            double v = in.t[t][i];
            nan += isnan(v);
            pinf += isinf(v) && v > 0;
            ninf += isinf(v) && v < 0;
            sub += isfinite(v) && v != 0 && fabs(v) < ldexp(1.0, bf16->emin);
            off_grid += isfinite(v) && !exact_in(bf16, v);
        }
        double fn = (double)n;
        CU_ASSERT_EQUAL(off_grid, 0);
        if (t == 0) {
            CU_ASSERT(fabs(nan / fn - 0.1) < 6 * sqrt(0.1 * 0.9 / fn));
            CU_ASSERT(fabs((pinf + ninf) / fn - 0.05) < 6 * sqrt(0.05 * 0.95 / fn));
            CU_ASSERT(pinf > 0 && ninf > 0);
            CU_ASSERT(fabs(sub / fn - 0.1) < 6 * sqrt(0.1 * 0.9 / fn));
        } else {
            CU_ASSERT_EQUAL(nan + pinf + ninf + sub, 0);
        }
    }
    kcs_inputs_free(&in);
    kcs_contract_free(c);
}

/* pinf and ninf inject one sign each, at their own fractions, beside the
 * either-sign inf; a contract with pinf only never gets -Inf (and ninf
 * only never +Inf), over several trials and input formats. */
static void count_signs(const kcs_contract *c, kcs_format f, int trials, size_t *n_p,
                        size_t *pinf_p, size_t *ninf_p, size_t *nan_p)
{
    *n_p = *pinf_p = *ninf_p = *nan_p = 0;
    for (int t = 0; t < trials; t++) {
        kcs_case cs = mkcase(KCS_OP_GEMM, 3 + t, (kcs_shape){64, 64, 64, 0}, f, KCS_DIST_NORMAL);
        kcs_inputs in;
        kcs_call call;
        CU_ASSERT_EQUAL_FATAL(gen(c, &cs, t, 91, &in, &call), 0);
        for (size_t i = 0; i < in.len[0]; i++) {
            double v = in.t[0][i];
            *pinf_p += isinf(v) && v > 0;
            *ninf_p += isinf(v) && v < 0;
            *nan_p += isnan(v);
        }
        for (size_t i = 0; i < in.len[1]; i++)
            CU_ASSERT(isfinite(in.t[1][i])); /* the first input only */
        *n_p += in.len[0];
        kcs_inputs_free(&in);
    }
}

static void test_signed_infinities(void)
{
    const kcs_format fmts[] = {KCS_FMT_FP32, KCS_FMT_BF16, KCS_FMT_FP16};
    struct {
        const char *extra;
        double pinf, ninf; /* expected fractions of +Inf and -Inf */
    } cases[] = {
        {"  special: { pinf: 0.05 }\n", 0.05, 0.0},
        {"  special: { ninf: 0.2 }\n", 0.0, 0.2},
        {"  special: { pinf: 0.03, ninf: 0.12 }\n", 0.03, 0.12},
        /* inf: either sign, half each, added to the signed fractions */
        {"  special: { inf: 0.1, pinf: 0.02, nan: 0.05 }\n", 0.07, 0.05},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ut_contract s = {.finite = "false", .extra = cases[k].extra};
        kcs_contract *c = ut_contract_load(&s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
            size_t n, pinf, ninf, nan;
            count_signs(c, fmts[f], 4, &n, &pinf, &ninf, &nan);
            double fn = (double)n, pe = cases[k].pinf, ne = cases[k].ninf;
            if (pe == 0.0)
                CU_ASSERT_EQUAL(pinf, 0);
            if (ne == 0.0)
                CU_ASSERT_EQUAL(ninf, 0);
            CU_ASSERT(fabs(pinf / fn - pe) <= 6 * sqrt(pe * (1 - pe) / fn));
            CU_ASSERT(fabs(ninf / fn - ne) <= 6 * sqrt(ne * (1 - ne) / fn));
            CU_ASSERT(fabs(nan / fn - c->special_nan) <=
                      6 * sqrt(c->special_nan * (1 - c->special_nan) / fn));
        }
        kcs_contract_free(c);
    }
}

/* Gather: a table m x k and n integer indices, uniform over [0, m), a
 * fraction out of range on either side, counted in oob_count. */
static void test_gather_indices(void)
{
    const int64_t m = 50, n = 2000, k = 4;
    const double fracs[] = {0.0, 0.1};
    for (int f = 0; f < 2; f++) {
        char extra[64] = "";
        if (fracs[f] > 0)
            snprintf(extra, sizeof extra, "  special: { oob: %g }\n", fracs[f]);
        ut_contract s = {.id = "C-EXC-90", .ops = "gather", .extra = extra};
        kcs_contract *c = ut_contract_load(&s);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        kcs_case cs = mkcase(KCS_OP_GATHER, 9, (kcs_shape){m, n, k, 0}, KCS_FMT_FP32,
                             KCS_DIST_NORMAL);
        kcs_inputs in;
        kcs_call call;
        /* odd trials hold no out-of-range index (C-EXC-02 sees both
         * directions in every run) */
        CU_ASSERT_EQUAL_FATAL(gen(c, &cs, 1, 31, &in, &call), 0);
        CU_ASSERT_EQUAL(in.oob_count, 0);
        kcs_inputs_free(&in);
        /* trials 2 mod 4 hold one out-of-range index, at a boundary */
        CU_ASSERT_EQUAL_FATAL(gen(c, &cs, 2, 31, &in, &call), 0);
        int64_t lone = 0, edge = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = in.t[1][i];
            lone += v < 0 || v >= (double)m;
            edge += v == (double)m; /* trial 2: the upper boundary */
        }
        CU_ASSERT_EQUAL(in.oob_count, fracs[f] > 0 ? 1 : 0);
        CU_ASSERT_EQUAL(lone, fracs[f] > 0 ? 1 : 0);
        CU_ASSERT_EQUAL(edge, lone);
        kcs_inputs_free(&in);
        CU_ASSERT_EQUAL_FATAL(gen(c, &cs, 4, 31, &in, &call), 0);
        CU_ASSERT_EQUAL(in.len[0], (size_t)(m * k));
        CU_ASSERT_EQUAL_FATAL(in.len[1], (size_t)n);
        int64_t below = 0, above = 0, hit[50] = {0};
        for (int64_t i = 0; i < n; i++) {
            double v = in.t[1][i];
            CU_ASSERT(v == floor(v));
            if (v < 0)
                below++;
            else if (v >= (double)m)
                above++;
            else
                hit[(int)v]++;
        }
        CU_ASSERT_EQUAL(in.oob_count, below + above);
        if (fracs[f] == 0) {
            CU_ASSERT_EQUAL(below + above, 0);
            /* 2000 uniform draws over 50 values: each is hit */
            for (int j = 0; j < m; j++)
                CU_ASSERT(hit[j] > 0);
        } else {
            double p = fracs[f], got = (double)(below + above) / (double)n;
            CU_ASSERT(fabs(got - p) < 6 * sqrt(p * (1 - p) / (double)n));
            CU_ASSERT(below > 0 && above > 0);
        }
        kcs_inputs_free(&in);
        kcs_contract_free(c);
    }
}

/* Shapes per op (contracts/README.md, scope table). */
static void test_lengths(void)
{
    kcs_inputs in;
    kcs_call call;
    kcs_case cs = mkcase(KCS_OP_BATCHED_GEMM, 1, (kcs_shape){3, 5, 7, 2}, KCS_FMT_FP32,
                         KCS_DIST_NORMAL);
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 0, 1, &in, &call), 0);
    CU_ASSERT_EQUAL(in.len[0], 2 * 3 * 7);
    CU_ASSERT_EQUAL(in.len[1], 2 * 7 * 5);
    kcs_inputs_free(&in);
    cs = mkcase(KCS_OP_DOT, 1, (kcs_shape){1, 1, 33, 0}, KCS_FMT_FP32, KCS_DIST_NORMAL);
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 0, 1, &in, &call), 0);
    CU_ASSERT(in.len[0] == 33 && in.len[1] == 33);
    CU_ASSERT(!same_bits(in.t[0], in.t[1], 33));
    kcs_inputs_free(&in);
    cs = mkcase(KCS_OP_LAYERNORM, 1, (kcs_shape){4, 1, 1024, 0}, KCS_FMT_FP32,
                KCS_DIST_OFFSET);
    CU_ASSERT_EQUAL_FATAL(gen(plain, &cs, 0, 1, &in, &call), 0);
    CU_ASSERT(in.len[0] == 4 * 1024 && in.len[1] == 1024 && in.len[2] == 1024);
    /* x follows the case's distribution; gamma and beta a benign scale and shift */
    CU_ASSERT(fabs(stats_of(in.t[0], in.len[0]).mean - 4096.0) < 1.0);
    CU_ASSERT(fabs(stats_of(in.t[1], 1024).mean - 1.0) < 0.1);
    CU_ASSERT(fabs(stats_of(in.t[2], 1024).mean) < 0.1);
    kcs_inputs_free(&in);
}

static const ut_test tests[] = {
    {"same key: same bits; other key: other values", test_regeneration},
    {"distributions' properties", test_distributions},
    {"spread inputs: a sum's bits depend on its order", test_spread_order_sensitive},
    {"values exact in the declared format", test_exact_in_format},
    {"special values in the first input", test_special_values},
    {"+Inf and -Inf injected separately", test_signed_infinities},
    {"gather indices and oob_count", test_gather_indices},
    {"lengths per op", test_lengths},
};

int main(void)
{
    ut_contract s = {.ops = "gemm, batched_gemm, reduce_sum, dot, layernorm",
                     .dtype_in = "[fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2]"};
    plain = ut_contract_load(&s);
    if (!plain)
        return 1;
    int rc = ut_run("inputs", tests);
    kcs_contract_free(plain);
    return rc;
}
