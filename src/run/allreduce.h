/* Allreduce (sum) over an MPI communicator with an explicit accumulator:
 * the collective counterpart of the allreduce op (the CPU backend, which
 * has no communicator, runs the one-rank case). Every addition is one
 * correct rounding into acc (kcs_acc_add), so the order of additions of
 * each algorithm shows in narrow accumulators.
 *
 * Orders (P ranks, x_r the input of rank r, "+" one rounding into acc):
 *   ring     the vector is cut into P contiguous chunks, chunk c covering
 *            [floor(c k / P), floor((c+1) k / P)). Reduce-scatter: chunk c
 *            starts at rank c+1 (its value rounded into acc) and travels
 *            the ring c+1 -> c+2 -> ... -> c (mod P), each rank adding its
 *            own x on arrival:
 *              y = (((x_{c+1} + x_{c+2}) + x_{c+3}) + ...) + x_c
 *            so rank c ends with chunk c; an allgather around the same
 *            ring copies every finished chunk to every rank. Messages go
 *            by MPI_Sendrecv (point-to-point; a blocking MPI_Send ring can
 *            deadlock on large messages), in segments of at most 2^16
 *            doubles.
 *   tree     binomial reduce to rank 0, then binomial broadcast
 *            (MPI_Send/MPI_Recv). In round d = 1, 2, 4, ... rank r with
 *            r mod 2d == 0 receives the partial of rank r + d (if it
 *            exists) and adds it to its own: own + received; so for P = 4
 *            y = (x_0 + x_1) + (x_2 + x_3).
 *   library  MPI_Allreduce(MPI_SUM) on the fp64 values (the library's own
 *            order, fp64 additions), then one rounding into acc.
 * ring and tree give bitwise identical y on every rank (each value is
 * computed once and copied); library does if the MPI library does. */
#ifndef KCS_ALLREDUCE_H
#define KCS_ALLREDUCE_H

#include <mpi.h>
#include <stdint.h>

#include "error.h"
#include "op.h"

typedef enum kcs_allreduce_algo {
    KCS_ALLREDUCE_RING = 0,
    KCS_ALLREDUCE_TREE,
    KCS_ALLREDUCE_LIBRARY,
} kcs_allreduce_algo;

/* "ring", "tree", "library"; 0 or KCS_E_INVAL. */
int kcs_allreduce_algo_parse(const char *text, kcs_allreduce_algo *algo_p);
const char *kcs_allreduce_algo_name(kcs_allreduce_algo algo);

/* y = sum over the ranks of comm of x (k doubles each), every addition
 * rounded into acc. y may be x (in place). Collective: every rank calls it
 * with the same k, algo and acc. Returns 0, KCS_E_NOMEM or KCS_E_MPI. */
int kcs_allreduce(const double *x, double *y, int64_t k, kcs_allreduce_algo algo,
                  const kcs_acc *acc, MPI_Comm comm, kcs_error *err);

#endif
