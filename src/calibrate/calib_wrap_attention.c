/* The probabilities of an attention call from a backend's own kernels,
 * shared by the attention wrappers of C-CMP-01 (calib_wrap_rows.c) and
 * C-PRC-07 (calib_wrap_attention_rn.c). */
#include <math.h>

#include "calib_wrap_impl.h"

int kcs_wrap_attention_probs(kcs_backend_ctx *w, const kcs_call *c, size_t bi, double *Kt,
                             double *S, double *P, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    float scale = (float)(1.0 / sqrt((double)(k ? k : 1)));
    const double *Q = c->in[0] + bi * m * k, *K = c->in[1] + bi * n * k;
    for (size_t j = 0; j < n; j++)
        for (size_t t = 0; t < k; t++)
            Kt[t * n + j] = K[j * k + t];
    int rc = kcs_wrap_native(w, c, KCS_OP_GEMM, (int64_t)m, (int64_t)n, (int64_t)k, 0,
                             c->dtype_in, KCS_FMT_FP32, Q, Kt, NULL, S, err);
    for (size_t e = 0; !rc && e < m * n; e++)
        S[e] = (double)((float)S[e] * scale);
    if (!rc)
        rc = kcs_wrap_native(w, c, KCS_OP_SOFTMAX, (int64_t)m, 0, (int64_t)n, 0, KCS_FMT_FP32,
                             KCS_FMT_FP32, S, NULL, NULL, P, err);
    return rc;
}
