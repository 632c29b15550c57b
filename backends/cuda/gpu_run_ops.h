/* gpu_run_ops.h: how the CUDA and HIP backends execute one kcs_call with
 * the shared kernels (gpu_launch.h). An implementation header included
 * once, by cuda_backend.c and by hip_backend.c, after gpu_run.h and after
 * they define KCS_GPU_FN, so each gets its own static copy bound to its own
 * launchers.
 *
 * Variants, as on the cpu and opencl backends: "native" (gemm: cuBLAS on
 * CUDA, the tiled kernel on HIP; row ops: the 64-thread tree kernels;
 * attention: the streaming fused kernel with sequential score dots), "own"
 * (call->schedule and call->acc in every sum; attention unfused) and, for
 * attention, "fused" (the streaming kernel, score dots under the call's
 * schedule). dot runs as the 1×k·k×1 gemm. Attributes: block=N (fused
 * attention key block, default 64), oob=raise|clamp|zero|undefined
 * (gather, default raise; undefined clamps); fn=exp|tanh|silu|gelu_tanh|rsqrt
 * (elementwise, default exp). eps = 1e-5 (layernorm, rmsnorm), as rows.cl
 * and cpu/norm.c. */
#ifndef KCS_GPU_RUN_OPS_H
#define KCS_GPU_RUN_OPS_H

#define KCS_GPU_BLOCK_DEFAULT 64 /* fused attention keys per block */
#define KCS_GPU_SHARED_MAX 49152 /* static + dynamic shared memory per block */
#define KCS_GPU_NORM_EPS 1e-5

static int gpu_unsupported_acc(const char *bn, const kcs_call *c, const char *what,
                               kcs_error *err)
{
    char ab[32];
    return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s with accumulator %s: %s", bn,
                    kcs_op_name(c->op), kcs_acc_str(&c->acc, ab, sizeof ab), what);
}

static int gpu_grid_limit(const char *bn, const kcs_call *c, int64_t v, const char *what,
                          kcs_error *err)
{
    if (v > 65535)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s: %s = %lld exceeds the grid limit 65535",
                        bn, kcs_op_name(c->op), what, (long long)v);
    return 0;
}

/* gemm / batched_gemm with the shared kernels: own schedules, or (tiled)
 * the 64×64 tiled kernel that is the HIP backend's native gemm. */
