/* Exact-sum measurement inputs: see inputs_exact.h and contracts/README.md.
 *
 * With P the significand bits of the declared accumulator (and output),
 * L = ceil(log2 k) and r = P - 1 - L:
 *  - two operands (A·B, x·y): narrow entries are integers below 2^(ea+1)
 *    and 2^(eb+1) (ea + eb = r - 2): ones of ea + 1 / eb + 1 bits and
 *    either parity, or,
 *    where the input format has fewer bits, odd ones of its width shifted
 *    left by a random amount (capped by the format's range),
 *    so the k - 1 narrow products of one output sum to less than
 *    (k - 1) 2^r < 2^(P-1), and the products have up to ea + eb + 2
 *    significant bits (what a narrow accumulator must round) and random
 *    low bits, so partial sums of any block length have random parity;
 *  - one "wide" entry per reduction of the first operand: an odd integer
 *    of w = min(P - 2 - eb, p_in) significant bits, whose product with any
 *    b stays below 2^(P-1);
 *  - one operand (reduce_sum, allreduce): narrow x below 2^r (as above), one
 *    wide odd x of min(P - 1, p_in) bits per row; a row too large for the
 *    input format's range is scaled down by a power of two as a whole
 *    (fill_reduction), so its sums still need P - 1 bits.
 * Signs are per row of A (per batch) and per column of B, so the terms of
 * one output share a sign: every subset sum, hence every partial sum of
 * every order, is an integer of magnitude < 2^P, exact in P bits. */
#include "inputs_exact.h"

#include <math.h>

#include "rng.h"

/* Uniform integer in [lo, hi]. */
static double uint_in(kcs_rng *r, double lo, double hi)
{
    double v = lo + floor(kcs_rng_uniform(r) * (hi - lo + 1.0));
    return v > hi ? hi : v;
}

/* An odd integer with exactly w significant bits (w >= 1). */
static double wide_int(kcs_rng *r, int w)
{
    if (w <= 1)
        return 1.0;
    double lo = ldexp(1.0, w - 1), v = uint_in(r, lo, 2.0 * lo - 1.0);
    return fmod(v, 2.0) == 0.0 ? v + 1.0 : v;
}

/* An integer with exactly w significant bits, either parity (w >= 1). */
static double any_int(kcs_rng *r, int w)
{
    if (w <= 1)
        return 1.0;
    double lo = ldexp(1.0, w - 1);
    return uint_in(r, lo, 2.0 * lo - 1.0);
}

/* A positive integer below 2^bits, exact in a format of pin significand
 * bits and maximal exponent emax: an integer of min(bits, pin) bits,
 * shifted left by a uniform amount when bits > pin (so that narrow input
 * formats still give sums whose low and high bits are both set). Either
 * parity: with odd entries only, a block of an even number of terms would
 * always sum to an even integer, and a kernel that keeps block partials
 * in a narrow format (bf16 over blocks of 64) would round none of them
 * (C-ORD-01's bad kernel passed 2 of 20 trials at k = 2^20). */
static double entry(kcs_rng *r, int bits, int pin, int emax, double max_finite)
{
    if (bits > emax + 1)
        bits = emax + 1;
    if (bits <= pin)
        return any_int(r, bits);
    int shift = (int)(kcs_rng_u32(r) % (uint32_t)(bits - pin + 1));
    double v = ldexp(wide_int(r, pin), shift);
    /* formats whose top binade stops short (fp8_e4m3: 448, not 480) */
    while (v > max_finite && shift > 0) {
        v *= 0.5;
        shift--;
    }
    return v;
}

/* One reduction of a one-operand op (reduce_sum, allreduce): k terms at
 * x[0], x[stride], ..., sign s, the wide entry at jw. The terms are drawn
 * at full width (narrow ones below 2^r) and, when the input format's range
 * is too short for them (fp16's largest binade is 2^15), the whole
 * reduction is scaled down by a power of two: every partial sum scales
 * with it, so it stays exact in P bits while still needing all of them (an
 * accumulator of 18 bits saw the capped fp16 sums fit at k = 8). When the
 * scaled terms would fall below the format's precision (fp8), the terms
 * are drawn capped by its range instead. */
