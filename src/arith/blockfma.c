/* The block-FMA model of matrix units (shared/PROFILES.md): the reference
 * step d = c + sum a_i*b_i in its three architectures (global alignment,
 * late c addition, pairwise). kcs_emulated_gemm (blockfma_gemm.c) applies
 * the step along k with fast vector kernels that the unit tests check
 * against this reference bit for bit.
 *
 * Exactness: the step forms the terms the model prescribes (exact products
 * of doubles that hold <= 11-bit significands, truncated to multiples of q
 * by power-of-two scaling), sums them exactly (128-bit fixed point when the
 * terms span <= 112 bits, MPFR otherwise) and rounds once. */
#include "blockfma_impl.h"
#include "profile.h"

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#define KCS_BLOCKFMA_MAX_TERMS 4096

static inline double ftz32(double x)
{
    return fabs(x) < FLT_MIN ? copysign(0.0, x) : x;
}

/* ---- exact rounding of a sum of doubles ---------------------------------- */

static int bitlen128(unsigned __int128 a)
{
    uint64_t hi = (uint64_t)(a >> 64), lo = (uint64_t)a;
    return hi ? 128 - __builtin_clzll(hi) : (lo ? 64 - __builtin_clzll(lo) : 0);
}

static double max_bits(int p)
{
    return ldexp(2.0 - ldexp(1.0, 1 - p), 127);
}

/* Round S * 2^qmin to p bits with fp32's exponent range; Inf beyond. */
static double round_i128(__int128 S, int qmin, int p, kcs_rounding r)
{
    if (S == 0)
        return 0.0;
    bool neg = S < 0;
    unsigned __int128 A = neg ? -(unsigned __int128)S : (unsigned __int128)S;
    int L = bitlen128(A);
    int ev = qmin + L - 1;
    int qx = (ev < -126 ? -126 : ev) - p + 1;
    unsigned __int128 kept = A;
    if (qx > qmin) {
        int sh = qx - qmin;
        unsigned __int128 rem, half;
        bool above_half, is_half;
        if (sh > L) { /* everything below half a quantum */
            kept = 0;
            rem = A;
            above_half = is_half = false;
        } else {
            kept = A >> sh;
            rem = A & ((((unsigned __int128)1) << sh) - 1);
            half = ((unsigned __int128)1) << (sh - 1);
            above_half = rem > half;
            is_half = rem == half;
        }
        bool up = false;
        if (rem) {
            switch (r) {
            case KCS_RZ: up = false; break;
            case KCS_RD: up = neg; break;
            case KCS_RU: up = !neg; break;
            case KCS_RNE:
            default: up = above_half || (is_half && (kept & 1)); break;
            }
        }
        kept += up;
    } else {
        qx = qmin;
    }
    double v = ldexp((double)kept, qx); /* kept <= 2^p: exact */
    if (v > max_bits(p))
        v = INFINITY;
    return neg ? -v : v;
}

/* x1 = RN(v) and the sign of v - x1 determine any p-bit rounding of v
 * (p <= 51): only when x1 is itself a p-bit boundary (representable or a
 * midpoint) does the residual decide, and then a nudge by one double ulp
 * toward it moves x1 off the boundary on the correct side. */
static double round_residual(double x1, int sgn, int p, kcs_rounding r)
{
    if (sgn != 0 && x1 != 0.0 && isfinite(x1)) {
        int e = ilogb(x1);
        int qx = (e < -126 ? -126 : e) - p; /* half of the p-bit quantum */
        double m = ldexp(fabs(x1), -qx);
        if (m == floor(m))
            x1 = nextafter(x1, sgn > 0 ? INFINITY : -INFINITY);
    }
    return kcs_round_bits(x1, p, r);
}

