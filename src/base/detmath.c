/* Fixed-definition exp, exp2 and log (detmath.h). Compiled with
 * -ffp-contract=off as well (src/CMakeLists.txt), but does not rely on it. */
#include "detmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "detmath.c needs FLT_EVAL_METHOD == 0 (binary64 evaluated in binary64)"
#endif

/* A product no compiler can fuse with the add that consumes it. */
static inline double mul(double a, double b)
{
    volatile double p = a * b;
    return p;
}

static inline double pow2i(int n) /* 2^n, -1022 <= n <= 1023 */
{
    uint64_t b = (uint64_t)(n + 1023) << 52;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* ln 2 split so that n * LN2_HI is exact for |n| < 2^11 (fdlibm's split). */
#define LN2_HI 0x1.62e42fee00000p-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define LOG2E 0x1.71547652b82fep+0
#define LN2 0x1.62e42fefa39efp-1

/* 1/k!, k = 0..13, nearest doubles. */
static const double exp_c[14] = {
    0x1.0000000000000p+0,  0x1.0000000000000p+0,  0x1.0000000000000p-1,  0x1.5555555555555p-3,
    0x1.5555555555555p-5,  0x1.1111111111111p-7,  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
    0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
    0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};

/* 2/(2j+1), j = 0..11, nearest doubles. */
static const double log_c[12] = {
    0x1.0000000000000p+1, 0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2,
    0x1.c71c71c71c71cp-3, 0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3,
    0x1.e1e1e1e1e1e1ep-4, 0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4};

double kcs_det_exp(double t)
{
    /* t = n ln2 + r, |r| <= ln2/2 (+ rounding); e^r by its Taylor series
     * to degree 13 (remainder < 2^-60); then exact scaling by 2^n. floor
     * is exact everywhere (IEEE 754 roundToIntegralTowardNegative). */
    double n = floor(mul(t, LOG2E) + 0.5);
    double r = (t - mul(n, LN2_HI)) - mul(n, LN2_LO);
    double p = exp_c[13];
    for (int k = 12; k >= 0; k--)
        p = mul(p, r) + exp_c[k];
    int ni = (int)n;
    if (ni > 1023) /* outside the promised range: still defined */
        return p * pow2i(1023) * pow2i(ni - 1023 > 1023 ? 1023 : ni - 1023);
    if (ni < -1022)
        return p * pow2i(-1022) * pow2i(ni + 1022 < -1022 ? -1022 : ni + 1022);
    return p * pow2i(ni);
}

double kcs_det_exp2(double e)
{
    double n = floor(e);
    double f = e - n; /* exact, in [0, 1) */
    int ni = (int)n;
    double s = ni > 1023 ? pow2i(1023) : ni < -1022 ? pow2i(-1022) : pow2i(ni);
    return kcs_det_exp(mul(f, LN2)) * s;
}

double kcs_det_log(double u)
{
    /* u = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s),
     * s = (m-1)/(m+1), |s| <= 0.1716, series to s^23 (remainder < 2^-60). */
    uint64_t b;
    memcpy(&b, &u, sizeof b);
    int e = 0;
    if ((b >> 52) == 0) { /* subnormal: scale up exactly */
        u *= 0x1p54;
        memcpy(&b, &u, sizeof b);
        e = -54;
    }
    e += (int)(b >> 52) - 1023;
    b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    double m;
    memcpy(&m, &b, sizeof m);
    if (m > 0x1.6a09e667f3bcdp+0) { /* sqrt(2) */
        m *= 0.5;
        e += 1;
    }
    double s = (m - 1.0) / (m + 1.0);
    double z = mul(s, s);
    double p = log_c[11];
    for (int j = 10; j >= 0; j--)
        p = mul(p, z) + log_c[j];
    double de = (double)e;
    return mul(de, LN2_HI) + (mul(de, LN2_LO) + mul(s, p));
}
