/* The elementwise op's functions (src/arith/elementwise.c), its fp64
 * reference against MPFR, the oracle's overflow and absref rules
 * (src/judge/oracle_elementwise.c) and the CPU kernels (native, own). */
#include <CUnit/Basic.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "backend.h"
#include "elementwise.h"
#include "format.h"
#include "oracle.h"
#include "rng.h"
#include "tensor.h"
#include "unit_helpers.h"

extern const kcs_backend_ops kcs_backend_cpu;

static void test_names(void)
{
    kcs_error err = {0};
    kcs_ew_fn f = KCS_EW_RSQRT;
    CU_ASSERT_EQUAL(kcs_ew_fn_of("", &f, &err), 0);
    CU_ASSERT_EQUAL(f, KCS_EW_EXP); /* absent: exp */
    CU_ASSERT_EQUAL(kcs_ew_fn_of(NULL, &f, &err), 0);
    CU_ASSERT_EQUAL(f, KCS_EW_EXP);
    for (int i = 0; i < KCS_EW_COUNT; i++) {
        char a[64];
        snprintf(a, sizeof a, "nan=propagate;fn=%s", kcs_ew_name((kcs_ew_fn)i));
        CU_ASSERT_EQUAL(kcs_ew_fn_of(a, &f, &err), 0);
        CU_ASSERT_EQUAL(f, (kcs_ew_fn)i);
    }
    CU_ASSERT_EQUAL(kcs_ew_fn_of("fn=erf", &f, &err), KCS_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "gelu_tanh"));
    CU_ASSERT_EQUAL(kcs_ew_fn_of("fn", &f, &err), KCS_E_INVAL);
    CU_ASSERT_EQUAL(kcs_op_n_inputs(KCS_OP_ELEMENTWISE), 1);
    kcs_call c = {.op = KCS_OP_ELEMENTWISE, .m = 3, .n = 7, .k = 5};
    CU_ASSERT_EQUAL(kcs_op_in_len(&c, 0), 15);
    CU_ASSERT_EQUAL(kcs_op_in_len(&c, 1), 0);
    CU_ASSERT_EQUAL(kcs_op_out_len(&c), 15);
    kcs_op op;
    CU_ASSERT_EQUAL(kcs_op_parse("elementwise", &op), 0);
    CU_ASSERT_EQUAL(op, KCS_OP_ELEMENTWISE);
}

/* f(x) by MPFR at 2048 bits from the literal definitions (elementwise.h),
 * with the exact constants: gelu_tanh through 1 + tanh (2048 bits resolve
 * 1 + tanh(z) down to e^-1300), silu as x / (1 + e^-x). */
