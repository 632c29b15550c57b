/* Number formats: parameters, rounding, encodings, ulp distance.
 * Spec: shared/PROFILES.md ("Number formats").
 *
 * Rounding works on doubles: for |x| with exponent e = floor(log2|x|), the
 * quantum of format f is q = 2^(max(e, emin) - p + 1); x/q is an exact double
 * (power-of-two scaling of a value with at most 53 significant bits), its
 * integer part and fraction are exact, so the rounding decision is exact.
 * Overflow is decided on the rounded value (unbounded exponent), as IEEE 754
 * does: RNE overflows when the rounded magnitude exceeds max finite; directed
 * modes overflow to the largest finite value on the side toward which they
 * round (RZ: always max finite), to +-Inf (NaN without Inf) on the other. */
#include "format.h"

#include "error.h"
#include "format_fast.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Layout of the encodings (fp64 is handled through its IEEE bit pattern). */
typedef enum { SPEC_IEEE, SPEC_FN, SPEC_FNUZ } spec_kind;

typedef struct fmt_layout {
    int ebits, mbits, bias;
    spec_kind spec;
    int shift; /* tf32: pattern sits in the high bits of an fp32 word */
} fmt_layout;

static const kcs_format_info infos[KCS_FMT_COUNT] = {
    [KCS_FMT_FP64] = {"fp64", 64, 53, -1022, 1023, true, true, DBL_MAX},
    [KCS_FMT_FP32] = {"fp32", 32, 24, -126, 127, true, true, 0x1.fffffep127},
    [KCS_FMT_TF32] = {"tf32", 32, 11, -126, 127, true, true, 0x1.ffcp127},
    [KCS_FMT_BF16] = {"bf16", 16, 8, -126, 127, true, true, 0x1.fep127},
    [KCS_FMT_FP16] = {"fp16", 16, 11, -14, 15, true, true, 65504.0},
    [KCS_FMT_FP8_E4M3] = {"fp8_e4m3", 8, 4, -6, 8, false, true, 448.0},
    [KCS_FMT_FP8_E5M2] = {"fp8_e5m2", 8, 3, -14, 15, true, true, 57344.0},
    [KCS_FMT_FP8_E4M3FNUZ] = {"fp8_e4m3fnuz", 8, 4, -7, 7, false, false, 240.0},
    [KCS_FMT_FP8_E5M2FNUZ] = {"fp8_e5m2fnuz", 8, 3, -15, 15, false, false, 57344.0},
};

static const fmt_layout layouts[KCS_FMT_COUNT] = {
    [KCS_FMT_FP64] = {11, 52, 1023, SPEC_IEEE, 0},
    [KCS_FMT_FP32] = {8, 23, 127, SPEC_IEEE, 0},
    [KCS_FMT_TF32] = {8, 10, 127, SPEC_IEEE, 13},
    [KCS_FMT_BF16] = {8, 7, 127, SPEC_IEEE, 0},
    [KCS_FMT_FP16] = {5, 10, 15, SPEC_IEEE, 0},
    [KCS_FMT_FP8_E4M3] = {4, 3, 7, SPEC_FN, 0},
    [KCS_FMT_FP8_E5M2] = {5, 2, 15, SPEC_IEEE, 0},
    [KCS_FMT_FP8_E4M3FNUZ] = {4, 3, 8, SPEC_FNUZ, 0},
    [KCS_FMT_FP8_E5M2FNUZ] = {5, 2, 16, SPEC_FNUZ, 0},
};

static const struct {
    const char *alias;
    kcs_format f;
} aliases[] = {
    {"f64", KCS_FMT_FP64},          {"float64", KCS_FMT_FP64},
    {"f32", KCS_FMT_FP32},          {"float32", KCS_FMT_FP32},
    {"f16", KCS_FMT_FP16},          {"float16", KCS_FMT_FP16},
    {"bfloat16", KCS_FMT_BF16},     {"fp8_e4m3fn", KCS_FMT_FP8_E4M3},
    {"e4m3", KCS_FMT_FP8_E4M3},     {"e5m2", KCS_FMT_FP8_E5M2},
};

static bool valid(kcs_format f)
{
    return (unsigned)f < (unsigned)KCS_FMT_COUNT;
}

const kcs_format_info *kcs_format_get(kcs_format f)
{
    return valid(f) ? &infos[f] : NULL;
}

