/* The ops of the Level Zero backend: the kernels of backends/kernels with
 * the arguments and work sizes of the opencl backend (ocl_gemm.c,
 * ocl_rows.c, ocl_attention.c, ocl_gather.c), so equal calls compute the
 * same values on both backends. Output buffers hold common.cl's out_t.
 *   gemm / batched_gemm / dot (gemm.cl): native gemm_tiled; own gemm_own,
 *     splitk:S as gemm_splitk_part + gemm_splitk_sum; dot = 1×k·k×1 gemm
 *   reduce_sum, softmax, layernorm, rmsnorm (rows.cl): own one work-item
 *     per row, native one 64-wide work-group per row
 *   attention (attention.cl): own unfused (scores, softmax, P·V in the
 *     working format), native / fused the streaming kernel over key blocks
 *     of attrs block=N (default 64; score dots sequential / under the
 *     call's schedule), head dimension <= 64*16
 *   gather (gather.cl): oob=raise|clamp|zero|undefined (undefined clamps;
 *     clamp on an empty table: KCS_E_INVAL) */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "l0_internal.h"

#define NB 6

static void release(kcs_backend_ctx *ctx, void **b)
{
    for (int i = 0; i < NB; i++)
        kcs_l0_free(ctx, b[i]);
}

static size_t acc_size(const kcs_l0_types *ty)
{
    return ty->tacc ? sizeof(double) : sizeof(float);
}

/* ---- gemm.cl ------------------------------------------------------------------ */

enum { BA, BB, BC, BD, BW };

static int splitk(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty, void **buf,
                  int64_t m, int64_t n, int64_t k, int64_t batch, int32_t has_c, kcs_error *err)
{
    int64_t s = c->schedule.param < k ? c->schedule.param : (k > 0 ? k : 1);
    int64_t chunk = (k + s - 1) / s;
    if (chunk < 1)
        chunk = 1;
    int rc = kcs_l0_alloc(ctx, (size_t)(s * batch * m * n), acc_size(ty), &buf[BW], err);
    if (rc)
        return rc;
    int64_t sa = m * k, sb = k * n, sd = m * n;
    kcs_l0_arg pa[] = {KCS_L0_ARG(buf[BA]), KCS_L0_ARG(buf[BB]), KCS_L0_ARG(buf[BW]),
                       KCS_L0_ARG(m),       KCS_L0_ARG(n),       KCS_L0_ARG(k),
                       KCS_L0_ARG(sa),      KCS_L0_ARG(sb),      KCS_L0_ARG(batch),
                       KCS_L0_ARG(chunk)};
    size_t gp[3] = {(size_t)n, (size_t)m, (size_t)(batch * s)};
    rc = kcs_l0_launch(ctx, "gemm.cl", "gemm_splitk_part", ty, pa, 10, 3, gp, NULL, err);
    if (rc)
        return rc;
    kcs_l0_arg sa_[] = {KCS_L0_ARG(buf[BW]), KCS_L0_ARG(buf[BC]), KCS_L0_ARG(buf[BD]),
                        KCS_L0_ARG(m),       KCS_L0_ARG(n),       KCS_L0_ARG(sd),
                        KCS_L0_ARG(batch),   KCS_L0_ARG(s),       KCS_L0_ARG(has_c)};
    size_t gs[3] = {(size_t)n, (size_t)m, (size_t)batch};
    return kcs_l0_launch(ctx, "gemm.cl", "gemm_splitk_sum", ty, sa_, 9, 3, gs, NULL, err);
}

