/* Internals of the random_walk oracle magnitude (oracle_random_walk.c),
 * exposed for their unit test. */
#ifndef KCS_ORACLE_RW_H
#define KCS_ORACLE_RW_H

#include <stddef.h>

/* Q(a) = sum_{s=2..n} T_s^2, T_s the sum of the s largest of the
 * nonnegative a[0..n): a bound on the sum of squared partial sums over the
 * internal nodes of any merge tree of the a_j. _sorted: exact (sorts a in
 * place); kcs_rw_tree_q: the same for n <= 512, beyond it from the values
 * rounded up to 1/16 of a binade (values 2^48 below the largest share one
 * bucket): never below the exact Q, at most (1 + 1/16)^2 above it plus
 * that bucket's share. a may be reordered. */
double kcs_rw_tree_q_sorted(double *a, size_t n);
double kcs_rw_tree_q(double *a, size_t n);

#endif
