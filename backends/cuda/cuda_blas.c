/* The CUDA backend's native gemm / batched_gemm / dot: cuBLAS.
 * kcs matrices are row-major; cuBLAS is column-major, so D = C + A·B is
 * computed as D^T = B^T·A^T on the same buffers (no copies).
 *   acc fp64               cublasGemmEx, CUBLAS_COMPUTE_64F, fp64 operands
 *   acc fp32               CUBLAS_COMPUTE_32F (attrs compute=tf32 |
 *                          fast_bf16 | fast_fp16 | pedantic pick the
 *                          _FAST_TF32 / _FAST_16BF / _FAST_16F / _PEDANTIC
 *                          compute types; dtype_in tf32 implies tf32),
 *                          operands fp32 / fp16 / bf16 as dtype_in, D fp32
 *   acc fp16               CUBLAS_COMPUTE_16F, fp16 operands and D
 *   dtype_in fp8_e4m3/e5m2 cublasLtMatmul (sm_89+), compute 32F, D fp32,
 *                          "TN" layout (B transposed on the host, k padded
 *                          with zeros to a multiple of 16); attrs
 *                          fast_accum=1 sets CUBLASLT_MATMUL_DESC_FAST_ACCUM
 * Other accumulators (bits:N, bf16, tf32) are not cuBLAS compute types:
 * KCS_E_UNSUPPORTED (the own variant emulates them). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "gpu_run.h"

#define FP8_KALIGN 16
#define LT_WORKSPACE ((size_t)32 << 20)

static kcs_gpu_dev blas_dev(kcs_backend_ctx *ctx)
{
    return kcs_cuda_dev(ctx->stream, 0);
}

static int unsupported(const kcs_call *c, const char *why, kcs_error *err)
{
    char ab[32];
    return kcs_fail(err, KCS_E_UNSUPPORTED, "cuda: native gemm, dtype_in %s, accumulator %s: %s",
                    kcs_format_name(c->dtype_in), kcs_acc_str(&c->acc, ab, sizeof ab), why);
}

/* Upload n values encoded in format f with elem bytes each (1, 2). */
static int upload_enc(gpu_bufs *b, kcs_format f, int elem, const double *src, size_t n,
                      void **dev_p, kcs_error *err)
{
    unsigned char *host = malloc(n ? n * (size_t)elem : 1);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory packing %zu inputs", n);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = kcs_format_encode(f, src[i]);
        if (elem == 1)
            host[i] = (unsigned char)bits;
        else
            ((uint16_t *)host)[i] = (uint16_t)bits;
    }
    void *dev = NULL;
    int rc = gpu_alloc(b, n * (size_t)elem, &dev, err);
    if (!rc && n)
        rc = b->dev->put(b->dev->stream, dev, host, n * (size_t)elem, err);
    free(host);
    if (!rc)
        *dev_p = dev;
    return rc;
}

/* fp16 results back into call->out */
static int download_f16(gpu_bufs *b, const kcs_call *c, const void *dev, size_t n, kcs_error *err)
{
    uint16_t *host = malloc(n ? n * sizeof *host : 1);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory reading %zu outputs", n);
    int rc = n ? b->dev->get(b->dev->stream, host, dev, n * sizeof *host, err) : 0;
    for (size_t i = 0; !rc && i < n; i++)
        c->out[i] = kcs_format_round(c->dtype_out, kcs_format_decode(KCS_FMT_FP16, host[i]),
                                     KCS_ROUND_DEFAULT);
    free(host);
    return rc;
}

typedef struct blas_types {
    cublasComputeType_t compute;
    cudaDataType_t ab, cd;
    int kind; /* 0: fp32 scalars, 1: fp64, 2: fp16 */
} blas_types;

