/* Bit-level fast paths of format.h for the default rounding mode (round to
 * nearest even, overflow to Inf or the format's NaN, subnormals kept): the
 * rounding, encoding and digest words of fp32, tf32, bf16, fp16 and the fp8
 * formats, as straight-line integer code on the fp64 bit pattern (loops over
 * arrays vectorise). They return exactly what the generic path in format.c
 * returns (kcs_format_round_ref / kcs_format_encode_ref), which stays the
 * specification; tests/unit/arith/test_format_fast.c checks every 8- and 16-bit
 * value, every midpoint and its neighbours, and dense random doubles against
 * it (KCS_TEST_EXHAUSTIVE=1: every fp32 bit pattern as input).
 *
 * How: for |x| >= 2^emin the format keeps the top p bits of the fp64
 * significand, so adding (half ulp - 1 + lsb) to the bit pattern and
 * clearing the dropped bits rounds to nearest even (a carry moves into the
 * exponent field, which is the right result). Below 2^emin the quantum is
 * fixed at 2^(emin-p+1); (|x| + M) - M with M = 2^(emin-p+53) rounds to it
 * (exact fp64 operations in the default rounding mode), and the low bits of
 * |x| + M are the subnormal's significand field. Overflow compares bit
 * patterns with max finite. */
#ifndef KCS_FORMAT_FAST_H
#define KCS_FORMAT_FAST_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format.h"

typedef struct kcs_fmt_fast {
    int drop;            /* fp64 significand bits the format drops: 53 - p */
    uint64_t half_m1;    /* 2^(drop-1) - 1 */
    uint64_t sub_bits;   /* bits of 2^emin */
    uint64_t magic_bits; /* bits of M = 2^(emin - p + 53) */
    uint64_t max_bits;   /* bits of max finite */
    uint64_t ovf_bits;   /* |result| of an overflow: Inf, or NaN without Inf */
    uint64_t zero_sign;  /* sign bit kept on a zero: 2^63, or 0 without -0 */
    /* encoding */
    int mbits, shift;    /* stored significand bits; tf32 shift into fp32 */
    uint64_t rebias;     /* (1023 - bias) << mbits */
    uint64_t sign_code;  /* the sign bit of the encoding (before shift) */
    uint64_t inf_code, nan_code; /* nan_code already shifted */
} kcs_fmt_fast;

#if defined(__GNUC__)
#define KCS_FF_INLINE static inline __attribute__((always_inline))
#else
#define KCS_FF_INLINE static inline
#endif

#define KCS_FF_SIGN 0x8000000000000000ull
#define KCS_FF_INF 0x7ff0000000000000ull
#define KCS_FF_NAN 0x7ff8000000000000ull /* the NAN that format.c returns */

/* The generic paths (format.c): the specification the fast paths are
 * tested against. kcs_format_round/encode use the fast path when one
 * exists for the format and mode, these never. */
double kcs_format_round_ref(kcs_format f, double x, kcs_round_mode mode);
uint64_t kcs_format_encode_ref(kcs_format f, double x);
bool kcs_format_exact_ref(kcs_format f, double x);

/* NULL for fp64 and invalid formats. */
const kcs_fmt_fast *kcs_fmt_fast_get(kcs_format f);

KCS_FF_INLINE uint64_t kcs_ff_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

