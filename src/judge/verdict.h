/* Tolerance evaluation and signature matching -> verdict. The symbol table
 * here is the one namespace of eta and `when` expressions: the variables a
 * case binds and the metrics a run measures. */
#ifndef KCS_VERDICT_H
#define KCS_VERDICT_H

#include "contract.h"
#include "expr.h"
#include "metrics.h"
#include "study.h"
#include "symbols.h"

typedef enum kcs_verdict_kind {
    KCS_VERDICT_WITHIN = 0, /* within_tolerance */
    KCS_VERDICT_VIOLATION,  /* violation, a signature matched */
    KCS_VERDICT_UNDER,      /* under_specified: fails, nothing explains it */
    KCS_VERDICT_ERROR,      /* the run itself failed */
    KCS_VERDICT_UNAVAILABLE,/* the rank's device is not available */
    KCS_VERDICT_NOT_CLAIMED,/* not_claimed: the contract binds only kernels that declare a
                               property (precondition.declares) this one does not declare;
                               measured, but neither a pass nor a violation */
} kcs_verdict_kind;

const char *kcs_verdict_name(kcs_verdict_kind v);


/* Everything measured about one trial. */
typedef struct kcs_observation {
    kcs_metrics m;
    int guard_ok;
    int raised;             /* the kernel raised on purpose */
    int64_t oob_count;      /* out-of-range indices in the inputs */
    int64_t nan_ref_count;  /* NaN in the reference output */
    int64_t inf_ref_count;  /* +-Inf in the reference output */
    int64_t inf_zeroed;     /* outputs 0 where the reference is +-Inf */
    int64_t nan_zeroed;     /* outputs 0 where the reference is NaN */
    int guard_before;       /* the guard before the output was written (guard_ok 0) */
    int distinct_digests;   /* repeat protocol (1 otherwise) */
    double spread_ulp;      /* repeat / batch_invariance */
    double rowsum_err;      /* softmax */
    double bad_frac;        /* outputs above clause 0's eta (componentwise) */
    int held_out;
    int replayed;
    int trial;
    double fv_tau;          /* oracle freivalds: max residual / per-row threshold */
    uint32_t undeclared;    /* contract's precondition.declares the kernel does not declare */
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
