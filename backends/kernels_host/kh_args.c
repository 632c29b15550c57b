/* The plans of the ops of backends/kernels (kernels_host.h, 2.): which
 * kernels run, with which arguments and work sizes, over which buffers.
 *   gemm / batched_gemm / dot (gemm.cl): native gemm_tiled (local-memory
 *     tiles, register blocking) or gemm_vec on OpenCL CPU devices, both
 *     adding the k products in order with fma from 0 (own sequential's
 *     value); own gemm_own (one work-item per output, schedule inside),
 *     splitk:S as gemm_splitk_part (S partial sums by separate work-items)
 *     + gemm_splitk_sum (added in order: the cpu backend's splitk value);
 *     dot = 1×k·k×1 gemm
 *   reduce_sum, softmax, layernorm, rmsnorm (rows.cl): own one work-item
 *     per row under the call's schedule (the cpu backend's definitions),
 *     native one rwg-wide work-group per row with a local-memory tree
 *   attention (kh_attn.c), gather (kh_attn.c)
 *   elementwise (rows.cl): one work-item per value, global (m*k); own and
 *     native differ in the formulas (rows.cl), not in the schedule */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "elementwise.h"

#include "kh_plan.h"

int kcs_kh_buf_add(kcs_kh_plan *p, kcs_kh_buf_kind kind, int input, size_t n, size_t elem,
                   const void *host)
{
    p->bufs[p->nbufs] = (kcs_kh_buf){kind, input, n, elem, host};
    return p->nbufs++;
}

kcs_kh_launch *kcs_kh_launch_add(kcs_kh_plan *p, const char *file, const char *name, int dims,
                                 size_t g0, size_t g1, size_t g2)
{
    kcs_kh_launch *l = &p->launch[p->nlaunch++];
    *l = (kcs_kh_launch){.file = file, .name = name, .dims = dims, .global = {g0, g1, g2}};
    return l;
}

void kcs_kh_set_local(kcs_kh_launch *l, size_t l0, size_t l1, size_t l2)
{
    l->has_local = 1;
    l->local[0] = l0;
    l->local[1] = l1;
    l->local[2] = l2;
}

void kcs_kh_args(kcs_kh_launch *l, const kcs_kh_types *ty, const char *spec, ...)
{
    va_list ap;
    va_start(ap, spec);
    for (const char *s = spec; *s; s++) {
        kcs_kh_arg *a = &l->args[l->nargs++];
        switch (*s) {
        case 'b': *a = (kcs_kh_arg){KCS_KH_ARG_BUF, {.buf = va_arg(ap, int)}}; break;
        case 'i': *a = (kcs_kh_arg){KCS_KH_ARG_I32, {.i32 = (int32_t)va_arg(ap, int)}}; break;
        case 'L': *a = (kcs_kh_arg){KCS_KH_ARG_I64, {.i64 = va_arg(ap, int64_t)}}; break;
        case 'l': *a = (kcs_kh_arg){KCS_KH_ARG_LOCAL, {.local = va_arg(ap, size_t)}}; break;
        default: { /* 'v': the working format: float unless the storage is double */
            double x = va_arg(ap, double);
            if (ty->tin == KCS_KH_F64)
                *a = (kcs_kh_arg){KCS_KH_ARG_F64, {.f64 = x}};
            else
                *a = (kcs_kh_arg){KCS_KH_ARG_F32, {.f32 = (float)x}};
        }
        }
    }
    va_end(ap);
}

size_t kcs_kh_arg_value(const kcs_kh_arg *a, const void **value_p)
{
    switch (a->kind) {
    case KCS_KH_ARG_I32: *value_p = &a->v.i32; return sizeof a->v.i32;
    case KCS_KH_ARG_I64: *value_p = &a->v.i64; return sizeof a->v.i64;
    case KCS_KH_ARG_F32: *value_p = &a->v.f32; return sizeof a->v.f32;
    case KCS_KH_ARG_F64: *value_p = &a->v.f64; return sizeof a->v.f64;
    case KCS_KH_ARG_LOCAL: *value_p = NULL; return a->v.local;
    default: *value_p = &a->v.buf; return sizeof a->v.buf; /* the backend maps buffers */
    }
}

