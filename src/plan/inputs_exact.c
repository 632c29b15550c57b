/* Exact-sum measurement inputs: see inputs_exact.h and contracts/README.md.
 *
 * With P the significand bits of the declared accumulator (and output),
 * L = ceil(log2 k) and r = P - 1 - L:
 *  - two operands (A·B, x·y): narrow entries are integers below 2^(ea+1)
 *    and 2^(eb+1) (ea + eb = r - 2): ones of ea + 1 / eb + 1 bits and
 *    either parity, or,
 *    where the input format has fewer bits, odd ones of its width shifted
 *    left (capped by the format's range): in half the draws to the top
 *    (top bit at ea / eb), in the other half by a uniform amount,
 *    so the k - 1 narrow products of one output sum to less than
 *    (k - 1) 2^r < 2^(P-1), and the products have up to ea + eb + 2
 *    significant bits (what a narrow accumulator must round) and random
 *    low bits, so partial sums of any block length have random parity;
 *  - one "wide" entry per reduction of the first operand: an odd integer
 *    of w = min(P - 2 - eb, p_in) significant bits, whose product with any
 *    b stays below 2^(P-1); where p_in < P - 2 - eb (bf16, fp16) it is
 *    shifted so its top bit is bit P - 3 - eb (capped by the range), so
 *    wide * b >= 2^(P-3) as with fp32 inputs;
 *  - narrow input formats with A entries of 4 bits or more: at one
 *    position j0 per trial A's and B's entries are odd and every other A
 *    entry is even (random from bit 1 up; B's keep either parity), so
 *    every output sum is odd: with the top-aligned wide entry most sums
 *    are odd integers >= 2^22 (fp32), which no accumulator of 22 bits holds;
 *  - one operand (reduce_sum, allreduce): narrow x below 2^r (as above), one
 *    wide odd x of min(P - 1, p_in) bits per row; where p_in < P - 1 the
 *    wide x is top-aligned (at least 2^(P-2), even) and one narrow x, at a
 *    random other position, is drawn odd or even so that the row's sum is
 *    odd: every sum is an odd integer >= 2^(P-2), needing P - 1 bits or
 *    more, with any input format; a row too large for the input format's
 *    range is scaled down by a power of two as a whole (fill_reduction),
 *    so its sums still need them (fp8_e4m3, whose span is too short for
 *    that, is drawn in units of its finest spacing, capped by its range).
 * Signs are per row of A (per batch) and per column of B, so the terms of
 * one output share a sign: every subset sum, hence every partial sum of
 * every order, is an integer of magnitude < 2^P, exact in P bits.
 * Input generator 5 (rng.h) made the narrow-format sums this wide. */
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
 * shifted left when bits > pin, in half the draws so that its top bit is
 * bit bits - 1 ("top-aligned": the sums reach as high as with a format
 * that holds all the bits), in the other half by a uniform amount (so the
 * middle bits of the sums are random too). Either parity: with odd entries
 * only, a block of an even number of terms would always sum to an even
 * integer, and a kernel that keeps block partials in a narrow format
 * (bf16 over blocks of 64) would round none of them (C-ORD-01's bad kernel
 * passed 2 of 20 trials at k = 2^20). */
static double entry(kcs_rng *r, int bits, int pin, int emax, double max_finite)
{
    if (bits > emax + 1)
        bits = emax + 1;
    if (bits <= pin)
        return any_int(r, bits);
    int shift = kcs_rng_u32(r) & 1 ? bits - pin
                                   : (int)(kcs_rng_u32(r) % (uint32_t)(bits - pin + 1));
    double v = ldexp(wide_int(r, pin), shift);
    /* formats whose top binade stops short (fp8_e4m3: 448, not 480) */
    while (v > max_finite && shift > 0) {
        v *= 0.5;
        shift--;
    }
    return v;
}

/* An odd integer of w significant bits shifted so its top bit is bit
 * wtop - 1 (capped by the format's range): the wide entry of a reduction
 * whose input format holds fewer than wtop bits. */