int kcs_format_parse(const char *name, kcs_format *f_p)
{
    if (!name)
        return KCS_E_INVAL;
    for (int i = 0; i < KCS_FMT_COUNT; i++) {
        if (strcmp(name, infos[i].name) == 0) {
            *f_p = (kcs_format)i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *f_p = aliases[i].f;
            return 0;
        }
    }
    return KCS_E_INVAL;
}

const char *kcs_format_name(kcs_format f)
{
    return valid(f) ? infos[f].name : "unknown";
}

double kcs_format_u(kcs_format f)
{
    return valid(f) ? ldexp(1.0, -infos[f].p) : NAN;
}

double kcs_format_eps(kcs_format f)
{
    return valid(f) ? ldexp(1.0, 1 - infos[f].p) : NAN;
}

/* x * 2^k, exact here: the results are normal doubles (or k is out of the
 * fast range and ldexp, exact for these operands, does it). */
static inline double scale2(double x, int k)
{
    if (k < -1022 || k > 1023)
        return ldexp(x, k);
    uint64_t b = (uint64_t)(k + 1023) << 52;
    double s;
    memcpy(&s, &b, sizeof s);
    return x * s;
}

static inline int exponent_of(double ax) /* floor(log2 ax), ax > 0 finite */
{
    uint64_t b;
    memcpy(&b, &ax, sizeof b);
    int ef = (int)(b >> 52); /* ax > 0: no sign bit */
    return ef ? ef - 1023 : ilogb(ax);
}

/* Round |x| (finite, > 0) to p significant bits with exponent floor emin and
 * no upper exponent bound. neg says which way RD/RU go. */
static double round_mag(double ax, int p, int emin, kcs_rounding r, bool neg)
{
    int e = exponent_of(ax);
    if (e < emin)
        e = emin;
    int sc = p - 1 - e;
    double m = scale2(ax, sc); /* exact: < 2^p, power-of-two scaling */
    double fl = floor(m);
    double frac = m - fl; /* exact */
    if (frac != 0.0) {
        bool up;
        switch (r) {
        case KCS_RZ: up = false; break;
        case KCS_RD: up = neg; break;
        case KCS_RU: up = !neg; break;
        case KCS_RNE:
        default:
            up = frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0);
            break;
        }
        if (up)
            fl += 1.0;
    }
    return scale2(fl, -sc);
}

/* The value an overflow produces: RZ and the "inward" directed mode give
 * max finite; RNE and the "outward" mode give Inf (NaN without Inf). */
static double overflow_value(const kcs_format_info *fi, bool neg, kcs_rounding r,
                             kcs_overflow ovf)
{
    bool to_max = ovf == KCS_OVF_SATURATE || r == KCS_RZ || (r == KCS_RD && !neg) ||
                  (r == KCS_RU && neg);
    double v = to_max ? fi->max_finite : (fi->has_inf ? INFINITY : NAN);
    if (isnan(v))
        return v;
    return neg ? -v : v;
}

static double zero_of(const kcs_format_info *fi, bool neg)
{
    return (neg && fi->has_neg_zero) ? -0.0 : 0.0;
}

/* kcs_round_bits by integer operations on the double's encoding, for RNE
 * and RZ where |x| is normal in the fp32 exponent range (the common case);
 * false: take the general path. Adding half an ulp minus one plus the kept
 * last bit, then clearing the dropped bits, rounds to nearest even; a carry
 * out of the significand moves into the exponent, which is right. */
static inline bool round_bits_fast(double x, int p, kcs_rounding r, double *out)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int eb = (int)((u >> 52) & 0x7ff);
    if (p < 2 || p > 52 || eb < 1023 - 126 || eb > 1023 + 127 || (r != KCS_RNE && r != KCS_RZ))
        return false;
    int shift = 53 - p;
    uint64_t mask = ((uint64_t)1 << shift) - 1;
    if (r == KCS_RNE)
        u += (mask >> 1) + ((u >> shift) & 1);
    u &= ~mask;
    if ((int)((u >> 52) & 0x7ff) > 1023 + 127)
        return false; /* rounded past the largest binade: overflow below */
    memcpy(out, &u, sizeof u);
    return true;
}

static bool is_default(kcs_round_mode m)
{
    return m.rounding == KCS_RNE && m.overflow == KCS_OVF_INF && m.subnormal == KCS_SUB_KEEP;
}

