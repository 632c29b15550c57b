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
#include "exact_sum.h"
#include "study.h"

/* Version of the narrow-output kind's generator (inputs_exact_narrow.c).
 * It enters the plan hash only through the cases that use that kind (a
 * `narrow=N` token on their line, plan.c), so datasets of studies without
 * them keep their hash and bits. 1: one free product and cancelling pairs
 * of a (Pa - 2)-bit construction (no token); 2: up to 3 carrier pairs
 * straddling the largest power of two below k, filler pairs of Pa - 3
 * bits, the free product's exponent capped at Pa - 10 - p_out. */
#define KCS_INPUTS_NARROW_VERSION 2

/* Fill tensor `tensor` (0: A / x, 1: B / y) of a case with exact-sum
 * inputs from the stream (seed, sa, sb): the narrow-output kind
 * (kcs_exact_narrow_out) or the sums of P = min(accumulator, output)
 * bits (kcs_exact_fill_sums). Defined in inputs_exact_narrow.c. */
int kcs_exact_fill(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                   uint64_t sa, uint64_t sb, kcs_error *err);
/* The exact-sum inputs whose every partial sum fits P = min(accumulator,
 * output) bits (inputs_exact.c), whatever the output. */
int kcs_exact_fill_sums(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                        uint64_t sa, uint64_t sb, kcs_error *err);

/* The narrow-output kind (kcs_exact_narrow_out; inputs_exact_narrow.c):
 * every exact result representable in dtype_out, partial sums needing the
 * accumulator (its pairs are kcs_exact_fill_sums's inputs of a shorter
 * sum). kcs_exact_fill calls it for those cases. */
int kcs_exact_fill_narrow(const kcs_case *cs, int tensor, double *x, size_t len, uint64_t seed,
                          uint64_t sa, uint64_t sb, kcs_error *err);

#endif
