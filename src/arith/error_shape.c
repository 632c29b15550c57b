#include "error_shape.h"

#include <math.h>

/* Three passes over the outputs, each in blocks of ES_B: first the terms of
 * every output, without branches so that the loop vectorises (an output
 * not judged or not finite contributes +0, which leaves every sum as it
 * is: each starts at +0 and a sum of doubles is -0 only when both are),
 * then the sums in index order: the same bits as the output-by-output
 * definition (tests/unit/arith/test_metrics.c keeps it as the reference). */
enum { ES_B = 256 };

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define ES_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ES_CLONES
#endif

/* judged and finite: 1, else 0 */
static inline int64_t es_ok(const double *y, const double *ref, const double *absref, size_t i)
{
    double w = absref ? absref[i] : 0.0;
    return !(w < 0.0) & (fabs(y[i]) < (double)INFINITY) & (fabs(ref[i]) < (double)INFINITY);
}

typedef struct es_sums1 {
    double sy, sr;
    int64_t nn, nonzero, zeros, neg, pos;
} es_sums1;

ES_CLONES static void es_pass1(const double *y, const double *ref, const double *absref,
                               size_t i0, size_t len, es_sums1 *S)
{
    double ty[ES_B], tr[ES_B];
    int64_t nn = 0, nonzero = 0, zeros = 0, neg = 0, pos = 0;
    for (size_t t = 0; t < len; t++) {
        size_t i = i0 + t;
        int64_t ok = es_ok(y, ref, absref, i);
        ty[t] = ok ? y[i] : 0.0;
        tr[t] = ok ? ref[i] : 0.0;
        nn += ok;
        neg |= ok & (ref[i] < 0.0);
        pos |= ok & (ref[i] > 0.0);
        int64_t nz = ok & (ref[i] != 0.0);
        nonzero += nz;
        zeros += nz & (y[i] == 0.0);
    }
    for (size_t t = 0; t < len; t++) {
        S->sy += ty[t];
        S->sr += tr[t];
    }
    S->nn += nn;
    S->nonzero += nonzero;
    S->zeros += zeros;
    S->neg |= neg;
    S->pos |= pos;
}

typedef struct es_sums2 {
    double cyy, crr, cyr, sdd, maxd, sdr, srr;
} es_sums2;

ES_CLONES static void es_pass2(const double *y, const double *ref, const double *absref,
                               size_t i0, size_t len, double my, double mr, es_sums2 *S)
{
    double aa[ES_B], bb[ES_B], ab[ES_B], dd[ES_B], dr[ES_B], rr[ES_B];
    for (size_t t = 0; t < len; t++) {
        size_t i = i0 + t;
        int64_t ok = es_ok(y, ref, absref, i);
        double a = y[i] - my, b = ref[i] - mr, d = y[i] - ref[i];
        aa[t] = ok ? a * a : 0.0;
        bb[t] = ok ? b * b : 0.0;
        ab[t] = ok ? a * b : 0.0;
        dd[t] = ok ? d * d : 0.0;
        dr[t] = ok ? d * ref[i] : 0.0;
        rr[t] = ok ? ref[i] * ref[i] : 0.0;
    }
    for (size_t t = 0; t < len; t++) {
        S->cyy += aa[t];
        S->crr += bb[t];
        S->cyr += ab[t];
        S->sdd += dd[t];
        S->maxd = dd[t] > S->maxd ? dd[t] : S->maxd;
        S->sdr += dr[t];
        S->srr += rr[t];
    }
}

ES_CLONES static double es_pass3(const double *y, const double *ref, const double *absref,
                                 size_t i0, size_t len, double c, double res)
{
    double q[ES_B];
    for (size_t t = 0; t < len; t++) {
        size_t i = i0 + t;
        int64_t ok = es_ok(y, ref, absref, i);
        double r = (y[i] - ref[i]) - c * ref[i];
        q[t] = ok ? r * r : 0.0;
    }
    for (size_t t = 0; t < len; t++)
        res += q[t];
    return res;
}

void kcs_error_shape_compute(const double *y, const double *ref, const double *absref, size_t n,
                             kcs_error_shape *e)
{
    es_sums1 S1 = {0.0, 0.0, 0, 0, 0, 0, 0};
    for (size_t i0 = 0; i0 < n; i0 += ES_B)
        es_pass1(y, ref, absref, i0, n - i0 < ES_B ? n - i0 : ES_B, &S1);
    double nn = (double)S1.nn;
    e->zero_frac = S1.nonzero > 0 ? (double)S1.zeros / (double)S1.nonzero : 0.0;
    e->ref_corr = 1.0;
    e->peak_share = e->scale_fit = e->ref_scale = 0.0;
    e->mixed_signs = S1.neg && S1.pos;
    if (S1.nn == 0)
        return;
    double my = S1.sy / nn, mr = S1.sr / nn;
    es_sums2 S2 = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (size_t i0 = 0; i0 < n; i0 += ES_B)
        es_pass2(y, ref, absref, i0, n - i0 < ES_B ? n - i0 : ES_B, my, mr, &S2);
    if (!(S2.sdd > 0.0))
        return;
    e->ref_corr = S2.cyy > 0.0 && S2.crr > 0.0 ? S2.cyr / sqrt(S2.cyy * S2.crr) : 0.0;
    e->peak_share = S2.maxd / S2.sdd;
    if (S2.srr > 0.0) {
        double c = S2.sdr / S2.srr, res = 0.0;
        for (size_t i0 = 0; i0 < n; i0 += ES_B)
            res = es_pass3(y, ref, absref, i0, n - i0 < ES_B ? n - i0 : ES_B, c, res);
        e->scale_fit = 1.0 - res / S2.sdd;
        e->ref_scale = c;
    }
}

double kcs_edge_share(const double *y, const double *ref, size_t len, int64_t m, int64_t n)
{
    int64_t mt = m - m % 16, nt = n - n % 16;
    if (m < 1 || n < 1 || (mt == m && nt == n))
        return 0.0;
    /* the batch count from the output's length: a gemm case may carry a
     * batch in its shape that the op does not use */
    int64_t batch = (int64_t)(len / (size_t)(m * n));
    double all = 0.0, edge = 0.0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                size_t o = (size_t)((b * m + i) * n + j);
                if (!isfinite(y[o]) || !isfinite(ref[o]))
                    continue;
                double d = y[o] - ref[o];
                all += d * d;
                if (i >= mt || j >= nt)
                    edge += d * d;
            }
    return all > 0.0 ? edge / all : 0.0;
}