static int gpu_gemm(const kcs_gpu_dev *dev, const kcs_call *c, int tiled, kcs_error *err)
{
    kcs_gpu_red r;
    gpu_red_init(c, 0, &r);
    if (tiled && r.tacc == KCS_GPU_ACC_NARROW)
        return gpu_unsupported_acc(dev->name, c, "the native gemm accumulates in fp32 or fp64",
                                   err);
    if (r.sched == KCS_GPU_SCHED_ATOMIC && r.tacc == KCS_GPU_ACC_NARROW)
        return gpu_unsupported_acc(dev->name, c, "atomics exist for fp32 and fp64 only", err);
    int64_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    if (tiled && (gpu_grid_limit(dev->name, c, batch, "batch", err) ||
                  gpu_grid_limit(dev->name, c, (c->m + 63) / 64, "m/64", err)))
        return err->code;
    size_t sa = (size_t)(c->m * c->k), sb = (size_t)(c->k * c->n), sd = (size_t)(c->m * c->n);
    gpu_bufs b = {.dev = dev};
    void *A = NULL, *B = NULL, *C = NULL, *D = NULL;
    int rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[0], (size_t)batch * sa, &A, err);
    if (!rc)
        rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[1], (size_t)batch * sb, &B, err);
    if (!rc && c->in[2])
        rc = gpu_upload_f64(&b, c->in[2], (size_t)batch * sd, &C, err);
    if (!rc)
        rc = gpu_alloc(&b, (size_t)batch * sd * gpu_acc_size(&r), &D, err);
    if (rc || !sd)
        goto out;
    int st = tiled ? KCS_GPU_FN(gemm_tiled)(dev->stream, &r, batch, c->m, c->n, c->k, A, B, C, D)
                   : KCS_GPU_FN(gemm)(dev->stream, &r, batch, c->m, c->n, c->k, A, B, C, D);
    rc = dev->launched(st, "gemm", err);
    if (!rc)
        rc = gpu_download(&b, c, gpu_acc_dbl(&r), D, (size_t)batch * sd, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

/* reduce_sum: m rows of k -> m sums */
static int gpu_reduce(const kcs_gpu_dev *dev, const kcs_call *c, int native, kcs_error *err)
{
    kcs_gpu_red r;
    gpu_red_init(c, native, &r);
    if ((native || r.sched == KCS_GPU_SCHED_ATOMIC) && r.tacc == KCS_GPU_ACC_NARROW)
        return gpu_unsupported_acc(dev->name, c,
                                   native ? "the native reduction accumulates in fp32 or fp64"
                                          : "atomics exist for fp32 and fp64 only",
                                   err);
    size_t len = (size_t)(c->m * c->k);
    gpu_bufs b = {.dev = dev};
    void *X = NULL, *O = NULL;
    int rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[0], len, &X, err);
    if (!rc)
        rc = gpu_alloc(&b, (size_t)c->m * gpu_acc_size(&r), &O, err);
    if (rc || !c->m)
        goto out;
    rc = dev->launched(KCS_GPU_FN(reduce_rows)(dev->stream, &r, c->m, c->k, X, O), "reduce_sum",
                       err);
    if (!rc)
        rc = gpu_download(&b, c, gpu_acc_dbl(&r), O, (size_t)c->m, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

/* softmax, layernorm, rmsnorm: rows of x (m×k) -> m×k */
static int gpu_rows(const kcs_gpu_dev *dev, const kcs_call *c, int native, kcs_error *err)
{
    kcs_gpu_red r;
    gpu_red_init(c, native, &r);
    if (native && r.tacc == KCS_GPU_ACC_NARROW)
        return gpu_unsupported_acc(dev->name, c, "the native kernel accumulates in fp32 or fp64",
                                   err);
    if (r.sched == KCS_GPU_SCHED_ATOMIC)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: %s has no atomic schedule", dev->name,
                        kcs_op_name(c->op));
    size_t len = (size_t)(c->m * c->k);
    gpu_bufs b = {.dev = dev};
    void *X = NULL, *G = NULL, *Bt = NULL, *O = NULL;
    int rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[0], len, &X, err);
    if (!rc && c->op != KCS_OP_SOFTMAX && c->in[1])
        rc = gpu_upload_f64(&b, c->in[1], (size_t)c->k, &G, err);
    if (!rc && c->op == KCS_OP_LAYERNORM && c->in[2])
        rc = gpu_upload_f64(&b, c->in[2], (size_t)c->k, &Bt, err);
    if (!rc)
        rc = gpu_alloc(&b, len * (gpu_wide_dbl(&r) ? 8 : 4), &O, err);
    if (rc || !len)
        goto out;
    int st = c->op == KCS_OP_SOFTMAX
                 ? KCS_GPU_FN(softmax)(dev->stream, &r, c->m, c->k, X, O)
                 : KCS_GPU_FN(norm)(dev->stream, &r, c->op == KCS_OP_RMSNORM, c->m, c->k, X, G,
                                    Bt, KCS_GPU_NORM_EPS, O);
    rc = dev->launched(st, kcs_op_name(c->op), err);
    if (!rc)
        rc = gpu_download(&b, c, gpu_wide_dbl(&r), O, len, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

/* elementwise: m×k values -> m×k, f from attrs fn= (elementwise.h) */
static int gpu_elementwise(const kcs_gpu_dev *dev, const kcs_call *c, int native, kcs_error *err)
{
    kcs_ew_fn fn;
    int rc = kcs_ew_fn_of(c->attrs, &fn, err);
    if (rc)
        return kcs_error_prefix(err, "%s", dev->name);
    kcs_gpu_red r;
    gpu_red_init(c, native, &r);
    size_t len = (size_t)(c->m * c->k);
    gpu_bufs b = {.dev = dev};
    void *X = NULL, *O = NULL;
    rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[0], len, &X, err);
    if (!rc)
        rc = gpu_alloc(&b, len * (gpu_wide_dbl(&r) ? 8 : 4), &O, err);
    if (rc || !len)
        goto out;
    rc = dev->launched(KCS_GPU_FN(elementwise)(dev->stream, &r, (int64_t)len, (int)fn, !native, X,
                                               O),
                       "elementwise", err);
    if (!rc)
        rc = gpu_download(&b, c, gpu_wide_dbl(&r), O, len, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

static int gpu_block_attr(const char *bn, const kcs_call *c, int64_t *B_p, kcs_error *err)
{
    char v[32];
    int rc = gpu_attr(bn, c, "block", v, sizeof v, err);
    if (rc < 0)
        return rc;
    *B_p = KCS_GPU_BLOCK_DEFAULT;
    if (rc == 1) {
        char *end;
        errno = 0;
        long long blk = strtoll(v, &end, 10);
        if (errno || *end || blk <= 0)
            return kcs_fail(err, KCS_E_INVAL, "%s attention: block=%s is not a positive integer",
                            bn, v);
        *B_p = blk;
    }
    return 0;
}

static int gpu_attention(const kcs_gpu_dev *dev, const kcs_call *c, int variant, kcs_error *err)
{
    kcs_gpu_red r;
    gpu_red_init(c, 0, &r);
    int64_t B = 0, m = c->m, n = c->n, d = c->k;
    if (variant != KCS_GPU_OWN) {
        int rc = gpu_block_attr(dev->name, c, &B, err);
        if (rc)
            return rc;
        if (variant == KCS_GPU_NATIVE) /* native: sequential score dots */
            r.sched = KCS_GPU_SCHED_SEQUENTIAL, r.param = 0;
    }
    if (n < 1)
        return kcs_fail(err, KCS_E_INVAL, "%s attention: needs n >= 1 keys (n=%lld)", dev->name,
                        (long long)n);
    if (B && r.tacc == KCS_GPU_ACC_NARROW)
        return gpu_unsupported_acc(dev->name, c, "the fused kernel accumulates in fp32 or fp64",
                                   err);
    if (r.sched == KCS_GPU_SCHED_ATOMIC)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: attention has no atomic schedule",
                        dev->name);
    int64_t batch = c->batch > 0 ? c->batch : 1;
    if (m == 0 || d == 0)
        return 0;
    if (B > n)
        B = n;
    size_t vs = gpu_val_size(&r);
    if (B && d > 1024)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: fused attention handles head dimensions up to 1024 (k = %lld)",
                        dev->name, (long long)d);
    if (B && (uint64_t)(d + B + KCS_GPU_TREE_THREADS) * vs > KCS_GPU_SHARED_MAX)
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: fused attention: d + block = %lld values exceed %d bytes of shared "
                        "memory",
                        dev->name, (long long)(d + B), KCS_GPU_SHARED_MAX);
    if (B && gpu_grid_limit(dev->name, c, batch, "batch", err))
        return err->code;
    if (B && m > 0x7fffffff)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: fused attention: m = %lld too large",
                        dev->name, (long long)m);
    size_t nq = (size_t)(batch * m * d), nk = (size_t)(batch * n * d);
    double scale = 1.0 / sqrt((double)d); /* RN_w by the kernels */
    gpu_bufs b = {.dev = dev};
    void *Q = NULL, *K = NULL, *V = NULL, *S = NULL, *O = NULL;
    int rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[0], nq, &Q, err);
    if (!rc)
        rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[1], nk, &K, err);
    if (!rc)
        rc = gpu_upload(&b, r.tin, c->dtype_in, c->in[2], nk, &V, err);
    if (!rc && !B)
        rc = gpu_alloc(&b, (size_t)(batch * m * n) * vs, &S, err);
    if (!rc)
        rc = gpu_alloc(&b, nq * (gpu_wide_dbl(&r) ? 8 : 4), &O, err);
    if (rc)
        goto out;
    rc = dev->launched(
        KCS_GPU_FN(attention)(dev->stream, &r, B, batch, m, n, d, scale, Q, K, V, S, O),
        "attention", err);
    if (!rc)
        rc = gpu_download(&b, c, gpu_wide_dbl(&r), O, nq, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

static int gpu_gather(const kcs_gpu_dev *dev, const kcs_call *c, kcs_error *err)
{
    char mode_s[32];
    int mode, rc = gpu_attr(dev->name, c, "oob", mode_s, sizeof mode_s, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || strcmp(mode_s, "raise") == 0)
        mode = KCS_GPU_OOB_RAISE;
    else if (strcmp(mode_s, "clamp") == 0 || strcmp(mode_s, "undefined") == 0)
        mode = KCS_GPU_OOB_CLAMP;
    else if (strcmp(mode_s, "zero") == 0)
        mode = KCS_GPU_OOB_ZERO;
    else
        return kcs_fail(err, KCS_E_INVAL, "%s gather: oob=%s (raise|clamp|zero|undefined)",
                        dev->name, mode_s);
    if (mode == KCS_GPU_OOB_CLAMP && c->m == 0 && c->n > 0)
        return kcs_fail(err, KCS_E_INVAL, "%s gather: oob=clamp on an empty table", dev->name);
    size_t n = (size_t)c->n, nt = (size_t)(c->m * c->k), no = (size_t)(c->n * c->k);
    int64_t *idx = malloc(n ? n * sizeof *idx : 1);
    if (!idx)
        return kcs_fail(err, KCS_E_NOMEM, "%s gather: out of memory", dev->name);
    for (size_t p = 0; p < n; p++) {
        double v = c->in[1][p];
        if (v != floor(v) || isinf(v)) { /* also NaN */
            free(idx);
            return kcs_fail(err, KCS_E_INVAL,
                            "%s gather: index %g at position %zu is not an integer", dev->name,
                            v, p);
        }
        /* beyond +-2^62: out of range either way, on the same side */
        idx[p] = v <= -0x1p62 ? -(int64_t)0x1p62 : v >= 0x1p62 ? (int64_t)0x1p62 : (int64_t)v;
    }
    gpu_bufs b = {.dev = dev};
    void *T = NULL, *I = NULL, *O = NULL, *bad = NULL;
    unsigned long long bad_h = ~0ull;
    rc = gpu_upload_f64(&b, c->in[0], nt, &T, err);
    if (!rc)
        rc = gpu_alloc(&b, n * sizeof *idx, &I, err);
    if (!rc && n)
        rc = dev->put(dev->stream, I, idx, n * sizeof *idx, err);
    if (!rc)
        rc = gpu_alloc(&b, no * sizeof(double), &O, err);
    if (!rc)
        rc = gpu_alloc(&b, sizeof bad_h, &bad, err);
    if (!rc)
        rc = dev->put(dev->stream, bad, &bad_h, sizeof bad_h, err);
    if (!rc)
        rc = dev->launched(KCS_GPU_FN(gather)(dev->stream, mode, c->m, c->k, c->n, T, I, O, bad),
                           "gather", err);
    if (!rc)
        rc = dev->get(dev->stream, &bad_h, bad, sizeof bad_h, err);
    if (rc)
        goto out;
    if (bad_h != ~0ull) {
        char msg[256];
        snprintf(msg, sizeof msg, "index %.0f at position %llu is out of range [0, %lld)",
                 c->in[1][bad_h], bad_h, (long long)c->m);
        if (c->msg && c->msg_len)
            snprintf(c->msg, c->msg_len, "%s", msg);
        rc = kcs_fail(err, KCS_E_RAISED, "%s gather: %s", dev->name, msg);
        goto out;
    }
    rc = gpu_download(&b, c, 1, O, no, err);
out:
    gpu_bufs_free(&b);
    free(idx);
    return rc;
}

/* Run one call. native_gemm: the backend's vendor-library gemm, or NULL for
 * the tiled kernel. */
static int gpu_run_call(const kcs_gpu_dev *dev, const kcs_call *c,
                        int (*native_gemm)(void *ctx, const kcs_call *c, kcs_error *err),
                        void *ctx, kcs_error *err)
{
    int variant = 0, rc = gpu_check_call(dev->name, c, err);
    if (!rc)
        rc = gpu_variant(dev->name, c, &variant, err);
    if (rc)
        return rc;
    int native = variant == KCS_GPU_NATIVE;
    kcs_call g;
    switch (c->op) {
    case KCS_OP_DOT: /* the 1×k·k×1 gemm */
        g = *c;
        g.op = KCS_OP_GEMM;
        g.m = g.n = 1;
        g.batch = 0;
        g.in[2] = NULL;
        c = &g;
        /* fall through */
    case KCS_OP_GEMM:
    case KCS_OP_BATCHED_GEMM:
        if (native && native_gemm)
            return native_gemm(ctx, c, err);
        return gpu_gemm(dev, c, native, err);
    case KCS_OP_REDUCE_SUM: return gpu_reduce(dev, c, native, err);
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
    case KCS_OP_RMSNORM: return gpu_rows(dev, c, native, err);
    case KCS_OP_ATTENTION: return gpu_attention(dev, c, variant, err);
    case KCS_OP_GATHER: return gpu_gather(dev, c, err);
    case KCS_OP_ALLREDUCE:
        return kcs_fail(err, KCS_E_UNSUPPORTED,
                        "%s: allreduce is a collective over ranks, not a device kernel",
                        dev->name);
    case KCS_OP_ELEMENTWISE: return gpu_elementwise(dev, c, native, err);
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "%s: op %s is not offered by this backend",
                        dev->name, kcs_op_name(c->op));
    }
}

#endif