int kcs_l0_gemm(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty, int own,
                kcs_error *err)
{
    int dot = c->op == KCS_OP_DOT;
    int64_t m = dot ? 1 : c->m, n = dot ? 1 : c->n, k = c->k;
    int64_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    int64_t sa = m * k, sb = k * n, sd = m * n;
    int32_t has_c = !dot && c->in[2] != NULL;
    void *buf[NB] = {0};
    int rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[0], (size_t)(batch * sa), &buf[BA],
                           err);
    if (!rc)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[1], (size_t)(batch * sb), &buf[BB],
                           err);
    if (!rc && has_c)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[2], (size_t)(batch * sd), &buf[BC],
                           err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, (size_t)(batch * sd), KCS_L0_OUT_SIZE(ty), &buf[BD], err);
    if (rc)
        goto out;
    if (own && c->schedule.kind == KCS_SCHED_SPLITK) {
        rc = splitk(ctx, c, ty, buf, m, n, k, batch, has_c, err);
    } else if (own) {
        int32_t kind = (int32_t)c->schedule.kind;
        int64_t param = c->schedule.param;
        kcs_l0_arg a[] = {KCS_L0_ARG(buf[BA]), KCS_L0_ARG(buf[BB]), KCS_L0_ARG(buf[BC]),
                          KCS_L0_ARG(buf[BD]), KCS_L0_ARG(m),       KCS_L0_ARG(n),
                          KCS_L0_ARG(k),       KCS_L0_ARG(sa),      KCS_L0_ARG(sb),
                          KCS_L0_ARG(sd),      KCS_L0_ARG(has_c),   KCS_L0_ARG(kind),
                          KCS_L0_ARG(param)};
        size_t g[3] = {(size_t)n, (size_t)m, (size_t)batch};
        rc = kcs_l0_launch(ctx, "gemm.cl", "gemm_own", ty, a, 13, 3, g, NULL, err);
    } else {
        kcs_l0_arg a[] = {KCS_L0_ARG(buf[BA]), KCS_L0_ARG(buf[BB]), KCS_L0_ARG(buf[BC]),
                          KCS_L0_ARG(buf[BD]), KCS_L0_ARG(m),       KCS_L0_ARG(n),
                          KCS_L0_ARG(k),       KCS_L0_ARG(sa),      KCS_L0_ARG(sb),
                          KCS_L0_ARG(sd),      KCS_L0_ARG(has_c)};
        size_t rts = KCS_L0_TS / KCS_L0_WPT, ts = KCS_L0_TS;
        size_t g[3] = {((size_t)n + ts - 1) / ts * rts, ((size_t)m + ts - 1) / ts * rts,
                       (size_t)batch};
        size_t l[3] = {rts, rts, 1};
        rc = kcs_l0_launch(ctx, "gemm.cl", "gemm_tiled", ty, a, 11, 3, g, l, err);
    }
    if (!rc)
        rc = kcs_l0_download(ctx, buf[BD], (size_t)(batch * sd), KCS_L0_OUT_DBL(ty), c->dtype_out,
                             c->out, err);
out:
    release(ctx, buf);
    return rc;
}

/* ---- rows.cl ------------------------------------------------------------------ */

enum { BX, BG, BBETA, BY };

int kcs_l0_rows(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty, int own,
                kcs_error *err)
{
    int64_t m = c->m, k = c->k;
    int norm = c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM;
    int32_t rms = c->op == KCS_OP_RMSNORM;
    int32_t has_g = norm && c->in[1] != NULL;
    int32_t has_b = c->op == KCS_OP_LAYERNORM && c->in[2] != NULL;
    int32_t kind = (int32_t)c->schedule.kind;
    int64_t param = c->schedule.param;
    size_t out_n = c->op == KCS_OP_REDUCE_SUM ? (size_t)m : (size_t)(m * k);
    const char *name;
    if (c->op == KCS_OP_REDUCE_SUM)
        name = own ? "reduce_sum_own" : "reduce_sum_native";
    else if (c->op == KCS_OP_SOFTMAX)
        name = own ? "softmax_own" : "softmax_native";
    else
        name = own ? "norm_own" : "norm_native";
    void *buf[NB] = {0};
    int rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[0], (size_t)(m * k), &buf[BX], err);
    if (!rc && has_g)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[1], (size_t)k, &buf[BG], err);
    if (!rc && has_b)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[2], (size_t)k, &buf[BBETA], err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, out_n, KCS_L0_OUT_SIZE(ty), &buf[BY], err);
    if (rc)
        goto out;
    kcs_l0_arg a[11];
    int na = 0;
    a[na++] = KCS_L0_ARG(buf[BX]);
    if (norm) {
        a[na++] = KCS_L0_ARG(buf[BG]);
        a[na++] = KCS_L0_ARG(buf[BBETA]);
    }
    a[na++] = KCS_L0_ARG(buf[BY]);
    a[na++] = KCS_L0_ARG(m);
    a[na++] = KCS_L0_ARG(k);
    if (norm) {
        a[na++] = KCS_L0_ARG(has_g);
        a[na++] = KCS_L0_ARG(has_b);
        a[na++] = KCS_L0_ARG(rms);
    }
    if (own) {
        a[na++] = KCS_L0_ARG(kind);
        a[na++] = KCS_L0_ARG(param);
        size_t g = (size_t)m;
        rc = kcs_l0_launch(ctx, "rows.cl", name, ty, a, na, 1, &g, NULL, err);
    } else {
        size_t l = KCS_L0_RWG, g = (size_t)m * l;
        rc = kcs_l0_launch(ctx, "rows.cl", name, ty, a, na, 1, &g, &l, err);
    }
    if (!rc)
        rc = kcs_l0_download(ctx, buf[BY], out_n, KCS_L0_OUT_DBL(ty), c->dtype_out, c->out, err);