/* Round the exact sum of t[0..n) (finite doubles) to p bits. */
static double exact_sum_round(const double *t, int n, int p, kcs_rounding r)
{
    int64_t m[KCS_BLOCKFMA_MAX_TERMS + 1];
    int qe[KCS_BLOCKFMA_MAX_TERMS + 1];
    int cnt = 0, qmin = INT_MAX, top = INT_MIN;
    for (int i = 0; i < n; i++) {
        if (t[i] == 0.0)
            continue;
        int e;
        double fr = frexp(t[i], &e); /* t = fr * 2^e, 0.5 <= |fr| < 1 */
        int64_t mi = (int64_t)ldexp(fr, 53);
        int q = e - 53;
        int tz = __builtin_ctzll((uint64_t)(mi < 0 ? -mi : mi));
        m[cnt] = mi / ((int64_t)1 << tz);
        qe[cnt] = q + tz;
        qmin = qe[cnt] < qmin ? qe[cnt] : qmin;
        top = e > top ? e : top;
        cnt++;
    }
    if (cnt == 0)
        return 0.0;
    if (top - qmin + 14 <= 126) { /* 2^13 > n terms of carries */
        __int128 S = 0;
        for (int i = 0; i < cnt; i++)
            S += (__int128)m[i] * ((__int128)1 << (qe[i] - qmin));
        return round_i128(S, qmin, p, r);
    }
    mpfr_t s;
    mpfr_init2(s, (mpfr_prec_t)(top - qmin + 16));
    mpfr_set_zero(s, 1);
    for (int i = 0; i < n; i++)
        mpfr_add_d(s, s, t[i], MPFR_RNDN); /* exact at this precision */
    double x1 = mpfr_get_d(s, MPFR_RNDN);
    int sgn = mpfr_cmp_d(s, x1);
    bool zero = mpfr_zero_p(s);
    mpfr_clear(s);
    return zero ? 0.0 : round_residual(x1, sgn, p, r);
}

/* ---- reference step ------------------------------------------------------- */

static double trunc_to(double t, double q)
{
    return trunc(t / q) * q; /* exact: power-of-two q, |t/q| < 2^53 */
}

static double floor_to(double t, double q)
{
    return floor(t / q) * q;
}

/* The exponent the alignment sees for an operand of the block: zero has
 * none (INT_MIN) unless the profile gives zeros the exponent -126. */
static int op_exp(const kcs_profile_params *p, double x, int emin)
{
    if (x == 0.0)
        return p->zero_exp == KCS_ZEXP_MIN ? -126 : INT_MIN;
    return kcs_bfma_exp_clamped(x, emin);
}

/* The largest e(a_i) + e(b_i) over the products of indices i0, i0 + st, ...
 * that take part (the inputs' exponents clamped to the input format's emin;
 * zero products only under zero_exp = min); INT_MIN when none. */
static int max_product_exp(const kcs_profile_params *p, const double *a, const double *b, int n,
                           int i0, int st)
{
    int emin = kcs_format_get(p->in)->emin, emin_b = kcs_format_get(kcs_profile_in_b(p))->emin;
    int E = INT_MIN;
    for (int i = i0; i < n; i += st) {
        int ea = op_exp(p, a[i], emin), eb = op_exp(p, b[i], emin_b);
        if (a[i] * b[i] == 0.0 && p->zero_exp != KCS_ZEXP_MIN)
            continue;
        int e = ea + eb;
        E = e > E ? e : E;
    }
    return E;
}

static double zero_sign(const kcs_profile_params *p, double d)
{
    return (d == 0.0 && p->zero_sign == KCS_ZSIGN_POSITIVE) ? 0.0 : d;
}

/* prod_ovf = inf: +-Inf when a product reaches 2^128 in magnitude, NaN
 * when both signs do; 0 (no verdict) otherwise. */
static bool product_overflow(const kcs_profile_params *p, const double *a, const double *b,
                             int n, double *d)
{
    if (p->prod_ovf != KCS_POVF_INF)
        return false;
    bool pos = false, neg = false;
    for (int i = 0; i < n; i++) {
        double t = a[i] * b[i];
        pos |= t >= 0x1p128;
        neg |= t <= -0x1p128;
    }
    if (!pos && !neg)
        return false;
    *d = pos && neg ? NAN : pos ? INFINITY : -INFINITY;
    return true;
}

