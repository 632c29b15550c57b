/* Reference results (oracle.h).
 *   fp64   gemm: OpenBLAS dgemm on the exact inputs (for fp32 and narrower
 *          inputs every product is exact; the sum carries 53 bits); the
 *          other ops: oracle_ops.c. Results are not rounded to dtype_out.
 *   exact  gemm / batched_gemm / dot / reduce_sum: the exact value
 *          correctly rounded to dtype_out (exact.c, MPFR).
 *   model:<profile>  gemm / batched_gemm: the emulated matrix unit of the
 *          CPU backend (cpu/profile.h) for (profile, dtype_in), rounded to
 *          dtype_out when that is not fp32.
 * Under nan=mask (the call's attrs) every kind sees the inputs with NaN
 * substituted (arith/nan_mask.h).
 * Magnitudes (absref) and the normwise denominator (scale) are those of the
 * fp64 kind for every kind. gemm: absref = |A||B| + |C| (an upper bound
 * within 0.08 %, oracle_absprod.h),
 * scale = ||A||_F ||B||_F (+ ||C||_F), the largest over the batch. */
#include "oracle.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "exact.h"
#include "format_fast.h"
#include "metrics.h"
#include "nan_mask.h"
#include "oracle_absprod.h"
#include "oracle_ops.h"

static int gemm_fp64(const kcs_call *c, double *ref, double *absref, double *scale_p,
                     kcs_error *err)
{
    size_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? (size_t)c->batch : 1;
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    double scale = 0.0;
    for (size_t b = 0; b < batch; b++) {
        const double *A = c->in[0] + b * m * k, *B = c->in[1] + b * k * n;
        const double *C = c->in[2] ? c->in[2] + b * m * n : NULL;
        double *R = ref + b * m * n;
        if (C)
            memcpy(R, C, m * n * sizeof *R);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, A,
                    (int)k, B, (int)n, C ? 1.0 : 0.0, R, (int)n);
        if (absref && kcs_absprod_gemm(m, n, k, A, B, C, absref + b * m * n))
            return kcs_fail(err, KCS_E_NOMEM, "oracle: out of memory");
        double s = kcs_norm_fro(A, m * k) * kcs_norm_fro(B, k * n);
        if (C)
            s += kcs_norm_fro(C, m * n);
        scale = fmax(scale, s);
    }
    *scale_p = scale;
    return 0;
}

/* exact: D_ij = C_ij + sum_p A_ip B_pj correctly rounded to dtype_out. */
static int gemm_exact(const kcs_call *c, double *ref, kcs_error *err)
{
    size_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? (size_t)c->batch : 1;
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    kcs_exact *e;
    int rc = kcs_exact_new(c->k + 1, &e, err);
    if (rc)
        return rc;
    for (size_t b = 0; b < batch; b++) {
        const double *A = c->in[0] + b * m * k, *B = c->in[1] + b * k * n;
        const double *C = c->in[2] ? c->in[2] + b * m * n : NULL;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                ref[b * m * n + i * n + j] =
                    kcs_exact_dot(e, A + i * k, B + j, (int64_t)n, c->k, C ? C[i * n + j] : 0.0,
                                  c->dtype_out);
    }
    kcs_exact_free(e);
    return 0;
}

static int gemm_model(const char *profile, const kcs_call *c, double *ref, kcs_error *err)
{
    if (!profile || !profile[0])
        return kcs_fail(err, KCS_E_INVAL, "oracle: model needs a profile (model:<profile>)");
    const kcs_profile_params *p;
    int rc = kcs_profile_lookup(profile, c->dtype_in, &p, err);
    if (rc)
        return rc;
    size_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? (size_t)c->batch : 1;
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    for (size_t b = 0; b < batch; b++) {
        const double *C = c->in[2] ? c->in[2] + b * m * n : NULL;
        if (kcs_emulated_gemm(p, c->m, c->n, c->k, c->in[0] + b * m * k, c->in[1] + b * k * n, C,
                              ref + b * m * n))
            return kcs_fail(err, KCS_E_NOMEM, "oracle: out of memory emulating %s", profile);
    }
    if (c->dtype_out != KCS_FMT_FP32)
        kcs_format_round_n(c->dtype_out, ref, ref, batch * m * n);
    return 0;
}