KCS_FF_INLINE double kcs_ff_double(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* c ? a : b for c in {0, 1}, without a branch (so that loops vectorise). */
KCS_FF_INLINE uint64_t kcs_ff_sel(uint64_t c, uint64_t a, uint64_t b)
{
    uint64_t m = (uint64_t)0 - c;
    return (a & m) | (b & ~m);
}

/* |x| bits a (not NaN) rounded: bits of the rounded magnitude, ovf_bits on
 * overflow. */
KCS_FF_INLINE uint64_t kcs_ff_round_abs(const kcs_fmt_fast *F, uint64_t a)
{
    uint64_t keep = ~((((uint64_t)1) << F->drop) - 1);
    uint64_t rn = (a + F->half_m1 + ((a >> F->drop) & 1)) & keep;
    double m = kcs_ff_double(F->magic_bits);
    double rs = (kcs_ff_double(a) + m) - m;
    uint64_t r = kcs_ff_sel(a < F->sub_bits, kcs_ff_bits(rs), rn);
    return kcs_ff_sel(r > F->max_bits, F->ovf_bits, r);
}

/* kcs_format_round(f, x, KCS_ROUND_DEFAULT) as a bit pattern. */
KCS_FF_INLINE uint64_t kcs_ff_round_bits(const kcs_fmt_fast *F, uint64_t b)
{
    uint64_t s = b & KCS_FF_SIGN, a = b ^ s;
    uint64_t r = kcs_ff_round_abs(F, a);
    uint64_t out = kcs_ff_sel(r == 0, s & F->zero_sign, s | r);
    return kcs_ff_sel((uint64_t)(a > KCS_FF_INF) | (r > KCS_FF_INF), KCS_FF_NAN, out);
}

KCS_FF_INLINE double kcs_ff_round(const kcs_fmt_fast *F, double x)
{
    return kcs_ff_double(kcs_ff_round_bits(F, kcs_ff_bits(x)));
}

/* kcs_ff_round for fp32 through the hardware conversion to binary32 (round
 * to nearest even in the default mode, overflow to Inf, subnormals kept,
 * the sign of zero kept): the same bits, NaN made format.c's NAN. */
KCS_FF_INLINE double kcs_ff_round_fp32(double x)
{
    float f = (float)x;
    return f == f ? (double)f : kcs_ff_double(KCS_FF_NAN);
}

/* Encoding of an already rounded value (bits rb from kcs_ff_round_bits). */
KCS_FF_INLINE uint64_t kcs_ff_encode_rounded(const kcs_fmt_fast *F, uint64_t rb)
{
    uint64_t s = rb & KCS_FF_SIGN, a = rb ^ s;
    uint64_t normal = (a >> (52 - F->mbits)) - F->rebias;
    uint64_t sub = kcs_ff_bits(kcs_ff_double(a) + kcs_ff_double(F->magic_bits)) - F->magic_bits;
    uint64_t code = kcs_ff_sel(a < F->sub_bits, sub, normal);
    code = kcs_ff_sel(a == KCS_FF_INF, F->inf_code, code);
    code = kcs_ff_sel(s >> 63, F->sign_code, 0) | code;
    return kcs_ff_sel(a > KCS_FF_INF, F->nan_code, code << F->shift);
}

/* kcs_format_encode(f, x). */
KCS_FF_INLINE uint64_t kcs_ff_encode(const kcs_fmt_fast *F, double x)
{
    return kcs_ff_encode_rounded(F, kcs_ff_round_bits(F, kcs_ff_bits(x)));
}

/* The word kcs_digest_values hashes for x: its encoding when x is exact in
 * the format (NaN counts as exact), else its fp64 bits ^ 0xA5A5... */
KCS_FF_INLINE uint64_t kcs_ff_digest_word(const kcs_fmt_fast *F, double x)
{
    uint64_t b = kcs_ff_bits(x);
    uint64_t rb = kcs_ff_round_bits(F, b);
    uint64_t exact = (uint64_t)((b & ~KCS_FF_SIGN) > KCS_FF_INF) | (kcs_ff_double(rb) == x);
    return kcs_ff_sel(exact, kcs_ff_encode_rounded(F, rb), b ^ 0xA5A5A5A5A5A5A5A5ull);
}

/* kcs_format_ulp_distance(f, a, b): values of the format between a and b
 * after rounding both into it, through the sign-magnitude encoding (-0 and
 * +0 coincide); NaN against NaN 0, against a number INFINITY. */
KCS_FF_INLINE double kcs_ff_ulp_distance(const kcs_fmt_fast *F, double a, double b)
{
    uint64_t ra = kcs_ff_round_bits(F, kcs_ff_bits(a)), rb = kcs_ff_round_bits(F, kcs_ff_bits(b));
    uint64_t na = (ra & ~KCS_FF_SIGN) > KCS_FF_INF, nb = (rb & ~KCS_FF_SIGN) > KCS_FF_INF;
    if (na | nb)
        return na & nb ? 0.0 : (double)INFINITY;
    uint64_t ea = kcs_ff_encode_rounded(F, ra) >> F->shift;
    uint64_t eb = kcs_ff_encode_rounded(F, rb) >> F->shift;
    uint64_t ma = ea & (F->sign_code - 1), mb = eb & (F->sign_code - 1);
    uint64_t d = (ea & F->sign_code) == (eb & F->sign_code) ? (ma > mb ? ma - mb : mb - ma)
                                                            : ma + mb;
    return (double)d;
}

/* kcs_ff_ulp_distance for fp32 through the hardware conversion to binary32
 * (round to nearest even, overflow to Inf: the format's default rounding),
 * about twice as fast as the table-driven form per element. */
KCS_FF_INLINE double kcs_ff_ulp_distance_fp32(double a, double b)
{
    float fa = (float)a, fb = (float)b;
    uint32_t ua, ub;
    memcpy(&ua, &fa, sizeof ua);
    memcpy(&ub, &fb, sizeof ub);
    uint32_t ma = ua & 0x7FFFFFFFu, mb = ub & 0x7FFFFFFFu;
    int na = ma > 0x7F800000u, nb = mb > 0x7F800000u;
    if (na | nb)
        return na & nb ? 0.0 : (double)INFINITY;
    uint64_t d = (ua >> 31) == (ub >> 31) ? (ma > mb ? ma - mb : mb - ma) : (uint64_t)ma + mb;
    return (double)d;
}

/* Arrays, default rounding mode; y may equal x. Every format (fp64: NaN
 * becomes NAN, other values pass). */
void kcs_format_round_n(kcs_format f, const double *x, double *y, size_t n);
void kcs_format_encode_n(kcs_format f, const double *x, uint64_t *bits, size_t n);
/* The words kcs_digest_values hashes (see kcs_ff_digest_word). */
void kcs_format_digest_words(kcs_format f, const double *x, uint64_t *w, size_t n);

#endif