static double top_wide(kcs_rng *r, int w, int wtop, int emax, double max_finite)
{
    if (wtop > emax + 1)
        wtop = emax + 1;
    int shift = wtop > w ? wtop - w : 0;
    double v = ldexp(wide_int(r, w), shift);
    while (v > max_finite && shift > 0) {
        v *= 0.5;
        shift--;
    }
    return v;
}

/* A narrow entry (as entry()) of the parity asked for: odd ones are
 * pin-bit odd integers (or bits-bit ones where bits <= pin), even ones
 * top-aligned or shifted left by a uniform 1 to bits - pin. */
static double parity_entry(kcs_rng *r, int bits, int pin, int emax, double max_finite, int odd)
{
    if (bits > emax + 1)
        bits = emax + 1;
    if (bits <= pin) {
        double v = any_int(r, bits);
        if ((fmod(v, 2.0) != 0.0) != odd && bits >= 2)
            v = v + 1.0 < ldexp(1.0, bits) ? v + 1.0 : v - 1.0;
        return v;
    }
    if (odd)
        return wide_int(r, pin);
    int shift = kcs_rng_u32(r) & 1 ? bits - pin
                                   : 1 + (int)(kcs_rng_u32(r) % (uint32_t)(bits - pin));
    double v = ldexp(wide_int(r, pin), shift);
    while (v > max_finite && shift > 1) {
        v *= 0.5;
        shift--;
    }
    return v;
}

/* The k terms of one reduction, unsigned, at x[0], x[stride], ...: narrow
 * entries below 2^r, the wide one at jw. Where the input format holds
 * fewer bits than the wide entry needs (w < wtop: bf16, fp16, fp8), the
 * wide entry is top-aligned (at least 2^(wtop-1), even) and one narrow
 * entry, at a random jo != jw, is drawn odd or even so that the sum is
 * odd: the sum is then an odd integer of at least 2^(wtop-1), needing
 * wtop + 1 bits, as with fp32 inputs. */
static void draw_reduction(kcs_rng *g, double *x, size_t stride, size_t k, size_t jw, int r,
                           int w, int wtop, int pin, int emax, double max_finite)
{
    int narrow_fmt = w < wtop && k > 1, odd = 0;
    size_t jo = k;
    if (narrow_fmt)
        jo = (jw + 1 + (size_t)(kcs_rng_u64(g) % (uint64_t)(k - 1))) % k;
    for (size_t j = 0; j < k; j++) {
        if (j == jo)
            continue;
        double v = j != jw       ? entry(g, r, pin, emax, max_finite)
                   : narrow_fmt ? top_wide(g, w, wtop, emax, max_finite)
                                : wide_int(g, w);
        odd ^= fmod(v, 2.0) != 0.0;
        x[j * stride] = v;
    }
    if (jo < k)
        x[jo * stride] = parity_entry(g, r, pin, emax, max_finite, !odd);
}

/* One reduction of a one-operand op (reduce_sum, allreduce): k terms at
 * x[0], x[stride], ..., sign s, the wide entry at jw. The terms are drawn
 * at full width (narrow ones below 2^r) and, when the input format's range
 * is too short for them (fp16's largest binade is 2^15), the whole
 * reduction is scaled down by a power of two: every partial sum scales
 * with it, so it stays exact in P bits while still needing all of them (an
 * accumulator of 18 bits saw the capped fp16 sums fit at k = 8). When the
 * scaled terms would fall below the format's precision (fp8_e4m3: a span
 * of 2^18 from its finest spacing to its largest value), the terms are
 * drawn again, capped by that span, in units of the finest spacing. */
static void fill_reduction(kcs_rng *g, double *x, size_t stride, size_t k, size_t jw, double s,
                           int r, int w, int wtop, int pin, kcs_format fin)
{
    const kcs_format_info *fi = kcs_format_get(fin);
    double top = 0.0;
    draw_reduction(g, x, stride, k, jw, r, w, wtop, pin, 1023, INFINITY);
    for (size_t j = 0; j < k; j++)
        top = fmax(top, x[j * stride]);
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
    /* integers in units of the format's finest normal spacing 2^lo, so a
     * pin-bit odd entry is normal and every integer below 2^pin is exact
     * (fp8_e4m3: units 2^-9, entries up to 448 = 229376 units) */
    int lo = fi->emin - pin + 1;
    draw_reduction(g, x, stride, k, jw, r, w, wtop, pin, fi->emax - lo,
                   ldexp(fi->max_finite, -lo));
    for (size_t j = 0; j < k; j++)
        x[j * stride] = s * ldexp(x[j * stride], lo);
}

