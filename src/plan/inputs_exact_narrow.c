/* Exact-sum inputs for a gemm or batched_gemm whose output format is
 * narrower than its accumulator (kcs_exact_narrow_out: bf16, fp16 or fp8
 * output of an fp32 accumulator). The exact result must be representable
 * in dtype_out, so that a kernel that accumulates as declared and rounds
 * once to dtype_out returns it bit for bit, while the partial sums must
 * still need the declared accumulator, so that a running sum kept in
 * dtype_out, or partial sums of blocks of any size rounded to it, do not.
 *
 * With Pa the accumulator's significand bits and k the terms per output,
 * the k positions of a trial are laid out (one layout per trial, shared by
 * A and B) into:
 *  - one free position f: A_if = +-2^a_i, B_fj = +-b_j with b_j an integer
 *    of pb = min(p_in, p_out) bits and a_i <= Pa - 10 - p_out (capped by
 *    both formats' ranges and by Pa - 2 - pb): the product is
 *    representable in dtype_out, and its spacing in dtype_out, 2^a_i, is
 *    at most 2^-4 of dtype_out's spacing at the smallest carrier below;
 *  - h = (k - 1) / 2 pairs (q, q'): A_iq' = A_iq and B_q'j = -B_qj for
 *    every i, j, so the two products of a pair cancel exactly. The first
 *    nc = min(3, h, k - M) pairs are carriers (kcs_exact_narrow_carriers;
 *    M the largest power of two below k): q drawn from [0, M), q' from
 *    [M, k), so each carrier straddles a block boundary at every
 *    power-of-two block size up to M, and its products are wide,
 *    A_iq = +-alpha, B_qj = +-beta with 2^(Pa-5-c) <= |alpha beta| <
 *    2^(Pa-3-c) for carrier c (where dtype_in's range allows), each factor
 *    of up to p_in random significant bits. The other h - nc pairs
 *    (filler) hold the exact-sum inputs of the same op at h - nc terms and
 *    a (Pa - 3)-bit accumulator (inputs_exact.c): each output's filler
 *    products share a sign and sum to less than 2^(Pa-3) in magnitude;
 *  - where k - 1 is odd, one position z holding 0 in A and B.
 * Every output's exact result is then the free product alone, a value of
 * dtype_out, and the sum of the absolute values of its k terms is below
 * 2 (2^(Pa-3) + 2^(Pa-4) + 2^(Pa-5)) + 2 * 2^(Pa-3) + 2^(Pa-10) < 2^Pa:
 * every subset sum, so every partial sum of every order and blocking, is
 * an integer (a multiple of the smallest input unit) exact in Pa bits.
 * A block of any power-of-two size B <= M that holds one member of a
 * carrier and not the other has a partial sum near +-alpha beta, which
 * needs up to Pa - 3 bits, so a block partial (or a running sum) kept in
 * dtype_out is rounded by up to half its spacing there, 2^(Pa-4-c-p_out);
 * nothing cancels that error: the exact result needs no rounding, and the
 * two blocks of a carrier hold different other terms. So a kernel that
 * rounds block partials of any power-of-two size to dtype_out misses the
 * exact result unless all carrier blocks round by less than 2^(a_i - 1)
 * together on every output (tests/unit/plan/test_exact_out.c counts it
 * per block size). With k = 2^20 and no carriers, the filler pairs' values
 * were 1 but for one per output, so every 256-term block of a kernel that
 * rounds them to bf16 could sum exactly in bf16 (2 of 10 trials escaped).
 * The power boundary: an accumulator of Pa - 3 bits or more can hold
 * every partial sum (fp32 accumulator: 21 bits and more pass), unlike the
 * fp32-output inputs that catch 22 bits (contracts/README.md). The layout
 * and values are narrow-output generator 2 (KCS_INPUTS_NARROW_VERSION,
 * part of the plan hash of the cases that use it). */
#include "inputs_exact.h"

#include <math.h>
#include <stdlib.h>

#include "rng.h"

/* The trial's layout: perm[0] = f, perm[1] = z where k - 1 is odd
 * (o = 2, else o = 1), then the pairs (perm[o + 2t], perm[o + 2t + 1]):
 * the nc carriers first, with perm[o + 2t] < M <= perm[o + 2t + 1], then
 * the filler pairs, over the remaining positions in a random order. */
