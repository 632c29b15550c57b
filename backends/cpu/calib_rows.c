/* Calibration kernels of the row-wise and reduction contracts
 * (cpu/calib.h): softmax and layernorm (C-PRC-02), reduce_sum (C-PRC-04,
 * C-ORD-01), fused attention (C-CMP-01), gather (C-EXC-02) and norm
 * (C-PRC-08, at the end of the file). Every
 * kernel computes in fp32: elementwise steps rounded once to fp32, sums
 * accumulated in fp32 in index order; bad differs from good only by its
 * defect. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "cpu.h"
#include "calib.h"
#include "work.h"

#define LN_EPS 1e-5f
#define ORD01_K_BLOCKED 256 /* longer rows take the blocked multi-thread path */
#define ORD01_BLOCK 64

static double out_round(const kcs_call *c, double x)
{
    return kcs_format_round(c->dtype_out, x, KCS_ROUND_DEFAULT);
}

/* ---- softmax ---------------------------------------------------------- */

static void softmax_row(const double *x, int64_t k, int stable, double *y)
{
    float mx = -INFINITY;
    if (stable)
        for (int64_t t = 0; t < k; t++)
            mx = fmaxf(mx, (float)x[t]);
    float s = 0.0f;
    for (int64_t t = 0; t < k; t++) {
        float e = stable ? expf((float)x[t] - mx) : expf((float)x[t]);
        y[t] = e;
        s += e;
    }
    for (int64_t t = 0; t < k; t++)
        y[t] = (float)y[t] / s;
}

/* ---- layernorm (gamma in[1], beta in[2]; either may be NULL) ---------- */

static void layernorm_row(const double *x, const double *g, const double *b, int64_t k,
                          int two_pass, double *y)
{
    float kk = (float)k, s = 0.0f, mu, var;
    for (int64_t t = 0; t < k; t++)
        s += (float)x[t];
    mu = s / kk;
    if (two_pass) {
        float q = 0.0f;
        for (int64_t t = 0; t < k; t++) {
            float d = (float)x[t] - mu;
            q = fmaf(d, d, q);
        }
        var = q / kk;
    } else { /* one pass: E[x^2] - E[x]^2 */
        float q = 0.0f;
        for (int64_t t = 0; t < k; t++)
            q = fmaf((float)x[t], (float)x[t], q);
        var = q / kk - mu * mu;
    }
    kcs_cpu_calib_ln_scale(x, g, b, k, mu, sqrtf(var + LN_EPS), y);
}

static void rows_row(const kcs_call *c, const double *x, double *y, const void *stable)
{
    if (c->op == KCS_OP_SOFTMAX)
        softmax_row(x, c->k, *(const int *)stable, y);
    else
        layernorm_row(x, c->in[1], c->in[2], c->k, *(const int *)stable, y);
}

void kcs_cpu_calib_ln_scale(const double *x, const double *g, const double *b, int64_t k,
                            float mu, float den, double *y)
{
    for (int64_t t = 0; t < k; t++) {
        float z = ((float)x[t] - mu) / den;
        if (g)
            z = z * (float)g[t];
        if (b)
            z = z + (float)b[t];
        y[t] = z;
    }
}

int kcs_cpu_calib_each_row(const kcs_call *c, kcs_cpu_calib_row_fn fn, const void *arg,
                           kcs_error *err)
{
    size_t k = (size_t)c->k;
    double *y = malloc((k + 1) * sizeof *y);
    if (!y)
        return kcs_fail(err, KCS_E_NOMEM, "cpu calib %s: out of memory", kcs_op_name(c->op));
    for (int64_t i = 0; i < c->m; i++) {
        fn(c, c->in[0] + (size_t)i * k, y, arg);
        for (size_t t = 0; t < k; t++)
            c->out[(size_t)i * k + t] = out_round(c, y[t]);
    }
    free(y);
    return 0;
}

/* ---- reduce_sum ------------------------------------------------------- */

typedef enum { R_GOOD, R_FTZ, R_BF16_PARTIALS } reduce_kind;

static float ftz(float x)
{
    return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x;
}

