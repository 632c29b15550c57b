/* The kernel contract: the paper's eight parts (identifier, scope,
 * precondition, postcondition, tolerance, reference oracle, measurement
 * protocol, violation signature), loaded from YAML with diagnostics that
 * name file:line:col and the field. */
#ifndef KCS_CONTRACT_H
#define KCS_CONTRACT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "expr.h"
#include "format.h"
#include "op.h"

#define KCS_ID_MAX 32
#define KCS_MAX_SHAPES 32
#define KCS_MAX_DISTS 8
#define KCS_MAX_SIGNATURES 32
#define KCS_MAX_CLAUSES 4

typedef enum kcs_tol_structure {
    KCS_TOL_BACKWARD_ERROR = 0,
    KCS_TOL_POINTWISE_RELATIVE,
    KCS_TOL_POINTWISE_ABSOLUTE,
    KCS_TOL_ULP,
    KCS_TOL_INVARIANT,
    KCS_TOL_COMPOSITE,
} kcs_tol_structure;

const char *kcs_tol_structure_name(kcs_tol_structure s);

typedef enum kcs_oracle_kind {
    KCS_ORACLE_FP64 = 0,
    KCS_ORACLE_EXACT,
    KCS_ORACLE_MODEL,
    KCS_ORACLE_FREIVALDS, /* gemm: batched probabilistic check, no full reference */
} kcs_oracle_kind;

/* oracle.magnitude: what absref holds. first_order: the sum of the
 * first-order error coefficients' bounds (|A||B| for gemm; X + Y for
 * attention: oracle_attention.c). random_walk (attention only): a bound on
 * sqrt(sum_r c_r^2) over every rounding r of a conforming composition plus
 * its worst-case part / 6 (oracle_random_walk.c), for clauses lambda u
 * absref with lambda >= 6. */
typedef enum kcs_magnitude {
    KCS_MAG_FIRST_ORDER = 0,
    KCS_MAG_RANDOM_WALK,
} kcs_magnitude;

typedef enum kcs_dist {
    KCS_DIST_NORMAL = 0,
    KCS_DIST_UNIFORM_PM1,
    KCS_DIST_WIDE_RANGE,
    KCS_DIST_CANCELLATION,
    KCS_DIST_LARGE,       /* |x| in [64, 128): exp(x) overflows fp32 without max-subtraction */
    KCS_DIST_OFFSET,      /* 4096 + N(0,1): mean far above the spread (variance cancellation) */
    KCS_DIST_SUBNORMAL,   /* subnormal values of the input format (random sign) */
    KCS_DIST_POSITIVE,    /* |N(0,1)|: no cancellation, maximal error growth */
    KCS_DIST_EXACT,       /* integers: every partial sum exact in the accumulator (inputs_exact.h) */
    KCS_DIST_SPREAD,      /* random sign x 2^U(-12, 12): a sum's rounding depends on its order */
    KCS_DIST_COUNT
} kcs_dist;

const char *kcs_dist_name(kcs_dist d);
int kcs_dist_parse(const char *name, kcs_dist *d_p);

typedef struct kcs_shape {
    int64_t m, n, k, batch;
} kcs_shape;

/* How a case is measured. */
typedef enum kcs_protocol_kind {
    KCS_PROTO_ORACLE = 0,      /* each trial's output against the reference oracle */
    KCS_PROTO_REPEAT,          /* + `repetitions` runs on identical inputs: digests, ULP spread */
    KCS_PROTO_BATCH_INVARIANCE,/* + op(x[:1]) against op(x)[:1], bitwise (ULP spread) */
} kcs_protocol_kind;

const char *kcs_protocol_name(kcs_protocol_kind p);

/* One tolerance clause. For invariant clauses the measured quantity is an
 * expression over metrics (e.g. "distinct_digests - 1", "rowsum_err") and
 * eta may be 0 (an exact invariant); for the others it is the metric the
 * structure names and eta must be finite and positive. */
typedef struct kcs_tol_clause {
    kcs_tol_structure structure; /* never composite */
    char *eta_text;
    kcs_expr *eta;
    char *quantity_text;         /* invariant only */
    kcs_expr *quantity;
} kcs_tol_clause;

typedef struct kcs_signature {
    char name[64];
    char *when_text;
    kcs_expr *when;
    char *explain;
} kcs_signature;

/* precondition.per_op.<op>: where one op of the scope is narrower than
 * the contract (a clause with power for one op over a range where it
 * has none for another). Unset fields keep the contract's. */
typedef struct kcs_op_narrowing {
    bool set;
    uint32_t dtype_in;   /* bit per kcs_format, a subset of the contract's */
    int64_t range[4][2]; /* m, n, k, batch: [min, max] inside the contract's */
} kcs_op_narrowing;

/* The dimension (0..3: m, n, k, batch; batch 0 counts as 1) of s outside
 * nw's ranges, or -1 when s is inside them (contract_per_op.c). */
int kcs_op_narrowing_miss(const kcs_op_narrowing *nw, const kcs_shape *s);

