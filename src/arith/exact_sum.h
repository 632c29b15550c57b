/* The rules of exact-sum inputs (distribution `exact`, src/plan/
 * inputs_exact.c): which ops have them and which (accumulator, formats, k)
 * admit them. Below the contract language, which checks them at load. */
#ifndef KCS_EXACT_SUM_H
#define KCS_EXACT_SUM_H

#include <stdint.h>

#include "error.h"
#include "op.h"

/* Whether op has exact-sum inputs (gemm, batched_gemm, dot, reduce_sum,
 * allreduce). */
int kcs_exact_op_ok(kcs_op op);
/* The number of terms of one output's sum: m (the ranks) for allreduce,
 * k for the others. */
int64_t kcs_exact_terms(kcs_op op, int64_t m, int64_t k);
/* ceil(log2 k): the bits the count of k terms adds to a sum. */
int kcs_exact_ceil_log2(int64_t k);
/* P: the significand bits every partial sum must fit (min of the declared
 * accumulator and the output format, at most 53); not used by the
 * narrow-output kind (kcs_exact_narrow_out). */
int kcs_exact_bits(const kcs_acc *acc, kcs_format out);
/* The accumulator's significand bits (bits:N or its format's), at most 53. */
int kcs_exact_acc_bits(const kcs_acc *acc);
/* Whether a case's exact-sum inputs are the narrow-output kind
 * (src/plan/inputs_exact_narrow.c): gemm or batched_gemm whose output
 * format has fewer significand bits than the accumulator. Their partial
 * sums need the accumulator's bits while every exact result is
 * representable in the output format. */
int kcs_exact_narrow_out(kcs_op op, const kcs_acc *acc, kcs_format out);
/* The narrow-output kind's carrier pairs at k terms (up to 3, each
 * straddling the largest power of two below k) and its filler pairs
 * ((k - 1) / 2 in all): src/plan/inputs_exact_narrow.c. */
int64_t kcs_exact_narrow_carriers(int64_t k);
/* 0 when a case can have exact-sum inputs; else KCS_E_INVAL with why. */
int kcs_exact_check(kcs_op op, const kcs_acc *acc, kcs_format in, kcs_format out, int64_t k,
                    kcs_error *err);

#endif
