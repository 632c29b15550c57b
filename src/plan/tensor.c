#include "tensor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "format_fast.h"
#include "rng.h"

double kcs_sentinel(kcs_format f)
{
    /* -0.75 * max_finite, rounded into the format: finite, negative, far
     * from any value a conforming kernel produces on kcs's inputs, and
     * exactly representable (for fp64/fp32: -1.5 * 2^126 style values). */
    const kcs_format_info *fi = kcs_format_get(f);
    double v = -0.75 * fi->max_finite;
    return kcs_format_round(f, v, KCS_ROUND_DEFAULT);
}

int kcs_tensor_alloc(kcs_tensor *t, size_t len, kcs_format fmt, kcs_error *err)
{
    memset(t, 0, sizeof *t);
    size_t total = len + 2 * (size_t)KCS_GUARD_ELEMS;
    if (len > ((size_t)1 << 40))
        return kcs_fail(err, KCS_E_INVAL, "tensor of %zu elements is beyond the size cap", len);
    double *base = malloc(total * sizeof *base);
    if (!base)
        return kcs_fail(err, KCS_E_NOMEM, "out of memory allocating a tensor of %zu elements", len);
    t->base = base;
    t->data = base + KCS_GUARD_ELEMS;
    t->len = len;
    t->fmt = fmt;
    t->sentinel = kcs_sentinel(fmt);
    kcs_tensor_poison(t);
    return 0;
}

void kcs_tensor_free(kcs_tensor *t)
{
    free(t->base);
    memset(t, 0, sizeof *t);
}

void kcs_tensor_poison(kcs_tensor *t)
{
    size_t total = t->len + 2 * (size_t)KCS_GUARD_ELEMS;
    for (size_t i = 0; i < total; i++)
        t->base[i] = t->sentinel;
}

bool kcs_tensor_guards_ok(const kcs_tensor *t)
{
    /* Compare bit patterns: a NaN written into a guard must count. */
    for (size_t i = 0; i < KCS_GUARD_ELEMS; i++) {
        if (memcmp(&t->base[i], &t->sentinel, sizeof(double)) != 0)
            return false;
        if (memcmp(&t->data[t->len + i], &t->sentinel, sizeof(double)) != 0)
            return false;
    }
    return true;
}

bool kcs_tensor_guard_breach(const kcs_tensor *t, long long *first, long long *last)
{
    bool any = false;
    const long long g = KCS_GUARD_ELEMS, len = (long long)t->len;
    for (long long i = -g; i < len + g; i++) {
        if (i == 0)
            i = len; /* the output itself is not a guard */
        const double *p = i < 0 ? &t->base[g + i] : &t->data[i];
        if (memcmp(p, &t->sentinel, sizeof(double)) == 0)
            continue;
        if (!any)
            *first = i;
        *last = i;
        any = true;
    }
    return any;
}

size_t kcs_tensor_count_sentinel(const kcs_tensor *t)
{
    size_t c = 0;
    for (size_t i = 0; i < t->len; i++)
        c += t->data[i] == t->sentinel;
    return c;
}

/* Exponent range for wide_range inputs: wide, yet products and sums of
 * O(k) terms stay finite in the format. */
static void wide_range_exponents(kcs_format fmt, int *lo, int *hi)
{
    const kcs_format_info *fi = kcs_format_get(fmt);
    *hi = fi->emax / 4 < 20 ? fi->emax / 4 : 20;
    *lo = fi->emin / 2 > -20 ? fi->emin / 2 : -20;
}

/* Exponent range for spread inputs: 24 binades, [-12, 12], clipped to the
 * format's normal range. Products of two such values span 48 binades and
 * sums of a few of them 24, so partial sums of bf16, fp16 or fp32 terms
 * round in an fp32 accumulator and the rounding depends on the order of
 * the additions (normal inputs span a few binades: with bf16 or fp16
 * terms most sums of a few of them are exact in every order). */
static void spread_exponents(kcs_format fmt, int *lo, int *hi)
{
    const kcs_format_info *fi = kcs_format_get(fmt);
    *lo = fi->emin > -12 ? fi->emin : -12;
    *hi = fi->emax - 1 < 12 ? fi->emax - 1 : 12;
}