double kcs_format_round(kcs_format f, double x, kcs_round_mode mode)
{
    if (f == KCS_FMT_FP32 && is_default(mode))
        return kcs_ff_round_fp32(x);
    const kcs_fmt_fast *ff = kcs_fmt_fast_get(f);
    if (ff && is_default(mode))
        return kcs_ff_round(ff, x);
    /* truncation (RZ) in the formats with fp32's exponent range: the
     * truncating accumulators of matrix units */
    double fast;
    if (mode.rounding == KCS_RZ && mode.subnormal == KCS_SUB_KEEP &&
        (f == KCS_FMT_FP32 || f == KCS_FMT_BF16 || f == KCS_FMT_TF32) &&
        round_bits_fast(x, infos[f].p, KCS_RZ, &fast))
        return fast;
    return kcs_format_round_ref(f, x, mode);
}

double kcs_format_round_ref(kcs_format f, double x, kcs_round_mode mode)
{
    if (!valid(f))
        return NAN;
    const kcs_format_info *fi = &infos[f];
    if (isnan(x))
        return NAN;
    bool neg = signbit(x);
    if (isinf(x)) {
        if (mode.overflow == KCS_OVF_SATURATE)
            return neg ? -fi->max_finite : fi->max_finite;
        if (!fi->has_inf)
            return NAN;
        return x;
    }
    if (x == 0.0)
        return zero_of(fi, neg);
    double r = round_mag(fabs(x), fi->p, fi->emin, mode.rounding, neg);
    if (r > fi->max_finite)
        return overflow_value(fi, neg, mode.rounding, mode.overflow);
    if (mode.subnormal == KCS_SUB_FLUSH && r < ldexp(1.0, fi->emin))
        r = 0.0;
    if (r == 0.0)
        return zero_of(fi, neg);
    return neg ? -r : r;
}

double kcs_round_bits(double x, int p, kcs_rounding r)
{
    double fast;
    if (round_bits_fast(x, p, r, &fast))
        return fast;
    return kcs_round_bits_ref(x, p, r);
}

double kcs_round_bits_ref(double x, int p, kcs_rounding r)
{
    if (isnan(x) || isinf(x) || x == 0.0)
        return x;
    if (p < 1 || p > 53)
        return NAN;
    bool neg = signbit(x);
    double v = round_mag(fabs(x), p, -126, r, neg);
    double max = ldexp(2.0 - ldexp(1.0, 1 - p), 127);
    if (v > max)
        v = INFINITY;
    return neg ? -v : v;
}

/* Whether x is exact in f, the finite in-range values rounded by ff's
 * table (ff NULL: the generic path). */
static bool exact_by(kcs_format f, double x, const kcs_fmt_fast *ff)
{
    if (!valid(f))
        return false;
    const kcs_format_info *fi = &infos[f];
    if (isnan(x))
        return true;
    if (isinf(x))
        return fi->has_inf;
    if (fabs(x) > fi->max_finite)
        return false;
    if (ff)
        return kcs_ff_round(ff, x) == x;
    /* -0 of a format without -0 is the value 0, which is exact. */
    return kcs_format_round_ref(f, x, KCS_ROUND_DEFAULT) == x;
}

bool kcs_format_exact(kcs_format f, double x)
{
    return exact_by(f, x, kcs_fmt_fast_get(f));
}

bool kcs_format_exact_ref(kcs_format f, double x)
{
    return exact_by(f, x, NULL);
}

static uint64_t nan_pattern(kcs_format f)
{
    const fmt_layout *l = &layouts[f];
    switch (l->spec) {
    case SPEC_FNUZ:
        return 0x80;
    case SPEC_FN: /* all-ones exponent and mantissa, sign 0 */
        return ((uint64_t)1 << (l->ebits + l->mbits)) - 1;
    case SPEC_IEEE:
    default: /* quiet NaN: all-ones exponent, top mantissa bit */
        return ((((uint64_t)1 << l->ebits) - 1) << l->mbits |
                (uint64_t)1 << (l->mbits - 1))
               << l->shift;
    }
}

uint64_t kcs_format_encode(kcs_format f, double x)
{
    const kcs_fmt_fast *ff = kcs_fmt_fast_get(f);
    if (ff)
        return kcs_ff_encode(ff, x);
    return kcs_format_encode_ref(f, x);
}

