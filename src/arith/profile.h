/* Emulated silicon: the block-FMA model of matrix units and the table of
 * vendor profiles (nvidia-v100 ... amd-mi300), exactly as specified in
 * shared/PROFILES.md. The profile table lives in profile.c (one row per
 * profile and input format, each with its source); the arithmetic in
 * blockfma.c. */
#ifndef KCS_CPU_PROFILE_H
#define KCS_CPU_PROFILE_H

#include "error.h"
#include "format.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* neab = inf: no truncation at all (exact block, AMD MI100). */
#define KCS_NEAB_INF INT_MAX

typedef enum kcs_step_kind {
    KCS_STEP_GLOBAL = 0, /* global alignment of products and c, one rounding */
    KCS_STEP_LATE_C,     /* product sum first, then a two-operand adder with c */
    KCS_STEP_PAIRWISE,   /* fp32 products, pairwise fp32 tree, then + c */
} kcs_step_kind;

/* Corner features: how a matrix unit behaves where the published models
 * disagree (docs/profiles.md says which evidence each profile's choice rests
 * on). The zero value of each is kcs's original behaviour. */
typedef enum kcs_zero_exp {
    KCS_ZEXP_IGNORE = 0, /* zero products (and c = 0) take no part in E */
    KCS_ZEXP_MIN,        /* a zero operand (and c = 0) has exponent -126 and
                          * takes part in E, whatever the input format */
} kcs_zero_exp;

typedef enum kcs_zero_sign {
    KCS_ZSIGN_SUM = 0,  /* a non-zero sum that rounds to 0 keeps its sign */
    KCS_ZSIGN_POSITIVE, /* every zero result is +0 */
} kcs_zero_sign;

typedef enum kcs_prod_ovf {
    KCS_POVF_EXACT = 0, /* products stay exact whatever their size */
    KCS_POVF_INF,       /* a product of magnitude >= 2^128 makes d +-Inf
                         * (NaN when both signs occur), before alignment */
} kcs_prod_ovf;

typedef enum kcs_inf_path {
    KCS_INF_DOUBLE = 0, /* NaN/Inf operands: d = c + sum a_i*b_i in IEEE double */
    KCS_INF_STEP,       /* NaN/Inf operands go through the step's own fp32
                         * arithmetic (pairwise step: Inf - Inf = NaN) */
} kcs_inf_path;

typedef enum kcs_flush_sign {
    KCS_FSIGN_KEEP = 0, /* a flushed subnormal input keeps its sign */
    KCS_FSIGN_POSITIVE, /* flushed subnormal inputs (A, B, C) become +0 */
} kcs_flush_sign;

typedef struct kcs_profile_params {
    const char *profile;    /* "nvidia-h100", ... */
    kcs_format in;          /* format of A and B */
    int F;                  /* products per step (block length along k) */
    int neab;               /* extra alignment bits; KCS_NEAB_INF; < 0 narrows d */
    kcs_step_kind step;
    kcs_rounding rounding;  /* final rounding of d: KCS_RZ or KCS_RNE */
    bool flush;             /* flush subnormal inputs, products, partials, c, d */
    const char *source;     /* where the parameters come from */
    /* corner features (zero: kcs's original behaviour) */
    kcs_zero_exp zero_exp;
    kcs_zero_sign zero_sign;
    kcs_prod_ovf prod_ovf;
    kcs_inf_path inf_path;
    kcs_flush_sign flush_sign;
    int halves;             /* 2: products split into even/odd halves, each
                             * aligned alone (CDNA3 fp8); 0 or 1: one group */
    bool acc_f16;           /* fp16 accumulator (.f16 instructions): c is an
                             * fp16 value (exponent clamped at -14), d is
                             * rounded to fp16 nearest-even; global step only */
    bool mixed;             /* B has its own format in_b (mixed fp8 inputs) */
    kcs_format in_b;
} kcs_profile_params;

/* The format of B: in_b for a mixed row, else in. */
static inline kcs_format kcs_profile_in_b(const kcs_profile_params *p)
{
    return p->mixed ? p->in_b : p->in;
}

/* A row for A in format a and B in format b (a != b: mixed fp8 inputs, e.g.
 * e4m3 x e5m2): the profile must offer both formats with the same
 * arithmetic; *out is that row with in = a, in_b = b. Errors as
 * kcs_profile_lookup, KCS_E_UNSUPPORTED when the two rows differ. */
int kcs_profile_lookup_mixed(const char *name, kcs_format a, kcs_format b,
                             kcs_profile_params *out, kcs_error *err);

/* The names of a row's corner features, "zero_exp=min zero_sign=sum ..."
 * into buf (static names; buf holds at least 128 bytes). */
const char *kcs_profile_features(const kcs_profile_params *p, char *buf, int len);

/* Find the row for a profile and input format. Unknown profile:
 * KCS_E_INVAL, the message lists the known profiles; a format the profile
 * does not offer: KCS_E_UNSUPPORTED, the message lists the formats it offers. */