out:
    release(ctx, buf);
    return rc;
}

/* ---- attention.cl ------------------------------------------------------------- */

enum { BQ, BK, BV, BS, BO };

static int block_attr(const kcs_call *c, int64_t *B_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "block", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "level_zero attention: attrs '%s' are malformed",
                        c->attrs ? c->attrs : "");
    *B_p = KCS_L0_BLOCK;
    if (rc == 1) {
        char *end;
        errno = 0;
        long long b = strtoll(v, &end, 10);
        if (errno || *end || b <= 0)
            return kcs_fail(err, KCS_E_INVAL,
                            "level_zero attention: block=%s is not a positive integer", v);
        *B_p = b;
    }
    return 0;
}

static int fused(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty, int variant,
                 void **buf, kcs_l0_arg scale, kcs_error *err)
{
    int64_t m = c->m, n = c->n, d = c->k, B;
    int64_t batch = c->batch > 0 ? c->batch : 1;
    int rc = block_attr(c, &B, err);
    if (rc)
        return rc;
    if (B > n)
        B = n;
    size_t vs = KCS_L0_VAL_SIZE(ty);
    if (d > (int64_t)KCS_L0_AWG * KCS_L0_ACOLS)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "level_zero: fused attention handles head dimensions up to %d (k = %lld)",
                        KCS_L0_AWG * KCS_L0_ACOLS, (long long)d);
    if ((uint64_t)(d + B + KCS_L0_AWG) * vs > ctx->local_mem)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "level_zero: fused attention: d + block = %lld values exceed the device's "
                        "%u bytes of local memory",
                        (long long)(d + B), ctx->local_mem);
    int32_t kind = variant == 2 ? (int32_t)c->schedule.kind : KCS_SCHED_SEQUENTIAL;
    int64_t param = variant == 2 ? c->schedule.param : 0;
    kcs_l0_arg a[] = {KCS_L0_ARG(buf[BQ]), KCS_L0_ARG(buf[BK]),
                      KCS_L0_ARG(buf[BV]), KCS_L0_ARG(buf[BO]),
                      KCS_L0_ARG(m),       KCS_L0_ARG(n),
                      KCS_L0_ARG(d),       scale,
                      KCS_L0_ARG(B),       KCS_L0_ARG(kind),
                      KCS_L0_ARG(param),   KCS_L0_LOCAL((size_t)d * vs),
                      KCS_L0_LOCAL((size_t)B * vs)};
    size_t l[2] = {KCS_L0_AWG, 1};
    size_t g[2] = {(size_t)m * l[0], (size_t)batch};
    return kcs_l0_launch(ctx, "attention.cl", "attn_fused", ty, a, 13, 2, g, l, err);
}