static double step_global(const kcs_profile_params *p, double c, const double *a,
                          const double *b, int n)
{
    double ovf;
    if (product_overflow(p, a, b, n, &ovf))
        return ovf;
    int E = max_product_exp(p, a, b, n, 0, 1);
    int ec = op_exp(p, c, p->acc_f16 ? kcs_format_get(KCS_FMT_FP16)->emin : -126);
    E = ec > E ? ec : E;
    if (E == INT_MIN)
        return 0.0;
    double t[KCS_BLOCKFMA_MAX_TERMS + 1];
    int cnt = 0;
    bool exact = p->neab == KCS_NEAB_INF;
    double q = exact ? 0.0 : ldexp(1.0, E - 23 - p->neab);
    t[cnt++] = exact ? c : trunc_to(c, q);
    for (int i = 0; i < n; i++)
        t[cnt++] = exact ? a[i] * b[i] : trunc_to(a[i] * b[i], q);
    if (p->acc_f16 && !exact) {
        /* multiples of q below (n+1)*2^(E+2): < 2^(39+neab) quanta, exact */
        double S = 0.0;
        for (int i = 0; i < cnt; i++)
            S += t[i];
        return zero_sign(p, kcs_format_round(KCS_FMT_FP16, S, KCS_ROUND_DEFAULT));
    }
    return zero_sign(p, exact_sum_round(t, cnt, kcs_profile_out_bits(p), p->rounding));
}

/* The truncated product sum of indices i0, i0 + st, ... aligned to their own
 * largest exponent (returned in *E, INT_MIN when none takes part). */
static double product_sum(const kcs_profile_params *p, const double *a, const double *b, int n,
                          int i0, int st, int *E)
{
    *E = max_product_exp(p, a, b, n, i0, st);
    if (*E == INT_MIN)
        return 0.0;
    double q = ldexp(1.0, *E - 23 - p->neab);
    /* multiples of q below n*2^(E+2) < 2^(E+14): < 2^(39+neab) quanta, exact */
    double P = 0.0;
    for (int i = i0; i < n; i += st)
        P += trunc_to(a[i] * b[i], q);
    return P;
}

static double step_late_c(const kcs_profile_params *p, double c, const double *a,
                          const double *b, int n)
{
    double ovf;
    if (product_overflow(p, a, b, n, &ovf))
        return ovf;
    int Ep;
    double P;
    if (p->halves == 2) {
        /* CDNA3 fp8: even and odd products each aligned to their own
         * largest exponent, then both rounded down to the larger one's grid */
        int E0, E1;
        double P0 = product_sum(p, a, b, n, 0, 2, &E0), P1 = product_sum(p, a, b, n, 1, 2, &E1);
        Ep = E0 > E1 ? E0 : E1;
        if (Ep != INT_MIN) {
            double u = ldexp(1.0, Ep - 23 - p->neab);
            P = floor_to(P0, u) + floor_to(P1, u);
        } else {
            P = 0.0;
        }
    } else {
        P = product_sum(p, a, b, n, 0, 1, &Ep);
    }
    if (Ep == INT_MIN) /* no products: the adder passes c through */
        return zero_sign(p, c);
    int ec = c != 0.0 ? kcs_bfma_exp_clamped(c, -126) : -126;
    double q = ldexp(1.0, Ep - 23 - p->neab);
    double S;
    if (Ep > ec)
        /* the fp8 adder drops a c more than 25 binades below (RD would
         * give -q for a small negative c) */
        S = P + ((p->halves == 2 && ec < Ep - 25) ? 0.0 : floor_to(c, q));
    else if (Ep < ec)
        S = floor_to(P, ldexp(1.0, ec - 23 - p->neab - 7)) + c;
    else
        S = P + c;
    return zero_sign(p, kcs_round_bits(S, 24, KCS_RNE));
}

static double pair_tree(const double *v, int n, bool flush)
{
    if (n == 1)
        return v[0];
    int h = (n + 1) / 2;
    float l = (float)pair_tree(v, h, flush), r = (float)pair_tree(v + h, n - h, flush);
    double s = (double)(l + r); /* fp32 RNE add, then the profile's flush */
    return flush ? ftz32(s) : s;
}