static int layout(size_t k, size_t o, size_t nc, uint64_t seed, uint64_t sa, uint64_t sb,
                  size_t **perm_p)
{
    size_t *perm = malloc(k * sizeof *perm), *rest = malloc(k * sizeof *rest);
    unsigned char *used = calloc(k ? k : 1, 1);
    if (!perm || !rest || !used) {
        free(perm);
        free(rest);
        free(used);
        return -1;
    }
    kcs_rng g;
    kcs_rng_init(&g, seed, sa, (0xA7Full << 32) | (sb & 0xffffffffull)); /* the trial's */
    size_t top = 1;
    while (2 * top < k)
        top *= 2;
    for (size_t c = 0; c < nc; c++) {
        size_t q, q2;
        do
            q = (size_t)(kcs_rng_u64(&g) % (uint64_t)top);
        while (used[q]);
        used[q] = 1;
        do
            q2 = top + (size_t)(kcs_rng_u64(&g) % (uint64_t)(k - top));
        while (used[q2]);
        used[q2] = 1;
        perm[o + 2 * c] = q;
        perm[o + 2 * c + 1] = q2;
    }
    size_t nr = 0;
    for (size_t i = 0; i < k; i++)
        if (!used[i])
            rest[nr++] = i;
    for (size_t i = nr; i-- > 1;) {
        size_t j = (size_t)(kcs_rng_u64(&g) % (uint64_t)(i + 1));
        size_t t = rest[i];
        rest[i] = rest[j];
        rest[j] = t;
    }
    size_t r = 0;
    for (size_t i = 0; i < k; i++)
        if (i < o || i >= o + 2 * nc)
            perm[i] = rest[r++];
    free(rest);
    free(used);
    *perm_p = perm;
    return 0;
}

/* A carrier factor: an integer with min(p, t) random significant bits
 * (the top one set) whose top bit is bit t - 1, capped by the format's
 * range (emax, max_finite). */
static double carrier_factor(kcs_rng *r, int t, int p, int emax, double max_finite)
{
    if (t > emax + 1)
        t = emax + 1;
    if (t < 1)
        t = 1;
    int w = p < t ? p : t;
    double lo = ldexp(1.0, w - 1);
    double v = lo + floor(kcs_rng_uniform(r) * lo);
    if (v > 2.0 * lo - 1.0)
        v = 2.0 * lo - 1.0;
    v = ldexp(v, t - w);
    while (v > max_finite)
        v *= 0.5;
    return v;
}

/* An integer of exactly w >= 1 significant bits, either parity. */
static double any_bits(kcs_rng *r, int w)
{
    if (w <= 1)
        return 1.0;
    double lo = ldexp(1.0, w - 1);
    double v = lo + floor(kcs_rng_uniform(r) * lo);
    return v > 2.0 * lo - 1.0 ? 2.0 * lo - 1.0 : v;
}

int kcs_exact_fill(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                   uint64_t sa, uint64_t sb, kcs_error *err)
{
    if (!kcs_exact_narrow_out(cs->op, &cs->acc, cs->dtype_out))
        return kcs_exact_fill_sums(cs, tensor, x, len, seed, sa, sb, err);
    int64_t k = kcs_exact_terms(cs->op, cs->shape.m, cs->shape.k);
    int rc = kcs_exact_check(cs->op, &cs->acc, cs->dtype_in, cs->dtype_out, k, err);
    return rc ? rc : kcs_exact_fill_narrow(cs, tensor, x, len, seed, sa, sb, err);
}

