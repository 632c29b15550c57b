/* effective_acc_bits for sums of products (gemm, batched_gemm, dot,
 * reduce_sum): the significand width whose random-walk rounding model
 * explains the measured error. For a p-bit accumulator rounding to
 * nearest, a sequential sum's error is sum_j s_j d_j over its partial sums
 * s_j with d_j of variance u^2/3 (u = 2^-p), so err / sqrt(sum_j s_j^2 / 3)
 * has RMS u over the outputs whatever the data's mean or length; the
 * estimator is -log2 of that RMS, with s_j the partial sums of the exact
 * terms in index order. (The old -log2(rms_scaled / sqrt(k)) divided by
 * sum|x|, which grows like k, not sqrt(k), on zero-mean data: a bias of
 * about log2(k)/2.) */
#ifndef KCS_EFFECTIVE_BITS_H
#define KCS_EFFECTIVE_BITS_H

#include <stddef.h>

#include "op.h"

/* The estimate for call c's output y against ref (n values); fallback for
 * ops that are not sums of products or when no output has a finite error
 * against a nonzero model scale. Capped at 64 (an exact result). */
double kcs_effective_acc_bits(const kcs_call *c, const double *y, const double *ref, size_t n,
                              double fallback);

#endif
