/* The plans of attention and gather (kernels_host.h, 2.).
 *   attention (attention.cl): own = the unfused composition (scores,
 *     softmax, P*V: three kernels, schedules honoured, S and P in the
 *     working format); native and fused = one streaming kernel with an
 *     online softmax over key blocks of attrs "block=N" (default 64, as the
 *     cpu backend's fused), whose score dot is sequential (native) or
 *     follows the call's schedule (fused), head dimension <= awg * 16.
 *     Q batch x m x d, K and V batch x n x d, d = call->k; n >= 1.
 *   gather (gather.cl): rows of a table m x k picked by n integer indices
 *     (the cpu backend's semantics). Out-of-range indices follow attrs
 *     "oob=": raise (the default; the kernel records the first bad
 *     position in the flag buffer, the call returns KCS_E_RAISED naming it,
 *     also in call->msg, and writes no output), clamp (m = 0: KCS_E_INVAL),
 *     zero; "undefined" is served as clamp (never a read outside the
 *     table). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attrs.h"
#include "kh_plan.h"

#define KH_ACOLS 16 /* attention.cl KCS_ACOLS */
#define KH_BLOCK 64 /* default key block, as the cpu backend's fused */

static int block_attr(const kcs_kh_device *dev, const kcs_call *c, int64_t *B_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "block", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s attention: attrs '%s' are malformed", dev->name,
                        c->attrs ? c->attrs : "");
    *B_p = KH_BLOCK;
    if (rc == 1) {
        char *end;
        errno = 0;
        long long b = strtoll(v, &end, 10);
        if (errno || *end || b <= 0)
            return kcs_fail(err, KCS_E_INVAL, "%s attention: block=%s is not a positive integer",
                            dev->name, v);
        *B_p = b;
    }
    return 0;
}

/* The fused kernel's limits: B (key block, clipped to n) or an error. */
static int fused_block(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                       int64_t *B_p, kcs_error *err)
{
    int64_t n = c->n, d = c->k, B;
    int rc = block_attr(dev, c, &B, err);
    if (rc)
        return rc;
    if (B > n)
        B = n;
    size_t vs = KCS_KH_VAL_SIZE(ty);
    if (d > (int64_t)dev->awg * KH_ACOLS)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: fused attention handles head dimensions up to %d (k = %lld)",
                        dev->name, dev->awg * KH_ACOLS, (long long)d);
    if ((unsigned long long)(d + B + dev->awg) * vs > dev->local_mem)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: fused attention: d + block + %d = %lld values (%llu bytes) exceed "
                        "the device's %llu bytes of local memory",
                        dev->name, dev->awg, (long long)(d + B + dev->awg),
                        (unsigned long long)(d + B + dev->awg) * vs, dev->local_mem);
    *B_p = B;
    return 0;
}

enum { BQ, BK, BV, BO };

static void unfused(const kcs_call *c, const kcs_kh_types *ty, double scale, kcs_kh_plan *p)
{
    int64_t m = c->m, n = c->n, d = c->k;
    int64_t batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    int32_t kind = (int32_t)c->schedule.kind;
    int64_t param = c->schedule.param;
    int bs = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, (size_t)(rows * n), KCS_KH_VAL_SIZE(ty),
                            NULL);
    kcs_kh_launch *l = kcs_kh_launch_add(p, "attention.cl", "attn_scores", 3, (size_t)n,
                                         (size_t)m, (size_t)batch);
    kcs_kh_args(l, ty, "bbbLLLviL", BQ, BK, bs, m, n, d, scale, kind, param);
    l = kcs_kh_launch_add(p, "attention.cl", "attn_softmax", 1, (size_t)rows, 1, 1);
    kcs_kh_args(l, ty, "bLLiL", bs, rows, n, kind, param);
    l = kcs_kh_launch_add(p, "attention.cl", "attn_pv", 3, (size_t)d, (size_t)m, (size_t)batch);
    kcs_kh_args(l, ty, "bbbLLLiL", bs, BV, BO, m, n, d, kind, param);
}

static void fused(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                  int variant, double scale, int64_t B, kcs_kh_plan *p)
{
    int64_t m = c->m, n = c->n, d = c->k;
    int64_t batch = c->batch > 0 ? c->batch : 1;
    size_t vs = KCS_KH_VAL_SIZE(ty);
    kcs_kh_launch *l = kcs_kh_launch_add(p, "attention.cl", "attn_fused", 2,
                                         (size_t)m * (size_t)dev->awg, (size_t)batch, 1);
    kcs_kh_set_local(l, (size_t)dev->awg, 1, 1);
    int32_t kind = variant == 2 ? (int32_t)c->schedule.kind : KCS_SCHED_SEQUENTIAL;
    int64_t param = variant == 2 ? c->schedule.param : 0;
    kcs_kh_args(l, ty, "bbbbLLLvLiLll", BQ, BK, BV, BO, m, n, d, scale, B, kind, param,
                (size_t)d * vs, (size_t)B * vs);
}

