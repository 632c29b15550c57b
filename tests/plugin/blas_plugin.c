/* libkcs_blas_plugin.so: an fp32 gemm plugin that calls OpenBLAS's
 * cblas_sgemm, the fast kernel `kcs bench isolation` times in-process and
 * in a worker (the overhead of isolation is measured against a kernel
 * that is itself fast). */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "plugin_common.h"

static int blas_run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    if (strcmp(c->op, "gemm") || c->dtype_in != KCS_DT_F32 || c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "blas plugin: fp32 gemm only");
        return -1;
    }
    int m = (int)c->m, n = (int)c->n, k = (int)c->k;
    float *D = c->out;
    float beta = 0.0f;
    if (c->in[2]) {
        memcpy(D, c->in[2], (size_t)m * (size_t)n * sizeof *D);
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, c->in[0], k, c->in[1],
                n, beta, D, n);
    return 0;
}

KCS_TEST_PLUGIN("kcs-blas-sgemm", "gemm", blas_run)
