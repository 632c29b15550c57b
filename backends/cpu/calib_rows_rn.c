/* Calibration kernels of C-PRC-06 (cpu/calib.h): softmax and layernorm
 * that declare round_to_nearest (cpu_declares), held to fp32's
 * probabilistic (random-walk) error.
 *   good  the stable softmax and the two-pass layernorm of C-PRC-02's
 *         good kernels, bit for bit: every step in fp32, rounded to
 *         nearest; the sums in index order.
 *   bad   the same kernel, except that its sums (the softmax denominator;
 *         the layernorm mean and variance) run in a round-to-nearest
 *         accumulator of 16 significant bits (kcs_acc bits:16: one
 *         correctly rounded addition per term, as an FMA into a 16-bit
 *         register). Every other step is fp32. Its error, about
 *         2^-16 sqrt(k) / 3 relative on the positive sums, passes a plain
 *         allclose at rtol 1e-3 and C-PRC-02's worst-case bound, and is
 *         several times the random-walk bound of C-PRC-06. */
#include <math.h>

#include "cpu.h"
#include "calib.h"

#define RN_SUM_BITS 16 /* the bad kernel's accumulator */
#define LN_EPS 1e-5f   /* as C-PRC-02's kernels */

/* Stable softmax of one row, the denominator summed into acc. */
static void softmax_row(const double *x, int64_t k, const kcs_acc *acc, double *y)
{
    float mx = -INFINITY;
    for (int64_t t = 0; t < k; t++)
        mx = fmaxf(mx, (float)x[t]);
    double s = 0.0;
    for (int64_t t = 0; t < k; t++) {
        float e = expf((float)x[t] - mx);
        y[t] = e;
        s = kcs_acc_add(acc, s, e);
    }
    float sf = (float)s; /* exact: acc is fp32 or narrower */
    for (int64_t t = 0; t < k; t++)
        y[t] = (float)y[t] / sf;
}

/* Two-pass layernorm of one row (gamma g, beta b may be NULL), the mean's
 * and the variance's sums into acc (kcs_acc_moments: each variance step
 * one rounding of q + d*d, fmaf(d, d, q) for fp32). */
static void layernorm_row(const double *x, const double *g, const double *b, int64_t k,
                          const kcs_acc *acc, double *y)
{
    float mu, den;
    kcs_acc_moments(x, k, acc, LN_EPS, &mu, &den);
    kcs_cpu_calib_ln_scale(x, g, b, k, mu, den, y);
}

static void rn_row(const kcs_call *c, const double *x, double *y, const void *acc)
{
    if (c->op == KCS_OP_SOFTMAX)
        softmax_row(x, c->k, acc, y);
    else
        layernorm_row(x, c->in[1], c->in[2], c->k, acc, y);
}

int kcs_cpu_calib_rows_rn(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    if (c->op != KCS_OP_SOFTMAX && c->op != KCS_OP_LAYERNORM)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no %s calibration kernel", id,
                        kcs_op_name(c->op));
    kcs_acc acc = {KCS_FMT_FP32, 0, 0};
    if (state == KCS_CALIB_BAD)
        acc.bits = RN_SUM_BITS;
    return kcs_cpu_calib_each_row(c, rn_row, &acc, err);
}
