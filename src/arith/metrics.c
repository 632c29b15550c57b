#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "error_shape.h"
#include "format_fast.h"

/* kcs_format_ulp_distance without the call and the format dispatch. */
static inline double ulp_dist(kcs_format f, const kcs_fmt_fast *F, double a, double b)
{
    if (f == KCS_FMT_FP32)
        return kcs_ff_ulp_distance_fp32(a, b);
    if (F)
        return kcs_ff_ulp_distance(F, a, b);
    return kcs_format_ulp_distance(f, a, b);
}

/* kcs_ff_ulp_distance_fp32 for finite a and b (no NaN after the
 * conversion), without its NaN branch. */
static inline double ulp_fp32_finite(double a, double b)
{
    float fa = (float)a, fb = (float)b;
    uint32_t ua, ub;
    memcpy(&ua, &fa, sizeof ua);
    memcpy(&ub, &fb, sizeof ub);
    uint32_t ma = ua & 0x7FFFFFFFu, mb = ub & 0x7FFFFFFFu;
    uint64_t d = (ua >> 31) == (ub >> 31) ? (ma > mb ? ma - mb : mb - ma) : (uint64_t)ma + mb;
    return (double)d;
}

/* Blocks of MB outputs: first each output's terms, without branches so that
 * the loop vectorises (an output not judged or not finite gets terms of
 * +0, which leave the sums and maxima as they are: every sum and maximum
 * starts at +0 and takes only terms >= 0 or +-Inf; the counts are
 * integers), then the sums in index order, so the result is the same bits
 * as the element-by-element definition (tests/unit/arith/test_metrics.c
 * keeps it as the reference). */
enum { MB = 256 };

typedef struct met_block {
    double d[MB], r[MB], u[MB], s[MB];
    int64_t fin[MB];
} met_block;

typedef struct met_counts {
    int64_t nan, inf, sentinel, mismatch, finite, scaled;
} met_counts;

/* The terms of outputs [0, len): has_abs says whether ab is there (the
 * two copies are the loop without and with its loads). */