static void fill_reduction(kcs_rng *g, double *x, size_t stride, size_t k, size_t jw, double s,
                           int r, int w, int pin, kcs_format fin)
{
    const kcs_format_info *fi = kcs_format_get(fin);
    double top = 0.0;
    for (size_t j = 0; j < k; j++) {
        x[j * stride] = j == jw ? wide_int(g, w) : entry(g, r, pin, 1023, INFINITY);
        top = fmax(top, x[j * stride]);
    }
    int shift = 0;
    while (ldexp(top, -shift) > fi->max_finite)
        shift++;
    int exact = 1;
    for (size_t j = 0; j < k; j++) {
        x[j * stride] = s * ldexp(x[j * stride], -shift);
        exact &= kcs_format_exact(fin, x[j * stride]);
    }
    if (exact)
        return;
    for (size_t j = 0; j < k; j++)
        x[j * stride] = s * (j == jw ? wide_int(g, w)
                                     : entry(g, r, pin, fi->emax, fi->max_finite));
}

int kcs_exact_fill(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                   uint64_t sa, uint64_t sb, kcs_error *err)
{
    int64_t k = kcs_exact_terms(cs->op, cs->shape.m, cs->shape.k); /* terms per output */
    int rc = kcs_exact_check(cs->op, &cs->acc, cs->dtype_in, cs->dtype_out, k, err);
    if (rc)
        return rc;
    int P = kcs_exact_bits(&cs->acc, cs->dtype_out), pin = kcs_format_get(cs->dtype_in)->p;
    int emax = kcs_format_get(cs->dtype_in)->emax;
    double fmax = kcs_format_get(cs->dtype_in)->max_finite;
    int r = P - 1 - kcs_exact_ceil_log2(k);
    kcs_rng g;
    kcs_rng_init(&g, seed, sa, sb);
    if (cs->op == KCS_OP_ALLREDUCE) {
        /* x is m x len/m: output i sums column i over the m ranks, like a
         * reduce_sum row (one wide entry at a random rank, a sign per
         * output) */
        size_t P_ranks = (size_t)k, cols = len / P_ranks;
        int w = P - 1 < pin ? P - 1 : pin;
        for (size_t i = 0; i < cols; i++) {
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)k);
            fill_reduction(&g, x + i, cols, P_ranks, jw, s, r, w, pin, cs->dtype_in);
        }
        return 0;
    }
    if (cs->op == KCS_OP_REDUCE_SUM) {
        int w = P - 1 < pin ? P - 1 : pin;
        size_t rows = len / (size_t)k;
        for (size_t i = 0; i < rows; i++) {
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)k);
            fill_reduction(&g, x + i * (size_t)k, 1, (size_t)k, jw, s, r, w, pin, cs->dtype_in);
        }
        return 0;
    }
    /* odd entries of ea + 1 and eb + 1 bits: products below 2^(ea+eb+2) <= 2^r */
    int ea = (r - 1) / 2, eb = r - 2 - ea;
    if (eb < 0) {
        ea = eb = -1; /* r <= 1: entries 1 (wide_int(0) = 1) */
    }
    int w = P - 2 - eb < pin ? P - 2 - eb : pin; /* wide * b < 2^(w + eb + 1) <= 2^(P-1) */
    if (cs->op == KCS_OP_DOT) {
        double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
        size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)k);
        for (size_t j = 0; j < len; j++)
            x[j] = s * (tensor == 0 && j == jw ? wide_int(&g, w)
                                               : entry(&g, (tensor ? eb : ea) + 1, pin, emax, fmax));
        return 0;
    }
    /* gemm / batched_gemm: A is (batch x) m x k row-major, B (batch x) k x n */
    size_t m = (size_t)cs->shape.m, n = (size_t)cs->shape.n, kk = (size_t)k;
    if (tensor == 0) {
        for (size_t i = 0; i < len / kk; i++) { /* every row of every batch */
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)k);
            for (size_t j = 0; j < kk; j++)
                x[i * kk + j] = s * (j == jw ? wide_int(&g, w) : entry(&g, ea + 1, pin, emax, fmax));
        }
    } else {
        size_t nb = len / (kk * n);
        for (size_t b = 0; b < nb; b++) {
            double *xb = x + b * kk * n;
            for (size_t l = 0; l < n; l++) {
                double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
                for (size_t j = 0; j < kk; j++)
                    xb[j * n + l] = s * entry(&g, eb + 1, pin, emax, fmax);
            }
        }
    }
    (void)m;
    return 0;
}
