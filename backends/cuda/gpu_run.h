/* gpu_run.h: host-side helpers of the CUDA and HIP backends: device buffer
 * lists, attributes, input packing, output conversion, call checks.
 * Vendor-neutral C, all static inline (each backend gets its own copy);
 * memory traffic goes through the kcs_gpu_dev the backend fills. The op
 * functions that launch the shared kernels are in gpu_run_ops.h. */
#ifndef KCS_GPU_RUN_H
#define KCS_GPU_RUN_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "attrs.h"
#include "elementwise.h"
#include "format.h"
#include "gpu_launch.h"

_Static_assert(KCS_GPU_SCHED_SEQUENTIAL == (int)KCS_SCHED_SEQUENTIAL &&
                   KCS_GPU_SCHED_PAIRWISE == (int)KCS_SCHED_PAIRWISE &&
                   KCS_GPU_SCHED_BLOCKED == (int)KCS_SCHED_BLOCKED &&
                   KCS_GPU_SCHED_SPLITK == (int)KCS_SCHED_SPLITK &&
                   KCS_GPU_SCHED_ATOMIC == (int)KCS_SCHED_ATOMIC,
               "gpu_launch.h schedule kinds must match kcs_schedule_kind");

typedef struct kcs_gpu_dev {
    const char *name; /* "cuda", "hip": prefixes every message */
    void *stream;
    int (*alloc)(void **p_p, size_t bytes, kcs_error *err);
    void (*release)(void *p);
    int (*put)(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err);
    /* device -> host, then wait for the stream (surfaces kernel faults) */
    int (*get)(void *stream, void *dst, const void *src, size_t bytes, kcs_error *err);
    /* status of a launcher call -> 0 or kcs_fail(KCS_E_DEVICE) */
    int (*launched)(int status, const char *what, kcs_error *err);
} kcs_gpu_dev;

#define KCS_GPU_MAX_BUFS 8

typedef struct gpu_bufs {
    const kcs_gpu_dev *dev;
    void *p[KCS_GPU_MAX_BUFS];
    int n;
} gpu_bufs;

static inline void gpu_bufs_free(gpu_bufs *b)
{
    for (int i = 0; i < b->n; i++)
        b->dev->release(b->p[i]);
    b->n = 0;
}

static inline int gpu_alloc(gpu_bufs *b, size_t bytes, void **p_p, kcs_error *err)
{
    if (b->n == KCS_GPU_MAX_BUFS)
        return kcs_fail(err, KCS_E_INTERNAL, "%s: too many device buffers", b->dev->name);
    void *p = NULL;
    int rc = b->dev->alloc(&p, bytes ? bytes : 1, err);
    if (rc)
        return rc;
    b->p[b->n++] = p;
    *p_p = p;
    return 0;
}

/* Attribute value of key in "k=v;k2=v2" (src/arith/attrs.h): 1 and the value
 * in buf when present, 0 when absent, KCS_E_INVAL when attrs is malformed
 * (a message naming the backend is in err). */
static inline int gpu_attr(const char *bn, const kcs_call *c, const char *key, char *buf,
                           size_t len, kcs_error *err)
{
    int rc = kcs_attrs_get(c->attrs, key, buf, len);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s %s: attrs '%s' are malformed (key=value;...)", bn,
                        kcs_op_name(c->op), c->attrs ? c->attrs : "");
    return rc;
}

static inline int gpu_tin(kcs_format f)
{
    switch (f) {
    case KCS_FMT_FP64: return KCS_GPU_IN_F64;
    case KCS_FMT_FP16: return KCS_GPU_IN_F16;
    case KCS_FMT_BF16: return KCS_GPU_IN_BF16;
    default: return KCS_GPU_IN_F32; /* fp32, tf32 and every fp8: exact in float */
    }
}

static inline size_t gpu_tin_size(int tin)
{
    return tin == KCS_GPU_IN_F64 ? 8 : tin == KCS_GPU_IN_F32 ? 4 : 2;
}

/* Accumulator and schedule of the call into r. */
static inline void gpu_red_init(const kcs_call *c, int native, kcs_gpu_red *r)
{
    memset(r, 0, sizeof *r);
    r->tin = gpu_tin(c->dtype_in);
    if (c->acc.bits > 0) {
        r->tacc = KCS_GPU_ACC_NARROW;
        r->p = c->acc.bits;
        r->emin = -126;
        r->has_inf = r->has_neg_zero = 1;
        r->maxf = ldexp(2.0 - ldexp(1.0, 1 - c->acc.bits), 127);
    } else if (c->acc.fmt == KCS_FMT_FP64) {
        r->tacc = KCS_GPU_ACC_F64;
    } else if (c->acc.fmt == KCS_FMT_FP32) {
        r->tacc = KCS_GPU_ACC_F32;
    } else {
        const kcs_format_info *fi = kcs_format_get(c->acc.fmt);
        r->tacc = KCS_GPU_ACC_NARROW;
        r->p = fi ? fi->p : 24;
        r->emin = fi ? fi->emin : -126;
        r->has_inf = fi ? fi->has_inf : 1;
        r->has_neg_zero = fi ? fi->has_neg_zero : 1;
        r->maxf = fi ? fi->max_finite : HUGE_VAL;
    }
    r->sched = native ? KCS_GPU_SCHED_TREE : (int)c->schedule.kind;
    r->param = c->schedule.param;
}

