#include "effective_bits.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Outputs simulated per candidate width: at least MIN_OUT (or all), and
 * no more than BUDGET terms in all when that leaves more than MIN_OUT. */
#define MIN_OUT 64
#define BUDGET ((int64_t)1 << 18)

/* Output o's terms, read where they lie (no copy: at k = 2^20 the sample's
 * terms would be half a gigabyte): term j = a[j * as] * b[j * bs], exact
 * in double for inputs of at most 26 significant bits; a reduce_sum's b
 * is the constant 1. */
typedef struct terms {
    const double *a, *b;
    int64_t as, bs;
} terms;

static const double one = 1.0;

/* Output o's terms into *t; 0 when the op is not a sum of products or its
 * inputs are missing. */
static int terms_of(const kcs_call *c, size_t o, terms *t)
{
    int64_t k = c->k, m = c->m, nn = c->n, nb = c->batch > 0 ? c->batch : 1;
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM: {
        if (!c->in[0] || !c->in[1] || nn < 1 || m < 1)
            return 0;
        int64_t b = (int64_t)o / (m * nn), i = ((int64_t)o / nn) % m, l = (int64_t)o % nn;
        if (b >= nb)
            return 0;
        const double *A = c->in[0] + (size_t)(b * m * k), *B = c->in[1] + (size_t)(b * k * nn);
        *t = (terms){A + i * k, B + l, 1, nn};
        return 1;
    }
    case KCS_OP_DOT:
        if (!c->in[0] || !c->in[1])
            return 0;
        *t = (terms){c->in[0], c->in[1], 1, 1};
        return 1;
    case KCS_OP_REDUCE_SUM:
        if (!c->in[0])
            return 0;
        *t = (terms){c->in[0] + o * (size_t)k, &one, 1, 0};
        return 1;
    default:
        return 0;
    }
}

typedef struct est {
    const terms *terms; /* [n_out] */
    const double *ref;  /* [n_out] */
    int64_t k;
    size_t n_out;
    double sse_obs;
    double g[54]; /* g[p]: log2 of simulated over observed RMS error; NAN unknown */
} est;

enum { CHAINS = 8 };
typedef double v2 __attribute__((vector_size(2 * sizeof(double))));

/* Veltkamp: x rounded to nearest with p bits, sig = 2^(53-p) + 1 (0: x). */
#define VROUND(s, t, sig)                                                                        \
    do {                                                                                       \
        v2 x_ = (s) + (t), c_ = x_ * (sig);                                                    \
        (s) = c_ - (c_ - x_);                                                                  \
    } while (0)

/* g(p) = log2 (rms of a sequential p-bit sum's error / rms observed) for
 * up to CHAINS widths ps[0..np) at once: the sums of the widths, for two
 * outputs at a time, are 16 independent chains in one pass over the
 * terms (one chain alone waits on each addition's latency). Each addition
 * is the double sum rounded to p bits by Veltkamp's splitting (c =
 * (2^(53-p) + 1) x, c - (c - x): round to nearest, exact operations on
 * the fp64 exponent range, contraction off for this file): it differs
 * from one correct rounding (kcs_acc_add) only when the double sum falls
 * within 2^-53 of a p-bit midpoint or on a tie, far below what an RMS over
 * outputs sees. */
static void sim(est *e, const int *ps, int np)
{
    double sg[CHAINS];
    for (int i = 0; i < CHAINS; i++) {
        int p = ps[i < np ? i : np - 1];
        sg[i] = p >= 53 ? 0.0 : ldexp(1.0, 53 - p) + 1.0;
    }
    const v2 g0 = {sg[0], sg[1]}, g1 = {sg[2], sg[3]}, g2 = {sg[4], sg[5]}, g3 = {sg[6], sg[7]};
    double sse[CHAINS] = {0};
    for (size_t o = 0; o < e->n_out; o += 2) {
        int two = o + 1 < e->n_out;
        const terms t = e->terms[o], u = e->terms[two ? o + 1 : o];
        v2 a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int64_t j = 0; j < e->k; j++) {
            double tv = t.a[j * t.as] * t.b[j * t.bs], uv = u.a[j * u.as] * u.b[j * u.bs];
            v2 tj = {tv, tv}, uj = {uv, uv};
            VROUND(a0, tj, g0);
            VROUND(a1, tj, g1);
            VROUND(a2, tj, g2);
            VROUND(a3, tj, g3);
            VROUND(b0, uj, g0);
            VROUND(b1, uj, g1);
            VROUND(b2, uj, g2);
            VROUND(b3, uj, g3);
        }
        const v2 av[4] = {a0, a1, a2, a3}, bv[4] = {b0, b1, b2, b3};
        for (int i = 0; i < CHAINS; i++) {
            double d = av[i / 2][i % 2] - e->ref[o];
            sse[i] += d * d;
            if (two) {
                d = bv[i / 2][i % 2] - e->ref[o + 1];
                sse[i] += d * d;
            }
        }
    }
    for (int i = 0; i < np; i++)
        e->g[ps[i]] = sse[i] > 0.0 ? 0.5 * log2(sse[i] / e->sse_obs) : -INFINITY;
}

