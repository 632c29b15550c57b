/* Calibration variants around a backend's native kernels (calib_wrap.h).
 * Every device computation is a call of the inner backend's "native"
 * variant; what the host adds is named per contract in calibrate.c's
 * catalogue (bad_wrap). Intermediates travel as fp32 values. */
#include "calib_wrap.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "calib_wrap_impl.h"
#include "declares.h"
#include "rng.h"

#define PRC01_K_FAST 64
#define PRC01_SLICE 16
#define ORD01_K_BLOCKED 256
#define ORD01_BLOCK 64
#define ORD02_SLICES 8
#define ORD03_M_SPLIT 3 /* the one batch size whose schedule differs */
#define CMP02_MN_TILED 4096
#define CMP02_TILE 32
#define CMP03_CLASS 64

/* The whole call, forwarded with variant native. */
static int forward(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    return kcs_wrap_forward(w, c, NULL, NULL, err);
}

/* ---- gemm family: one gemm per batch on host slices ------------------- */

typedef struct gemm_dims {
    size_t m, n, k, nb;
} gemm_dims;

static gemm_dims dims(const kcs_call *c)
{
    gemm_dims d = {(size_t)c->m, (size_t)c->n, (size_t)c->k, 1};
    if (c->op == KCS_OP_BATCHED_GEMM && c->batch > 0)
        d.nb = (size_t)c->batch;
    return d;
}

/* P = A[:, s0:s0+len] · B[s0:s0+len, :] for one batch (fp32 result). */
static int slice_gemm(kcs_backend_ctx *w, const kcs_call *c, const double *A, const double *B,
                      size_t s0, size_t len, double *As, double *P, kcs_error *err)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    for (size_t i = 0; i < m; i++)
        memcpy(As + i * len, A + i * k + s0, len * sizeof *As);
    return kcs_wrap_native(w, c, KCS_OP_GEMM, (int64_t)m, (int64_t)n, (int64_t)len, 0,
                           c->dtype_in, KCS_FMT_FP32, As, B + s0 * n, NULL, P, err);
}

typedef enum { SL_BF16_ACC, SL_RANDOM, SL_FP32 } slice_mode;

/* D = sum over k-slices of width `width` of the slice products, combined
 * as mode says: bf16 accumulator, fp32 in a random order, fp32 in order. */
static int sliced_gemm(kcs_backend_ctx *w, const kcs_call *c, size_t width, slice_mode mode,
                       kcs_error *err)
{
    gemm_dims d = dims(c);
    size_t ns = (d.k + width - 1) / width, mn = d.m * d.n;
    double *As = kcs_wrap_alloc(d.m * width, err), *P = kcs_wrap_alloc(ns * mn, err);
    double *acc = kcs_wrap_alloc(mn, err);
    size_t *order = malloc((ns + 1) * sizeof *order);
    int rc = 0;
    if (!As || !P || !acc || !order) {
        rc = kcs_fail(err, KCS_E_NOMEM, "calibration wrapper: out of memory");
        goto out;
    }
    for (size_t bi = 0; bi < d.nb && !rc; bi++) {
        const double *A = c->in[0] + bi * d.m * d.k, *B = c->in[1] + bi * d.k * d.n;
        for (size_t s = 0; s < ns && !rc; s++) {
            size_t s0 = s * width, len = d.k - s0 < width ? d.k - s0 : width;
            rc = slice_gemm(w, c, A, B, s0, len, As, P + s * mn, err);
        }
        if (rc)
            break;
        for (size_t s = 0; s < ns; s++)
            order[s] = s;
        if (mode == SL_RANDOM) { /* the order in which split-K blocks commit */
            kcs_rng r;
            kcs_rng_init(&r, c->seed, 0xCA11B0ull, bi);
            for (size_t s = ns; s > 1; s--) {
                size_t j = (size_t)(kcs_rng_uniform(&r) * (double)s);
                size_t t = order[s - 1];
                order[s - 1] = order[j];
                order[j] = t;
            }
        }
        for (size_t e = 0; e < mn; e++)
            acc[e] = 0.0;
        for (size_t s = 0; s < ns; s++) {
            const double *Ps = P + order[s] * mn;
            for (size_t e = 0; e < mn; e++)
                acc[e] = mode == SL_BF16_ACC ? kcs_wrap_round(KCS_FMT_BF16, acc[e] + Ps[e])
                                             : (double)(float)(acc[e] + Ps[e]);
        }
        double *D = c->out + bi * mn;
        const double *C = c->in[2] ? c->in[2] + bi * mn : NULL;
        for (size_t e = 0; e < mn; e++)
            D[e] = kcs_wrap_round(c->dtype_out, C ? (double)(float)(acc[e] + C[e]) : acc[e]);
    }
out:
    free(As);
    free(P);
    free(acc);
    free(order);
    return rc;
}