/* Upload n input values in the storage of tin. */
static inline int gpu_upload(gpu_bufs *b, int tin, kcs_format fmt, const double *src, size_t n,
                      void **dev_p, kcs_error *err)
{
    size_t es = gpu_tin_size(tin);
    void *host = malloc(n ? n * es : 1), *dev = NULL;
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory packing %zu inputs", b->dev->name, n);
    for (size_t i = 0; i < n; i++) {
        switch (tin) {
        case KCS_GPU_IN_F64: ((double *)host)[i] = src[i]; break;
        case KCS_GPU_IN_F32: ((float *)host)[i] = (float)src[i]; break;
        default: ((uint16_t *)host)[i] = (uint16_t)kcs_format_encode(fmt, src[i]); break;
        }
    }
    int rc = gpu_alloc(b, n * es, &dev, err);
    if (!rc && n)
        rc = b->dev->put(b->dev->stream, dev, host, n * es, err);
    free(host);
    if (!rc)
        *dev_p = dev;
    return rc;
}

static inline int gpu_upload_f64(gpu_bufs *b, const double *src, size_t n, void **dev_p, kcs_error *err)
{
    return gpu_upload(b, KCS_GPU_IN_F64, KCS_FMT_FP64, src, n, dev_p, err);
}

/* n device values (float, or double when dbl) -> call->out, each rounded
 * to dtype_out. */
static inline int gpu_download(gpu_bufs *b, const kcs_call *c, int dbl, const void *dev, size_t n,
                               kcs_error *err)
{
    size_t es = dbl ? 8 : 4;
    void *host = malloc(n ? n * es : 1);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "%s: out of memory reading %zu outputs", b->dev->name, n);
    int rc = n ? b->dev->get(b->dev->stream, host, dev, n * es, err) : 0;
    if (!rc) {
        for (size_t i = 0; i < n; i++) {
            double v = dbl ? ((double *)host)[i] : (double)((float *)host)[i];
            c->out[i] = kcs_format_round(c->dtype_out, v, KCS_ROUND_DEFAULT);
        }
    }
    free(host);
    return rc;
}

/* accumulator buffers: float for fp32, double for fp64 and narrow */
static inline int gpu_acc_dbl(const kcs_gpu_red *r)
{
    return r->tacc != KCS_GPU_ACC_F32;
}

static inline size_t gpu_acc_size(const kcs_gpu_red *r)
{
    return gpu_acc_dbl(r) ? 8 : 4;
}

/* row-op and attention outputs ("wide"): double when the input or the
 * accumulator is; the working format (scores): double for fp64 inputs */
static inline int gpu_wide_dbl(const kcs_gpu_red *r)
{
    return r->tin == KCS_GPU_IN_F64 || r->tacc != KCS_GPU_ACC_F32;
}

static inline size_t gpu_val_size(const kcs_gpu_red *r)
{
    return r->tin == KCS_GPU_IN_F64 ? 8 : 4;
}

enum { KCS_GPU_NATIVE = 0, KCS_GPU_OWN = 1, KCS_GPU_FUSED = 2 };

/* The variant of the call (KCS_GPU_NATIVE, _OWN, _FUSED for attention), as
 * the cpu and opencl backends name them; others are KCS_E_UNSUPPORTED. */
static inline int gpu_variant(const char *bn, const kcs_call *c, int *variant_p, kcs_error *err)
{
    const char *v = c->variant ? c->variant : "native";
    int att = c->op == KCS_OP_ATTENTION;
    if (strcmp(v, "native") == 0)
        *variant_p = KCS_GPU_NATIVE;
    else if (strcmp(v, "own") == 0)
        *variant_p = KCS_GPU_OWN;
    else if (att && strcmp(v, "fused") == 0)
        *variant_p = KCS_GPU_FUSED;
    else
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s has no variant '%s' (native, own%s)", bn,
                        kcs_op_name(c->op), v, att ? ", fused" : "");
    return 0;
}

/* Checks that do not depend on the device. */
static inline int gpu_check_call(const char *bn, const kcs_call *c, kcs_error *err)
{
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return kcs_fail(err, KCS_E_INVAL, "%s: negative shape in %s call", bn, kcs_op_name(c->op));
    if (kcs_op_out_len(c) > 0 && (!c->out || c->out_len < kcs_op_out_len(c)))
        return kcs_fail(err, KCS_E_INVAL, "%s: %s output holds %zu values, the shape needs %zu", bn,
                        kcs_op_name(c->op), c->out_len, kcs_op_out_len(c));
    int nin = kcs_op_n_inputs(c->op);
    for (int i = 0; i < nin; i++) {
        int optional = ((c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM) && i == 2) ||
                       ((c->op == KCS_OP_LAYERNORM || c->op == KCS_OP_RMSNORM) && i >= 1);
        if (!c->in[i]) {
            if (optional)
                continue;
            return kcs_fail(err, KCS_E_INVAL, "%s: %s input %d is missing", bn,
                            kcs_op_name(c->op), i);
        }
        if (c->in_len[i] < kcs_op_in_len(c, i))
            return kcs_fail(err, KCS_E_INVAL, "%s: %s input %d holds %zu values, the shape needs %zu",
                            bn, kcs_op_name(c->op), i, c->in_len[i], kcs_op_in_len(c, i));
    }
    return 0;
}

#endif
