/* Exact-sum measurement inputs (distribution `exact`): integers chosen
 * from the case so that every partial sum of every output, in any order
 * and any grouping, is exactly representable in the declared accumulator
 * and output format. Every conforming kernel (any summation order, any
 * rounding mode, FMA or not, any wider accumulator) then returns the exact
 * result bit for bit, while a narrower accumulator or an input coerced to
 * fewer bits cannot. Derivation and power boundary: contracts/README.md,
 * "Exact-sum inputs". */
#ifndef KCS_INPUTS_EXACT_H
#define KCS_INPUTS_EXACT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "study.h"

/* Whether op has exact-sum inputs (gemm, batched_gemm, dot, reduce_sum). */
int kcs_exact_op_ok(kcs_op op);
/* P: the significand bits every partial sum must fit (min of the declared
 * accumulator and the output format, at most 53). */
int kcs_exact_bits(const kcs_acc *acc, kcs_format out);
/* 0 when a case can have exact-sum inputs; else KCS_E_INVAL with why. */
int kcs_exact_check(kcs_op op, const kcs_acc *acc, kcs_format in, kcs_format out, int64_t k,
                    kcs_error *err);
/* Fill tensor `tensor` (0: A / x, 1: B / y) of a case with exact-sum
 * inputs from the stream (seed, sa, sb). */
int kcs_exact_fill(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                   uint64_t sa, uint64_t sb, kcs_error *err);

#endif