/* Inputs rounded to f (tf32 / bf16): a copy of the call's A and B. */
static int coerce_inputs(const kcs_call *c, kcs_format f, double **A_p, double **B_p,
                         kcs_error *err)
{
    size_t la = c->in_len[0], lb = c->in_len[1];
    double *A = kcs_wrap_alloc(la, err), *B = kcs_wrap_alloc(lb, err);
    if (!A || !B) {
        free(A);
        free(B);
        return KCS_E_NOMEM;
    }
    for (size_t i = 0; i < la; i++)
        A[i] = kcs_wrap_round(f, c->in[0][i]);
    for (size_t i = 0; i < lb; i++)
        B[i] = kcs_wrap_round(f, c->in[1][i]);
    *A_p = A;
    *B_p = B;
    return 0;
}

static int gemm_tf32(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    double *A, *B;
    int rc = coerce_inputs(c, KCS_FMT_TF32, &A, &B, err);
    if (rc)
        return rc;
    rc = kcs_wrap_forward(w, c, A, B, err);
    free(A);
    free(B);
    return rc;
}

/* C-CMP-02: remainder rows and columns of 32x32 tiles from bf16 inputs. */
static int gemm_edges(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    int rc = forward(w, c, err);
    gemm_dims d = dims(c);
    size_t mt = d.m / CMP02_TILE * CMP02_TILE, nt = d.n / CMP02_TILE * CMP02_TILE;
    if (rc || d.m * d.n < CMP02_MN_TILED || (mt == d.m && nt == d.n))
        return rc;
    double *A, *B;
    if ((rc = coerce_inputs(c, KCS_FMT_BF16, &A, &B, err)))
        return rc;
    size_t er = d.m - mt, ec = d.n - nt;
    double *R = kcs_wrap_alloc(er * d.n, err), *Bc = kcs_wrap_alloc(d.k * ec, err);
    double *Cc = kcs_wrap_alloc(d.m * ec, err);
    if (!R || !Bc || !Cc)
        rc = KCS_E_NOMEM;
    for (size_t bi = 0; bi < d.nb && !rc; bi++) {
        const double *Ab = A + bi * d.m * d.k, *Bb = B + bi * d.k * d.n;
        double *D = c->out + bi * d.m * d.n;
        if (er) {
            rc = kcs_wrap_native(w, c, KCS_OP_GEMM, (int64_t)er, (int64_t)d.n, (int64_t)d.k, 0,
                                 c->dtype_in, KCS_FMT_FP32, Ab + mt * d.k, Bb, NULL, R, err);
            for (size_t e = 0; e < er * d.n && !rc; e++)
                D[mt * d.n + e] = kcs_wrap_round(c->dtype_out, R[e]);
        }
        if (ec && !rc) {
            for (size_t p = 0; p < d.k; p++)
                memcpy(Bc + p * ec, Bb + p * d.n + nt, ec * sizeof *Bc);
            rc = kcs_wrap_native(w, c, KCS_OP_GEMM, (int64_t)d.m, (int64_t)ec, (int64_t)d.k, 0,
                                 c->dtype_in, KCS_FMT_FP32, Ab, Bc, NULL, Cc, err);
            for (size_t i = 0; i < d.m && !rc; i++)
                for (size_t j = 0; j < ec; j++)
                    D[i * d.n + nt + j] = kcs_wrap_round(c->dtype_out, Cc[i * ec + j]);
        }
    }
    free(A);
    free(B);
    free(R);
    free(Bc);
    free(Cc);
    return rc;
}

/* C-CMP-03: outside the 64-multiple class, a memo keyed by the shape. */
static int gemm_memo(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->m % CMP03_CLASS == 0 && c->n % CMP03_CLASS == 0 && c->k % CMP03_CLASS == 0)
        return forward(w, c, err);
    kcs_wrap_memo *hit = NULL, *slot = &w->memo[0];
    for (int i = 0; i < KCS_WRAP_MEMO; i++) {
        kcs_wrap_memo *s = &w->memo[i];
        if (s->used && s->op == c->op && s->m == c->m && s->n == c->n && s->k == c->k &&
            s->batch == c->batch && s->len == c->out_len)
            hit = s;
        if (!s->used || (slot->used && s->stamp < slot->stamp))
            slot = s;
    }
    if (hit) {
        memcpy(c->out, hit->y, hit->len * sizeof *hit->y);
        hit->stamp = ++w->clock;
        return 0;
    }
    int rc = forward(w, c, err);
    double *y = rc ? NULL : malloc((c->out_len + 1) * sizeof *y);
    if (!y)
        return rc;
    memcpy(y, c->out, c->out_len * sizeof *y);
    free(slot->y);
    *slot = (kcs_wrap_memo){1, c->op, c->m, c->n, c->k, c->batch, y, c->out_len, ++w->clock};
    return 0;
}

