/* effective_acc_bits for sums of products (gemm, batched_gemm, dot,
 * reduce_sum): the significand width p of the sequential round-to-nearest
 * accumulator whose error on these very inputs is as large as the
 * measured one. For candidate widths the exact terms of a sample of the
 * outputs (at least 64, or all; about 2^18 terms when there are more) are
 * summed in index order with every addition rounded to p bits (nearest
 * even, as kcs_acc_add); g(p) = log2(RMS of that error / RMS of y - ref
 * over the same outputs) falls by about one per bit, and the estimate is
 * where a least-squares line through g at the integers around its zero
 * crosses 0 (two passes over the terms, eight widths each as
 * the lanes of one vector; above 28 bits the random walk's slope of one
 * per bit extrapolates from 28).
 * Because the model is run rather than approximated it holds in every
 * regime: a random walk of roundings (zero-mean data), and a running sum
 * that stagnates (positive data in bf16: once the sum is large, terms
 * below half its spacing are lost, an error that grows like k, not
 * sqrt(k)). Validated in tests/unit/arith/test_effective_bits.c: fp32 24,
 * bf16 8, fp16 11, 14-bit 14 (+- 1) at k = 64..65536 on normal and
 * uniform(0,1) inputs. (The first estimator, -log2(rms_scaled / sqrt(k)),
 * divided by sum|x|, which grows like k, not sqrt(k), on zero-mean data:
 * a bias of about log2(k)/2; a random-walk formula fixed that but not the
 * stagnation of positive sums.) A kernel summing in another order reads
 * the width whose sequential sum errs as much (pairwise fp32 reads more
 * than 24). */
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