static double sum_row(const double *x, int64_t k, reduce_kind kind)
{
    if (kind == R_BF16_PARTIALS && k > ORD01_K_BLOCKED) {
        float total = 0.0f;
        for (int64_t s = 0; s < k; s += ORD01_BLOCK) {
            int64_t len = k - s < ORD01_BLOCK ? k - s : ORD01_BLOCK;
            float part = (float)sum_row(x + s, len, R_GOOD);
            /* the block partial goes through a bf16 workspace */
            total += (float)kcs_format_round(KCS_FMT_BF16, part, KCS_ROUND_DEFAULT);
        }
        return total;
    }
    float s = 0.0f;
    for (int64_t t = 0; t < k; t++) {
        if (kind == R_FTZ) /* DAZ on the operand, FTZ on every result */
            s = ftz(s + ftz((float)x[t]));
        else
            s += (float)x[t];
    }
    return s;
}

static int reduce_op(const kcs_call *c, reduce_kind kind)
{
    for (int64_t i = 0; i < c->m; i++)
        c->out[i] = out_round(c, sum_row(c->in[0] + (size_t)i * (size_t)c->k, c->k, kind));
    return 0;
}

/* ---- attention: O = softmax(Q K^T / sqrt(k)) V, fused per query row --- */

static int attention_op(const kcs_call *c, int narrow_p, kcs_error *err)
{
    if (c->n < 1)
        return kcs_fail(err, KCS_E_INVAL, "cpu calib attention: needs n >= 1 keys");
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    size_t nb = c->batch > 0 ? (size_t)c->batch : 1;
    float *p = malloc((n + 1) * sizeof *p), *o = malloc((k + 1) * sizeof *o);
    if (!p || !o) {
        free(p);
        free(o);
        return kcs_fail(err, KCS_E_NOMEM, "cpu calib attention: out of memory");
    }
    float scale = (float)(1.0 / sqrt((double)(k ? k : 1)));
    for (size_t bi = 0; bi < nb; bi++) {
        const double *Q = c->in[0] + bi * m * k, *K = c->in[1] + bi * n * k;
        const double *V = c->in[2] + bi * n * k;
        for (size_t i = 0; i < m; i++) {
            float mx = -INFINITY, l = 0.0f;
            for (size_t j = 0; j < n; j++) {
                float s = 0.0f;
                for (size_t t = 0; t < k; t++)
                    s = fmaf((float)Q[i * k + t], (float)K[j * k + t], s);
                p[j] = s * scale;
                mx = fmaxf(mx, p[j]);
            }
            for (size_t j = 0; j < n; j++) {
                p[j] = expf(p[j] - mx);
                l += p[j];
            }
            for (size_t t = 0; t < k; t++)
                o[t] = 0.0f;
            for (size_t j = 0; j < n; j++) {
                /* bad: P goes to the PV product as bf16 (tensor-core input) */
                float pj = narrow_p ? (float)kcs_format_round(KCS_FMT_BF16, p[j],
                                                              KCS_ROUND_DEFAULT)
                                    : p[j];
                for (size_t t = 0; t < k; t++)
                    o[t] = fmaf(pj, (float)V[j * k + t], o[t]);
            }
            for (size_t t = 0; t < k; t++)
                c->out[(bi * m + i) * k + t] = out_round(c, o[t] / l);
        }
    }
    free(p);
    free(o);
    return 0;
}

/* ---- gather: good is the backend's own gather (raise/clamp/zero) ------ */

static int gather_bad(const kcs_call *c, kcs_error *err)
{
    if (c->m < 1)
        return kcs_fail(err, KCS_E_INVAL, "cpu calib gather: empty table");
    size_t k = (size_t)c->k;
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        if (!(x == floor(x)) || isinf(x))
            return kcs_fail(err, KCS_E_INVAL, "cpu calib gather: index %g is not an integer", x);
        /* an out-of-range index is answered, whatever oob= declares */
        int64_t row = (int64_t)fmod(x, (double)c->m);
        if (row < 0)
            row += c->m;
        for (size_t t = 0; t < k; t++)
            c->out[(size_t)r * k + t] = out_round(c, c->in[0][(size_t)row * k + t]);
    }
    return 0;
}

