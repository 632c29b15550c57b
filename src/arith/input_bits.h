/* Evidence for signatures: were a sum of products' inputs rounded to fewer
 * bits before an accurate accumulation? For gemm, batched_gemm and dot,
 * the reference is recomputed (in fp64, on a sample of at most 64 outputs)
 * from the inputs rounded to an 11-bit significand (tf32/fp16 width) and
 * to an 8-bit one (bf16); when such a reference explains the output (the
 * RMS of y - ref_w is below a quarter of that of y - ref), the inputs were
 * rounded to w bits. A narrower accumulator, a scaled or corrupted output
 * leaves the error unexplained by either, so accumulator and coercion
 * signatures can be told apart at any k (the error sizes cannot: tf32
 * inputs at long k err like a 13..18-bit accumulator). */
#ifndef KCS_INPUT_BITS_H
#define KCS_INPUT_BITS_H

#include <stddef.h>

#include "op.h"

/* 11 or 8 when the inputs look rounded to that many bits (11 checked
 * first), 0 when neither explains the error or for other ops; y and ref
 * have n values. */
int kcs_input_rounded_bits(const kcs_call *c, const double *y, const double *ref, size_t n);
/* The same, then (where rounding to nearest explains nothing) with the
 * inputs truncated toward zero to 11 and 8 bits, as matrix units that drop
 * an fp32 input's low bits do: *rz = 1 when truncation explains the
 * output, 0 when rounding does (or nothing). */
int kcs_input_coerced_bits(const kcs_call *c, const double *y, const double *ref, size_t n,
                           int *rz);

/* attention (O = softmax(Q K^T / sqrt(k)) V): the same question for the
 * intermediate P: 11 or 8 when O recomputed in fp64 (on at most 16 query
 * rows) with the unnormalised probabilities exp(s - max) rounded to that
 * many bits before the PV product explains the output as above; else 0. */
int kcs_attention_p_bits(const kcs_call *c, const double *y, const double *ref, size_t n);

#endif
