/* Power curves of the protocol and exceptional-value contracts (kcs
 * calibrate --sweep): C-ORD-02 (repeat), C-ORD-03 (batch invariance),
 * C-ORD-04 (allreduce, repeat), C-EXC-01 (NaN propagation), C-EXC-02
 * (out-of-range gather indices). Each has its own swept axis, conforming
 * set and bad catalogue (calib_sweep_proto.c), and its own rule for when a
 * bad kernel's defect showed in a trial:
 *   value   (a wrong value or a raise: EXC-01, EXC-02, ORD-04's narrow
 *            partial sums, every always-raise) some output, a raise
 *            counting as an output, differs from every conforming
 *            kernel's on the same inputs (as for the oracle contracts);
 *   repeat  (nondeterminism: ORD-02, ORD-04) the kernel returns at least
 *            two distinct outputs over max(KCS_PROBE_RUNS, 3 r) runs on the
 *            trial's inputs (r: the contract's repetitions), the
 *            protocol's own runs (same seeds) among them;
 *   batch   (batch dependence: ORD-03) the op on the first b rows alone
 *            differs from the first b rows of the full output for some b
 *            of a probe set that holds every batch size the protocol
 *            visits (kcs_batch_sizes, same seed), every b <= 128, P + 1
 *            for each power of two P >= 128 and 16 drawn uniformly.
 * A trial the protocol flagged showed its defect by construction (the
 * probes hold the protocol's runs); an unflagged one is probed. */
#ifndef KCS_CALIB_SWEEP_PROTO_H
#define KCS_CALIB_SWEEP_PROTO_H

#include "calib_sweep.h"
#include "progress.h"

#define KCS_PROBE_RUNS 32

/* The swept points of contract c when it is one of these (shapes[],
 * at most max); 0 otherwise. */
int kcs_sweep_proto_points(const kcs_contract *c, const kcs_sweep_opts *o, kcs_shape *shapes,
                           int max);

/* Sweep c (kcs_sweep_proto_points(c) > 0) and append its rows to
 * *rows_p (capacity *cap_p, *n_rows_p used; the caller judges them with
 * kcs_sweep_row_missed); the progress counter *done_p advances. */
int kcs_sweep_proto_run(const kcs_contract *c, const kcs_calib_run *run, const kcs_sweep_opts *o,
                        kcs_sweep_row **rows_p, int *n_rows_p, int *cap_p,
                        kcs_progress *progress, int64_t *done_p, kcs_error *err);

#endif