typedef struct kcs_contract {
    char *path; /* file it came from, as named (kcs_contract_resolve) */
    char *text; /* the YAML text as read (stored in /contracts/<id>) */

    /* 1. identifier */
    char id[KCS_ID_MAX];
    char *title;
    char family[8];     /* PRC ORD CMP EXC */
    char primitive[32]; /* path_dependence domain_violation resource_contention */
    /* 2. scope */
    uint32_t ops;       /* bit (1u << kcs_op) per op in scope */
    /* 3. precondition */
    uint32_t dtype_in;  /* bit per kcs_format allowed as input */
    kcs_acc dtype_acc;  /* the accumulator the kernel declares */
    kcs_format dtype_out;   /* the first of precondition.dtype_out: a case's default */
    uint32_t dtype_out_set; /* bit per kcs_format admitted as output (precondition.dtype_out:
                               one format or a list) */
    int64_t k_min, k_max;
    /* precondition.shape ranges of the other dimensions (default 1..INT64_MAX;
     * k_min/k_max likewise when precondition.shape has no k) */
    int64_t m_min, m_max, n_min, n_max, batch_min, batch_max;
    /* precondition.shape.multiple_of: the step of m, n, k, batch's shape class
     * (0: every value of the range; contract_shape_class.c) */
    int64_t shape_mult[4];
    uint32_t value_dists; /* precondition.values.dist: bit (1u << kcs_dist); all when "any" */
    bool values_finite;   /* precondition.values.finite (default true) */
    uint32_t declares;    /* precondition.declares: KCS_DECL_BIT per property the kernel
                             must declare for the contract to bind (declares.h); 0: all */
    /* precondition.per_op: one op's narrower precondition (contract_per_op.c) */
    kcs_op_narrowing per_op[KCS_OP_COUNT];
    /* 4. postcondition */
    char *postcondition;
    /* 5. tolerance: structure, and its clauses (one, or the `all:` list of
     * a composite; eta/eta_text below mirror clause 0 for convenience). */
    kcs_tol_structure tol_structure;
    char *eta_text;
    kcs_expr *eta;
    kcs_tol_clause clauses[KCS_MAX_CLAUSES];
    int n_clauses;
    char *derivation;
    /* 6. reference oracle */
    kcs_oracle_kind oracle;
    char oracle_profile[32];
    kcs_magnitude oracle_magnitude;
    int fv_probes;      /* freivalds:k:mode */
    int fv_mode;        /* kcs_fv_mode */
    /* 7. measurement protocol */
    kcs_shape shapes[KCS_MAX_SHAPES];
    int n_shapes;
    kcs_dist dists[KCS_MAX_DISTS];
    int n_dists;
    int trials;
    bool guard_poison, guard_fresh_inputs, guard_revalidate;
    kcs_protocol_kind protocol;
    int repetitions;            /* runs per trial on identical inputs (repeat; >= 2) */
    kcs_shape held_out[KCS_MAX_SHAPES]; /* shape classes kept out of `shapes` (CMP-03) */
    int n_held_out;
    int held_out_draw;          /* gemm shapes drawn over the precondition per study
                                   (src/plan/held_out_draw.h), held out like held_out */
    char attrs[128];            /* declared semantics handed to kernels: "oob=raise" */
    double special_nan, special_inf, special_subnormal; /* injected fractions of inputs */
    double special_pinf, special_ninf; /* +Inf only, -Inf only (inf: either sign) */
    double special_infs;        /* infinities whose sign cycles with the trial: +Inf on
                                   trials 0 mod 3, -Inf on 1 mod 3, either on 2 mod 3 */
    double special_oob;         /* fraction of gather indices out of range */
    uint64_t seed;              /* mixed into every case seed of this contract */
    /* 8. violation signatures */
    kcs_signature sigs[KCS_MAX_SIGNATURES];
    int n_sigs;
} kcs_contract;

/* Whether the contract injects NaN or an infinity (special.nan, inf,
 * pinf or ninf above 0). */
bool kcs_contract_injects_nonfinite(const kcs_contract *c);

/* The first dimension of s outside c's shape classes (precondition.shape.
 * multiple_of): its name ("m", "n", "k", "batch"), value and step; NULL
 * when s is in every class. */
const char *kcs_contract_shape_class_miss(const kcs_contract *c, const kcs_shape *s,
                                          int64_t *v_p, int64_t *mult_p);

/* A contract is a folder: contracts/<ID>/<ID>.yaml. A path D/<ID>.yaml that
 * does not exist while D/<ID>/<ID>.yaml does (how studies written before
 * the folders name contracts), and a path naming the folder D/<ID> itself,
 * resolve to the folder's YAML (written into buf); any other path is
 * returned as it is. kcs_contract_load resolves its path so, and keeps the
 * path as named in c->path (a dataset's /contracts/<ID> path attribute). */
const char *kcs_contract_resolve(const char *path, char *buf, size_t len);
/* Load and validate a contract file. On failure returns KCS_E_INVAL (or
 * KCS_E_IO) with err->msg "file:line:col: field: message" (several errors,
 * newline separated, in document order). */
int kcs_contract_load(const char *path, kcs_contract **c_p, kcs_error *err);
/* Same from a string; path is used in messages and stored as c->path. */
int kcs_contract_load_string(const char *path, const char *text, kcs_contract **c_p,
                             kcs_error *err);
void kcs_contract_free(kcs_contract *c);

/* Print the normalized contract (all eight parts, canonical names): YAML
 * that kcs_contract_load reads back, or one JSON object. Returns 0 or
 * KCS_E_IO when writing fails. */
int kcs_contract_print(const kcs_contract *c, FILE *f, bool json);

/* Phrases that mark a derivation as measured from the candidate under test
 * (matched case-insensitively, whitespace-collapsed); NULL-terminated. */
extern const char *const kcs_contract_measured_phrases[];

/* Whether the top-level operation of e is a comparison, && || or ! (a
 * condition rather than a magnitude). Implemented in expr.c; belongs in
 * expr.h. */
int kcs_expr_is_condition(const kcs_expr *e);

#endif
