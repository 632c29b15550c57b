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
    /* format literals usable as values: fp64 ... fp8_e5m2fnuz */
    KCS_SYM_FMT_FIRST,
    KCS_SYM_COUNT = KCS_SYM_FMT_FIRST + KCS_FMT_COUNT
} kcs_sym;

const kcs_expr_symtab *kcs_verdict_symtab(void);

typedef struct kcs_verdict {
    kcs_verdict_kind kind;
    double eta;
    double tau;         /* measured / eta for the tolerance structure */
    char signature[64]; /* matched signature names, comma-separated */
} kcs_verdict;

/* Bind case variables (metrics NULL: eta only, metrics left 0). */
void kcs_verdict_bind(const kcs_case *cs, const kcs_metrics *m, double tau, double eta,
                      int guard_ok, double values[KCS_SYM_COUNT]);
/* eta of a contract for a case. */
double kcs_verdict_eta(const kcs_contract *c, const kcs_case *cs);
/* Judge one measured output. */
void kcs_verdict_judge(const kcs_contract *c, const kcs_case *cs, const kcs_metrics *m,
                       int guard_ok, kcs_verdict *v);

#endif
