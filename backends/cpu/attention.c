/* CPU attention: O = softmax(Q K^T * scale) V per batch, Q m×k, K and V
 * n×k, O m×k (row-major, batch-major), scale = RN_w(1.0 / sqrt((double)k))
 * in the working format w (cpu/work.h): the expression of every backend and
 * the oracle (in fp64 it can be 1 ulp from the correctly rounded value). Scores s_ij = RN_w(sum_t q_it k_jt * scale).
 *   own:    unfused composition, every reduction under call->schedule
 *           into call->acc: S = QK^T (length k), P = softmax(S) row-wise
 *           (cpu/softmax.c, denominator of length n), O = PV (length n;
 *           the terms p_ij v_jc are exact in double for inputs of <= 24
 *           bits, so each addition is an FMA into the accumulator).
 *   native: the same composition on OpenBLAS: S = sgemm/dgemm(Q, K^T)
 *           with alpha = scale, the native softmax (sasum/dasum
 *           denominator), O = sgemm/dgemm(P, V).
 *   fused:  streaming online softmax (FlashAttention-2 style) over key
 *           blocks of B = attrs "block=N" (default 64) keys: per query row
 *           a running max mx, running sum l and running output o[0..k),
 *           all in call->acc:
 *             s_j    = score (its dot under call->schedule)
 *             mnew   = max(mx, max_block s_j)
 *             corr   = exp_w(RN_w(mx - mnew))          (0 for the first block)
 *             p_j    = exp_w(RN_w(s_j - mnew))
 *             l      = RN_acc(RN_acc(l * corr) + [sum_block p_j]_acc)
 *             o_c    = RN_acc(RN_acc(o_c * corr) + [sum_block p_j v_jc]_acc)
 *           where [.]_acc is a sequential sum rounded into acc at every
 *           addition; at the end O_ic = RN_w(o_c / l). */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "attrs.h"
#include "cpu.h"
#include "work.h"

#define ATTN_BLOCK_DEFAULT 64

/* A row's work buffers, one block: terms and scratch of max(n, k) + 1
 * values, s, p and e of n + 1, o of k + 1. */
typedef struct attn_bufs {
    double *terms, *scratch, *s, *p, *e, *o;
} attn_bufs;

static void bufs_free(attn_bufs *b)
{
    free(b->terms);
}

static int bufs_alloc(attn_bufs *b, size_t n, size_t k)
{
    size_t nk = (n > k ? n : k) + 1;
    b->terms = malloc((2 * nk + 3 * (n + 1) + k + 1) * sizeof *b->terms);
    if (!b->terms)
        return -1;
    b->scratch = b->terms + nk;
    b->s = b->scratch + nk;
    b->p = b->s + n + 1;
    b->e = b->p + n + 1;
    b->o = b->e + n + 1;
    return 0;
}

static double attn_scale(kcs_format w, int64_t k)
{
    return kcs_cpu_wround(w, 1.0 / sqrt((double)(k > 0 ? k : 1)));
}

/* s_ij for one query row q against key row kr. */
static double score(const kcs_call *c, const double *q, const double *kr, double scale,
                    attn_bufs *b, uint64_t seed)
{
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    for (int64_t t = 0; t < c->k; t++)
        b->terms[t] = q[t] * kr[t];
    double s = kcs_cpu_sum(b->terms, c->k, &c->schedule, &c->acc, seed, b->scratch);
    return kcs_cpu_wround(w, s * scale);
}

