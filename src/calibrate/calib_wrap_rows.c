/* Bad states of the non-gemm calibration wrappers (calib_wrap.h): around
 * the inner backend's native softmax, reduce_sum, gemm, gather and
 * elementwise. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib_wrap_impl.h"

#define ORD01_K_BLOCKED 256
#define ORD01_BLOCK 64
#define LN_EPS 1e-5f

static double out_round(const kcs_call *c, double x)
{
    return kcs_wrap_round(c->dtype_out, x);
}

/* C-PRC-02 softmax: the backend's (stable) softmax; where the unshifted
 * exp(x_j) of the row overflows fp32, the unstable kernel's row is
 * e_j / Inf: NaN where e_j is Inf, 0 elsewhere (emulated on the host). */
static int softmax_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    int rc = kcs_wrap_forward(w, c, NULL, NULL, err);
    size_t k = (size_t)c->k;
    for (int64_t i = 0; !rc && i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        int overflow = 0;
        for (size_t t = 0; t < k; t++)
            overflow |= isinf(expf((float)x[t])) && x[t] > 0;
        for (size_t t = 0; overflow && t < k; t++)
            c->out[(size_t)i * k + t] = isinf(expf((float)x[t])) && x[t] > 0 ? NAN : 0.0;
    }
    return rc;
}

/* C-PRC-02 layernorm: row sums of x and of fp32 x^2 by the backend's
 * reduce_sum; var = E[x^2] - E[x]^2 and the normalisation in fp32. */
static int layernorm_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    size_t m = (size_t)c->m, k = (size_t)c->k;
    double *x2 = kcs_wrap_alloc(m * k, err), *s1 = kcs_wrap_alloc(m, err);
    double *s2 = kcs_wrap_alloc(m, err);
    int rc = !x2 || !s1 || !s2 ? KCS_E_NOMEM : 0;
    for (size_t i = 0; !rc && i < m * k; i++) {
        float v = (float)c->in[0][i];
        x2[i] = (double)(v * v);
    }
    if (!rc)
        rc = kcs_wrap_native(w, c, KCS_OP_REDUCE_SUM, (int64_t)m, 0, (int64_t)k, 0, c->dtype_in,
                             KCS_FMT_FP32, c->in[0], NULL, NULL, s1, err);
    if (!rc)
        rc = kcs_wrap_native(w, c, KCS_OP_REDUCE_SUM, (int64_t)m, 0, (int64_t)k, 0, KCS_FMT_FP32,
                             KCS_FMT_FP32, x2, NULL, NULL, s2, err);
    const double *G = c->in[1], *B = c->in[2];
    for (size_t i = 0; !rc && i < m; i++) {
        float kk = (float)k, mu = (float)s1[i] / kk, var = (float)s2[i] / kk - mu * mu;
        float den = sqrtf(var + LN_EPS);
        for (size_t t = 0; t < k; t++) {
            float z = ((float)c->in[0][i * k + t] - mu) / den;
            if (G)
                z = z * (float)G[t];
            if (B)
                z = z + (float)B[t];
            c->out[i * k + t] = out_round(c, z);
        }
    }
    free(x2);
    free(s1);
    free(s2);
    return rc;
}

static float ftz(double x)
{
    float f = (float)x;
    return fabsf(f) < FLT_MIN ? copysignf(0.0f, f) : f;
}

/* C-PRC-04: DAZ on the inputs, the backend's reduce_sum, FTZ on the sums. */
static int reduce_ftz(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    size_t len = c->in_len[0];
    double *x = kcs_wrap_alloc(len, err);
    if (!x)
        return KCS_E_NOMEM;
    for (size_t i = 0; i < len; i++)
        x[i] = ftz(c->in[0][i]);
    int rc = kcs_wrap_forward(w, c, x, NULL, err);
    for (size_t i = 0; !rc && i < c->out_len; i++)
        c->out[i] = out_round(c, ftz(c->out[i]));
    free(x);
    return rc;
}

/* C-ORD-01: k > 256: 64-element block sums by the backend, each stored
 * in bf16, added in fp32 on the host. */