long kcs_kh_set_args(void *kernel, kcs_kh_set_arg_fn set, const kcs_kh_launch *l,
                     const void *bufs, size_t elem, const char *api, char what[96])
{
    for (int i = 0; i < l->nargs; i++) {
        const kcs_kh_arg *a = &l->args[i];
        const void *value;
        size_t size;
        if (a->kind == KCS_KH_ARG_BUF) {
            value = (const char *)bufs + elem * (size_t)a->v.buf;
            size = elem;
        } else {
            size = kcs_kh_arg_value(a, &value);
        }
        long r = set(kernel, (unsigned)i, size, value);
        if (r) {
            snprintf(what, 96, "%s(%s, %d)", api, l->name, i);
            return r;
        }
    }
    return 0;
}

int kcs_kh_built_find(const kcs_kh_built *b, const char *file, const kcs_kh_types *ty,
                      void **handle_p, const char *backend, const char *what, kcs_error *err)
{
    *handle_p = NULL;
    for (int i = 0; i < b->n; i++)
        if (b->at[i].ty.tin == ty->tin && b->at[i].ty.tacc == ty->tacc &&
            strcmp(b->at[i].file, file) == 0) {
            *handle_p = b->at[i].handle;
            return 0;
        }
    if (b->n == KCS_KH_MAX_BUILT)
        return kcs_fail(err, KCS_E_INTERNAL, "%s: %s cache full", backend, what);
    return 0;
}

void kcs_kh_built_add(kcs_kh_built *b, const char *file, const kcs_kh_types *ty, void *handle)
{
    b->at[b->n].file = file;
    b->at[b->n].ty = *ty;
    b->at[b->n].handle = handle;
    b->n++;
}

int kcs_kh_late(const kcs_kh_plan *plan, kcs_error *err)
{
    if (plan->late_rc && err)
        *err = plan->late;
    return plan->late_rc;
}

/* ---- gemm.cl --------------------------------------------------------------- */

/* gemm_vec blocking (gemm.cl KCS_VM, KCS_VW) */
#define KH_VM 8
#define KH_VW_F32 16
#define KH_VW_F64 8

enum { BA, BB, BC, BD }; /* the buffers of every gemm plan, then splitk's */

static void plan_splitk(const kcs_call *c, const kcs_kh_types *ty, kcs_kh_plan *p, int64_t m,
                        int64_t n, int64_t k, int64_t batch, int32_t has_c)
{
    int64_t s = c->schedule.param < k ? c->schedule.param : (k > 0 ? k : 1);
    int64_t chunk = (k + s - 1) / s;
    if (chunk < 1)
        chunk = 1;
    int bw = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, (size_t)(s * batch * m * n),
                            ty->tacc ? sizeof(double) : sizeof(float), NULL);
    kcs_kh_launch *l = kcs_kh_launch_add(p, "gemm.cl", "gemm_splitk_part", 3, (size_t)n,
                                         (size_t)m, (size_t)(batch * s));
    kcs_kh_args(l, ty, "bbbLLLLLLL", BA, BB, bw, m, n, k, m * k, k * n, batch, chunk);
    l = kcs_kh_launch_add(p, "gemm.cl", "gemm_splitk_sum", 3, (size_t)n, (size_t)m,
                          (size_t)batch);
    kcs_kh_args(l, ty, "bbbLLLLLi", bw, BC, BD, m, n, m * n, batch, s, has_c);
}

