/* kcs probe: feature-targeted test vectors that infer the arithmetic of a
 * GEMM path through the backend's gemm alone (black box: 1×k by k×1
 * products with C given), in the spirit of Fasi, Higham, Mikaitis, Pranesh
 * (PeerJ CS 7:e330, 2021) and FTTN (Li et al., arXiv:2403.00232). The
 * parameters are those of the block-FMA model of shared/PROFILES.md; the
 * nearest row of the profile table (src/arith/profile.h) is named.
 *
 * Every feature is measured by several vectors (both signs, two base
 * exponents, several shapes); a feature whose vectors disagree, or that no
 * model explains, is reported KCS_PROBE_INCONSISTENT, never guessed. */
#ifndef KCS_PROBE_H
#define KCS_PROBE_H

#include <limits.h>
#include <stdbool.h>

#include "backend.h"
#include "profile.h"

/* Longest reduction the block-size scan tries: F up to KMAX - 1 is
 * measured exactly; a larger F shows as "F >= KMAX". */
#define KCS_PROBE_KMAX 128
/* Unbounded (neab = inf, F without a boundary in reach). */
#define KCS_PROBE_INF INT_MAX

typedef enum kcs_probe_status {
    KCS_PROBE_EXACT = 0,    /* one value (lo == hi); every vector agrees */
    KCS_PROBE_RANGE,        /* consistent, but only bounded: lo..hi */
    KCS_PROBE_NA,           /* not measurable (format range, structure) */
    KCS_PROBE_INCONSISTENT, /* vectors disagree, or match no model */
} kcs_probe_status;

/* A measured integer parameter. neab = inf: lo == hi == KCS_PROBE_INF. */
typedef struct kcs_probe_value {
    kcs_probe_status st;
    int lo, hi;
} kcs_probe_value;

typedef enum kcs_probe_step {
    KCS_PROBE_STEP_GLOBAL = 0, /* c aligned with the block's products, one rounding */
    KCS_PROBE_STEP_LATE_C,     /* product sum, then a second adder with c (floor) */
    KCS_PROBE_STEP_PAIRWISE,   /* products combined by rounded fp32 adds, then + c */
    KCS_PROBE_STEP_C_LAST,     /* c added once, after all k products (no blocks with c) */
    KCS_PROBE_STEP_UNKNOWN,
} kcs_probe_step;

typedef enum kcs_probe_sub {
    KCS_PROBE_SUB_KEPT = 0,
    KCS_PROBE_SUB_FLUSHED,
    KCS_PROBE_SUB_NA,    /* the format cannot reach this case */
    KCS_PROBE_SUB_MIXED, /* vectors disagree, or neither kept nor zero */
} kcs_probe_sub;

/* Bits of kcs_probe_result.round_modes. */
#define KCS_PROBE_RM_RNE 1u
#define KCS_PROBE_RM_RZ 2u
#define KCS_PROBE_RM_RD 4u
#define KCS_PROBE_RM_RU 8u
#define KCS_PROBE_RM_RNA 16u /* nearest, ties away from zero */

typedef struct kcs_probe_result {
    kcs_format in;
    kcs_probe_value acc_bits; /* significand bits of d (24: fp32) */
    kcs_probe_value F;        /* products per step: c rejoins every F products;
                                 c-last: products per rounding */
    kcs_probe_value neab;     /* NA for pairwise; lo..hi when bounded */
    kcs_probe_step step;
    kcs_probe_status step_st;
    int late_extra_bits;      /* c dominating: bits the product sum keeps beyond
                                 global alignment (late c: 7); -1 not measured */
    /* Widths, measured apart (docs/profiles.md "Widths"): fraction bits a
     * term keeps below the step's largest exponent, E - 23 - neab in the
     * model. align_bits: a product (series NP, NC of stage_neab); c_bits:
     * c itself (series CZ). NA where no block alignment was measured
     * (pairwise steps, c added last, F unknown); c_bits also NA for an fma
     * chain (F = 1). The output width is acc_bits with rounding. */
    kcs_probe_value align_bits, c_bits;
    kcs_rounding rounding;    /* valid when rounding_st is EXACT */
    kcs_probe_status rounding_st;
    unsigned round_modes;     /* KCS_PROBE_RM_* consistent with every vector */
    kcs_probe_sub sub_inputs, sub_products, sub_c, sub_results;
    bool flush;               /* every reachable subnormal case flushed */
    kcs_probe_status flush_st;
    /* nearest profile row (kcs_probe_nearest) */
    const kcs_profile_params *nearest;
    int nearest_diffs;
    int nearest_ties;         /* other rows with as few differences */
    bool nearest_cross_format; /* no row offers this format */
    char nearest_diff[96];    /* names of the differing parameters */
    long calls;               /* gemm calls made */
    int tile;                 /* the gemm's m = n (kcs_probe_run_tile) */
    char notes[1536];         /* observations and disagreements, "; "-separated */
} kcs_probe_result;

/* Run every probe through ops->run (gemm, m = n = 1) on an open context
 * whose inputs are in format `in`, and fill r (nearest profile included).
 * Errors: the backend's own (e.g. KCS_E_UNSUPPORTED for the format), or
 * KCS_E_DEVICE when the gemm is not exact on exactly representable sums
 * (nothing can be inferred then). */
int kcs_probe_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, kcs_format in,
                  kcs_probe_result *r, kcs_error *err);

/* The same with the probe vectors in row 0 of A and column 0 of B of a
 * tile × tile × k gemm (zeros elsewhere, every other output checked to be
 * 0), for libraries whose 1×1 output takes another kernel than a tile's
 * (matrix units). tile = 1 is kcs_probe_run; 1..KCS_PROBE_TILE_MAX, else
 * KCS_E_INVAL. */
#define KCS_PROBE_TILE_MAX 256
int kcs_probe_run_tile(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, kcs_format in, int tile,
                       kcs_probe_result *r, kcs_error *err);

/* Number of parameters (F, neab, step, rounding, flush) in which row p
 * differs from r; an inferred range differs when it excludes p's value,
 * an NA parameter is not compared, neab not between two pairwise steps.
 * The names go to diff (comma-separated). */
int kcs_probe_compare(const kcs_probe_result *r, const kcs_profile_params *p, char *diff,
                      size_t len);
/* Fill r->nearest* from the profile table: rows of r->in first (all rows
 * when no row offers it), fewest differences, first in table order. */
void kcs_probe_nearest(kcs_probe_result *r);

const char *kcs_probe_step_name(kcs_probe_step s);
const char *kcs_probe_status_name(kcs_probe_status s);
const char *kcs_probe_sub_name(kcs_probe_sub s);
/* "24", "-10", "inf", ">=23", "1..2", "n/a", "inconsistent". */
const char *kcs_probe_value_str(const kcs_probe_value *v, char *buf, size_t len);
/* The product sum's fraction bits below a dominating c: align_bits +
 * late_extra_bits (late c: 31 on CDNA3), or NA (value st) when either is
 * not measured. */
kcs_probe_value kcs_probe_sum_under_c_bits(const kcs_probe_result *r);
/* "rne", "rz", ... or "inconsistent" / "n/a". */
const char *kcs_probe_rounding_str(const kcs_probe_result *r);

#endif