static void row_unfused(const kcs_call *c, int64_t bi, int64_t i, attn_bufs *b)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    double scale = attn_scale(w, c->k);
    const double *q = c->in[0] + ((size_t)bi * m + (size_t)i) * k;
    const double *K = c->in[1] + (size_t)bi * n * k, *V = c->in[2] + (size_t)bi * n * k;
    uint64_t row = (uint64_t)bi * (uint64_t)m + (uint64_t)i;
    for (size_t j = 0; j < n; j++)
        b->s[j] = score(c, q, K + j * k, scale, b, kcs_cpu_row_seed(c, row, j));
    kcs_cpu_softmax_row(b->s, c->n, w, &c->schedule, &c->acc,
                        kcs_cpu_row_seed(c, row, n + 1), b->e, b->scratch, b->p);
    for (size_t col = 0; col < k; col++) {
        for (size_t j = 0; j < n; j++)
            b->terms[j] = b->p[j] * V[j * k + col];
        double o = kcs_cpu_sum(b->terms, c->n, &c->schedule, &c->acc,
                               kcs_cpu_row_seed(c, row, n + 2 + col), b->scratch);
        c->out[((size_t)bi * m + (size_t)i) * k + col] = kcs_cpu_out(c, o);
    }
}

static void row_fused(const kcs_call *c, int64_t bi, int64_t i, int64_t B, attn_bufs *b)
{
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    const kcs_acc *acc = &c->acc;
    double scale = attn_scale(w, c->k);
    const double *q = c->in[0] + ((size_t)bi * m + (size_t)i) * k;
    const double *K = c->in[1] + (size_t)bi * n * k, *V = c->in[2] + (size_t)bi * n * k;
    uint64_t row = (uint64_t)bi * (uint64_t)m + (uint64_t)i;
    double mx = -INFINITY, l = 0.0;
    for (size_t col = 0; col < k; col++)
        b->o[col] = 0.0;
    for (size_t j0 = 0; j0 < n; j0 += (size_t)B) {
        size_t cnt = n - j0 < (size_t)B ? n - j0 : (size_t)B;
        double bm = -INFINITY;
        for (size_t j = j0; j < j0 + cnt; j++) {
            b->s[j] = score(c, q, K + j * k, scale, b, kcs_cpu_row_seed(c, row, j));
            bm = fmax(bm, b->s[j]);
        }
        double mnew = fmax(mx, bm);
        double corr = j0 == 0 ? 0.0 : kcs_cpu_wexp(w, kcs_cpu_wround(w, mx - mnew));
        double bl = 0.0;
        for (size_t j = j0; j < j0 + cnt; j++) {
            b->p[j] = kcs_cpu_wexp(w, kcs_cpu_wround(w, b->s[j] - mnew));
            bl = kcs_acc_add(acc, bl, b->p[j]);
        }
        l = kcs_acc_add(acc, kcs_acc_round(acc, l * corr), bl);
        for (size_t col = 0; col < k; col++) {
            double bo = 0.0;
            for (size_t j = j0; j < j0 + cnt; j++)
                bo = kcs_acc_add(acc, bo, b->p[j] * V[j * k + col]);
            b->o[col] = kcs_acc_add(acc, kcs_acc_round(acc, b->o[col] * corr), bo);
        }
        mx = mnew;
    }
    for (size_t col = 0; col < k; col++)
        c->out[((size_t)bi * m + (size_t)i) * k + col] =
            kcs_cpu_out(c, kcs_cpu_wround(w, b->o[col] / l));
}