int kcs_exact_fill_narrow(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                          uint64_t sa, uint64_t sb, kcs_error *err)
{
    size_t k = (size_t)cs->shape.k, h = (k - 1) / 2, o = (k - 1) % 2 ? 2 : 1;
    size_t nc = (size_t)kcs_exact_narrow_carriers((int64_t)k), hf = h - nc;
    size_t n = (size_t)cs->shape.n, m = (size_t)cs->shape.m;
    size_t nb = tensor == 0 ? len / (m * k) : len / (k * n);
    int pa = kcs_exact_acc_bits(&cs->acc);
    const kcs_format_info *fi = kcs_format_get(cs->dtype_in), *fo = kcs_format_get(cs->dtype_out);
    int pb = fi->p < fo->p ? fi->p : fo->p;
    /* free product +-2^a b, b < 2^pb: below 2^(Pa-2), its top bit at most
     * emax_out - 1 (below every format's largest finite value), 2^a and b
     * exact in dtype_in, and 2^a at most 2^-4 of dtype_out's spacing at
     * the smallest carrier (2^(Pa-7) and up: spacing 2^(Pa-6-p_out)) */
    int amax = pa - 2 - pb;
    if (amax > pa - 10 - fo->p)
        amax = pa - 10 - fo->p;
    if (amax > fo->emax - pb)
        amax = fo->emax - pb;
    if (amax > fi->emax)
        amax = fi->emax;
    if (amax < 0)
        amax = 0;
    size_t *perm = NULL;
    if (layout(k, o, nc, seed, sa, sb, &perm))
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for exact inputs");
    double *half = NULL;
    size_t hlen = tensor == 0 ? nb * m * hf : nb * hf * n;
    if (hf > 0) {
        half = malloc(hlen * sizeof *half);
        if (!half) {
            free(perm);
            return kcs_fail(err, KCS_E_NOMEM, "out of memory for exact inputs");
        }
        kcs_case sub = *cs;
        sub.shape.k = (int64_t)hf;
        sub.acc = (kcs_acc){.fmt = KCS_FMT_FP64, .bits = pa - 3, .rz = 0};
        sub.dtype_out = KCS_FMT_FP64;
        int rc = kcs_exact_fill_sums(&sub, tensor, half, hlen, seed, sa, sb, err);
        if (rc) {
            free(half);
            free(perm);
            return rc;
        }
    }
    kcs_rng g; /* this tensor's free and carrier entries */
    kcs_rng_init(&g, seed, sa, sb ^ (0xF4EEull << 48));
    size_t f = perm[0];
    /* carrier c: |alpha beta| < 2^T, T = Pa - 3 - c, alpha's top bit at
     * ta - 1, beta's at T - ta - 1 (each capped by dtype_in's range) */
    int ta[3], tb[3];
    for (size_t c = 0; c < nc; c++) {
        int t = pa - 3 - (int)c;
        ta[c] = (t + 1) / 2 < fi->emax + 1 ? (t + 1) / 2 : fi->emax + 1;
        tb[c] = t - ta[c];
    }
    if (tensor == 0) {
        /* A: (batch x) m x k */
        for (size_t r = 0; r < nb * m; r++) {
            double *row = x + r * k;
            const double *hr = half ? half + r * hf : NULL;
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            row[f] = s * ldexp(1.0, (int)(kcs_rng_u32(&g) % (uint32_t)(amax + 1)));
            if (o == 2)
                row[perm[1]] = 0.0;
            for (size_t c = 0; c < nc; c++) {
                double sc = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
                row[perm[o + 2 * c]] = row[perm[o + 2 * c + 1]] =
                    sc * carrier_factor(&g, ta[c], fi->p, fi->emax, fi->max_finite);
            }
            for (size_t t = 0; t < hf; t++)
                row[perm[o + 2 * (nc + t)]] = row[perm[o + 2 * (nc + t) + 1]] = hr[t];
        }
    } else {
        /* B: (batch x) k x n */
        for (size_t b = 0; b < nb; b++) {
            double *xb = x + b * k * n;
            const double *hb = half ? half + b * hf * n : NULL;
            for (size_t l = 0; l < n; l++) {
                double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
                xb[f * n + l] = s * any_bits(&g, pb);
                if (o == 2)
                    xb[perm[1] * n + l] = 0.0;
                for (size_t c = 0; c < nc; c++) {
                    double v = (kcs_rng_u32(&g) & 1 ? -1.0 : 1.0) *
                               carrier_factor(&g, tb[c], fi->p, fi->emax, fi->max_finite);
                    xb[perm[o + 2 * c] * n + l] = v;
                    xb[perm[o + 2 * c + 1] * n + l] = -v;
                }
                for (size_t t = 0; t < hf; t++) {
                    xb[perm[o + 2 * (nc + t)] * n + l] = hb[t * n + l];
                    xb[perm[o + 2 * (nc + t) + 1] * n + l] = -hb[t * n + l];
                }
            }
        }
    }
    free(half);
    free(perm);
    return 0;
}