/* Whether the call's seed says "the last two contributions arrived the
 * other way round" (a bit of a splitmix64 hash of the seed). */
static int arrival_swapped(uint64_t seed)
{
    uint64_t h = seed + 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return (int)((h ^ (h >> 31)) >> 63);
}

/* C-ORD-04: the m ranks' contributions of each element summed in fp32 in
 * rank order (good). bad: the same, except that the last two
 * contributions are taken in the order they "arrived", drawn from the
 * call's seed: a single swap of two additions in about half the runs, as
 * accurate as the good order, but not reproducible. */
static int allreduce_op(const kcs_call *c, int bad)
{
    int64_t P = c->m > 1 ? c->m : 1, k = c->k;
    int swap = bad && P >= 2 && arrival_swapped(c->seed);
    for (int64_t i = 0; i < k; i++) {
        float s = 0.0f;
        for (int64_t r = 0; r < P; r++) {
            int64_t rr = swap && r == P - 2 ? P - 1 : swap && r == P - 1 ? P - 2 : r;
            s += (float)c->in[0][rr * k + i];
        }
        c->out[i] = kcs_cpu_out(c, s);
    }
    return 0;
}

int kcs_cpu_calib_rows(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    int good = state == KCS_CALIB_GOOD;
    switch (c->op) {
    case KCS_OP_SOFTMAX:
    case KCS_OP_LAYERNORM:
        return kcs_cpu_calib_each_row(c, rows_row, &good, err);
    case KCS_OP_REDUCE_SUM:
        if (good)
            return reduce_op(c, R_GOOD);
        return reduce_op(c, strcmp(id, "C-PRC-04") == 0 ? R_FTZ : R_BF16_PARTIALS);
    case KCS_OP_ATTENTION:
        return attention_op(c, !good, err);
    case KCS_OP_GATHER:
        if (good) {
            kcs_call native = *c;
            native.variant = "native";
            return kcs_cpu_gather(NULL, &native, err);
        }
        return gather_bad(c, err);
    case KCS_OP_ALLREDUCE:
        return allreduce_op(c, !good);
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no %s calibration kernel", id,
                        kcs_op_name(c->op));
    }
}

/* ---- norm (C-PRC-08) ------------------------------------------------- */

/* C-PRC-08's calibration kernels: the 2-norm of each row.
 *   good: the fp32 kernel: each square added to an fp32 running sum with
 *         one rounding (an FMA, s = fl(s + x_t^2)), in order, then one
 *         sqrtf: bit for bit the own kernel with acc fp32, sequential.
 *   bad:  the same, except that for k > 64 the running sum is rounded to
 *         bf16 after every add (a 16-bit accumulator while fp32 is
 *         declared; the own kernel with acc bf16). Rows of at most 64
 *         elements are the good kernel's, so the plain test (small k)
 *         cannot tell them apart, and neither can any check there. */
#define PRC08_K_FAST 64

int kcs_cpu_calib_norm(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    if (c->op != KCS_OP_NORM)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no %s calibration kernel", id,
                        kcs_op_name(c->op));
    const kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0};
    const kcs_acc fp32 = {KCS_FMT_FP32, 0, 0}, bf16 = {KCS_FMT_BF16, 0, 0};
    const kcs_acc *acc = state == KCS_CALIB_BAD && c->k > PRC08_K_FAST ? &bf16 : &fp32;
    size_t k = (size_t)c->k;
    double *sq, *scratch;
    if (kcs_cpu_alloc2(k, &sq, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu: %s norm: out of memory (k=%zu)", id, k);
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        for (size_t t = 0; t < k; t++)
            sq[t] = x[t] * x[t]; /* exact: fp32 inputs square into 48 bits */
        double s = kcs_cpu_sum(sq, c->k, &seq, acc, 0, scratch);
        c->out[i] = kcs_cpu_out(c, kcs_cpu_wsqrt(KCS_FMT_FP32, s));
    }
    free(sq);
    free(scratch);
    return 0;
}