void kcs_fill(double *x, size_t len, kcs_dist d, kcs_format fmt, uint64_t seed, uint64_t stream_a,
              uint64_t stream_b)
{
    kcs_rng r;
    kcs_rng_init(&r, seed, stream_a, stream_b);
    int elo = 0, ehi = 0;
    if (d == KCS_DIST_WIDE_RANGE)
        wide_range_exponents(fmt, &elo, &ehi);
    else if (d == KCS_DIST_SPREAD)
        spread_exponents(fmt, &elo, &ehi);
    if (d == KCS_DIST_NORMAL || d == KCS_DIST_POSITIVE) { /* one normal per element */
        kcs_rng_normal_n(&r, x, len);
        if (d == KCS_DIST_POSITIVE)
            for (size_t i = 0; i < len; i++)
                x[i] = fabs(x[i]);
        kcs_format_round_n(fmt, x, x, len);
        return;
    }
    double prev = 0.0;
    for (size_t i = 0; i < len; i++) {
        double v;
        switch (d) {
        case KCS_DIST_UNIFORM_PM1:
            v = 2.0 * kcs_rng_uniform(&r) - 1.0;
            break;
        case KCS_DIST_WIDE_RANGE:
        case KCS_DIST_SPREAD: {
            /* fixed-definition exp2 (detmath.h); the product is kept
             * from fusing with the add (FMA contraction) */
            volatile double span = (ehi - elo) * kcs_rng_uniform(&r);
            double e = elo + span;
            double s = kcs_rng_u32(&r) & 1 ? -1.0 : 1.0;
            v = s * kcs_det_exp2(e);
            break;
        }
        case KCS_DIST_CANCELLATION:
            /* pairs of large values of opposite sign plus a small normal
             * part: sums cancel to a small fraction of sum |x|. */
            if (i % 2 == 0) {
                prev = 64.0 * (1.0 + kcs_rng_uniform(&r));
                v = prev + kcs_rng_normal(&r);
            } else {
                v = -prev + kcs_rng_normal(&r);
            }
            break;
        case KCS_DIST_LARGE: {
            double mag = 64.0 + 64.0 * kcs_rng_uniform(&r);
            v = kcs_rng_u32(&r) & 1 ? -mag : mag;
            break;
        }
        case KCS_DIST_OFFSET: {
            /* fp32 and wider: 4096 + N(0, 1). Narrower formats (bf16
             * spacing 32 at 4096, fp16 4) cannot hold a unit spread: a
             * row would round to a constant. Their rows take the two
             * adjacent values 4096 and 4096 + ulp in antithetic pairs
             * (elements 2j and 2j + 1 differ), so every row of k >= 2
             * holds both, and the variance is as small against the mean
             * as the format allows: E[x^2] / var = (2 * 4096 / ulp)^2,
             * 2^16 for bf16 and 2^22 for fp16 (a normal spread of 4 ulp
             * gave 2^10 and 2^16), the most a one-pass variance can lose */
            int p = kcs_format_get(fmt)->p;
            if (p >= 24) {
                v = 4096.0 + kcs_rng_normal(&r);
            } else {
                double ulp = ldexp(4096.0, 1 - p);
                if (i % 2 == 0)
                    prev = (double)(kcs_rng_u32(&r) & 1);
                else
                    prev = 1.0 - prev;
                v = 4096.0 + ulp * prev;
            }
            break;
        }
        case KCS_DIST_SUBNORMAL: {
            /* uniform over the subnormal range (0, 2^emin) of the format */
            const kcs_format_info *fi = kcs_format_get(fmt);
            double mag = kcs_rng_uniform(&r) * ldexp(1.0, fi->emin);
            v = kcs_rng_u32(&r) & 1 ? -mag : mag;
            break;
        }
        case KCS_DIST_POSITIVE:
            v = fabs(kcs_rng_normal(&r));
            break;
        case KCS_DIST_NORMAL:
        default:
            v = kcs_rng_normal(&r);
            break;
        }
        x[i] = v;
    }
    kcs_format_round_n(fmt, x, x, len);
}
