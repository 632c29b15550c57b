/* A catalogue of GEMM / reduce_sum / dot kernels that all DECLARE an fp32
 * accumulator, built once per accumulation mode (ACC_MODE, see
 * tests/plugin/CMakeLists.txt). Written only against include/kcs_plugin.h,
 * as an independent kernel author would. Conforming modes (every one must
 * pass C-PRC-01, C-PRC-03 and C-ORD-01 at every shape of their
 * preconditions):
 *   SEQ       fp32 running sum, p = 0..k-1
 *   PAIRWISE  fp32 products summed as a balanced binary tree
 *   SPLITK    4 fp32 partial sums of k/4 products each, then combined
 *   RZ        products and sums in fp32 rounding toward zero
 *             (fesetround(FE_TOWARDZERO); truncating matrix units)
 *   FP64      products and sums in double, one rounding to fp32
 * Non-conforming modes (each must FAIL them):
 *   BF16 / FP16  the running sum is rounded to bf16 / fp16 after every add
 *   BITS14       the running sum keeps a 14-bit significand (fp8 GEMM on H800)
 *   BITS16 / BITS18  16- / 18-bit running sums
 *   TF32      inputs rounded to 11 significand bits before the multiply
 *   BF16BLOCK fp32 sums of blocks of 32 products, block partials kept in bf16
 *   BF16IN    a bf16 running sum for bf16 inputs only (torch 1.13's CPU bf16
 *             matmul), fp32 for every other input format
 * Products a*b are exact in float for inputs of up to 12 significand bits;
 * otherwise rounded in the mode's rounding. */
#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_common.h"

enum { SEQ, PAIRWISE, SPLITK, RZ, FP64, BF16, FP16, BITS14, BITS16, BITS18, TF32, BF16BLOCK, BF16IN };

#ifndef ACC_MODE
#define ACC_MODE SEQ
#endif
#ifndef ACC_NAME
#define ACC_NAME "acc-seq"
#endif

/* Round a float to a p-bit significand, ties to even (fp32's range). */
static float round_bits(float x, int p)
{
    if (!isfinite(x) || x == 0.0f)
        return x;
    int e;
    frexpf(x, &e);
    double q = ldexp(1.0, e - p);
    return (float)(nearbyint((double)x / q) * q);
}

/* Round a float to fp16 (ties to even), kept as a float; overflow -> Inf. */
static float round_fp16(float x)
{
    if (!isfinite(x))
        return x;
    if (fabsf(x) >= 65520.0f)
        return x > 0 ? INFINITY : -INFINITY;
    if (fabsf(x) < 0x1p-14f) /* subnormal range: fixed spacing 2^-24 */
        return (float)(nearbyint((double)x * 0x1p24) * 0x1p-24);
    return round_bits(x, 11);
}

static int bf16_inputs; /* BF16IN: this call's inputs are bf16 */

static float narrow(float s)
{
    if (ACC_MODE == BF16IN)
        return bf16_inputs ? round_bits(s, 8) : s;
    switch (ACC_MODE) {
    case BF16: return round_bits(s, 8);
    case FP16: return round_fp16(s);
    case BITS14: return round_bits(s, 14);
    case BITS16: return round_bits(s, 16);
    case BITS18: return round_bits(s, 18);
    default: return s;
    }
}

static float pairwise(const float *t, size_t n)
{
    if (n == 1)
        return t[0];
    size_t h = n / 2;
    return pairwise(t, h) + pairwise(t + h, n - h);
}

/* One reduction of k terms t (products already formed). */
static float reduce(float *t, size_t k)
{
    if (k == 0)
        return 0.0f;
    switch (ACC_MODE) {
    case PAIRWISE: return pairwise(t, k);
    case SPLITK: {
        size_t chunk = (k + 3) / 4;
        float total = 0.0f;
        for (size_t s = 0; s < k; s += chunk) {
            float part = 0.0f;
            for (size_t p = s; p < k && p < s + chunk; p++)
                part += t[p];
            total += part;
        }
        return total;
    }
    case BF16BLOCK: {
        float total = 0.0f;
        for (size_t s = 0; s < k; s += 32) {
            float part = 0.0f;
            for (size_t p = s; p < k && p < s + 32; p++)
                part += t[p];
            total = round_bits(total + round_bits(part, 8), 8);
        }
        return total;
    }
    default: {
        float s = 0.0f;
        for (size_t p = 0; p < k; p++)
            s = narrow(s + t[p]);
        return s;
    }
    }
}

static float in_value(kcs_dtype t, const void *p, size_t i)
{
    float v = load(t, p, i);
    return ACC_MODE == TF32 ? round_bits(v, 11) : v;
}

static int run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    kcs_dtype t = c->dtype_in;
    if (t != KCS_DT_F32 && t != KCS_DT_TF32 && t != KCS_DT_BF16 && t != KCS_DT_F16) {
        snprintf(msg, msg_len, "%s: dtype_in %d unsupported", ACC_NAME, (int)t);
        return -1;
    }
    if (c->dtype_acc != KCS_DT_F32 || c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "%s: fp32 accumulation and output only", ACC_NAME);
        return -1;
    }
    int gemm = !strcmp(c->op, "gemm"), dot = !strcmp(c->op, "dot");
    if (!gemm && !dot && strcmp(c->op, "reduce_sum")) {
        snprintf(msg, msg_len, "%s: op %s unsupported", ACC_NAME, c->op);
        return -1;
    }
    size_t m = gemm ? (size_t)c->m : dot ? 1 : (size_t)c->m, n = gemm ? (size_t)c->n : 1,
           k = (size_t)c->k;
    if (c->out_bytes != m * n * sizeof(float)) {
        snprintf(msg, msg_len, "%s: out_bytes %zu", ACC_NAME, c->out_bytes);
        return -1;
    }
    float *terms = malloc((k ? k : 1) * sizeof *terms);
    if (!terms) {
        snprintf(msg, msg_len, "%s: out of memory", ACC_NAME);
        return -1;
    }
    float *D = c->out;
    bf16_inputs = t == KCS_DT_BF16;
    int old = fegetround();
    if (ACC_MODE == RZ)
        fesetround(FE_TOWARDZERO);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            if (ACC_MODE == FP64) {
                double s = 0.0;
                for (size_t p = 0; p < k; p++)
                    s += gemm ? (double)in_value(t, c->in[0], i * k + p) *
                                    (double)in_value(t, c->in[1], p * n + j)
                         : dot ? (double)in_value(t, c->in[0], p) * (double)in_value(t, c->in[1], p)
                               : (double)in_value(t, c->in[0], i * k + p);
                D[i * n + j] = (float)s;
                continue;
            }
            for (size_t p = 0; p < k; p++)
                terms[p] = gemm ? in_value(t, c->in[0], i * k + p) * in_value(t, c->in[1], p * n + j)
                           : dot ? in_value(t, c->in[0], p) * in_value(t, c->in[1], p)
                                 : in_value(t, c->in[0], i * k + p);
            float s = reduce(terms, k);
            if (gemm && c->in[2])
                s = narrow(s + load(t, c->in[2], i * n + j));
            D[i * n + j] = s;
        }
    fesetround(old);
    free(terms);
    return 0;
}

KCS_TEST_PLUGIN(ACC_NAME, "gemm,reduce_sum,dot", run)