/* native: one batch through BLAS (S and P in the working format). */
static int batch_native(const kcs_call *c, int64_t bi, kcs_error *err)
{
    int m = (int)c->m, n = (int)c->n, k = (int)c->k;
    size_t mk = (size_t)m * (size_t)k, nk = (size_t)n * (size_t)k, mn = (size_t)m * (size_t)n;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    double scale = attn_scale(w, c->k);
    const double *Q = c->in[0] + (size_t)bi * mk, *K = c->in[1] + (size_t)bi * nk;
    const double *V = c->in[2] + (size_t)bi * nk;
    double *O = c->out + (size_t)bi * mk;
    int f64 = w == KCS_FMT_FP64;
    size_t fl = f64 ? 1 : mk + 2 * nk + mn + mk + (size_t)n;
    double *S = malloc((mn + 1) * sizeof *S), *P = malloc((mn + 1) * sizeof *P);
    double *e = malloc(((size_t)n + 1) * sizeof *e), *R = malloc((mk + 1) * sizeof *R);
    float *fbuf = malloc((fl + 1) * sizeof *fbuf);
    if (!S || !P || !e || !R || !fbuf) {
        free(S);
        free(P);
        free(e);
        free(R);
        free(fbuf);
        return kcs_fail(err, KCS_E_NOMEM, "cpu attention: out of memory");
    }
    if (f64) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, scale, Q, k, K, k, 0.0, S,
                    n);
        for (int i = 0; i < m; i++)
            kcs_cpu_softmax_row_native(S + (size_t)i * n, n, w, e, NULL, P + (size_t)i * n);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, n, 1.0, P, n, V, k, 0.0, R,
                    k);
    } else {
        float *fq = fbuf, *fk = fq + mk, *fv = fk + nk, *fs = fv + nk, *fo = fs + mn,
              *fe = fo + mk;
        for (size_t t = 0; t < mk; t++)
            fq[t] = (float)Q[t];
        for (size_t t = 0; t < nk; t++) {
            fk[t] = (float)K[t];
            fv[t] = (float)V[t];
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, (float)scale, fq, k, fk, k,
                    0.0f, fs, n);
        for (size_t t = 0; t < mn; t++)
            S[t] = fs[t];
        for (int i = 0; i < m; i++)
            kcs_cpu_softmax_row_native(S + (size_t)i * n, n, w, e, fe, P + (size_t)i * n);
        for (size_t t = 0; t < mn; t++)
            fs[t] = (float)P[t];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, n, 1.0f, fs, n, fv, k, 0.0f,
                    fo, k);
        for (size_t t = 0; t < mk; t++)
            R[t] = fo[t];
    }
    for (size_t t = 0; t < mk; t++)
        O[t] = kcs_cpu_out(c, R[t]);
    free(S);
    free(P);
    free(e);
    free(R);
    free(fbuf);
    return 0;
}

static int block_attr(const kcs_call *c, int64_t *B_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "block", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "cpu attention: attrs '%s' are malformed", c->attrs);
    *B_p = ATTN_BLOCK_DEFAULT;
    if (rc == 1) {
        char *end;
        errno = 0;
        long long b = strtoll(v, &end, 10);
        if (errno || *end || b <= 0)
            return kcs_fail(err, KCS_E_INVAL, "cpu attention: block=%s is not a positive integer",
                            v);
        *B_p = b;
    }
    return 0;
}

int kcs_cpu_attention(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    int v = kcs_cpu_variant(c, 1, err);
    if (v < 0)
        return v;
    int64_t nb = c->batch > 0 ? c->batch : 1, B = 0;
    int rc = 0;
    if (v == 2 && (rc = block_attr(c, &B, err)))
        return rc;
    if (c->n < 1)
        return kcs_fail(err, KCS_E_INVAL, "cpu attention: needs n >= 1 keys (n=%lld)",
                        (long long)c->n);
    if (c->m == 0 || c->k == 0)
        return 0;
    if (v == 0) {
        if (c->m > INT_MAX / (c->k > c->n ? c->k : (c->n ? c->n : 1)) ||
            c->n > INT_MAX / c->k)
            return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: attention native: shape beyond BLAS "
                            "int range");
        for (int64_t bi = 0; bi < nb && !rc; bi++)
            rc = batch_native(c, bi, err);
        return rc;
    }
    attn_bufs b = {0};
    if (bufs_alloc(&b, (size_t)c->n, (size_t)c->k))
        return kcs_fail(err, KCS_E_NOMEM, "cpu attention: out of memory");
    for (int64_t bi = 0; bi < nb; bi++)
        for (int64_t i = 0; i < c->m; i++) {
            if (v == 1)
                row_unfused(c, bi, i, &b);
            else
                row_fused(c, bi, i, B, &b);
        }
    bufs_free(&b);
    return 0;
}