static double mp_ref(kcs_ew_fn f, double xd)
{
    mpfr_t x, t, u, c;
    mpfr_inits2(2048, x, t, u, c, (mpfr_ptr)0);
    mpfr_set_d(x, xd, MPFR_RNDN);
    switch (f) {
    case KCS_EW_EXP: mpfr_exp(t, x, MPFR_RNDN); break;
    case KCS_EW_TANH: mpfr_tanh(t, x, MPFR_RNDN); break;
    case KCS_EW_RSQRT: mpfr_rec_sqrt(t, x, MPFR_RNDN); break;
    case KCS_EW_SILU:
        mpfr_neg(t, x, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_div(t, x, t, MPFR_RNDN);
        break;
    case KCS_EW_GELU_TANH:
        mpfr_const_pi(c, MPFR_RNDN);
        mpfr_ui_div(c, 2, c, MPFR_RNDN);
        mpfr_sqrt(c, c, MPFR_RNDN); /* sqrt(2/pi) */
        mpfr_set_str(u, "0.044715", 10, MPFR_RNDN);
        mpfr_pow_ui(t, x, 3, MPFR_RNDN);
        mpfr_mul(t, t, u, MPFR_RNDN);
        mpfr_add(t, t, x, MPFR_RNDN);
        mpfr_mul(t, t, c, MPFR_RNDN);
        mpfr_tanh(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_mul(t, t, x, MPFR_RNDN);
        mpfr_div_2ui(t, t, 1, MPFR_RNDN);
        break;
    default: mpfr_set_nan(t);
    }
    double r = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clears(x, t, u, c, (mpfr_ptr)0);
    return r;
}

/* Random fp32 arguments over each function's interesting range. */
static double arg(kcs_ew_fn f, kcs_rng *r)
{
    double v;
    if (f == KCS_EW_RSQRT) /* log-uniform over fp32's normal and subnormal range */
        v = ldexp(1.0 + kcs_rng_uniform(r), (int)(kcs_rng_uniform(r) * 276.0) - 149);
    else if (f == KCS_EW_EXP) /* every x whose e^x is a nonzero fp32 value */
        v = -103.9 + 192.6 * kcs_rng_uniform(r);
    else
        v = 24.0 * (kcs_rng_uniform(r) - 0.5) * (kcs_rng_uniform(r) < 0.5 ? 1.0 : 0.1);
    return (double)(float)v;
}

static void test_reference_mpfr(void)
{
    kcs_rng r;
    kcs_rng_init(&r, 7, 0xe1e, 0);
    for (int fi = 0; fi < KCS_EW_COUNT; fi++) {
        kcs_ew_fn f = (kcs_ew_fn)fi;
        double worst = 0.0, worst_x = 0.0;
        int n = 0;
        for (int i = 0; i < 4000; i++) {
            double x = arg(f, &r), want = mp_ref(f, x), got = kcs_ew_ref(f, x);
            if (fabs(want) < 0x1p-1000) /* below the normal range of double */
                continue;
            n++;
            double e = fabs(got - want) / fabs(want);
            if (e > worst) {
                worst = e;
                worst_x = x;
            }
        }
        printf("\n  %-9s %d points, max relative error of the double reference %.3g (2^%.1f) "
               "at x = %.9g", kcs_ew_name(f), n, worst, worst > 0 ? log2(worst) : -INFINITY,
               worst_x);
        CU_ASSERT(n > 3000);
        CU_ASSERT(worst <= 0x1p-40);
    }
}

static void test_reference_special(void)
{
    CU_ASSERT_EQUAL(kcs_ew_ref(KCS_EW_EXP, -INFINITY), 0.0);
    CU_ASSERT(isinf(kcs_ew_ref(KCS_EW_EXP, INFINITY)));
    CU_ASSERT_EQUAL(kcs_ew_ref(KCS_EW_TANH, -INFINITY), -1.0);
    CU_ASSERT_EQUAL(kcs_ew_ref(KCS_EW_TANH, INFINITY), 1.0);
    for (int f = KCS_EW_SILU; f <= KCS_EW_GELU_TANH; f++) {
        double y = kcs_ew_ref((kcs_ew_fn)f, -INFINITY);
        CU_ASSERT(y == 0.0 && signbit(y)); /* the limit, -0, not Inf / Inf */
        CU_ASSERT(isinf(kcs_ew_ref((kcs_ew_fn)f, INFINITY)) &&
                  kcs_ew_ref((kcs_ew_fn)f, INFINITY) > 0);
        y = kcs_ew_ref((kcs_ew_fn)f, -1e200); /* x^3 overflows: still the limit */
        CU_ASSERT(y == 0.0 && signbit(y));
        CU_ASSERT_EQUAL(kcs_ew_ref((kcs_ew_fn)f, 1e200), 1e200);
    }
    CU_ASSERT(isinf(kcs_ew_ref(KCS_EW_RSQRT, 0.0)) && kcs_ew_ref(KCS_EW_RSQRT, 0.0) > 0);
    CU_ASSERT(isinf(kcs_ew_ref(KCS_EW_RSQRT, -0.0)) && kcs_ew_ref(KCS_EW_RSQRT, -0.0) < 0);
    CU_ASSERT(isnan(kcs_ew_ref(KCS_EW_RSQRT, -1.0)));
    CU_ASSERT_EQUAL(kcs_ew_ref(KCS_EW_RSQRT, INFINITY), 0.0);
    for (int f = 0; f < KCS_EW_COUNT; f++)
        CU_ASSERT(isnan(kcs_ew_ref((kcs_ew_fn)f, NAN)));
}

/* The oracle: overflow beyond dtype_out is +-Inf, underflow below half its
 * smallest subnormal 0, absref = max(|f|, lambda). */
static void test_oracle(void)
{
    double x[6] = {100.0, 88.0, -100.0, -200.0, NAN, 0.5};
    double ref[6], absref[6], scale = 0.0;
    kcs_call c = {.op = KCS_OP_ELEMENTWISE, .dtype_in = KCS_FMT_FP32, .dtype_out = KCS_FMT_FP32,
                  .m = 2, .k = 3, .attrs = "fn=exp"};
    c.in[0] = x;
    kcs_error err = {0};
    CU_ASSERT_FATAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, &c, ref, absref, &scale, &err) == 0);
    CU_ASSERT(isinf(ref[0]) && ref[0] > 0);     /* e^100 > FLT_MAX: correctly rounded, Inf */
    CU_ASSERT_EQUAL(ref[1], exp(88.0));         /* finite in fp32: not rounded */
    CU_ASSERT_EQUAL(ref[2], exp(-100.0));       /* subnormal in fp32: kept */
    CU_ASSERT_EQUAL(absref[2], FLT_MIN);        /* ... and measured against lambda */
    CU_ASSERT_EQUAL(absref[1], exp(88.0));
    CU_ASSERT_EQUAL(ref[3], 0.0);               /* e^-200 < 2^-150: rounds to 0 */
    CU_ASSERT(isnan(ref[4]));
    CU_ASSERT(isfinite(scale) && scale > exp(88.0) * 0.99);
    c.dtype_out = KCS_FMT_FP64; /* the same value fits an fp64 output */
    c.dtype_in = KCS_FMT_FP64;
    CU_ASSERT_FATAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, &c, ref, absref, &scale, &err) == 0);
    CU_ASSERT_EQUAL(ref[0], exp(100.0));
    c.attrs = "fn=cbrt";
    CU_ASSERT_EQUAL(kcs_oracle_run(KCS_ORACLE_FP64, NULL, &c, ref, absref, &scale, &err),
                    KCS_E_INVAL);
}

