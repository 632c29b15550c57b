/* Power curves (kcs calibrate --sweep): each contract over its declared
 * precondition (k log-spaced from its minimum to its maximum, every
 * admitted input format), the CPU backend's conforming kernels against a
 * catalogue of realistic bad ones, with detection and false-alarm rates
 * per (kernel, point) and Clopper-Pearson intervals. A trial at a point is
 * the contract's protocol at that shape with fresh inputs of every
 * distribution it measures; it is flagged when any of them is not within
 * tolerance. */
#ifndef KCS_CALIB_SWEEP_H
#define KCS_CALIB_SWEEP_H

#include "calibrate.h"

typedef struct kcs_sweep_row {
    char contract[16];
    char kernel[40];     /* "own fp32 pairwise", "own bits:14", "calib:C-PRC-03:bad", ... */
    char klass[12];      /* conforming | bad | off-target (another family's mechanism) */
    char op[16];
    char dtype_in[12];
    int64_t m, n, k;     /* the point's shape: k swept (the row length of softmax and
                            layernorm), n too for attention (its n x k grid) */
    int32_t trials;      /* trials that ran (errors and unsupported excluded); for a bad
                            kernel, those where the defect showed (see inert) */
    int32_t flagged;     /* of those, trials not within tolerance */
    int32_t inert;       /* bad kernels: trials whose outputs were bit for bit some
                            conforming kernel's (the defect did not show) */
    double rate;         /* flagged / trials (NaN when no trial counts) */
    double ci_lo, ci_hi; /* Clopper-Pearson 95% interval of the rate */
} kcs_sweep_row;

const kcs_field *kcs_sweep_row_fields(int *n_p);

typedef struct kcs_sweep_opts {
    int trials;      /* per point (default 20) */
    int64_t max_k;   /* cap on the swept k (<= 0: the precondition's maximum) */
    int k_factor;    /* ratio between successive k (default 4) */
    int progress;    /* a progress line on stderr */
    int64_t min_k;   /* skip points below this k (<= 0: none) */
} kcs_sweep_opts;

/* Sweep contracts cs (those with catalogue kernels for gemm, reduce_sum,
 * dot or norm; softmax, layernorm, attention and C-PRC-04's reduce_sum in
 * calib_sweep_ops.c; the protocol and exceptional-value contracts of
 * calib_sweep_proto.h) on the CPU backend. *rows_p malloc'd. *misses_p counts
 * (bad kernel, point) pairs detected in fewer than 99% of trials and
 * (conforming kernel, point) pairs with a false alarm. */
int kcs_calib_sweep(kcs_contract *const *cs, int n, const kcs_calib_run *run,
                    const kcs_sweep_opts *o, kcs_sweep_row **rows_p, int *n_rows_p,
                    int *misses_p, kcs_error *err);

/* 1 when the row fails the sweep's criterion: a conforming kernel flagged,
 * or a counted bad kernel detected in fewer than 99% of the trials where
 * its defect showed. */
int kcs_sweep_row_missed(const kcs_sweep_row *r);

/* Room for one more row in *rows (*nr used of *cap, doubled when full;
 * sweep_rows.c). 0 or KCS_E_NOMEM. */
int kcs_sweep_rows_room(kcs_sweep_row **rows, int *nr, int *cap, kcs_error *err);

/* The plan of one sweep point: contract c alone, op at shape sh, inputs
 * of format f, T trials, the run's seed and time limit (sweep_rows.c). */
int kcs_sweep_point_plan(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                         const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err);
/* The same with the point's distributions given (n_dists 0: the
 * contract's measured inputs). */
int kcs_sweep_point_plan_dists(const kcs_contract *c, kcs_op op, kcs_format f, kcs_shape sh,
                               const kcs_dist *dists, int n_dists, const kcs_calib_run *run,
                               int T, kcs_plan *plan, kcs_error *err);
/* The same with the output format given (narrow-output states). */
int kcs_sweep_point_plan_out(const kcs_contract *c, kcs_op op, kcs_format f, kcs_format fout,
                             kcs_shape sh, const kcs_dist *dists, int n_dists,
                             const kcs_calib_run *run, int T, kcs_plan *plan, kcs_error *err);
/* One kernel (binding b) on every case of a point's plan, T trials each,
 * through the contract's protocol: per cell i * T + t (case i, trial t)
 * whether the call returned (ok: status ok or raised), its output digest,
 * whether it was judged not_claimed (unclaimed; may be NULL) and whether
 * it was flagged (any verdict but within_tolerance and not_claimed). The
 * arrays hold n_cases * T cells, zeroed by the caller. */
int kcs_sweep_point_calls(const kcs_contract *c, const kcs_plan *plan, kcs_rank_binding *b,
                          const kcs_calib_run *run, int T, unsigned char *ok,
                          unsigned char *flag, unsigned char *unclaimed, uint64_t *dig,
                          kcs_error *err);

/* One kernel's outcome at a point: per cell i * T + t (distribution i,
 * trial t) whether the call ran (ok), was flagged, was judged not_claimed,
 * and its output digest (0 when it raised), as kcs_sweep_point_calls fills
 * them. calib_sweep.c keeps one cell per trial t in ok, flag and unclaimed
 * (for every distribution) and dig per cell. */
typedef struct kcs_sweep_out {
    int64_t n_dist;
    int T;
    unsigned char *ok, *flag, *unclaimed;
    uint64_t *dig;
} kcs_sweep_out;

/* Allocate o's arrays, n_dist * T cells each, zeroed: 1, or 0 when out of
 * memory (what was allocated stays for kcs_sweep_out_free). */
int kcs_sweep_out_alloc(kcs_sweep_out *o, int64_t n_dist, int T);
/* Free o's arrays and zero it. */
void kcs_sweep_out_free(kcs_sweep_out *o);

/* Bind b (a CPU binding) to kernel variant with accumulator acc and
 * schedule (either NULL: the contract's, sequential), and name it
 * "variant[ acc][ schedule]" into name. */
void kcs_sweep_bind_kernel(kcs_rank_binding *b, const char *variant, const char *acc,
                           const char *schedule, char *name, size_t len);

/* One table row: its names, the point (op, input format, shape) and the
 * counts, with rate = flagged / trials and its Clopper-Pearson 95%
 * interval (NaN when no trial counts). */
void kcs_sweep_row_fill(kcs_sweep_row *r, const char *contract, const char *kernel,
                        const char *klass, kcs_op op, kcs_format f, kcs_shape sh, int32_t trials,
                        int32_t flagged, int32_t inert);

/* Write /calibration_sweep to a NEW HDF5 file (KCS_E_EXISTS if it exists). */
int kcs_store_sweep_write(const char *path, const kcs_sweep_row *rows, int n,
                          const char *command_line, kcs_error *err);

#endif
