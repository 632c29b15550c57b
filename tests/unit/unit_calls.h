/* Backend calls in the unit suites: an fp32 call (test_plugin.c,
 * test_calibrate.c, test_sweep_ops.c), its oracle (test_ops.c,
 * test_oracle.c) and an fp64 gemm (test_plugin.c, test_calibrate.c). */
#ifndef KCS_UNIT_CALLS_H
#define KCS_UNIT_CALLS_H

#include <CUnit/Basic.h>
#include <stdio.h>

#include "backend.h"
#include "oracle.h"

/* A call of op at m x n x k with inputs in `in`: fp32 output and
 * accumulator, no inputs yet. */
static inline kcs_call ut_fp32_call(kcs_op op, int64_t m, int64_t n, int64_t k, kcs_format in)
{
    kcs_call c = {0};
    c.op = op;
    c.dtype_in = in;
    c.dtype_out = KCS_FMT_FP32;
    c.acc = (kcs_acc){KCS_FMT_FP32, 0, 0};
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
}

/* D = A B in fp64 (A m x k, B k x n, row-major): the reference of a gemm
 * whose products of floats are exact in double. */
static inline void ut_ref_gemm(const double *A, const double *B, int64_t m, int64_t n, int64_t k,
                               double *D)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0.0;
            for (int64_t p = 0; p < k; p++)
                s += A[i * k + p] * B[p * n + j];
            D[i * n + j] = s;
        }
}

/* The oracle's reference of call c; a failure fails the test. */
static inline void oracle(const kcs_call *c, kcs_oracle_kind kind, double *ref, double *absref,
                          double *scale)
{
    kcs_error err = {0};
    int rc = kcs_oracle_run(kind, NULL, c, ref, absref, scale, &err);
    if (rc)
        fprintf(stderr, "oracle: %s\n", err.msg);
    CU_ASSERT_FATAL(rc == 0);
}

#endif
