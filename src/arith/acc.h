/* The accumulator model and the summation schedules: how a sum of exact
 * terms is rounded into a declared accumulator in a declared order. Used by
 * the CPU backend's own kernels, the allreduce reduction and calibration. */
#ifndef KCS_ACC_H
#define KCS_ACC_H

#include <stdint.h>

#include "op.h"

/* Correctly rounded acc(x + t) for doubles x, t: one rounding into the
 * accumulator (what an FMA into a p-bit register does), computed from the
 * exact sum (TwoSum + a sticky nudge), for accumulators of <= 51 bits. */
double kcs_acc_add(const kcs_acc *acc, double x, double t);
/* Round x into the accumulator. */
double kcs_acc_round(const kcs_acc *acc, double x);

/* Sum n exact terms under a schedule, each addition rounded into acc.
 * scratch must hold n doubles (atomic and pairwise use it). seed keys the
 * random order of the atomic schedule. */
double kcs_cpu_sum(const double *terms, int64_t n, const kcs_schedule *s, const kcs_acc *acc,
                   uint64_t seed, double *scratch);

/* The atomic schedule's order of n terms under seed: idx[i] is the term
 * summed i-th (the permutation kcs_cpu_sum applies; fast paths gather by
 * it and stay bit-identical). */
void kcs_atomic_order(uint64_t seed, int64_t n, int64_t *idx);

#endif