static inline __attribute__((always_inline)) void
met_terms(const double *yb, const double *rb, const double *ab, int has_abs, size_t len,
          double sentinel, met_block *B, met_counts *c)
{
    int64_t c_nan = 0, c_inf = 0, c_sent = 0, c_mis = 0, c_fin = 0, c_sc = 0;
    for (size_t t = 0; t < len; t++) {
        double a = yb[t], b = rb[t], w = has_abs ? ab[t] : 1.0;
        int64_t judged = !(w < 0.0); /* oob=undefined: not judged */
        int64_t an = a != a, bn = b != b;
        int64_t ai = fabs(a) == (double)INFINITY, bi = fabs(b) == (double)INFINITY;
        int64_t fin = judged & !(an | ai | bn | bi);
        c_nan += judged & an;
        c_inf += judged & ai;
        c_sent += judged & (a == sentinel);
        /* Equal non-finite values (NaN where NaN is due, same-signed
         * Inf) agree; anything else is a mismatch. */
        int64_t same = (an & bn) | (ai & bi & ((a > 0.0) == (b > 0.0)));
        c_mis += judged & !fin & !same;
        /* every operation done on every lane, the results selected (GCC
         * does not if-convert an operation that may raise a flag) */
        double dall = fabs(a - b);
        double d = fin ? dall : 0.0;
        double rq = d / (b != 0.0 ? fabs(b) : 1.0);
        double r = b != 0.0 ? rq : (d > 0.0 ? (double)INFINITY : 0.0);
        int64_t sc = has_abs ? fin & (w > 0.0) : 0;
        double sq = d / (sc ? w : 1.0);
        c_fin += fin;
        c_sc += sc;
        B->fin[t] = fin;
        B->d[t] = d;
        B->r[t] = fin ? r : 0.0;
        B->s[t] = sc ? sq : 0.0;
    }
    c->nan += c_nan;
    c->inf += c_inf;
    c->sentinel += c_sent;
    c->mismatch += c_mis;
    c->finite += c_fin;
    c->scaled += c_sc;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MET_CLONES
#endif

MET_CLONES static void met_terms_any(const double *yb, const double *rb, const double *ab,
                                     size_t len, double sentinel, met_block *B, met_counts *c)
{
    if (ab)
        met_terms(yb, rb, ab, 1, len, sentinel, B, c);
    else
        met_terms(yb, rb, NULL, 0, len, sentinel, B, c);
}

void kcs_metrics_compute(const double *y, const double *ref, const double *absref, size_t n,
                         kcs_format out_fmt, double scale, int64_t k, double sentinel,
                         kcs_metrics *m)
{
    memset(m, 0, sizeof *m);
    double sum_sq = 0.0, sum_ulp = 0.0, sum_scaled_sq = 0.0;
    double max_abs = 0.0, max_rel = 0.0, max_ulp = 0.0, max_scaled = 0.0;
    met_counts c = {0, 0, 0, 0, 0, 0};
    const kcs_fmt_fast *F = kcs_fmt_fast_get(out_fmt);
    met_block B;
    for (size_t i0 = 0; i0 < n; i0 += MB) {
        size_t len = n - i0 < MB ? n - i0 : MB;
        const double *yb = y + i0, *rb = ref + i0;
        met_terms_any(yb, rb, absref ? absref + i0 : NULL, len, sentinel, &B, &c);
        if (out_fmt == KCS_FMT_FP32) {
            for (size_t t = 0; t < len; t++)
                B.u[t] = B.fin[t] ? ulp_fp32_finite(yb[t], rb[t]) : 0.0;
        } else {
            for (size_t t = 0; t < len; t++)
                B.u[t] = B.fin[t] ? ulp_dist(out_fmt, F, yb[t], rb[t]) : 0.0;
        }
        for (size_t t = 0; t < len; t++) {
            double d = B.d[t], u = B.u[t], sc = B.s[t];
            sum_sq += d * d;
            max_abs = d > max_abs ? d : max_abs;
            max_rel = B.r[t] > max_rel ? B.r[t] : max_rel;
            sum_ulp += u;
            max_ulp = u > max_ulp ? u : max_ulp;
            sum_scaled_sq += sc * sc;
            max_scaled = sc > max_scaled ? sc : max_scaled;
        }
    }
    m->nan_count = c.nan;
    m->inf_count = c.inf;
    m->sentinel_count = c.sentinel;
    m->mismatch_nonfinite = c.mismatch;
    m->max_abs = max_abs;
    m->max_rel = max_rel;
    m->max_ulp = max_ulp;
    m->max_scaled = max_scaled;
    size_t n_finite = (size_t)c.finite, n_scaled = (size_t)c.scaled;
    if (m->mismatch_nonfinite > 0) {
        /* A NaN/Inf where a finite value is due is an unbounded error in
         * every structure's measure. */
        m->max_abs = m->max_rel = m->max_ulp = INFINITY;
        m->max_scaled = INFINITY;
    }
    m->mean_ulp = n_finite ? sum_ulp / (double)n_finite : 0.0;
    m->backward_err = scale > 0.0 ? sqrt(sum_sq) / scale : sqrt(sum_sq);
    if (m->mismatch_nonfinite > 0)
        m->backward_err = INFINITY;
    m->rms_scaled = n_scaled ? sqrt(sum_scaled_sq / (double)n_scaled) : 0.0;
    /* A p-bit accumulator summing k terms leaves a componentwise error of
     * about sqrt(k) * 2^-p relative to (|A||B|)_ij (random-walk rounding);
     * invert that to estimate the bits the accumulation really kept. */
    if (m->rms_scaled > 0.0 && k > 0)
        m->effective_acc_bits = -log2(m->rms_scaled / sqrt((double)k));
    else
        m->effective_acc_bits = 64.0;
    if (m->effective_acc_bits > 64.0)
        m->effective_acc_bits = 64.0;
    /* (effective_acc_bits describes the finite outputs only) */
    if (m->mismatch_nonfinite > 0)
        m->rms_scaled = INFINITY;
    kcs_error_shape es;
    kcs_error_shape_compute(y, ref, absref, n, &es);
    m->zero_frac = es.zero_frac;
    m->ref_corr = es.ref_corr;
    m->peak_share = es.peak_share;
    m->scale_fit = es.scale_fit;
    m->ref_scale = es.ref_scale;
    m->mixed_signs = es.mixed_signs;
}

uint64_t kcs_digest_bytes(const void *p, size_t n, uint64_t seed)
{
    return XXH3_64bits_withSeed(p, n, seed);
}

uint64_t kcs_digest_values(const double *x, size_t n, kcs_format fmt)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return 0;
    XXH3_64bits_reset(st);
    uint64_t buf[512];
    /* Values not exact in fmt (a kernel that wrote something else) are
     * digested as their fp64 bits ^ 0xA5..., so they still change the
     * digest (kcs_format_digest_words). */
    for (size_t i = 0; i < n; i += 512) {
        size_t len = n - i < 512 ? n - i : 512;
        kcs_format_digest_words(fmt, x + i, buf, len);
        XXH3_64bits_update(st, buf, len * sizeof buf[0]);
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

double kcs_norm_fro(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}