static double step_pairwise(const kcs_profile_params *p, double c, const double *a,
                            const double *b, int n)
{
    double tiny = ldexp(1.0, kcs_format_get(p->in)->emin);
    double tiny_b = ldexp(1.0, kcs_format_get(kcs_profile_in_b(p))->emin);
    int nn = n < p->F ? p->F : n; /* padded with zero products */
    double pr[KCS_BLOCKFMA_MAX_TERMS];
    for (int i = 0; i < nn; i++) {
        double x = i < n ? a[i] : 0.0, y = i < n ? b[i] : 0.0;
        if (p->flush) {
            bool pos = p->flush_sign == KCS_FSIGN_POSITIVE;
            x = fabs(x) < tiny ? (pos ? 0.0 : copysign(0.0, x)) : x;
            y = fabs(y) < tiny_b ? (pos ? 0.0 : copysign(0.0, y)) : y;
        }
        double pp = (double)(float)(x * y);
        pr[i] = p->flush ? ftz32(pp) : pp;
    }
    float tree = (float)pair_tree(pr, nn, p->flush);
    float cf = (float)(p->flush ? ftz32(c) : c);
    double d = (double)(cf + tree);
    return p->flush ? ftz32(d) : d;
}

double kcs_blockfma_step(const kcs_profile_params *p, double c, const double *a,
                         const double *b, int nterms)
{
    if (nterms < 0 || nterms > KCS_BLOCKFMA_MAX_TERMS)
        return NAN;
    bool finite = isfinite(c);
    for (int i = 0; i < nterms && finite; i++)
        finite = isfinite(a[i]) && isfinite(b[i]);
    if (p->step == KCS_STEP_PAIRWISE && p->inf_path == KCS_INF_STEP)
        finite = true; /* fp32 arithmetic carries NaN/Inf itself */
    if (!finite) { /* IEEE semantics, after the profile's input flush */
        double tiny = ldexp(1.0, kcs_format_get(p->in)->emin);
        double tiny_b = ldexp(1.0, kcs_format_get(kcs_profile_in_b(p))->emin);
        double s = p->flush ? ftz32(c) : c;
        for (int i = 0; i < nterms; i++) {
            double x = a[i], y = b[i];
            if (p->flush) {
                x = fabs(x) < tiny ? 0.0 : x;
                y = fabs(y) < tiny_b ? 0.0 : y;
            }
            s += x * y;
        }
        return s;
    }
    switch (p->step) {
    case KCS_STEP_LATE_C: return step_late_c(p, c, a, b, nterms);
    case KCS_STEP_PAIRWISE: return step_pairwise(p, c, a, b, nterms);
    case KCS_STEP_GLOBAL:
    default: return step_global(p, c, a, b, nterms);
    }
}

double kcs_blockfma_acc_add(const kcs_profile_params *p, double c, double x)
{
    if (!isfinite(c) || !isfinite(x))
        return c + x;
    if (p->step == KCS_STEP_PAIRWISE) {
        double s = (double)((float)c + (float)x);
        return p->flush ? ftz32(s) : s;
    }
    int E = INT_MIN;
    if (c != 0.0)
        E = kcs_bfma_exp_clamped(c, -126);
    if (x != 0.0) {
        int ex = kcs_bfma_exp_clamped(x, -126);
        E = ex > E ? ex : E;
    }
    if (E == INT_MIN)
        return c + x; /* two zeros: IEEE's sign */
    double t[2] = {c, x};
    if (p->neab != KCS_NEAB_INF) {
        double q = ldexp(1.0, E - 23 - p->neab);
        t[0] = trunc_to(c, q);
        t[1] = trunc_to(x, q);
    }
    if (p->acc_f16) /* two multiples of q below 2^(E+2): exact in double */
        return zero_sign(p, kcs_format_round(KCS_FMT_FP16, t[0] + t[1], KCS_ROUND_DEFAULT));
    return zero_sign(p, exact_sum_round(t, 2, kcs_profile_out_bits(p), p->rounding));
}