static void plan_gemm(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                      int own, kcs_kh_plan *p)
{
    int dot = c->op == KCS_OP_DOT;
    int64_t m = dot ? 1 : c->m, n = dot ? 1 : c->n, k = c->k;
    int64_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    int32_t has_c = !dot && c->in[2] != NULL;
    kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 0, (size_t)(batch * m * k), 0, NULL);
    kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 1, (size_t)(batch * k * n), 0, NULL);
    kcs_kh_buf_add(p, has_c ? KCS_KH_BUF_INPUT : KCS_KH_BUF_NONE, 2, (size_t)(batch * m * n), 0,
                   NULL);
    p->out = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, (size_t)(batch * m * n),
                            KCS_KH_OUT_SIZE(ty), NULL);
    p->out_n = (size_t)(batch * m * n);
    p->out_dbl = KCS_KH_OUT_DBL(ty);
    if (own && c->schedule.kind == KCS_SCHED_SPLITK) {
        plan_splitk(c, ty, p, m, n, k, batch, has_c);
        return;
    }
    kcs_kh_launch *l;
    if (own) {
        l = kcs_kh_launch_add(p, "gemm.cl", "gemm_own", 3, (size_t)n, (size_t)m, (size_t)batch);
    } else if (dev->gemm_vec) {
        size_t vw = ty->tacc ? KH_VW_F64 : KH_VW_F32;
        l = kcs_kh_launch_add(p, "gemm.cl", "gemm_vec", 3, ((size_t)m + KH_VM - 1) / KH_VM,
                              ((size_t)n + vw - 1) / vw, (size_t)batch);
    } else {
        size_t rts = (size_t)(dev->ts / dev->wpt), ts = (size_t)dev->ts;
        l = kcs_kh_launch_add(p, "gemm.cl", "gemm_tiled", 3, ((size_t)n + ts - 1) / ts * rts,
                              ((size_t)m + ts - 1) / ts * rts, (size_t)batch);
        kcs_kh_set_local(l, rts, rts, 1);
    }
    /* A, B, C, D, m, n, k, sa, sb, sd, has_c (+ kind, param for gemm_own) */
    kcs_kh_args(l, ty, "bbbbLLLLLLi", BA, BB, BC, BD, m, n, k, m * k, k * n, m * n, has_c);
    if (own)
        kcs_kh_args(l, ty, "iL", (int)c->schedule.kind, c->schedule.param);
}

/* ---- rows.cl --------------------------------------------------------------- */

static void plan_rows(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                      int own, kcs_kh_plan *p)
{
    int64_t m = c->m, k = c->k;
    int norm = c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM;
    int32_t has_g = norm && c->in[1] != NULL;
    int32_t has_b = c->op == KCS_OP_LAYERNORM && c->in[2] != NULL;
    const char *name;
    if (c->op == KCS_OP_REDUCE_SUM)
        name = own ? "reduce_sum_own" : "reduce_sum_native";
    else if (c->op == KCS_OP_SOFTMAX)
        name = own ? "softmax_own" : "softmax_native";
    else
        name = own ? "norm_own" : "norm_native";
    int bx = kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 0, (size_t)(m * k), 0, NULL);
    int bg = kcs_kh_buf_add(p, has_g ? KCS_KH_BUF_INPUT : KCS_KH_BUF_NONE, 1, (size_t)k, 0, NULL);
    int bb = kcs_kh_buf_add(p, has_b ? KCS_KH_BUF_INPUT : KCS_KH_BUF_NONE, 2, (size_t)k, 0, NULL);
    p->out_n = c->op == KCS_OP_REDUCE_SUM ? (size_t)m : (size_t)(m * k);
    p->out = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, p->out_n, KCS_KH_OUT_SIZE(ty), NULL);
    p->out_dbl = KCS_KH_OUT_DBL(ty);
    kcs_kh_launch *l;
    if (own) {
        l = kcs_kh_launch_add(p, "rows.cl", name, 1, (size_t)m, 1, 1);
    } else {
        l = kcs_kh_launch_add(p, "rows.cl", name, 1, (size_t)m * (size_t)dev->rwg, 1, 1);
        kcs_kh_set_local(l, (size_t)dev->rwg, 1, 1);
    }
    kcs_kh_args(l, ty, "b", bx);
    if (norm)
        kcs_kh_args(l, ty, "bb", bg, bb);
    kcs_kh_args(l, ty, "bLL", p->out, m, k);
    if (norm)
        kcs_kh_args(l, ty, "iii", has_g, has_b, c->op == KCS_OP_RMSNORM);
    if (own)
        kcs_kh_args(l, ty, "iL", (int)c->schedule.kind, c->schedule.param);
}

