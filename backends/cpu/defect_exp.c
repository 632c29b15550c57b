/* Elementwise exp kernels for C-PRC-05's sweep (kcs calibrate --sweep,
 * src/calibrate/calib_sweep_elem.c): y_i = exp(x_i), inputs exact in
 * fp32, output fp32, fn=exp only. Beside the backend's own and native
 * expf (glibc, under 1 ulp) and the calibration kernels (cpu/calib_
 * elementwise.c), two families:
 *
 * Conforming ("exp:<name>"), each within OpenCL's 3-ulp statement, the
 * loosest the contract's eta = 7 covers:
 *   exp:cr      exp in double rounded once to fp32 (correctly rounded but
 *               where the double result lies within 2^-29 ulp of a
 *               rounding boundary; gradual underflow, overflow to +Inf)
 *   exp:cephes  Cephes' expf (Moshier): Cody-Waite reduction with ln2 in
 *               two parts, a degree-6 polynomial in fp32, ldexpf (within
 *               2 ulp; what SIMD math libraries vectorise)
 *   exp:ulp3    a kernel at OpenCL's bound, synthetic: e^x moved by 2.9
 *               ulp of e^x (up or down as the bits of x say) and rounded
 *               toward e^x, everywhere but where the result rounds to 0 or
 *               overflows: the contract's derivation says such a kernel
 *               measures at most 2 * 3 + 1 (6 just above a power of two
 *               when moved down); this checks it.
 *
 * Bad ("defect:exp-<name>"), realistic defects; each passes a plain
 * functional test on torch.randn inputs (tests/unit/backends/
 * test_defect_exp.c: torch.testing.assert_close at fp32's defaults, or at
 * the named narrow dtype's for exp-bf16 / exp-fp16) while being wrong:
 *   defect:exp-fast     CUDA's __expf in full: 2^(x log2 e) with the
 *                       product rounded to fp32 (about |x| ulp off at
 *                       large |x|) and subnormal results flushed to 0
 *   defect:exp-poly4    a degree-4 Taylor polynomial after reduction by
 *                       half powers of two (|r| <= ln2/4): relative error
 *                       up to r^5/120 = 1.28e-6 (10-22 ulp) where |r|
 *                       nears ln2/4, below torch's fp32 rtol everywhere
 *   defect:exp-bf16     expf rounded to bf16 (an exp evaluated in the
 *                       bf16 input's dtype), then widened to fp32
 *   defect:exp-fp16     expf rounded to fp16, widened: 2^-11 relative,
 *                       +Inf from x > 11.09, fp16 subnormals and 0 below
 *                       about -9.7
 *   defect:exp-ftz      expf with subnormal results flushed to +0
 *                       (FTZ/DAZ mode, -ffast-math's crtfastmath)
 *   defect:exp-satmax   expf with overflow saturated to FLT_MAX (a
 *                       saturating store, fminf(y, FLT_MAX) clamps)
 *   defect:exp-ovfnan   the result formed as fma(s, e^r - 1, s) with
 *                       s = 2^n in fp32 (x = n ln2 + r): s is +Inf from
 *                       n = 128, and Inf * (negative) + Inf is NaN: NaN
 *                       beyond the overflow threshold where r < 0, and
 *                       where the result is still finite (x in (88.38,
 *                       88.72]); expf's bits below n = 128, so its output
 *                       differs from expf's only where the defect acts
 *   defect:exp-log2e32  subtle: 2^(x * L) evaluated in double with L =
 *                       log2 e rounded to fp32 (a constant kept in a float
 *                       register): relative error ln2 |x| (L - log2 e)
 *                       = 1.34e-8 |x|, under 1 ulp for |x| < 5, 7-22 ulp
 *                       for |x| in [64, 103]: near eta, large |x| only. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"
#include "format.h"

#define LOG2E_F 1.44269504088896340736f
#define LN2 0.69314718055994530942

enum {
    EXP_CR, EXP_CEPHES, EXP_ULP3, /* conforming */
    D_FAST, D_POLY4, D_BF16, D_FP16, D_FTZ, D_SATMAX, D_OVFNAN, D_LOG2E32,
    N_EXP
};

static const char *const exp_names[N_EXP] = {
    "exp:cr",           "exp:cephes",         "exp:ulp3",
    "defect:exp-fast",  "defect:exp-poly4",   "defect:exp-bf16",   "defect:exp-fp16",
    "defect:exp-ftz",   "defect:exp-satmax",  "defect:exp-ovfnan", "defect:exp-log2e32",
};

static int exp_kind(const char *v)
{
    for (int i = 0; i < N_EXP; i++)
        if (v && strcmp(v, exp_names[i]) == 0)
            return i;
    return -1;
}

