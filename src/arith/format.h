/* Number formats: fp64 fp32 tf32 bf16 fp16 fp8_e4m3 fp8_e5m2 (+ the AMD
 * FNUZ fp8 variants), their parameters, encodings and rounding.
 * Values travel through kcs as doubles that are exactly representable in
 * their declared format; encode/decode convert to the bit patterns that
 * devices and plugins use (bf16/fp16 as 16-bit, fp8 as 8-bit, tf32 as an
 * fp32 pattern with the low 13 bits zero). Spec: shared/PROFILES.md. */
#ifndef KCS_FORMAT_H
#define KCS_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

typedef enum kcs_format {
    KCS_FMT_FP64 = 0,
    KCS_FMT_FP32,
    KCS_FMT_TF32,
    KCS_FMT_BF16,
    KCS_FMT_FP16,
    KCS_FMT_FP8_E4M3,
    KCS_FMT_FP8_E5M2,
    KCS_FMT_FP8_E4M3FNUZ,
    KCS_FMT_FP8_E5M2FNUZ,
    KCS_FMT_COUNT
} kcs_format;

typedef enum kcs_rounding {
    KCS_RNE = 0, /* round to nearest, ties to even */
    KCS_RZ,      /* toward zero */
    KCS_RD,      /* toward -inf */
    KCS_RU,      /* toward +inf */
} kcs_rounding;

typedef enum kcs_overflow {
    KCS_OVF_INF = 0,  /* overflow to +-Inf (or NaN where the format has no Inf) */
    KCS_OVF_SATURATE, /* clamp to +-max finite */
} kcs_overflow;

typedef enum kcs_subnormal {
    KCS_SUB_KEEP = 0,
    KCS_SUB_FLUSH, /* subnormal results become (signed) zero */
} kcs_subnormal;

typedef struct kcs_format_info {
    const char *name; /* "fp32", "bf16", "fp8_e4m3", ... */
    int bits;         /* storage bits: 64, 32, 32 (tf32), 16, 8 */
    int p;            /* precision incl. implicit bit */
    int emin, emax;
    bool has_inf;
    bool has_neg_zero;
    double max_finite;
} kcs_format_info;

const kcs_format_info *kcs_format_get(kcs_format f);
/* Parse a format name; returns 0 or KCS_E_INVAL. */
int kcs_format_parse(const char *name, kcs_format *f_p);
const char *kcs_format_name(kcs_format f);

/* Unit roundoff u = 2^-p; eps = 2^(1-p). */
double kcs_format_u(kcs_format f);
double kcs_format_eps(kcs_format f);

typedef struct kcs_round_mode {
    kcs_rounding rounding;
    kcs_overflow overflow;
    kcs_subnormal subnormal;
} kcs_round_mode;

#define KCS_ROUND_DEFAULT ((kcs_round_mode){KCS_RNE, KCS_OVF_INF, KCS_SUB_KEEP})

/* Round a double to format f (result is a double exactly representable in f).
 * NaN stays NaN; Inf maps per overflow policy. */
double kcs_format_round(kcs_format f, double x, kcs_round_mode mode);
/* Round to a significand of p bits with fp32's exponent range (used for
 * "bits:N" accumulators and narrowed matrix-unit accumulators). */
double kcs_round_bits(double x, int p, kcs_rounding r);
/* The same by the general scaling path: the fast path's test oracle. */
double kcs_round_bits_ref(double x, int p, kcs_rounding r);
/* true when x is exactly representable in f (NaN/Inf per the format). */
bool kcs_format_exact(kcs_format f, double x);

/* Encodings: bits right-aligned in a uint64 (tf32 as fp32 pattern). */
uint64_t kcs_format_encode(kcs_format f, double x); /* x must be exact in f */
double kcs_format_decode(kcs_format f, uint64_t bits);

/* Distance in units in the last place of format f between a and b: the
 * number of representable values of f between them (0 if equal), computed
 * through the format's ordered encoding. NaN vs non-NaN gives INFINITY. */
double kcs_format_ulp_distance(kcs_format f, double a, double b);

#endif
