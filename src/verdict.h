/* Tolerance evaluation and signature matching -> verdict. The symbol table
 * here is the one namespace of eta and `when` expressions: the variables a
 * case binds and the metrics a run measures. */
#ifndef KCS_VERDICT_H
#define KCS_VERDICT_H

#include "contract.h"
#include "expr.h"
#include "metrics.h"
#include "study.h"

typedef enum kcs_verdict_kind {
    KCS_VERDICT_WITHIN = 0, /* within_tolerance */
    KCS_VERDICT_VIOLATION,  /* violation, a signature matched */
    KCS_VERDICT_UNDER,      /* under_specified: fails, nothing explains it */
    KCS_VERDICT_ERROR,      /* the run itself failed */
    KCS_VERDICT_UNAVAILABLE,/* the rank's device is not available */
} kcs_verdict_kind;

const char *kcs_verdict_name(kcs_verdict_kind v);

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
    /* format literals usable as values: fp64 ... fp8_e5m2fnuz */
    KCS_SYM_FMT_FIRST,
    KCS_SYM_COUNT = KCS_SYM_FMT_FIRST + KCS_FMT_COUNT
} kcs_sym;

const kcs_expr_symtab *kcs_verdict_symtab(void);

/* Everything measured about one trial. */
typedef struct kcs_observation {
    kcs_metrics m;
    int guard_ok;
    int raised;             /* the kernel raised on purpose */
    int64_t oob_count;      /* out-of-range indices in the inputs */
    int64_t nan_ref_count;  /* NaN in the reference output */
    int distinct_digests;   /* repeat protocol (1 otherwise) */
    double spread_ulp;      /* repeat / batch_invariance */
    double rowsum_err;      /* softmax */
    double bad_frac;        /* outputs above clause 0's eta (componentwise) */
    int held_out;
    int replayed;
    int trial;
    double fv_tau;          /* oracle freivalds: max residual / per-row threshold */
} kcs_observation;

typedef struct kcs_verdict {
    kcs_verdict_kind kind;
    double eta;         /* clause 0's */
    double tau;         /* max over clauses of measured / eta */
    char signature[64]; /* matched signature names, comma-separated */
} kcs_verdict;

/* Bind case variables and (o != NULL) what was measured. */
void kcs_verdict_bind(const kcs_case *cs, const kcs_observation *o, double tau, double eta,
                      double values[KCS_SYM_COUNT]);
/* eta of a clause of a contract for a case. */
double kcs_verdict_clause_eta(const kcs_tol_clause *cl, const kcs_case *cs);
/* eta of clause 0. */
double kcs_verdict_eta(const kcs_contract *c, const kcs_case *cs);
/* Judge one trial. */
void kcs_verdict_judge(const kcs_contract *c, const kcs_case *cs, const kcs_observation *o,
                       kcs_verdict *v);

#endif
