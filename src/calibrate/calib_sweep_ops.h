/* Power curves of the value contracts on the row-wise and fused ops
 * (kcs calibrate --sweep, calib_sweep.h): softmax and layernorm over the
 * row length k (C-PRC-02), attention over a grid of the sequence length n
 * and the head dimension k (C-CMP-01), and reduce_sum under declared
 * subnormal semantics (C-PRC-04). Per op, the CPU backend's conforming
 * implementations and a catalogue of realistic bad ones, each marked on or
 * off the target of the contract it is run under. */
#ifndef KCS_CALIB_SWEEP_OPS_H
#define KCS_CALIB_SWEEP_OPS_H

#include "calib_sweep.h"

/* One kernel of a sweep's catalogue. */
typedef struct kcs_sweep_kdef {
    const char *variant;  /* native | own | fused | calib (the contract's calibration kernel:
                             bad when bad != 0, else good) | defect:NAME */
    const char *acc;      /* NULL: the contract's */
    const char *schedule; /* NULL: sequential */
    int bad;              /* 0 conforming, 1 catalogue bad, 2 the contract's calibration bad */
    const char *targets;  /* bad == 1: the contracts (space-separated ids) under which it is
                             counted; NULL: by family (calib_sweep.c, counted_bad) */
} kcs_sweep_kdef;

/* One point: the op and the shape it is measured at. */
typedef struct kcs_sweep_point {
    kcs_op op;
    kcs_shape sh;
} kcs_sweep_point;

/* The points of contract c when it is an oracle-protocol contract on
 * softmax, layernorm or attention, or C-PRC-04's reduce_sum with declared
 * subnormal semantics: up to max points into pts, in the order op, then
 * the swept value(s); 0 when c is none of those. */
int kcs_sweep_ops_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_sweep_point *pts,
                         int max);

/* The catalogue of op for a contract that kcs_sweep_ops_points serves. */
const kcs_sweep_kdef *kcs_sweep_ops_kernels(kcs_op op, size_t *n_p);

/* 1 when bad kernel kd is counted (on target) under contract c. */
int kcs_sweep_ops_counted(const kcs_contract *c, const kcs_sweep_kdef *kd);

#endif