static int unfused(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty, void **buf,
                   kcs_l0_arg scale, kcs_error *err)
{
    int64_t m = c->m, n = c->n, d = c->k;
    int64_t batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    int32_t kind = (int32_t)c->schedule.kind;
    int64_t param = c->schedule.param;
    int rc = kcs_l0_alloc(ctx, (size_t)(rows * n), KCS_L0_VAL_SIZE(ty), &buf[BS], err);
    if (rc)
        return rc;
    kcs_l0_arg a1[] = {KCS_L0_ARG(buf[BQ]), KCS_L0_ARG(buf[BK]), KCS_L0_ARG(buf[BS]),
                       KCS_L0_ARG(m),       KCS_L0_ARG(n),       KCS_L0_ARG(d),
                       scale,               KCS_L0_ARG(kind),    KCS_L0_ARG(param)};
    size_t g1[3] = {(size_t)n, (size_t)m, (size_t)batch};
    rc = kcs_l0_launch(ctx, "attention.cl", "attn_scores", ty, a1, 9, 3, g1, NULL, err);
    if (rc)
        return rc;
    kcs_l0_arg a2[] = {KCS_L0_ARG(buf[BS]), KCS_L0_ARG(rows), KCS_L0_ARG(n), KCS_L0_ARG(kind),
                       KCS_L0_ARG(param)};
    size_t g2 = (size_t)rows;
    rc = kcs_l0_launch(ctx, "attention.cl", "attn_softmax", ty, a2, 5, 1, &g2, NULL, err);
    if (rc)
        return rc;
    kcs_l0_arg a3[] = {KCS_L0_ARG(buf[BS]), KCS_L0_ARG(buf[BV]), KCS_L0_ARG(buf[BO]),
                       KCS_L0_ARG(m),       KCS_L0_ARG(n),       KCS_L0_ARG(d),
                       KCS_L0_ARG(kind),    KCS_L0_ARG(param)};
    size_t g3[3] = {(size_t)d, (size_t)m, (size_t)batch};
    return kcs_l0_launch(ctx, "attention.cl", "attn_pv", ty, a3, 8, 3, g3, NULL, err);
}

int kcs_l0_attention(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty,
                     int variant, kcs_error *err)
{
    int64_t m = c->m, n = c->n, d = c->k;
    int64_t batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    if (n < 1)
        return kcs_fail(err, KCS_E_INVAL, "level_zero attention: needs n >= 1 keys (n=%lld)",
                        (long long)n);
    if (m == 0 || d == 0)
        return 0;
    /* scale = RN_w(1/sqrt(d)) in the working format */
    double scale_d = 1.0 / sqrt((double)d);
    float scale_f = (float)scale_d;
    kcs_l0_arg scale = ty->tin == KCS_L0_F64 ? KCS_L0_ARG(scale_d) : KCS_L0_ARG(scale_f);
    void *buf[NB] = {0};
    int rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[0], (size_t)(rows * d), &buf[BQ], err);
    if (!rc)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[1], (size_t)(batch * n * d), &buf[BK],
                           err);
    if (!rc)
        rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[2], (size_t)(batch * n * d), &buf[BV],
                           err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, (size_t)(rows * d), KCS_L0_OUT_SIZE(ty), &buf[BO], err);
    if (!rc)
        rc = variant == 1 ? unfused(ctx, c, ty, buf, scale, err)
                          : fused(ctx, c, ty, variant, buf, scale, err);
    if (!rc)
        rc = kcs_l0_download(ctx, buf[BO], (size_t)(rows * d), KCS_L0_OUT_DBL(ty), c->dtype_out,
                             c->out, err);
    release(ctx, buf);
    return rc;
}

/* ---- gather.cl ------------------------------------------------------------------ */

enum { BT, BI, BGY, BBAD };
enum { OOB_RAISE = 0, OOB_CLAMP = 1, OOB_ZERO = 2 };

