/* Reference results. fp64: OpenBLAS dgemm on the exact inputs (for fp32
 * and narrower inputs every product is exact; the sum carries 53 bits).
 * The magnitudes |A||B| + |C| scale componentwise errors. */
#include "oracle.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

static int gemm_fp64(const kcs_call *c, double *ref, double *absref, double *scale_p,
                     kcs_error *err)
{
    size_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? (size_t)c->batch : 1;
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    double *aa = malloc((m * k + k * n) * sizeof *aa);
    if (!aa)
        return kcs_fail(err, KCS_E_NOMEM, "oracle: out of memory");
    double *ab = aa + m * k;
    double scale = 0.0;
    for (size_t b = 0; b < batch; b++) {
        const double *A = c->in[0] + b * m * k, *B = c->in[1] + b * k * n;
        const double *C = c->in[2] ? c->in[2] + b * m * n : NULL;
        double *R = ref + b * m * n;
        double *AR = absref ? absref + b * m * n : NULL;
        if (C)
            memcpy(R, C, m * n * sizeof *R);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, A,
                    (int)k, B, (int)n, C ? 1.0 : 0.0, R, (int)n);
        if (AR) {
            for (size_t i = 0; i < m * k; i++)
                aa[i] = fabs(A[i]);
            for (size_t i = 0; i < k * n; i++)
                ab[i] = fabs(B[i]);
            for (size_t i = 0; i < m * n; i++)
                AR[i] = C ? fabs(C[i]) : 0.0;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0,
                        aa, (int)k, ab, (int)n, 1.0, AR, (int)n);
        }
        double s = kcs_norm_fro(A, m * k) * kcs_norm_fro(B, k * n);
        if (C)
            s += kcs_norm_fro(C, m * n);
        scale = fmax(scale, s);
    }
    free(aa);
    *scale_p = scale;
    return 0;
}

int kcs_oracle_run(kcs_oracle_kind kind, const char *profile, const kcs_call *call, double *ref,
                   double *absref, double *scale_p, kcs_error *err)
{
    (void)profile;
    if (kind != KCS_ORACLE_FP64)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: kind %d not available yet", (int)kind);
    switch (call->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
        return gemm_fp64(call, ref, absref, scale_p, err);
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: no fp64 reference for op %s",
                        kcs_op_name(call->op));
    }
}