int kcs_profile_lookup(const char *name, kcs_format in, const kcs_profile_params **p_p,
                       kcs_error *err);
/* The distinct profile names, in table order (static storage). */
int kcs_profile_names(const char *const **names_p, int *n_p);
/* Every (profile, format) row of the table (static storage). */
int kcs_profile_table(const kcs_profile_params **rows_p, int *n_p);
const char *kcs_step_kind_name(kcs_step_kind k);
/* Significand bits of d: 24, or 24 + neab when neab < 0; 11 for an fp16
 * accumulator. */
int kcs_profile_out_bits(const kcs_profile_params *p);

/* One step d = c + sum_{i<nterms} a_i*b_i per the model (reference
 * implementation). a_i, b_i: values of p->in; c: an fp32 value. Returns d
 * (an fp32 value). Any NaN/Inf among a, b, c: d is the IEEE double result
 * c + sum a_i*b_i (NaN or +-Inf); an exact zero sum gives +0. */
double kcs_blockfma_step(const kcs_profile_params *p, double c, const double *a,
                         const double *b, int nterms);

/* D = C + A*B through the model: A m x k, B k x n, C and D m x n, all
 * row-major doubles; C may be NULL (zeros); C values are rounded to fp32
 * first (callers pass fp32 values). Steps of p->F along k starting at k = 0;
 * the last partial block is padded with zero products. D holds fp32 values.
 * Returns 0 or KCS_E_NOMEM (scratch of about 24*k*(m+n) bytes: the operands
 * as doubles and, on AVX2, decoded). */
int kcs_emulated_gemm(const kcs_profile_params *p, int64_t m, int64_t n, int64_t k,
                      const double *A, const double *B, const double *C, double *D);

/* Library paths on top of an instruction (docs/profiles.md, "Library
 * paths"): what a BLAS library does around the matrix unit. A placement
 * names them after the profile, "nvidia-h100,fp8_promote=128,splitk=2".
 *   promote = N  the unit sums N products at a time starting from 0 (its own
 *                alignment, truncation and output width); each N-product
 *                partial is then added to an fp32 register in fp32, round to
 *                nearest even (cuBLASLt fp8 with fast accumulation off; the
 *                DeepSeek-V3 report's promotion interval N_C = 128). C is
 *                that register's starting value. 0: none, the whole k goes
 *                through the unit, C entering as its first addend.
 *   splitk = S   k in S contiguous parts of ceil(k/S) rounded up to F; each
 *                part runs the path above from 0, and the S part results
 *                are summed, parts in order, either in fp32 (round to
 *                nearest even; ":fp32", the default) or in the instruction's
 *                accumulator (":unit", kcs_blockfma_acc_add). 0 or 1: no
 *                split.
 *   c = first|last  where C enters: first (default) as the unit's first
 *                addend, the promotion register's starting value or the
 *                first addend of the split-K sum; last: every path runs
 *                from 0 and C is added at the end in fp32, round to nearest
 *                even (a library's epilogue, D = AB + C).
 * The spec is at most KCS_PROFILE_SPEC_MAX - 1 characters (the placement
 * and the rank record keep 32). */
#define KCS_PROFILE_SPEC_MAX 32
typedef struct kcs_libpath {
    int64_t promote; /* 0: none */
    int splitk;      /* 0 or 1: none */
    bool split_unit; /* split-K parts summed in the unit's accumulator */
    bool c_last;     /* C added last, in fp32 */
} kcs_libpath;

/* d = c + x in the instruction's accumulator (split-K parts summed in the
 * unit): global and late-c steps align both to the larger exponent
 * (max(floor(log2|v|), -126), zeros take no part), truncate each to
 * 2^(E - 23 - neab) (neab = inf: exact) and round the sum to the unit's
 * output (kcs_profile_out_bits, the profile's rounding; an fp16 accumulator
 * to fp16 nearest-even); pairwise steps add in fp32 nearest-even (flushed
 * where the profile flushes). NaN/Inf: IEEE. */
double kcs_blockfma_acc_add(const kcs_profile_params *p, double c, double x);

/* Parse "name[,promote=N|none][,fp8_promote=N|none][,splitk=S[:fp32|:unit]]
 * [,c=first|last]": name into
 * name (KCS_PROFILE_SPEC_MAX bytes), the path into *lp. The name is checked
 * against the table; N in [1, 2^30] (a last partial block of the unit is
 * padded with zero products), S in [1, 4096]. Errors: KCS_E_INVAL naming
 * the bad part. */
int kcs_profile_spec_parse(const char *spec, char *name, kcs_libpath *lp, kcs_error *err);

/* kcs_emulated_gemm through a library path (lp NULL or all zero: exactly
 * kcs_emulated_gemm). Same arguments and errors. */
int kcs_emulated_gemm_lib(const kcs_profile_params *p, const kcs_libpath *lp, int64_t m,
                          int64_t n, int64_t k, const double *A, const double *B,
                          const double *C, double *D);

#endif