/* gelu_tanh's inner argument s = 2 c0 (x + c1 x^3) (elementwise.h). */
static double gelu_s(double x)
{
    return 2.0 * KCS_EW_GELU_C0 * (x + KCS_EW_GELU_C1 * x * x * x);
}

/* The bound of the own kernel at x in fp32 ulps (the count
 * kcs_format_ulp_distance gives against the reference; a relative error
 * r u is at most r + 1/2 of them). exp: glibc's expf, under 1 ulp; tanh:
 * glibc's tanhf, 2 ulp (its libm-test-ulps), so at most 4 of them below a
 * power of two; rsqrt: two roundings; silu: expf, the add and the
 * divide, 4 u; gelu_tanh: s from the fp32 constants and four roundings
 * (x^3 two, the product with c1, the add: same signs, no cancellation, the
 * product with c0) has relative error 6 u, i.e. absolute 6 u |s|, which
 * e^-s turns into a relative one, plus expf, the add and the divide:
 * (6 |s| + 3) u. */
static double own_bound(kcs_ew_fn f, double x)
{
    switch (f) {
    case KCS_EW_TANH:
    case KCS_EW_SILU: return 4.5;
    case KCS_EW_GELU_TANH: return 6.0 * fabs(gelu_s(x)) + 3.5;
    default: return 2.0;
    }
}

/* The CPU kernel on n fp32 arguments drawn from [lo, hi): the largest
 * ulp count over the bound at each x (bound NULL: the count itself). */