static int plan_elementwise(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                            int own, kcs_kh_plan *p, kcs_error *err)
{
    kcs_ew_fn fn;
    int rc = kcs_ew_fn_of(c->attrs, &fn, err);
    if (rc)
        return kcs_error_prefix(err, "%s", dev->name);
    int64_t n = c->m * c->k;
    int bx = kcs_kh_buf_add(p, KCS_KH_BUF_INPUT, 0, (size_t)n, 0, NULL);
    p->out_n = (size_t)n;
    p->out = kcs_kh_buf_add(p, KCS_KH_BUF_SCRATCH, 0, p->out_n, KCS_KH_OUT_SIZE(ty), NULL);
    p->out_dbl = KCS_KH_OUT_DBL(ty);
    kcs_kh_launch *l = kcs_kh_launch_add(p, "rows.cl", "elementwise", 1, (size_t)n, 1, 1);
    kcs_kh_args(l, ty, "bbLii", bx, p->out, n, (int)fn, own);
    return 0;
}

int kcs_kh_plan_call(const kcs_kh_device *dev, const kcs_call *c, const kcs_kh_types *ty,
                     int variant, kcs_kh_plan *plan, kcs_error *err)
{
    kcs_kh_plan p = {.flag = -1, .out = -1};
    int rc = 0;
    switch (c->op) {
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
    case KCS_OP_DOT: plan_gemm(dev, c, ty, variant == 1, &p); break;
    case KCS_OP_ATTENTION: rc = kcs_kh_plan_attention(dev, c, ty, variant, &p, err); break;
    case KCS_OP_GATHER: rc = kcs_kh_plan_gather(dev, c, ty, &p, err); break;
    case KCS_OP_ELEMENTWISE: rc = plan_elementwise(dev, c, ty, variant == 1, &p, err); break;
    default: plan_rows(dev, c, ty, variant == 1, &p); break;
    }
    if (rc) {
        kcs_kh_plan_free(&p);
        return rc;
    }
    *plan = p;
    if (plan->flag >= 0) /* the flag buffer's host data lives in the plan */
        plan->bufs[plan->flag].host = &plan->flag_init;
    return 0;
}

void kcs_kh_plan_free(kcs_kh_plan *plan)
{
    free(plan->owned);
    plan->owned = NULL;
}

int kcs_kh_exec(kcs_backend_ctx *ctx, const kcs_kh_device *dev, const kcs_kh_exec_ops *ops,
                const kcs_call *c, const kcs_kh_types *ty, const kcs_kh_plan *p,
                kcs_error *err)
{
    void *buf[KCS_KH_MAX_BUFS] = {0};
    int rc = 0;
    for (int i = 0; !rc && i < p->nbufs; i++)
        rc = ops->make_buf(ctx, c, ty, p, i, &buf[i], err);
    if (!rc)
        rc = kcs_kh_late(p, err);
    for (int i = 0; !rc && i < p->nlaunch; i++)
        rc = ops->launch(ctx, ty, &p->launch[i], buf, err);
    if (!rc && p->flag >= 0) {
        int32_t bad;
        rc = ops->read_flag(ctx, c, buf[p->flag], &bad, err);
        if (!rc)
            rc = kcs_kh_flag_raised(dev, c, bad, err);
    }
    if (!rc && p->out >= 0)
        rc = ops->download(ctx, buf[p->out], p->out_n, p->out_dbl, c->dtype_out, c->out, err);
    for (int i = 0; i < KCS_KH_MAX_BUFS; i++)
        ops->release(ctx, buf[i]);
    return rc;
}

int kcs_kh_run(const kcs_kh_device *dev, kcs_backend_ctx *ctx, const kcs_call *c,
               kcs_kh_exec_fn exec, kcs_error *err)
{
    kcs_kh_types ty;
    int variant = 0;
    kcs_kh_plan plan;
    int rc = kcs_kh_check_call(dev, c, &ty, &variant, err);
    if (!rc)
        rc = kcs_kh_plan_call(dev, c, &ty, variant, &plan, err);
    if (rc)
        return rc;
    rc = exec(ctx, c, &ty, &plan, err);
    kcs_kh_plan_free(&plan);
    return rc;
}