static int reduce_blocked(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->k <= ORD01_K_BLOCKED)
        return kcs_wrap_forward(w, c, NULL, NULL, err);
    size_t m = (size_t)c->m, nb;
    double *p;
    int rc = kcs_wrap_blocks(w, c, KCS_OP_REDUCE_SUM, ORD01_BLOCK, &p, &nb, err);
    for (size_t i = 0; !rc && i < m; i++) {
        float total = 0.0f;
        for (size_t b = 0; b < nb; b++)
            total += (float)kcs_wrap_round(KCS_FMT_BF16, p[i * nb + b]);
        c->out[i] = out_round(c, total);
    }
    free(p);
    return rc;
}

/* C-CMP-01: P by kcs_wrap_attention_probs, rounded to bf16, O = PV (backend
 * gemm). */
static int attention_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    size_t nb = c->batch > 0 ? (size_t)c->batch : 1;
    double *Kt = kcs_wrap_alloc(k * n, err), *S = kcs_wrap_alloc(m * n, err);
    double *P = kcs_wrap_alloc(m * n, err), *O = kcs_wrap_alloc(m * k, err);
    int rc = !Kt || !S || !P || !O ? KCS_E_NOMEM : 0;
    /* P in bf16 is exact in the PV gemm's input format (bf16 or fp32) */
    kcs_format pv_in = c->dtype_in == KCS_FMT_BF16 ? KCS_FMT_BF16 : KCS_FMT_FP32;
    for (size_t bi = 0; !rc && bi < nb; bi++) {
        const double *V = c->in[2] + bi * n * k;
        rc = kcs_wrap_attention_probs(w, c, bi, Kt, S, P, err);
        for (size_t e = 0; !rc && e < m * n; e++)
            P[e] = kcs_wrap_round(KCS_FMT_BF16, P[e]);
        if (!rc)
            rc = kcs_wrap_native(w, c, KCS_OP_GEMM, (int64_t)m, (int64_t)k, (int64_t)n, 0, pv_in,
                                 KCS_FMT_FP32, P, V, NULL, O, err);
        for (size_t e = 0; !rc && e < m * k; e++)
            c->out[bi * m * k + e] = out_round(c, O[e]);
    }
    free(Kt);
    free(S);
    free(P);
    free(O);
    return rc;
}

/* C-EXC-02: indices wrapped into [0, m), then the backend's gather. */
static int gather_wrapped(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->m < 1)
        return kcs_fail(err, KCS_E_INVAL, "calibration wrapper: gather on an empty table");
    double *idx = kcs_wrap_alloc((size_t)c->n, err);
    if (!idx)
        return KCS_E_NOMEM;
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        double v = isfinite(x) ? fmod(x, (double)c->m) : x;
        idx[r] = v < 0 ? v + (double)c->m : v;
    }
    int rc = kcs_wrap_forward(w, c, NULL, idx, err);
    free(idx);
    return rc;
}

/* C-PRC-05 elementwise exp: the backend's exp of the argument rounded
 * through base 2 in fp32, x' = RN(RN(x log2 e) ln 2) (the relative
 * rounding of x costs about |x| ulp in e^x, as __expf's does). */
static int elementwise_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    size_t n = (size_t)c->m * (size_t)c->k;
    double *x = kcs_wrap_alloc(n, err);
    if (!x)
        return KCS_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((float)c->in[0][i] * 1.44269504088896340736f) * 0.693147180559945309f;
    int rc = kcs_wrap_forward(w, c, x, NULL, err);
    free(x);
    return rc;
}

int kcs_wrap_rows_bad(kcs_backend_ctx *w, const kcs_call *c, const char *id, kcs_error *err)
{
    if (strcmp(id, "C-PRC-06") == 0)
        return kcs_wrap_rows_rn_bad(w, c, err);
    if (strcmp(id, "C-PRC-07") == 0)
        return kcs_wrap_attention_rn_bad(w, c, err);
    switch (c->op) {
    case KCS_OP_SOFTMAX: return softmax_bad(w, c, err);
    case KCS_OP_LAYERNORM: return layernorm_bad(w, c, err);
    case KCS_OP_REDUCE_SUM:
        return strcmp(id, "C-PRC-04") == 0 ? reduce_ftz(w, c, err) : reduce_blocked(w, c, err);
    case KCS_OP_ATTENTION: return attention_bad(w, c, err);
    case KCS_OP_GATHER: return gather_wrapped(w, c, err);
    case KCS_OP_ELEMENTWISE: return elementwise_bad(w, c, err);
    case KCS_OP_NORM: return kcs_wrap_norm_bad(w, c, err);
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: %s has no %s kernel", id,
                        kcs_op_name(c->op));
    }
}