int kcs_exact_fill_sums(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
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
            fill_reduction(&g, x + i, cols, P_ranks, jw, s, r, w, P - 1, pin, cs->dtype_in);
        }
        return 0;
    }
    if (cs->op == KCS_OP_REDUCE_SUM) {
        int w = P - 1 < pin ? P - 1 : pin;
        size_t rows = len / (size_t)k;
        for (size_t i = 0; i < rows; i++) {
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)k);
            fill_reduction(&g, x + i * (size_t)k, 1, (size_t)k, jw, s, r, w, P - 1, pin,
                           cs->dtype_in);
        }
        return 0;
    }
    /* odd entries of ea + 1 and eb + 1 bits: products below 2^(ea+eb+2) <= 2^r */
    int ea = (r - 1) / 2, eb = r - 2 - ea;
    if (eb < 0) {
        ea = eb = -1; /* r <= 1: entries 1 (wide_int(0) = 1) */
    }
    int w = P - 2 - eb < pin ? P - 2 - eb : pin; /* wide * b < 2^(w + eb + 1) <= 2^(P-1) */
    /* Narrow input formats (w < P - 2 - eb): the wide entry is top-aligned
     * (wide * b >= 2^(P-3)), and where A's entries are shifted (ea + 1 >
     * pin) every output's sum is made odd: at one position j0 of the
     * trial (the same in A and B: drawn from the trial's own stream, the
     * low half of sb, inputs.c stream()) A's and B's entries are odd, every
     * other A entry is even, so each output holds exactly one odd product. */
    int wtop = P - 2 - eb, top = k >= 2 && w < wtop, force = top && ea + 1 >= 4;
    size_t kk = (size_t)k, j0 = kk;
    if (force) {
        kcs_rng g0;
        kcs_rng_init(&g0, seed, sa, (0xEC5ull << 32) | (sb & 0xffffffffull));
        j0 = (size_t)(kcs_rng_u64(&g0) % (uint64_t)k);
    }
    if (tensor == 0) {
        /* x of dot, or every row of every batch of A ((batch x) m x k) */
        for (size_t i = 0; i < len / kk; i++) {
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            size_t jw = (size_t)(kcs_rng_u64(&g) % (uint64_t)(force ? k - 1 : k));
            if (force)
                jw = (j0 + 1 + jw) % kk;
            for (size_t j = 0; j < kk; j++)
                x[i * kk + j] =
                    s * (j == jw  ? (top ? top_wide(&g, w, wtop, emax, fmax) : wide_int(&g, w))
                         : force ? parity_entry(&g, ea + 1, pin, emax, fmax, j == j0)
                                 : entry(&g, ea + 1, pin, emax, fmax));
        }
        return 0;
    }
    if (cs->op == KCS_OP_DOT) {
        double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
        (void)kcs_rng_u64(&g); /* the stream of x's layout */
        for (size_t j = 0; j < len; j++)
            x[j] = s * (j == j0 ? parity_entry(&g, eb + 1, pin, emax, fmax, 1)
                                : entry(&g, eb + 1, pin, emax, fmax));
        return 0;
    }
    /* B: (batch x) k x n, a sign per column */
    size_t n = (size_t)cs->shape.n, nb = len / (kk * n);
    for (size_t b = 0; b < nb; b++) {
        double *xb = x + b * kk * n;
        for (size_t l = 0; l < n; l++) {
            double s = kcs_rng_u32(&g) & 1 ? -1.0 : 1.0;
            for (size_t j = 0; j < kk; j++)
                xb[j * n + l] = s * (j == j0 ? parity_entry(&g, eb + 1, pin, emax, fmax, 1)
                                             : entry(&g, eb + 1, pin, emax, fmax));
        }
    }
    return 0;
}