int kcs_cpu_exp_variant_known(const char *variant)
{
    return exp_kind(variant) >= 0;
}

static float flush(float y)
{
    return fabsf(y) < FLT_MIN ? 0.0f : y;
}

static float cephes_expf(float x)
{
    if (x != x || x > 88.7228394f)
        return x + INFINITY;
    if (x < -103.972084f)
        return 0.0f;
    float z = floorf(1.44269504088896341f * x + 0.5f);
    float r = x - z * 0.693359375f;
    r = r - z * -2.12194440e-4f;
    float r2 = r * r;
    float p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    p = p * r2 + r + 1.0f;
    return ldexpf(p, (int)z);
}

/* e^x moved by 2.9 ulp of e^x (fp32's spacing at e^x; 2^-149 below
 * FLT_MIN), up or down as the bits of x say (deterministic: the repeat and
 * batch contracts see one function), rounded toward e^x so the error stays
 * under 2.9 ulp; results that round to 0 or overflow are left so */
static float ulp3(float x)
{
    double f = exp((double)x);
    float rn = (float)f;
    if (rn == 0.0f || isinf(rn) || isnan(rn))
        return rn;
    double u = f < FLT_MIN ? 0x1p-149 : ldexp(1.0, ilogb(f) - 23);
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    b ^= b >> 15;
    b *= 0x2c1b3c6du;
    b ^= b >> 12;
    double t = (b & 1u) ? f + 2.9 * u : f - 2.9 * u;
    float y = t > 0.0 ? (float)t : 0.0f;
    if (isinf(y) || fabs((double)y - f) > 2.9 * u) /* rounded away from e^x: one step back */
        y = nextafterf(y, (float)f);
    return y;
}

/* degree-4 Taylor after x = (j/2) ln2 + r, |r| <= ln2/4; 2^(j/2) from a
 * two-entry table (1, sqrt 2) and ldexpf */
static float poly4(float x)
{
    if (x != x || x > 88.8f)
        return x + INFINITY;
    if (x < -104.0f)
        return 0.0f;
    double j = nearbyint((double)x * (2.0 / LN2));
    float r = (float)((double)x - j * (LN2 / 2.0));
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f + r * (1.0f / 24.0f))));
    long ji = (long)j;
    long h = ji >= 0 ? ji / 2 : -((-ji + 1) / 2); /* floor(j / 2) */
    if (ji - 2 * h)
        p *= 1.41421356237309505f;
    return ldexpf(p, (int)h);
}

/* expf where 2^n is finite in fp32; from n = 128 the fma of the scale */
static float ovfnan(float x)
{
    double n = nearbyint((double)x * (1.0 / LN2));
    if (x != x || n < 128.0)
        return expf(x);
    float e = (float)expm1((double)x - n * LN2);
    float s = ldexpf(1.0f, (int)n); /* +Inf */
    return fmaf(s, e, s);
}

static float one(int kind, float x)
{
    switch (kind) {
    case EXP_CR: return (float)exp((double)x);
    case EXP_CEPHES: return cephes_expf(x);
    case EXP_ULP3: return ulp3(x);
    case D_FAST: return flush(exp2f(x * LOG2E_F));
    case D_POLY4: return poly4(x);
    case D_BF16: return (float)kcs_format_round(KCS_FMT_BF16, expf(x), KCS_ROUND_DEFAULT);
    case D_FP16: return (float)kcs_format_round(KCS_FMT_FP16, expf(x), KCS_ROUND_DEFAULT);
    case D_FTZ: return flush(expf(x));
    case D_SATMAX: {
        float y = expf(x);
        return isinf(y) && y > 0 ? FLT_MAX : y;
    }
    case D_OVFNAN: return ovfnan(x);
    case D_LOG2E32: return (float)exp2((double)x * (double)LOG2E_F);
    default: return NAN;
    }
}

int kcs_cpu_exp_variant(const kcs_call *c, kcs_error *err)
{
    int kind = exp_kind(c->variant);
    if (kind < 0)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: unknown exp variant '%s'",
                        c->variant ? c->variant : "");
    if (c->op != KCS_OP_ELEMENTWISE)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s implements the elementwise op only",
                        c->variant);
    kcs_ew_fn f;
    int rc = kcs_ew_fn_of(c->attrs, &f, err);
    if (rc)
        return rc;
    if (f != KCS_EW_EXP)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s computes fn=exp, not fn=%s", c->variant,
                        kcs_ew_name(f));
    size_t n = (size_t)c->m * (size_t)c->k;
    for (size_t i = 0; i < n; i++)
        c->out[i] = kcs_format_round(c->dtype_out, (double)one(kind, (float)c->in[0][i]),
                                     KCS_ROUND_DEFAULT);
    return 0;
}
