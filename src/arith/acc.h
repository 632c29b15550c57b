/* The accumulator model and the summation schedules: how a sum of exact
 * terms is rounded into a declared accumulator in a declared order. Used by
 * the CPU backend's own kernels, the allreduce reduction and calibration. */
#ifndef KCS_ACC_H
#define KCS_ACC_H

#include <stdint.h>

#include "op.h"

/* Correctly rounded acc(x + t) for doubles x, t: one rounding into the
 * accumulator (what an FMA into a p-bit register does), computed from the
 * exact sum (TwoSum, the sum rounded to odd), for accumulators of <= 51 bits. */
double kcs_acc_add(const kcs_acc *acc, double x, double t);
/* Round x into the accumulator. */
double kcs_acc_round(const kcs_acc *acc, double x);

/* Sum n exact terms under a schedule, each addition rounded into acc.
 * scratch must hold n doubles (atomic and pairwise use it). seed keys the
 * random order of the atomic schedule. */
double kcs_cpu_sum(const double *terms, int64_t n, const kcs_schedule *s, const kcs_acc *acc,
                   uint64_t seed, double *scratch);

/* The two-pass moments of a row of k values (each rounded to fp32) as an
 * fp32 layernorm computes them, with the sums of x and of (x - mu)^2
 * accumulated into acc in index order (each (x - mu)^2 exact in double:
 * one rounding per term, fmaf's for an fp32 acc): *mu_p = mean, *sd_p =
 * sqrt(var + eps), both fp32. The C-PRC-06 calibration kernels'
 * (backends/cpu/calib_rows_rn.c, src/calibrate/calib_wrap_rows_rn.c). */
void kcs_acc_moments(const double *x, int64_t k, const kcs_acc *acc, float eps, float *mu_p,
                     float *sd_p);

/* The atomic schedule's order of n terms under seed: idx[i] is the term
 * summed i-th (the permutation kcs_cpu_sum applies; fast paths gather by
 * it and stay bit-identical). n <= KCS_ATOMIC_ORDER_MAX: 32-bit indices
 * halve the memory the shuffle and the gathers touch at random (2^20
 * terms: 4 MB, not 8); longer sums take kcs_cpu_sum's own shuffle. */
#define KCS_ATOMIC_ORDER_MAX ((int64_t)UINT32_MAX)
void kcs_atomic_order(uint64_t seed, int64_t n, uint32_t *idx);

#endif
