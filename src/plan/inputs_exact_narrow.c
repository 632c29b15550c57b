/* Exact-sum inputs for a gemm or batched_gemm whose output format is
 * narrower than its accumulator (kcs_exact_narrow_out: bf16, fp16 or fp8
 * output of an fp32 accumulator). The exact result must be representable
 * in dtype_out, so that a kernel that accumulates as declared and rounds
 * once to dtype_out returns it bit for bit, while the partial sums must
 * still need the declared accumulator, so that a running sum kept in
 * dtype_out (or rounded to it block by block) does not.
 *
 * With Pa the accumulator's significand bits and k the terms per output,
 * the k positions of a trial are shuffled (one permutation per trial,
 * shared by A and B) into:
 *  - one free position f: A_if = +-2^a_i, B_fj = +-b_j with b_j an integer
 *    of pb = min(p_in, p_out) bits and a_i <= Pa - 2 - pb (capped by both
 *    formats' ranges): the product has at most pb significant bits and is
 *    below 2^(Pa-2) and the output format's largest binade, so it is
 *    representable in dtype_out;
 *  - h = (k - 1) / 2 pairs (q, q'): A_iq' = A_iq and B_q'j = -B_qj for
 *    every i, j, so the two products of a pair cancel exactly. The values
 *    of the pairs are the exact-sum inputs of the same op at k = h terms
 *    and a (Pa - 2)-bit accumulator (inputs_exact.c): each output's h
 *    products share a sign and sum to less than 2^(Pa-2) in magnitude;
 *  - where k - 1 is odd, one position z holding 0 in A and B.
 * Every output's exact result is then the free product alone, a value of
 * dtype_out, and the sum of the absolute values of its k terms is below
 * 2 * 2^(Pa-2) + 2^(Pa-2) < 2^Pa: every subset sum, so every partial sum
 * of every order, is an integer exact in Pa bits. The pair values are
 * those of the (Pa - 2)-bit construction, whose sums are odd integers of
 * up to Pa - 3 bits with random low bits: partial sums of a random order
 * of the pairs' terms need up to Pa - 3 bits, and an accumulator (or a
 * block partial) of dtype_out's width rounds them. The cancellation makes
 * that rounding error the whole error: nothing of it is cancelled by the
 * final rounding to dtype_out, because the exact result needs no rounding.
 * The power boundary: an accumulator of Pa - 3 bits or more can hold
 * every partial sum (fp32 accumulator: 21 bits and more pass), unlike the
 * fp32-output inputs that catch 22 bits (contracts/README.md). */
#include "inputs_exact.h"

#include <math.h>
#include <stdlib.h>

#include "rng.h"

/* The trial's layout: perm[0] = f, perm[1] = z where k - 1 is odd, then
 * the pairs (perm[o + 2t], perm[o + 2t + 1]), o = 1 or 2. */
static int layout(size_t k, uint64_t seed, uint64_t sa, uint64_t sb, size_t **perm_p)
{
    size_t *perm = malloc(k * sizeof *perm);
    if (!perm)
        return -1;
    for (size_t i = 0; i < k; i++)
        perm[i] = i;
    kcs_rng g;
    kcs_rng_init(&g, seed, sa, (0xA7Full << 32) | (sb & 0xffffffffull)); /* the trial's */
    for (size_t i = k - 1; i > 0; i--) {
        size_t j = (size_t)(kcs_rng_u64(&g) % (uint64_t)(i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    *perm_p = perm;
    return 0;
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
    size_t n = (size_t)cs->shape.n, m = (size_t)cs->shape.m;
    size_t nb = tensor == 0 ? len / (m * k) : len / (k * n);
    int pa = kcs_exact_acc_bits(&cs->acc);
    const kcs_format_info *fi = kcs_format_get(cs->dtype_in), *fo = kcs_format_get(cs->dtype_out);
    int pb = fi->p < fo->p ? fi->p : fo->p;
    /* free product +-2^a b, b < 2^pb: below 2^(Pa-2), its top bit at most
     * emax_out - 1 (below every format's largest finite value), 2^a and b
     * exact in dtype_in */
    int amax = pa - 2 - pb;
    if (amax > fo->emax - pb)
        amax = fo->emax - pb;
    if (amax > fi->emax)
        amax = fi->emax;
    if (amax < 0)
        amax = 0;
    size_t *perm = NULL;
    if (layout(k, seed, sa, sb, &perm))
        return kcs_fail(err, KCS_E_NOMEM, "out of memory for exact inputs");
    double *half = NULL;
    size_t hlen = tensor == 0 ? nb * m * h : nb * h * n;
    if (h > 0) {
        half = malloc(hlen * sizeof *half);
        if (!half) {
            free(perm);
            return kcs_fail(err, KCS_E_NOMEM, "out of memory for exact inputs");
        }
        kcs_case sub = *cs;
        sub.shape.k = (int64_t)h;
        sub.acc = (kcs_acc){.fmt = KCS_FMT_FP64, .bits = pa - 2, .rz = 0};
        sub.dtype_out = KCS_FMT_FP64;
        int rc = kcs_exact_fill_sums(&sub, tensor, half, hlen, seed, sa, sb, err);
        if (rc) {
            free(half);
            free(perm);
            return rc;
        }
    }
    kcs_rng g; /* this tensor's free entries */
    kcs_rng_init(&g, seed, sa, sb ^ (0xF4EEull << 48));
    size_t f = perm[0];
    if (tensor == 0) {
        /* A: (batch x) m x k */
        for (size_t r = 0; r < nb * m; r++) {
            double *row = x + r * k;
            const double *hr = half ? half + r * h : NULL;
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            row[f] = s * ldexp(1.0, (int)(kcs_rng_u32(&g) % (uint32_t)(amax + 1)));
            if (o == 2)
                row[perm[1]] = 0.0;
            for (size_t t = 0; t < h; t++)
                row[perm[o + 2 * t]] = row[perm[o + 2 * t + 1]] = hr[t];
        }
    } else {
        /* B: (batch x) k x n */
        for (size_t b = 0; b < nb; b++) {
            double *xb = x + b * k * n;
            const double *hb = half ? half + b * h * n : NULL;
            for (size_t l = 0; l < n; l++) {
                double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
                xb[f * n + l] = s * any_bits(&g, pb);
                if (o == 2)
                    xb[perm[1] * n + l] = 0.0;
                for (size_t t = 0; t < h; t++) {
                    xb[perm[o + 2 * t] * n + l] = hb[t * n + l];
                    xb[perm[o + 2 * t + 1] * n + l] = -hb[t * n + l];
                }
            }
        }
    }
    free(half);
    free(perm);
    return 0;
}
