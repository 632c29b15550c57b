/* The reference computed once per job: for a plain GEMM with the fp64
 * oracle, each rank of comm computes a block of the reference's rows (and of
 * |A||B|) and the ranks allgather them, so with N ranks each does about 1/N
 * of the oracle work instead of all of it. Inputs are identical on every
 * rank (the runner proves it per case), so every rank ends with the whole
 * reference. Other oracles and ops are computed locally by every rank.
 *
 * Collective over comm: every rank calls it for every trial, in the same
 * order, also a rank that cannot use the result (local_ok = 0: its inputs
 * failed, its backend is unavailable or broken; call may then be NULL).
 * When any rank is not ok, every ok rank falls back to kcs_oracle_run
 * (the collectives stay matched). Returns what kcs_oracle_run returns; with
 * local_ok = 0, 0 and nothing written. */
#ifndef KCS_ORACLE_SHARED_H
#define KCS_ORACLE_SHARED_H

#include <mpi.h>

#include "oracle.h"

int kcs_oracle_run_shared(MPI_Comm comm, int local_ok, kcs_oracle_kind kind, const char *profile,
                          const kcs_call *call, double *ref, double *absref, double *scale_p,
                          kcs_error *err);

#endif