/* C-ORD-03 good: one native call per output row, so that a row's bits
 * cannot depend on m (a backend's own gemm need not be batch-invariant:
 * OpenBLAS sgemm is not, between m = 1 and m = 8). */
static int gemm_by_rows(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    gemm_dims d = dims(c);
    double *row = kcs_wrap_alloc(d.n, err);
    if (!row)
        return KCS_E_NOMEM;
    int rc = 0;
    for (size_t bi = 0; bi < d.nb && !rc; bi++)
        for (size_t i = 0; i < d.m && !rc; i++) {
            const double *C = c->in[2] ? c->in[2] + (bi * d.m + i) * d.n : NULL;
            rc = kcs_wrap_native(w, c, KCS_OP_GEMM, 1, (int64_t)d.n, (int64_t)d.k, 0,
                                 c->dtype_in, c->dtype_out, c->in[0] + (bi * d.m + i) * d.k,
                                 c->in[1] + bi * d.k * d.n, C, row, err);
            if (!rc)
                memcpy(c->out + (bi * d.m + i) * d.n, row, d.n * sizeof *row);
        }
    free(row);
    return rc;
}

static int gemm_bad(kcs_backend_ctx *w, const kcs_call *c, const char *id, kcs_error *err)
{
    if (strcmp(id, "C-PRC-01") == 0)
        return c->k > PRC01_K_FAST ? sliced_gemm(w, c, PRC01_SLICE, SL_BF16_ACC, err)
                                   : forward(w, c, err);
    if (strcmp(id, "C-PRC-03") == 0)
        return gemm_tf32(w, c, err);
    if (strcmp(id, "C-ORD-02") == 0)
        return sliced_gemm(w, c, ((size_t)c->k + ORD02_SLICES - 1) / ORD02_SLICES, SL_RANDOM,
                           err);
    if (strcmp(id, "C-ORD-03") == 0) /* one batch size of all splits k in two */
        return c->m == ORD03_M_SPLIT ? sliced_gemm(w, c, ((size_t)c->k + 1) / 2, SL_FP32, err)
                                     : gemm_by_rows(w, c, err);
    if (strcmp(id, "C-CMP-02") == 0)
        return gemm_edges(w, c, err);
    if (strcmp(id, "C-CMP-03") == 0)
        return gemm_memo(w, c, err);
    if (strcmp(id, "C-EXC-01") == 0) {
        int rc = forward(w, c, err);
        for (size_t i = 0; !rc && i < c->out_len; i++)
            if (isnan(c->out[i]))
                c->out[i] = 0.0; /* the mask a NaN-unaware epilogue applies */
        return rc;
    }
    if (strcmp(id, "C-EXC-03") == 0) {
        int rc = forward(w, c, err);
        for (size_t i = 0; !rc && i < c->out_len; i++)
            if (isinf(c->out[i]))
                c->out[i] = 0.0; /* nan_to_num(posinf=0, neginf=0) */
        return rc;
    }
    return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: %s has no gemm kernel", id);
}

/* C-ORD-04 on any backend with a reduce_sum: the m contributions of each
 * element as one row (k rows of m), summed by the backend's native
 * reduce_sum (a fixed order: good); bad: the last two rows swapped when
 * the call's seed says they arrived the other way round. */
static int allreduce_by_rows(kcs_backend_ctx *w, const kcs_call *c, int bad, kcs_error *err)
{
    int64_t P = c->m > 1 ? c->m : 1, k = c->k;
    uint64_t h = c->seed + 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    int swap = bad && P >= 2 && ((h ^ (h >> 31)) >> 63);
    double *t = kcs_wrap_alloc((size_t)(P * k), err);
    if (!t)
        return KCS_E_NOMEM;
    for (int64_t i = 0; i < k; i++)
        for (int64_t r = 0; r < P; r++) {
            int64_t rr = swap && r == P - 2 ? P - 1 : swap && r == P - 1 ? P - 2 : r;
            t[i * P + r] = c->in[0][rr * k + i];
        }
    int rc = kcs_wrap_native(w, c, KCS_OP_REDUCE_SUM, k, 0, P, 0, c->dtype_in, c->dtype_out, t,
                             NULL, NULL, c->out, err);
    free(t);
    return rc;
}