static int pick_types(const kcs_call *c, blas_types *t, kcs_error *err)
{
    char cmp[32] = "";
    if (gpu_attr("cuda", c, "compute", cmp, sizeof cmp, err) < 0)
        return err->code;
    if (c->acc.bits > 0)
        return unsupported(c, "cuBLAS has no bits:N compute type", err);
    if (c->acc.fmt == KCS_FMT_FP64) {
        *t = (blas_types){CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_R_64F, 1};
        return 0;
    }
    if (c->acc.fmt == KCS_FMT_FP16) {
        if (c->dtype_in != KCS_FMT_FP16)
            return unsupported(c, "CUBLAS_COMPUTE_16F takes fp16 operands", err);
        *t = (blas_types){CUBLAS_COMPUTE_16F, CUDA_R_16F, CUDA_R_16F, 2};
        return 0;
    }
    if (c->acc.fmt != KCS_FMT_FP32)
        return unsupported(c, "cuBLAS computes in fp16, fp32 or fp64", err);
    t->kind = 0;
    t->cd = CUDA_R_32F;
    switch (c->dtype_in) {
    case KCS_FMT_FP32:
    case KCS_FMT_TF32: t->ab = CUDA_R_32F; break;
    case KCS_FMT_FP16: t->ab = CUDA_R_16F; break;
    case KCS_FMT_BF16: t->ab = CUDA_R_16BF; break;
    default: return unsupported(c, "no fp32-compute cublasGemmEx for these operands", err);
    }
    t->compute = CUBLAS_COMPUTE_32F;
    if (strcmp(cmp, "tf32") == 0 || (!cmp[0] && c->dtype_in == KCS_FMT_TF32))
        t->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (strcmp(cmp, "fast_bf16") == 0)
        t->compute = CUBLAS_COMPUTE_32F_FAST_16BF;
    else if (strcmp(cmp, "fast_fp16") == 0)
        t->compute = CUBLAS_COMPUTE_32F_FAST_16F;
    else if (strcmp(cmp, "pedantic") == 0)
        t->compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    else if (cmp[0] && strcmp(cmp, "fp32") != 0)
        return kcs_fail(err, KCS_E_INVAL,
                        "cuda: compute=%s (fp32, tf32, fast_bf16, fast_fp16, pedantic)", cmp);
    return 0;
}

static int upload_operand(gpu_bufs *b, const kcs_call *c, cudaDataType_t ty, const double *src,
                          size_t n, void **dev_p, kcs_error *err)
{
    switch (ty) {
    case CUDA_R_64F: return gpu_upload(b, KCS_GPU_IN_F64, KCS_FMT_FP64, src, n, dev_p, err);
    case CUDA_R_32F: return gpu_upload(b, KCS_GPU_IN_F32, KCS_FMT_FP32, src, n, dev_p, err);
    case CUDA_R_16F: return upload_enc(b, KCS_FMT_FP16, 2, src, n, dev_p, err);
    case CUDA_R_16BF: return upload_enc(b, KCS_FMT_BF16, 2, src, n, dev_p, err);
    default:
        return kcs_fail(err, KCS_E_INTERNAL, "cuda: no packing for operand type %d of %s", (int)ty,
                        kcs_op_name(c->op));
    }
}

static int gemm_ex(kcs_backend_ctx *ctx, const kcs_call *c, int64_t batch, kcs_error *err)
{
    blas_types t = {0};
    int rc = pick_types(c, &t, err);
    if (rc)
        return rc;
    int m = (int)c->m, n = (int)c->n, k = (int)c->k;
    size_t sa = (size_t)m * k, sb = (size_t)k * n, sd = (size_t)m * n;
    kcs_gpu_dev dev = blas_dev(ctx);
    gpu_bufs b = {.dev = &dev};
    void *A = NULL, *B = NULL, *D = NULL;
    rc = upload_operand(&b, c, t.ab, c->in[0], (size_t)batch * sa, &A, err);
    if (!rc)
        rc = upload_operand(&b, c, t.ab, c->in[1], (size_t)batch * sb, &B, err);
    if (!rc && c->in[2]) /* D starts as C (beta = 1) */
        rc = upload_operand(&b, c, t.cd, c->in[2], (size_t)batch * sd, &D, err);
    else if (!rc)
        rc = gpu_alloc(&b, (size_t)batch * sd * (t.kind == 1 ? 8 : t.kind == 2 ? 2 : 4), &D, err);
    if (rc)
        goto out;
    double a64 = 1.0, b64 = c->in[2] ? 1.0 : 0.0;
    float a32 = 1.0f, b32 = (float)b64;
    uint16_t a16 = 0x3c00, b16 = c->in[2] ? 0x3c00 : 0; /* fp16 1.0, 0.0 */
    const void *alpha = t.kind == 1 ? (const void *)&a64 : t.kind == 2 ? (const void *)&a16 : &a32;
    const void *beta = t.kind == 1 ? (const void *)&b64 : t.kind == 2 ? (const void *)&b16 : &b32;
    int lda = k > 0 ? k : 1, ldb = n, ldd = n;
    if (batch == 1)
        rc = KCS_CUBLAS_CHECK(err, cublasGemmEx,
                              (ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, B, t.ab, ldb,
                               A, t.ab, lda, beta, D, t.cd, ldd, t.compute, CUBLAS_GEMM_DEFAULT));
    else
        rc = KCS_CUBLAS_CHECK(err, cublasGemmStridedBatchedEx,
                              (ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, B, t.ab, ldb,
                               (long long)sb, A, t.ab, lda, (long long)sa, beta, D, t.cd, ldd,
                               (long long)sd, (int)batch, t.compute, CUBLAS_GEMM_DEFAULT));
    if (rc)
        goto out;
    if (t.kind == 2)
        rc = download_f16(&b, c, D, (size_t)batch * sd, err);
    else
        rc = gpu_download(&b, c, t.kind == 1, D, (size_t)batch * sd, err);
out:
    gpu_bufs_free(&b);
    return rc;
}

