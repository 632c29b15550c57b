/* The variables of the contract language: the names an eta or a
 * signature's `when` may use (measured quantities, case facts, format
 * literals). The loader checks expressions against this table; the judge
 * (src/judge/verdict.c) binds their values for one trial. */
#ifndef KCS_SYMBOLS_H
#define KCS_SYMBOLS_H

#include "expr.h"
#include "format.h"

/* Symbols of the expression language; index order = enum order. */
typedef enum kcs_sym {
    KCS_SYM_M = 0, KCS_SYM_N, KCS_SYM_K, KCS_SYM_BATCH,
    KCS_SYM_DTYPE_IN, KCS_SYM_DTYPE_ACC, KCS_SYM_DTYPE_OUT,
    KCS_SYM_TAU, KCS_SYM_ETA, KCS_SYM_MAX_ABS, KCS_SYM_MAX_REL, KCS_SYM_MAX_ULP,
    KCS_SYM_MEAN_ULP, KCS_SYM_BACKWARD_ERR, KCS_SYM_MAX_SCALED, KCS_SYM_RMS_SCALED,
    KCS_SYM_EFFECTIVE_ACC_BITS, KCS_SYM_NAN_COUNT, KCS_SYM_INF_COUNT,
    KCS_SYM_SENTINEL_COUNT, KCS_SYM_GUARD_OK, KCS_SYM_MISMATCH_NONFINITE,
    KCS_SYM_RAISED,           /* 1: the kernel raised an error on purpose (e.g. OOB) */
    KCS_SYM_OOB_COUNT,        /* out-of-range indices in the inputs */
    KCS_SYM_NAN_REF_COUNT,    /* NaN outputs of the reference (NaN is due there) */
    KCS_SYM_DISTINCT_DIGESTS, /* repeat: distinct output digests over repetitions */
    KCS_SYM_SPREAD_ULP,       /* repeat / batch_invariance: max ULP between runs */
    KCS_SYM_ROWSUM_ERR,       /* softmax: max |sum_j y_ij - 1| */
    KCS_SYM_HELD_OUT,         /* 1: the case's shape is a held-out class */
    KCS_SYM_BAD_FRAC,         /* fraction of outputs above clause 0's componentwise eta */
    KCS_SYM_REPLAYED,         /* 1: output equals an earlier trial's, on other inputs */
    KCS_SYM_TRIAL,            /* the trial index */
    KCS_SYM_EXACT_INPUTS,     /* 1: the case's inputs are exact-sum inputs (dist exact) */
    KCS_SYM_INPUT_BITS,       /* 11 or 8: inputs look rounded to that width; 0 (input_bits.h) */
    KCS_SYM_ZERO_FRAC,        /* error_shape.h: outputs exactly 0 where y_ref is not */
    KCS_SYM_REF_CORR,         /* correlation of y with y_ref */
    KCS_SYM_PEAK_SHARE,       /* share of the squared error in the worst output */
    KCS_SYM_SCALE_FIT,        /* share of the squared error one scale of y_ref explains */
    KCS_SYM_EDGE_SHARE,       /* gemm: share of the squared error in remainder tiles */
    KCS_SYM_REF_SCALE,        /* the relative scale c that best fits the error */
    KCS_SYM_MIXED_SIGNS,      /* 1: y_ref takes both signs */
    KCS_SYM_P_BITS,           /* attention: 11 or 8: P looks rounded to that width; 0 */
    KCS_SYM_CANCEL_BITS,      /* layernorm: bits E[x^2] - E[x]^2 loses on these inputs */
    KCS_SYM_ROW_SCALE_FIT,    /* norms: share of the squared error one scale per row explains */
    KCS_SYM_INPUT_RZ,         /* 1: input_bits names a truncation (toward zero), 0 rounding */
    KCS_SYM_OUT_BITS,         /* 8 or 11: y is y_ref rounded once to that width; 0 */
    KCS_SYM_OUT_RZ,           /* 1: that rounding was toward zero */
    KCS_SYM_CONST_OUTPUT,     /* 1: every finite output is one value, the reference's are not */
    KCS_SYM_OFFSET_SHARE,     /* (mean d)^2 / mean d^2, d = y - y_ref */
    KCS_SYM_INF_REF_COUNT,    /* +-Inf outputs of the reference (Inf is due there) */
    KCS_SYM_INF_ZEROED,       /* outputs that are 0 where the reference is +-Inf */
    KCS_SYM_NAN_ZEROED,       /* outputs that are 0 where the reference is NaN */
    KCS_SYM_GUARD_BEFORE,     /* 1: the guard region before the output was written */
    KCS_SYM_OOB_RAISE,        /* 1: judged under oob=raise (the attrs, as declared) */
    /* format literals usable as values: fp64 ... fp8_e5m2fnuz */
    KCS_SYM_FMT_FIRST,
    KCS_SYM_COUNT = KCS_SYM_FMT_FIRST + KCS_FMT_COUNT
} kcs_sym;

const kcs_expr_symtab *kcs_verdict_symtab(void);

#endif