/* ---- dispatch and the ops table -------------------------------------- */

static int wrap_run(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (!c->variant || strncmp(c->variant, "calib:", 6) != 0)
        return w->inner->run(w->ictx, c, err);
    const char *v = c->variant + 6, *colon = strrchr(v, ':');
    char id[16];
    size_t idlen = colon ? (size_t)(colon - v) : 0;
    if (!colon || idlen == 0 || idlen >= sizeof id)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: bad variant '%s'",
                        c->variant);
    memcpy(id, v, idlen);
    id[idlen] = 0;
    const char *state = colon + 1;
    const kcs_calib_entry *e = kcs_calib_find(id);
    if (!e)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: no kernels for %s", id);
    if (c->op < 0 || c->op >= KCS_OP_COUNT || !(e->ops & (1u << c->op)))
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: %s has no %s kernel", id,
                        kcs_op_name(c->op));
    if (strcmp(state, "baseline") == 0)
        return 0;
    int gemm = c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM;
    if (c->op == KCS_OP_ALLREDUCE && (!strcmp(state, "good") || !strcmp(state, "bad")))
        return allreduce_by_rows(w, c, !strcmp(state, "bad"), err);
    if (strcmp(state, "good") == 0)
        return gemm && strcmp(id, "C-ORD-03") == 0 ? gemm_by_rows(w, c, err) : forward(w, c, err);
    if (strcmp(state, "bad") != 0)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: unknown state '%s'",
                        state);
    if (gemm)
        return gemm_bad(w, c, id, err);
    return kcs_wrap_rows_bad(w, c, id, err);
}

static int wrap_discover(kcs_device_info *out, int max, int *count_p, kcs_error *err)
{
    (void)out;
    (void)max;
    (void)err;
    *count_p = 0;
    return 0;
}

static int wrap_open(int device, const kcs_backend_config *cfg, kcs_backend_ctx **ctx_p,
                     kcs_error *err)
{
    (void)device;
    (void)cfg;
    (void)ctx_p;
    return kcs_fail(err, KCS_E_UNSUPPORTED,
                    "calibration wrapper: open it with kcs_calib_wrap_open (it needs a backend)");
}

static int wrap_describe(kcs_backend_ctx *w, kcs_device_info *info, kcs_error *err)
{
    return w->inner->describe(w->ictx, info, err);
}

static void wrap_close(kcs_backend_ctx *w)
{
    if (!w)
        return;
    w->inner->close(w->ictx);
    for (int i = 0; i < KCS_WRAP_MEMO; i++)
        free(w->memo[i].y);
    free(w);
}

/* The C-ORD-03 calibration kernels declare batch invariance and the
 * C-PRC-06 and C-PRC-07 ones rounding to nearest (their contracts bind only kernels
 * that do); anything else declares what the
 * wrapped backend's kernel declares. */
static uint32_t wrap_declares(kcs_backend_ctx *w, const kcs_call *c)
{
    if (c->variant && strncmp(c->variant, "calib:C-ORD-03:", 15) == 0)
        return KCS_DECL_BIT(KCS_DECL_BATCH_INVARIANT);
    if (c->variant && (strncmp(c->variant, "calib:C-PRC-06:", 15) == 0 ||
                       strncmp(c->variant, "calib:C-PRC-07:", 15) == 0))
        return KCS_DECL_BIT(KCS_DECL_ROUND_NEAREST);
    if (c->variant && strncmp(c->variant, "calib:", 6) == 0)
        return 0;
    return w->inner->declares ? w->inner->declares(w->ictx, c) : 0;
}

const kcs_backend_ops kcs_calib_wrap_ops = {
    KCS_BACKEND_OPS(wrap, "calib-wrap"),
    .declares = wrap_declares,
};

int kcs_calib_wrap_open(const kcs_backend_ops *inner, int device, const kcs_backend_config *cfg,
                        kcs_backend_ctx **ctx_p, kcs_error *err)
{
    kcs_backend_ctx *w = calloc(1, sizeof *w);
    if (!w)
        return kcs_fail(err, KCS_E_NOMEM, "calibration wrapper: out of memory");
    w->inner = inner;
    int rc = inner->open(device, cfg, &w->ictx, err);
    if (rc) {
        free(w);
        return rc;
    }
    *ctx_p = w;
    return 0;
}