static int oob_mode(const char *attrs, int32_t *mode_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(attrs, "oob", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL,
                        "level_zero gather: attrs '%s' are malformed (key=value;...)",
                        attrs ? attrs : "");
    if (rc == 0 || strcmp(v, "raise") == 0)
        *mode_p = OOB_RAISE;
    else if (strcmp(v, "clamp") == 0 || strcmp(v, "undefined") == 0)
        *mode_p = OOB_CLAMP;
    else if (strcmp(v, "zero") == 0)
        *mode_p = OOB_ZERO;
    else
        return kcs_fail(err, KCS_E_INVAL, "level_zero gather: oob=%s (raise|clamp|zero|undefined)",
                        v);
    return 0;
}

int kcs_l0_gather(kcs_backend_ctx *ctx, const kcs_call *c, const kcs_l0_types *ty,
                  kcs_error *err)
{
    int64_t m = c->m, n = c->n, k = c->k;
    int32_t mode;
    int rc = oob_mode(c->attrs, &mode, err);
    if (rc)
        return rc;
    if (n > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "level_zero gather: n = %lld exceeds %d",
                        (long long)n, INT_MAX);
    if (mode == OOB_CLAMP && m == 0 && n > 0)
        return kcs_fail(err, KCS_E_INVAL, "level_zero gather: oob=clamp on an empty table");
    int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    if (!idx)
        return kcs_fail(err, KCS_E_NOMEM, "level_zero gather: out of memory");
    for (int64_t i = 0; i < n; i++) {
        double v = c->in[1][i];
        if (v != floor(v) || isinf(v)) { /* also NaN */
            free(idx);
            return kcs_fail(err, KCS_E_INVAL,
                            "level_zero gather: index %g at position %lld is not an integer", v,
                            (long long)i);
        }
        const double lim = 4611686018427387904.0; /* 2^62: out of range either way */
        idx[i] = v >= lim ? (int64_t)lim : v <= -lim ? -(int64_t)lim : (int64_t)v;
    }
    void *buf[NB] = {0};
    int32_t bad = INT_MAX;
    int dbl = KCS_L0_OUT_DBL(ty);
    rc = kcs_l0_upload(ctx, ty->tin, c->dtype_in, c->in[0], (size_t)(m * k), &buf[BT], err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, (size_t)n, sizeof *idx, &buf[BI], err);
    if (!rc)
        rc = kcs_l0_put(ctx, buf[BI], idx, (size_t)n * sizeof *idx, err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, 1, sizeof bad, &buf[BBAD], err);
    if (!rc)
        rc = kcs_l0_put(ctx, buf[BBAD], &bad, sizeof bad, err);
    if (!rc)
        rc = kcs_l0_alloc(ctx, (size_t)(n * k), dbl ? sizeof(double) : sizeof(float), &buf[BGY],
                          err);
    if (rc)
        goto out;
    kcs_l0_arg a[] = {KCS_L0_ARG(buf[BT]), KCS_L0_ARG(buf[BI]), KCS_L0_ARG(buf[BGY]),
                      KCS_L0_ARG(m),       KCS_L0_ARG(n),       KCS_L0_ARG(k),
                      KCS_L0_ARG(mode),    KCS_L0_ARG(buf[BBAD])};
    size_t g[2] = {(size_t)(k ? k : 1), (size_t)n};
    rc = kcs_l0_launch(ctx, "gather.cl", "gather_rows", ty, a, 8, 2, g, NULL, err);
    if (!rc)
        rc = kcs_l0_get(ctx, &bad, buf[BBAD], sizeof bad, err);
    if (rc)
        goto out;
    if (bad != INT_MAX) {
        char msg[256];
        snprintf(msg, sizeof msg, "index %.0f at position %d is out of range [0, %lld)",
                 c->in[1][bad], (int)bad, (long long)m);
        if (c->msg && c->msg_len)
            snprintf(c->msg, c->msg_len, "%s", msg);
        rc = kcs_fail(err, KCS_E_RAISED, "level_zero gather: %s", msg);
        goto out;
    }
    rc = kcs_l0_download(ctx, buf[BGY], (size_t)(n * k), dbl, c->dtype_out, c->out, err);
out:
    release(ctx, buf);
    free(idx);
    return rc;
}