static int is_gemm(kcs_op op)
{
    return op == KCS_OP_GEMM || op == KCS_OP_BATCHED_GEMM;
}

static int oracle_run(kcs_oracle_kind kind, const char *profile, const kcs_call *call,
                      double *ref, double *absref, double *scale_p, kcs_error *err);

/* nan=mask: the reference of the inputs with each NaN substituted
 * (nan_mask.h: 0 in sums and products, -Inf in softmax); magnitudes and
 * scale likewise from the substituted inputs. */
int kcs_oracle_run(kcs_oracle_kind kind, const char *profile, const kcs_call *call, double *ref,
                   double *absref, double *scale_p, kcs_error *err)
{
    if (!kcs_nan_mask_declared(call->attrs))
        return oracle_run(kind, profile, call, ref, absref, scale_p, err);
    if (!kcs_nan_mask_defined(call->op))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: nan=mask is not defined for op %s",
                        kcs_op_name(call->op));
    kcs_call masked;
    double *bufs[KCS_MAX_INPUTS];
    if (kcs_nan_mask_call(call, &masked, bufs))
        return kcs_fail(err, KCS_E_NOMEM, "oracle: out of memory masking NaN inputs");
    int rc = oracle_run(kind, profile, &masked, ref, absref, scale_p, err);
    kcs_nan_mask_free(bufs);
    return rc;
}

static int oracle_run(kcs_oracle_kind kind, const char *profile, const kcs_call *call,
                      double *ref, double *absref, double *scale_p, kcs_error *err)
{
    double scale = 0.0;
    int rc;
    switch (kind) {
    case KCS_ORACLE_FP64:
        rc = is_gemm(call->op) ? gemm_fp64(call, ref, absref, &scale, err)
                               : kcs_oracle_fp64_op(call, ref, absref, &scale, err);
        break;
    case KCS_ORACLE_EXACT:
        if (is_gemm(call->op)) {
            rc = gemm_fp64(call, ref, absref, &scale, err);
            if (!rc)
                rc = gemm_exact(call, ref, err);
        } else if (call->op == KCS_OP_DOT || call->op == KCS_OP_REDUCE_SUM) {
            rc = kcs_oracle_fp64_op(call, ref, absref, &scale, err);
            if (!rc)
                rc = kcs_oracle_exact_sum(call, ref, err);
        } else {
            rc = kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: no exact reference for op %s "
                          "(gemm, batched_gemm, dot, reduce_sum)", kcs_op_name(call->op));
        }
        break;
    case KCS_ORACLE_FREIVALDS: /* metrics still get the fp64 reference */
        rc = is_gemm(call->op) ? gemm_fp64(call, ref, absref, &scale, err)
                               : kcs_fail(err, KCS_E_UNSUPPORTED,
                                          "oracle: freivalds checks gemm and batched_gemm, not %s",
                                          kcs_op_name(call->op));
        break;
    case KCS_ORACLE_MODEL:
        if (!is_gemm(call->op)) {
            rc = kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: model:%s covers gemm and batched_gemm, "
                          "not %s", profile ? profile : "", kcs_op_name(call->op));
            break;
        }
        rc = gemm_fp64(call, ref, absref, &scale, err);
        if (!rc)
            rc = gemm_model(profile, call, ref, err);
        break;
    default:
        rc = kcs_fail(err, KCS_E_INVAL, "oracle: unknown kind %d", (int)kind);
    }
    if (!rc)
        *scale_p = scale;
    return rc;
}