uint64_t kcs_format_encode_ref(kcs_format f, double x)
{
    if (!valid(f))
        return 0;
    if (f == KCS_FMT_FP64) {
        uint64_t u;
        memcpy(&u, &x, sizeof u);
        return u;
    }
    const fmt_layout *l = &layouts[f];
    const kcs_format_info *fi = &infos[f];
    x = kcs_format_round_ref(f, x, KCS_ROUND_DEFAULT); /* identity when exact */
    if (isnan(x))
        return nan_pattern(f);
    if (isinf(x) && !fi->has_inf)
        return nan_pattern(f);
    uint64_t sign = signbit(x) ? (uint64_t)1 << (l->ebits + l->mbits) : 0;
    uint64_t emask = ((uint64_t)1 << l->ebits) - 1;
    uint64_t bits;
    double ax = fabs(x);
    if (isinf(x)) {
        bits = emask << l->mbits;
    } else if (ax == 0.0) {
        if (!fi->has_neg_zero)
            sign = 0;
        bits = 0;
    } else {
        int e = ilogb(ax);
        if (e < fi->emin) {
            bits = (uint64_t)ldexp(ax, l->mbits - fi->emin);
        } else {
            uint64_t frac = (uint64_t)ldexp(ax, l->mbits - e) - ((uint64_t)1 << l->mbits);
            bits = (uint64_t)(e + l->bias) << l->mbits | frac;
        }
    }
    return (sign | bits) << l->shift;
}

double kcs_format_decode(kcs_format f, uint64_t bits)
{
    if (!valid(f))
        return NAN;
    if (f == KCS_FMT_FP64) {
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    const fmt_layout *l = &layouts[f];
    bits >>= l->shift;
    uint64_t mmask = ((uint64_t)1 << l->mbits) - 1;
    uint64_t emask = ((uint64_t)1 << l->ebits) - 1;
    bool neg = (bits >> (l->ebits + l->mbits)) & 1;
    uint64_t E = (bits >> l->mbits) & emask;
    uint64_t M = bits & mmask;
    if (l->spec == SPEC_FNUZ && neg && E == 0 && M == 0)
        return NAN;
    if (l->spec == SPEC_FN && E == emask && M == mmask)
        return NAN;
    if (l->spec == SPEC_IEEE && E == emask)
        return M ? NAN : (neg ? -INFINITY : INFINITY);
    double v;
    if (E == 0)
        v = ldexp((double)M, 1 - l->bias - l->mbits);
    else
        v = ldexp((double)(M | (mmask + 1)), (int)E - l->bias - l->mbits);
    return neg ? -v : v;
}

/* Sign-magnitude encodings order by magnitude bits; map to a signed integer
 * in which -0 and +0 coincide. */
static void ordinal(kcs_format f, double x, bool *neg_p, uint64_t *mag_p)
{
    uint64_t b = kcs_format_encode(f, x);
    int signpos = f == KCS_FMT_FP64 ? 63 : layouts[f].ebits + layouts[f].mbits + layouts[f].shift;
    *neg_p = (b >> signpos) & 1;
    *mag_p = (b & (((uint64_t)1 << signpos) - 1)) >> (f == KCS_FMT_FP64 ? 0 : layouts[f].shift);
}

double kcs_format_ulp_distance(kcs_format f, double a, double b)
{
    if (!valid(f))
        return NAN;
    if (f == KCS_FMT_FP32)
        return kcs_ff_ulp_distance_fp32(a, b);
    const kcs_fmt_fast *ff = kcs_fmt_fast_get(f);
    if (ff)
        return kcs_ff_ulp_distance(ff, a, b);
    if (!kcs_format_exact(f, a))
        a = kcs_format_round(f, a, KCS_ROUND_DEFAULT);
    if (!kcs_format_exact(f, b))
        b = kcs_format_round(f, b, KCS_ROUND_DEFAULT);
    if (isnan(a) || isnan(b))
        return (isnan(a) && isnan(b)) ? 0.0 : INFINITY;
    bool na, nb;
    uint64_t ma, mb;
    ordinal(f, a, &na, &ma);
    ordinal(f, b, &nb, &mb);
    uint64_t d;
    if (na == nb)
        d = ma > mb ? ma - mb : mb - ma;
    else
        d = ma + mb; /* both < 2^63: no wrap */
    return (double)d;
}