/* Simulate every width of [a, b] not yet known (at most CHAINS per pass). */
static void sim_range(est *e, int a, int b)
{
    int ps[CHAINS], np = 0;
    for (int p = a < 1 ? 1 : a; p <= b && p <= 53; p++) {
        if (!isnan(e->g[p]))
            continue;
        ps[np++] = p;
        if (np == CHAINS) {
            sim(e, ps, np);
            np = 0;
        }
    }
    if (np)
        sim(e, ps, np);
}

double kcs_effective_acc_bits(const kcs_call *c, const double *y, const double *ref, size_t n,
                              double fallback)
{
    int64_t k = c->k;
    if (k < 1 || n == 0)
        return fallback;
    if (c->op != KCS_OP_GEMM && c->op != KCS_OP_BATCHED_GEMM && c->op != KCS_OP_DOT &&
        c->op != KCS_OP_REDUCE_SUM)
        return fallback;
    size_t n_fin = 0;
    for (size_t o = 0; o < n; o++)
        n_fin += isfinite(y[o]) && isfinite(ref[o]);
    if (n_fin == 0)
        return fallback;
    size_t want = (size_t)(BUDGET / k);
    if (want < MIN_OUT)
        want = MIN_OUT;
    if (want > n_fin)
        want = n_fin;
    terms *tm = malloc(want * sizeof *tm);
    double *r = malloc(want * sizeof *r);
    if (!tm || !r) {
        free(tm);
        free(r);
        return fallback;
    }
    /* Every (n_fin / want)-th finite output, evenly over the outputs. */
    est e = {.terms = tm, .ref = r, .k = k};
    double sse = 0.0;
    size_t seen = 0;
    for (size_t o = 0; o < n && e.n_out < want; o++) {
        if (!(isfinite(y[o]) && isfinite(ref[o])))
            continue;
        size_t idx = seen++;
        if (idx != e.n_out * n_fin / want)
            continue;
        if (!terms_of(c, o, tm + e.n_out)) {
            free(tm);
            free(r);
            return fallback;
        }
        r[e.n_out++] = ref[o];
        double d = y[o] - ref[o];
        sse += d * d;
    }
    e.sse_obs = sse;
    double bits;
    if (!(sse > 0.0)) {
        bits = 64.0; /* exact on every sampled output */
    } else {
        for (int p = 0; p < 54; p++)
            e.g[p] = NAN;
        /* g falls by about one per bit. A coarse pass brackets its zero
         * (widths 4, 8, 11, .., 24, 28), a fine pass fills every width of
         * the bracket and one beyond each end, and a least-squares line
         * through g over the integers around the crossing gives the
         * estimate: single values of g carry the sample's noise (a
         * crossing can be off by one), the line averages it. Beyond 28
         * bits (wider than fp32, or fp32 in a more accurate order) no
         * stagnation is in sight and the random walk's slope of one per
         * bit extrapolates. */
        static const int coarse[CHAINS] = {4, 8, 11, 14, 17, 20, 24, 28};
        sim(&e, coarse, CHAINS);
        int ca = 0, cb = 54; /* coarse bracket: g(ca) >= 0 > g(cb); 0 beyond */
        for (int i = 0; i < CHAINS; i++) {
            if (e.g[coarse[i]] >= 0.0) {
                ca = coarse[i];
            } else {
                cb = coarse[i];
                break;
            }
        }
        if (cb == 54) {
            bits = 28.0 + e.g[28];
            goto done;
        }
        sim_range(&e, ca - 1, cb + 1);
        int lo = ca, hi = cb; /* the first integer crossing inside */
        for (int p = ca < 1 ? 1 : ca; p < cb && p < 53; p++)
            if (e.g[p] >= 0.0 && e.g[p + 1] < 0.0) {
                lo = p;
                hi = p + 1;
                break;
            }
        if (lo == 0) {
            bits = 1.0 + e.g[1]; /* worse than a 1-bit accumulator */
        } else {
            double sx = 0, sy = 0, sxx = 0, sxy = 0, np = 0;
            for (int p = lo - 1; p <= hi + 1; p++) {
                if (p < 1 || p > 53 || isnan(e.g[p]) || isinf(e.g[p]))
                    continue;
                sx += p;
                sy += e.g[p];
                sxx += (double)p * p;
                sxy += p * e.g[p];
                np++;
            }
            double den = np * sxx - sx * sx, slope = den > 0.0 ? (np * sxy - sx * sy) / den : 0.0;
            double a = e.g[lo], b = e.g[hi];
            bits = isinf(b) ? lo : lo + a / (a - b); /* the bracket's own */
            if (np >= 3 && slope < 0.0) {
                double x = ((sx * sxy - sxx * sy) / den) / slope; /* -intercept / slope */
                if (x >= lo - 1.0 && x <= hi + 1.0)
                    bits = x;
            }
        }
    }
done:
    free(tm);
    free(r);
    return bits > 64.0 ? 64.0 : bits;
}