/* ---- fp8: cublasLt --------------------------------------------------------- */

/* Pack an operand as fp8 bytes in a padded layout: rows_p rows of kp bytes,
 * row r < rows holding element (r, t) at t (zeros for t >= k and for the
 * padding rows r >= rows). trans: src is k×rows row-major (B), else rows×k
 * (A). */
static int upload_fp8(gpu_bufs *b, kcs_format f, const double *src, int64_t batch, int64_t rows,
                      int64_t rows_p, int64_t k, int64_t kp, int trans, void **dev_p,
                      kcs_error *err)
{
    size_t per = (size_t)(rows_p * kp), n = (size_t)batch * per;
    unsigned char *host = calloc(n ? n : 1, 1);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory packing fp8 operands");
    for (int64_t bt = 0; bt < batch; bt++) {
        const double *s = src + bt * rows * k;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t t = 0; t < k; t++)
                host[(size_t)bt * per + (size_t)(r * kp + t)] =
                    (unsigned char)kcs_format_encode(f, trans ? s[t * rows + r] : s[r * k + t]);
    }
    void *dev = NULL;
    int rc = gpu_alloc(b, n, &dev, err);
    if (!rc && n)
        rc = b->dev->put(b->dev->stream, dev, host, n, err);
    free(host);
    if (!rc)
        *dev_p = dev;
    return rc;
}

/* C (batch of m×n) into the padded fp32 layout of D (rows of np floats,
 * mp rows per matrix, zeros elsewhere). */
static int upload_c_padded(gpu_bufs *b, const double *C, int64_t batch, int64_t m, int64_t n,
                           int64_t mp, int64_t np, void **dev_p, kcs_error *err)
{
    size_t per = (size_t)(mp * np), len = (size_t)batch * per;
    double *host = calloc(len ? len : 1, sizeof *host);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory packing C");
    for (int64_t bt = 0; bt < batch; bt++)
        for (int64_t i = 0; i < m; i++)
            memcpy(host + (size_t)bt * per + (size_t)(i * np), C + (bt * m + i) * n,
                   (size_t)n * sizeof *host);
    int rc = gpu_upload(b, KCS_GPU_IN_F32, KCS_FMT_FP32, host, len, dev_p, err);
    free(host);
    return rc;
}

