/* kcs probe --order: the summation tree of a backend's reduction, recovered
 * by FPRev's method (Xie et al., USENIX ATC 2025) through the op alone
 * (src/base/order_tree.h). Summand i = +big, summand j = -big, every other
 * summand a small unit: the output counts the units outside the smallest
 * subtree that holds i and j, which gives that subtree's size.
 *
 * Every output of a call is probed at once: the same summands reach every
 * output, and an output that answers every question as the representative
 * output does has the representative's tree (the reconstruction depends
 * on nothing but the answers). Outputs that answered differently are probed
 * again with one of them as representative, until every output has a tree. */
#ifndef KCS_PROBE_ORDER_H
#define KCS_PROBE_ORDER_H

#include <stdint.h>

#include <mpi.h>

#include "backend.h"
#include "profile.h"

typedef struct kcs_order_opts {
    kcs_op op;            /* gemm, reduce_sum, dot, layernorm (mean), allreduce */
    int64_t k, m, n;      /* reduction length; gemm m x n outputs, reduce_sum/layernorm m rows */
    const char *variant;  /* "native" or "own" */
    kcs_schedule schedule;/* for own */
    kcs_format in;        /* input format */
    uint64_t seed;        /* the calls' seed (atomic schedules) and the pivots' */
    int verify;           /* extra random pairs asked after each tree (0: none) */
    int progress;         /* 1: progress on stderr (outputs with a tree) */
    int recheck;          /* > 0: afterwards ask that many random pairs again with
                             another call seed (seed ^ KCS_ORDER_RECHECK_SEED) and
                             set call_varies when an answer differs from the trees */
} kcs_order_opts;

#define KCS_ORDER_RECHECK_SEED 0x9e3779b97f4a7c15ull

typedef struct kcs_order_tree {
    char *tree;           /* canonical text (order_tree.h) */
    int *outputs;         /* output indices (row-major) that use it, ascending */
    int nout;
    int max_fanin;        /* > 2: fused multi-term nodes */
} kcs_order_tree;

typedef struct kcs_order_result {
    kcs_order_tree *trees;
    int ntrees;
    int noutputs;
    long calls;           /* op calls made */
    double seconds;       /* wall time of the probe */
    double big, unit;     /* the summands used: +-big, unit */
    int margin_bits;      /* log2(big / unit) */
    int call_varies;      /* recheck: the order changed with the call's seed (an order
                             drawn per call: atomics, arrival order) */
    int margin_short;     /* 1: below what a 27-bit accumulator needs at this k to swamp
                             every unit (2 + log2 k + 27): a wider accumulator could keep
                             some units, and the tree would be wrong without a sign */
} kcs_order_result;

/* Probe the op of o on the open backend. KCS_E_INVAL: an op this method
 * cannot probe (the message says why); KCS_E_DEVICE: answers that fit no
 * tree (the message says which). */
int kcs_order_probe(const kcs_backend_ops *ops, kcs_backend_ctx *ctx, const kcs_order_opts *o,
                    kcs_order_result *r, kcs_error *err);
void kcs_order_result_free(kcs_order_result *r);
/* "0-3,5,7-9" for the ascending output list; malloc'd. */
char *kcs_order_ranges(const int *outputs, int n);

#endif

/* The allreduce probe (probe_order_mpi.c), collective over MPI_COMM_WORLD
 * (initialised here when it is not): each rank contributes one summand per
 * element (leaves = ranks), MPI_Allreduce(MPI_FLOAT or MPI_DOUBLE, MPI_SUM)
 * sums them; outputs are (rank, element) pairs, index rank * k + element.
 * Rank 0 prints (text or --json). backend: "cpu" is the MPI library's own
 * collective; a GPU backend's collective is opened through the backend
 * (here: its "no device" error). */
int kcs_order_probe_allreduce(const char *backend, const kcs_order_opts *o, int json,
                              kcs_error *err);
/* The same, returning the result on every rank instead of printing (the
 * study's record_order and the tests): collective over comm. */
int kcs_order_probe_allreduce_comm(const kcs_order_opts *o, MPI_Comm comm, kcs_order_result *r,
                                   kcs_error *err);

/* The trees file that `kcs probe --order --json` printed (gemm, dot,
 * reduce_sum): op, k, m, n and the trees with their outputs. Errors name
 * the file and the field. */
typedef struct kcs_order_file {
    kcs_op op;
    int64_t k, m, n;
    kcs_order_result r;
} kcs_order_file;
int kcs_order_file_read(const char *path, kcs_order_file *f, kcs_error *err);
void kcs_order_file_free(kcs_order_file *f);

/* Predict D = A*B (A m×k, B k×n, row-major doubles) from the trees of f:
 * each output evaluated by kcs_order_eval (src/arith/order_expect.h) with
 * leaf arithmetic leaf (prof for KCS_ORDER_LEAF_PROFILE). The shape must be
 * f's (the trees are per output position). */
int kcs_order_predict_gemm(const kcs_order_file *f, int leaf, const kcs_profile_params *prof,
                           const double *A, const double *B, double *D, kcs_error *err);

/* record_order: true (probe_order_record.c). Collective over comm: every
 * rank probes its own binding (backend, profile, variant, schedule) for
 * each distinct (op, input format, k, probe shape) of the plan's cases whose
 * op the probe serves (gemm, dot, reduce_sum, layernorm; k <= 4096; gemm
 * probed at min(m, 8) x min(n, 8) outputs, reduce_sum and layernorm at
 * min(m, 8) rows; at most 8 per rank), and every rank receives the JSON
 * array of every rank's records (*text_p, malloc'd): what the store writes
 * as /provenance/order. A probe that fails is recorded with its error. */
struct kcs_rank_binding;
struct kcs_plan;
int kcs_order_record(const struct kcs_rank_binding *b, const struct kcs_plan *plan,
                     MPI_Comm comm, int verbose, char **text_p, kcs_error *err);
