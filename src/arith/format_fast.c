/* Fast paths of format.h (see format_fast.h): the per-format constants and
 * the array loops. The loops are specialised per format (constants folded)
 * and, with GCC on x86-64, cloned for AVX2 and chosen at load time; they
 * contain no multiplication, so FMA contraction cannot change them. */
#include "format_fast.h"

#define P2(e) ((uint64_t)((e) + 1023) << 52)
#define FF(ebits, mbits, bias, emin, emax, maxmant, has_inf, neg_zero, nan_code, shift)           \
    {                                                                                          \
        52 - (mbits), ((uint64_t)1 << (51 - (mbits))) - 1, P2(emin), P2((emin) - (mbits) + 52),   \
            P2(emax) | ((uint64_t)(maxmant) << (52 - (mbits))),                                \
            (has_inf) ? KCS_FF_INF : KCS_FF_NAN, (neg_zero) ? KCS_FF_SIGN : 0, (mbits), (shift),  \
            (uint64_t)(1023 - (bias)) << (mbits), (uint64_t)1 << ((ebits) + (mbits)),             \
            (has_inf) ? (((uint64_t)1 << (ebits)) - 1) << (mbits) : 0, (nan_code)                \
    }

static const kcs_fmt_fast table[KCS_FMT_COUNT] = {
    [KCS_FMT_FP32] = FF(8, 23, 127, -126, 127, 0x7fffff, 1, 1, 0x7fc00000u, 0),
    [KCS_FMT_TF32] = FF(8, 10, 127, -126, 127, 0x3ff, 1, 1, 0x7fc00000u, 13),
    [KCS_FMT_BF16] = FF(8, 7, 127, -126, 127, 0x7f, 1, 1, 0x7fc0u, 0),
    [KCS_FMT_FP16] = FF(5, 10, 15, -14, 15, 0x3ff, 1, 1, 0x7e00u, 0),
    [KCS_FMT_FP8_E4M3] = FF(4, 3, 7, -6, 8, 0x6, 0, 1, 0x7fu, 0),
    [KCS_FMT_FP8_E5M2] = FF(5, 2, 15, -14, 15, 0x3, 1, 1, 0x7eu, 0),
    [KCS_FMT_FP8_E4M3FNUZ] = FF(4, 3, 8, -7, 7, 0x7, 0, 0, 0x80u, 0),
    [KCS_FMT_FP8_E5M2FNUZ] = FF(5, 2, 16, -15, 15, 0x3, 0, 0, 0x80u, 0),
};

const kcs_fmt_fast *kcs_fmt_fast_get(kcs_format f)
{
    if ((unsigned)f >= (unsigned)KCS_FMT_COUNT || f == KCS_FMT_FP64)
        return NULL;
    return &table[f];
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif
#define INLINE static inline __attribute__((always_inline))

INLINE void round_loop(const kcs_fmt_fast *F, const double *x, double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = kcs_ff_round(F, x[i]);
}

INLINE void encode_loop(const kcs_fmt_fast *F, const double *x, uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = kcs_ff_encode(F, x[i]);
}

INLINE void digest_loop(const kcs_fmt_fast *F, const double *x, uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] = kcs_ff_digest_word(F, x[i]);
}

/* One switch per loop so that each format's constants are folded in. */
#define DISPATCH(loop, f, x, out, n)                                                             \
    switch (f) {                                                                                 \
    case KCS_FMT_FP32: loop(&table[KCS_FMT_FP32], x, out, n); break;                            \
    case KCS_FMT_TF32: loop(&table[KCS_FMT_TF32], x, out, n); break;                            \
    case KCS_FMT_BF16: loop(&table[KCS_FMT_BF16], x, out, n); break;                            \
    case KCS_FMT_FP16: loop(&table[KCS_FMT_FP16], x, out, n); break;                            \
    case KCS_FMT_FP8_E4M3: loop(&table[KCS_FMT_FP8_E4M3], x, out, n); break;                    \
    case KCS_FMT_FP8_E5M2: loop(&table[KCS_FMT_FP8_E5M2], x, out, n); break;                    \
    case KCS_FMT_FP8_E4M3FNUZ: loop(&table[KCS_FMT_FP8_E4M3FNUZ], x, out, n); break;            \
    case KCS_FMT_FP8_E5M2FNUZ: loop(&table[KCS_FMT_FP8_E5M2FNUZ], x, out, n); break;            \
    default: break;                                                                              \
    }

CLONES void kcs_format_round_n(kcs_format f, const double *x, double *y, size_t n)
{
    if ((unsigned)f >= (unsigned)KCS_FMT_COUNT) { /* as kcs_format_round */
        for (size_t i = 0; i < n; i++)
            y[i] = kcs_ff_double(KCS_FF_NAN);
        return;
    }
    if (f == KCS_FMT_FP64) {
        for (size_t i = 0; i < n; i++) {
            uint64_t b = kcs_ff_bits(x[i]);
            y[i] = (b & ~KCS_FF_SIGN) > KCS_FF_INF ? kcs_ff_double(KCS_FF_NAN) : x[i];
        }
        return;
    }
    DISPATCH(round_loop, f, x, y, n)
}

CLONES void kcs_format_encode_n(kcs_format f, const double *x, uint64_t *bits, size_t n)
{
    if ((unsigned)f >= (unsigned)KCS_FMT_COUNT) { /* as kcs_format_encode */
        memset(bits, 0, n * sizeof *bits);
        return;
    }
    if (f == KCS_FMT_FP64) {
        memcpy(bits, x, n * sizeof *x);
        return;
    }
    DISPATCH(encode_loop, f, x, bits, n)
}

CLONES void kcs_format_digest_words(kcs_format f, const double *x, uint64_t *w, size_t n)
{
    if ((unsigned)f >= (unsigned)KCS_FMT_COUNT) { /* not exact: fp64 bits ^ A5 */
        for (size_t i = 0; i < n; i++)
            w[i] = kcs_ff_bits(x[i]) ^ 0xA5A5A5A5A5A5A5A5ull;
        return;
    }
    if (f == KCS_FMT_FP64) {
        memcpy(w, x, n * sizeof *x);
        return;
    }
    DISPATCH(digest_loop, f, x, w, n)
}
