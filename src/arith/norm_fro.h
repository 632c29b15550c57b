/* The Frobenius norm as a sum of fixed chunks, so that ranks can each sum
 * a share of the chunks and every rank, whatever their number, ends with
 * the bits one rank computes alone (oracle_shared.c).
 *
 *   ||x||_F = sqrt(sum over chunks c, in order, of part_c), where part_c is
 *   the sum of x_i^2 over i in [c KCS_NORM_CHUNK, (c+1) KCS_NORM_CHUNK),
 *   accumulated in 4 interleaved fp64 sums (element i into sum i mod 4, in
 *   order) combined as (s0 + s1) + (s2 + s3).
 *
 * The chunks' order and the 4 sums are fixed, norm_fro.c is compiled with
 * -ffp-contract=off, so the result does not depend on the compiler's
 * vectorisation, FMA or the split over ranks. Relative error at most
 * about (KCS_NORM_CHUNK/4 + 2 + nchunks) 2^-53, far below what a
 * normwise scale needs. */
#ifndef KCS_NORM_FRO_H
#define KCS_NORM_FRO_H

#include <stddef.h>

#define KCS_NORM_CHUNK 4096

/* Number of chunks of a vector of n elements (0 for n = 0). */
size_t kcs_norm_nchunks(size_t n);

/* part[c - c0] = the sum of squares of chunk c of x (length n), for
 * c in [c0, c1), c1 <= kcs_norm_nchunks(n). */
void kcs_norm_chunks(const double *x, size_t n, size_t c0, size_t c1, double *part);

/* sqrt of the in-order sum of nchunks chunk sums. */
double kcs_norm_from_chunks(const double *part, size_t nchunks);

#endif