/* The m×n part of each padded fp32 D -> call->out, rounded to dtype_out. */
static int download_padded(gpu_bufs *b, const kcs_call *c, const void *D, int64_t batch,
                           int64_t m, int64_t n, int64_t mp, int64_t np, kcs_error *err)
{
    size_t per = (size_t)(mp * np), len = (size_t)batch * per;
    float *host = malloc((len ? len : 1) * sizeof *host);
    if (!host)
        return kcs_fail(err, KCS_E_NOMEM, "cuda: out of memory reading %zu outputs", len);
    int rc = len ? b->dev->get(b->dev->stream, host, D, len * sizeof *host, err) : 0;
    for (int64_t bt = 0; !rc && bt < batch; bt++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                c->out[(bt * m + i) * n + j] = kcs_format_round(
                    c->dtype_out, (double)host[(size_t)bt * per + (size_t)(i * np + j)],
                    KCS_ROUND_DEFAULT);
    free(host);
    return rc;
}

static int layout(cublasLtMatrixLayout_t *l_p, cudaDataType_t ty, int64_t rows, int64_t cols,
                  int64_t ld, int64_t batch, int64_t stride, kcs_error *err)
{
    int rc = KCS_CUBLAS_CHECK(err, cublasLtMatrixLayoutCreate,
                              (l_p, ty, (uint64_t)rows, (uint64_t)cols, ld));
    if (!rc && batch > 1) {
        int32_t bc = (int32_t)batch;
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatrixLayoutSetAttribute,
                              (*l_p, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        if (!rc)
            rc = KCS_CUBLAS_CHECK(err, cublasLtMatrixLayoutSetAttribute,
                                  (*l_p, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                   sizeof stride));
    }
    return rc;
}

static int gemm_fp8(kcs_backend_ctx *ctx, const kcs_call *c, int64_t batch, kcs_error *err)
{
    if (c->acc.bits > 0 || c->acc.fmt != KCS_FMT_FP32)
        return unsupported(c, "fp8 matmul accumulates in fp32", err);
    if (c->dtype_in == KCS_FMT_FP8_E5M2)
        return unsupported(c, "cuBLASLt has no e5m2 × e5m2 matmul", err);
    if (ctx->sm < 89)
        return unsupported(c, "fp8 matmul needs sm_89 or newer", err);
    int64_t m = c->m, n = c->n, k = c->k;
    /* cuBLASLt's fp8 kernels take only dimensions that are multiples of 16
     * (seen on an H200, CUDA 13.0: a 1×1×1 matmul has no algorithm): m, n
     * and k are padded with zeros, which adds only exact zero terms to the
     * outputs kept and computes padding outputs that are dropped */
    int64_t kp = (k + FP8_KALIGN - 1) / FP8_KALIGN * FP8_KALIGN;
    if (kp == 0)
        kp = FP8_KALIGN;
    int64_t mp = (m + FP8_KALIGN - 1) / FP8_KALIGN * FP8_KALIGN;
    int64_t np = (n + FP8_KALIGN - 1) / FP8_KALIGN * FP8_KALIGN;
    char fa[8] = "0";
    if (gpu_attr("cuda", c, "fast_accum", fa, sizeof fa, err) < 0)
        return err->code;
    int8_t fast = strcmp(fa, "1") == 0 || strcmp(fa, "true") == 0;
    cudaDataType_t ty = CUDA_R_8F_E4M3;
    kcs_gpu_dev dev = blas_dev(ctx);
    gpu_bufs b = {.dev = &dev};
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    void *Bt = NULL, *A = NULL, *D = NULL, *ws = NULL;
    /* Lt operand "A" = B^T stored k×n column-major (op T), "B" = A^T
     * stored k×m column-major (op N), D^T n×m column-major = D row-major */
    int rc = upload_fp8(&b, c->dtype_in, c->in[1], batch, n, np, k, kp, 1, &Bt, err);
    if (!rc)
        rc = upload_fp8(&b, c->dtype_in, c->in[0], batch, m, mp, k, kp, 0, &A, err);
    if (!rc && c->in[2])
        rc = upload_c_padded(&b, c->in[2], batch, m, n, mp, np, &D, err);
    else if (!rc)
        rc = gpu_alloc(&b, (size_t)(batch * mp * np) * sizeof(float), &D, err);
    if (!rc)
        rc = gpu_alloc(&b, LT_WORKSPACE, &ws, err);
    cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulDescCreate, (&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulDescSetAttribute,
                              (op, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulDescSetAttribute,
                              (op, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB));
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulDescSetAttribute,
                              (op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    if (!rc)
        rc = layout(&la, ty, kp, np, kp, batch, np * kp, err);
    if (!rc)
        rc = layout(&lb, ty, kp, mp, kp, batch, mp * kp, err);
    if (!rc)
        rc = layout(&lc, CUDA_R_32F, np, mp, np, batch, mp * np, err);
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulPreferenceCreate, (&pref));
    size_t wss = LT_WORKSPACE;
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulPreferenceSetAttribute,
                              (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wss, sizeof wss));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmulAlgoGetHeuristic,
                              (ctx->lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
    if (!rc && found == 0)
        rc = unsupported(c, "cublasLtMatmulAlgoGetHeuristic found no algorithm", err);
    float alpha = 1.0f, beta = c->in[2] ? 1.0f : 0.0f;
    if (!rc)
        rc = KCS_CUBLAS_CHECK(err, cublasLtMatmul,
                              (ctx->lt, op, &alpha, Bt, la, A, lb, &beta, D, lc, D, lc,
                               &heur.algo, ws, wss, ctx->stream));
    if (!rc)
        rc = download_padded(&b, c, D, batch, m, n, mp, np, err);
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    if (lc)
        cublasLtMatrixLayoutDestroy(lc);
    if (lb)
        cublasLtMatrixLayoutDestroy(lb);
    if (la)
        cublasLtMatrixLayoutDestroy(la);
    if (op)
        cublasLtMatmulDescDestroy(op);
    gpu_bufs_free(&b);
    return rc;
}

int kcs_cuda_native_gemm(void *vctx, const kcs_call *c, kcs_error *err)
{
    kcs_backend_ctx *ctx = vctx;
    int64_t batch = c->op == KCS_OP_BATCHED_GEMM && c->batch > 0 ? c->batch : 1;
    if (c->m > INT_MAX || c->n > INT_MAX || c->k > INT_MAX || batch > INT_MAX)
        return unsupported(c, "dimensions beyond 32-bit cuBLAS arguments", err);
    if (c->m == 0 || c->n == 0)
        return 0;
    switch (c->dtype_in) {
    case KCS_FMT_FP8_E4M3:
    case KCS_FMT_FP8_E5M2: return gemm_fp8(ctx, c, batch, err);
    case KCS_FMT_FP8_E4M3FNUZ:
    case KCS_FMT_FP8_E5M2FNUZ: return unsupported(c, "FNUZ fp8 is an AMD format", err);
    default: return gemm_ex(ctx, c, batch, err);
    }
}