static double cpu_worst(kcs_ew_fn f, const char *variant, double lo, double hi, int n,
                        double (*bound)(kcs_ew_fn, double))
{
    static double x[4096];
    kcs_rng r;
    kcs_rng_init(&r, 11, (uint64_t)f, (uint64_t)(lo * 1000));
    for (int i = 0; i < n; i++)
        x[i] = (double)(float)(lo + (hi - lo) * kcs_rng_uniform(&r));
    char attrs[32];
    snprintf(attrs, sizeof attrs, "fn=%s", kcs_ew_name(f));
    kcs_call c = {.op = KCS_OP_ELEMENTWISE, .variant = variant, .dtype_in = KCS_FMT_FP32,
                  .dtype_out = KCS_FMT_FP32, .m = 1, .k = n, .attrs = attrs};
    c.in[0] = x;
    c.in_len[0] = (size_t)n;
    kcs_error err = {0};
    kcs_tensor t;
    c.out_len = (size_t)n;
    CU_ASSERT_FATAL(kcs_tensor_alloc(&t, c.out_len, c.dtype_out, &err) == 0);
    c.out = t.data;
    kcs_backend_ctx *ctx = NULL;
    CU_ASSERT_FATAL(kcs_backend_cpu.open(0, NULL, &ctx, &err) == 0);
    CU_ASSERT_FATAL(kcs_backend_cpu.run(ctx, &c, &err) == 0);
    CU_ASSERT(kcs_tensor_guards_ok(&t));
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double u = kcs_format_ulp_distance(KCS_FMT_FP32, c.out[i], kcs_ew_ref(f, x[i]));
        worst = fmax(worst, bound ? u / bound(f, x[i]) : u);
    }
    kcs_backend_cpu.close(ctx);
    kcs_tensor_free(&t);
    return worst;
}

static void test_cpu_kernels(void)
{
    for (int fi = 0; fi < KCS_EW_COUNT; fi++) {
        kcs_ew_fn f = (kcs_ew_fn)fi;
        double lo = f == KCS_EW_RSQRT ? 1e-6 : f == KCS_EW_EXP ? -87.0 : -8.0;
        double hi = f == KCS_EW_RSQRT ? 1e6 : f == KCS_EW_EXP ? 88.0 : 8.0;
        double own = cpu_worst(f, "own", lo, hi, 4096, NULL);
        double ratio = cpu_worst(f, "own", lo, hi, 4096, own_bound);
        printf("\n  %-9s own: %.0f ulp (%.2f of its bound)", kcs_ew_name(f), own, ratio);
        CU_ASSERT(ratio <= 1.0);
        if (f != KCS_EW_GELU_TANH) { /* native = own's formula but for gelu_tanh */
            double nat = cpu_worst(f, "native", lo, hi, 4096, own_bound);
            CU_ASSERT(nat <= 1.0);
        }
    }
    /* native gelu_tanh, 0.5 x (1 + tanh z): where z >= -2.6 the 1 + tanh
     * keeps at least 2^-6 of the 1 and the formula is within (6|s| + 3.5)
     * 2^6 ulp; below, tanhf's rounding near -1 surfaces as relative
     * error, and from z below -9.01 tanhf is -1 exactly and the output 0
     * (about 2^29 fp32 values from the exact result at x = -6) */
    double nat_hi = cpu_worst(KCS_EW_GELU_TANH, "native", -2.0, 8.0, 4096, NULL);
    double nat_hi_r = cpu_worst(KCS_EW_GELU_TANH, "native", -2.0, 8.0, 4096, own_bound);
    double nat_lo = cpu_worst(KCS_EW_GELU_TANH, "native", -7.0, -4.0, 4096, NULL);
    double own_lo = cpu_worst(KCS_EW_GELU_TANH, "own", -7.0, -4.0, 4096, NULL);
    printf("\n  gelu_tanh native: %.0f ulp on [-2, 8), %.3g ulp on [-7, -4) (own %.0f)", nat_hi,
           nat_lo, own_lo);
    CU_ASSERT(nat_hi_r <= 64.0);
    CU_ASSERT(nat_lo > 1e6);
}

static const ut_test tests[] = {
    {"names and attrs", test_names},
    {"fp64 reference against MPFR", test_reference_mpfr},
    {"limits and special values", test_reference_special},
    {"oracle: overflow and absref", test_oracle},
    {"cpu kernels native and own", test_cpu_kernels},
};

UT_MAIN("elementwise", tests)