int kcs_kh_plan_attention(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                          int variant, kcs_kh_plan *p, kcs_error *err)
{
    int64_t m = c->m, n = c->n, d = c->k;
    int64_t batch = c->batch > 0 ? c->batch : 1, rows = batch * m;
    if (n < 1)
        return kcs_fail(err, KCS_E_INVAL, "%s attention: needs n >= 1 keys (n=%lld)", dev->name,
                        (long long)n);
    if (m == 0 || d == 0)
        return 0; /* nothing to stage, run or read */
    kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 0, (size_t)(rows * d), 0, NULL);
    kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 1, (size_t)(batch * n * d), 0, NULL);
    kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 2, (size_t)(batch * n * d), 0, NULL);
    p->out = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, (size_t)(rows * d), KCS_KH_OUT_SIZE(ty),
                            NULL);
    p->out_n = (size_t)(rows * d);
    p->out_dbl = KCS_KH_OUT_DBL(ty);
    /* scale = RN_w(1.0 / sqrt((double)d)) in the working format, as every
     * backend computes it (the kernels round to val_t) */
    double scale = 1.0 / sqrt((double)d);
    if (variant == 1) {
        unfused(c, ty, scale, p);
        return 0;
    }
    int64_t B = 0;
    p->late_rc = fused_block(dev, c, ty, &B, &p->late);
    if (!p->late_rc)
        fused(dev, c, ty, variant, scale, B, p);
    return 0;
}

/* ---- gather.cl ------------------------------------------------------------- */

enum { OOB_RAISE = 0, OOB_CLAMP = 1, OOB_ZERO = 2 };

static int oob_mode(const kcs_kh_device *dev, const char *attrs, int32_t *mode_p,
                    kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(attrs, "oob", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s gather: attrs '%s' are malformed (key=value;...)",
                        dev->name, attrs ? attrs : "");
    if (rc == 0 || strcmp(v, "raise") == 0)
        *mode_p = OOB_RAISE;
    else if (strcmp(v, "clamp") == 0 || strcmp(v, "undefined") == 0)
        *mode_p = OOB_CLAMP;
    else if (strcmp(v, "zero") == 0)
        *mode_p = OOB_ZERO;
    else
        return kcs_fail(err, KCS_E_INVAL, "%s gather: oob=%s (raise|clamp|zero|undefined)",
                        dev->name, v);
    return 0;
}

/* Indices as doubles holding integers -> int64 (beyond +-2^62 saturate:
 * out of range either way, on the same side); at least one element. A
 * fraction, NaN or Inf is bad input. */
static int indices(const kcs_kh_device *dev, const double *x, size_t n, int64_t **idx_p,
                   kcs_error *err)
{
    int64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return kcs_fail(err, KCS_E_NOMEM, "%s gather: out of memory", dev->name);
    idx[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (v != floor(v) || isinf(v)) { /* also NaN */
            free(idx);
            return kcs_fail(err, KCS_E_INVAL, "%s gather: index %g at position %zu is not an "
                            "integer", dev->name, v, i);
        }
        const double lim = 4611686018427387904.0; /* 2^62 */
        idx[i] = v >= lim ? (int64_t)lim : v <= -lim ? -(int64_t)lim : (int64_t)v;
    }
    *idx_p = idx;
    return 0;
}

int kcs_kh_plan_gather(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                       kcs_kh_plan *p, kcs_error *err)
{
    int64_t m = c->m, n = c->n, k = c->k;
    int32_t mode;
    int rc = oob_mode(dev, c->attrs, &mode, err);
    if (rc)
        return rc;
    if (n > INT_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s gather: n = %lld exceeds %d", dev->name,
                        (long long)n, INT_MAX);
    if (mode == OOB_CLAMP && m == 0 && n > 0)
        return kcs_fail(err, KCS_E_INVAL, "%s gather: oob=clamp on an empty table", dev->name);
    int64_t *idx = NULL;
    rc = indices(dev, c->in[1], (size_t)n, &idx, err);
    if (rc)
        return rc;
    p->owned = idx;
    int bt = kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 0, (size_t)(m * k), 0, NULL);
    int bi = kcs_kh_buf_add(p, KCS_KH_BUF_HOST, 0, (size_t)n, sizeof *idx, idx);
    p->flag_init = INT32_MAX; /* no bad position yet */
    p->flag = kcs_kh_buf_add(p, KCS_KH_BUF_HOST, 0, 1, sizeof p->flag_init, &p->flag_init);
    p->out_n = (size_t)(n * k);
    p->out = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, p->out_n, KCS_KH_OUT_SIZE(ty), NULL);
    p->out_dbl = KCS_KH_OUT_DBL(ty);
    kcs_kh_launch *l = kcs_kh_launch_add(p, "gather.cl", "gather_rows", 2, (size_t)(k ? k : 1),
                                         (size_t)n, 1);
    kcs_kh_args(l, ty, "bbbLLLib", bt, bi, p->out, m, n, k, mode, p->flag);
    return 0;
}

int kcs_kh_flag_raised(const kcs_kh_device *dev, const kcs_call *c, int32_t bad,
                       kcs_error *err)
{
    if (bad == INT32_MAX)
        return 0;
    if (bad < 0 || (int64_t)bad >= c->n) /* the kernel writes only positions < n */
        return kcs_fail(err, KCS_E_DEVICE, "%s gather: the device reported position %d of %lld",
                        dev->name, (int)bad, (long long)c->n);
    char msg[256];
    snprintf(msg, sizeof msg, "index %.0f at position %d is out of range [0, %lld)",
             c->in[1][bad], (int)bad, (long long)c->m);
    if (c->msg && c->msg_len)
        snprintf(c->msg, c->msg_len, "%s", msg);
    return kcs_fail(err, KCS_E_RAISED, "%s gather: %s", dev->name, msg);
}
