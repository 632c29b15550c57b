/* The case of the exact-sum input tests (test_exact_inputs.c,
 * test_exact_narrow.c): op at m x n x k, inputs in `in`, fp32 output and
 * accumulator, dist exact. */
#ifndef KCS_TEST_EXACT_CASE_H
#define KCS_TEST_EXACT_CASE_H

#include "inputs_exact.h"

static inline kcs_case exact_case(kcs_op op, kcs_format in, int64_t m, int64_t n, int64_t k)
{
    return (kcs_case){.op = op, .dtype_in = in, .dtype_out = KCS_FMT_FP32,
                      .acc.fmt = KCS_FMT_FP32, .shape = {.m = m, .n = n, .k = k},
                      .dist = KCS_DIST_EXACT};
}

#endif
