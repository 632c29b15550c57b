/* C-PRC-06's bad state around a backend's own softmax and layernorm
 * (calib_wrap.h; good is the backend's kernel, untouched): the backend's
 * output moved to what its sums would give in a round-to-nearest
 * accumulator of 16 significant bits, the CPU bad kernel's defect
 * (backends/cpu/calib_rows_rn.c). The host recomputes each row's sums
 * twice, in fp32 and in 16 bits (kcs_acc bits:16), in index order:
 *   softmax    y' = y S32 / S16, S the sums of exp(x - max): the backend's
 *              denominator replaced by one with the 16-bit sum's relative
 *              error;
 *   layernorm  with mu, sd = sqrt(var + eps) from fp32 sums and mu16, sd16
 *              from 16-bit ones (the variance's deviations from mu16),
 *              r = sd / sd16: y' = b + r (y - b) + r g (mu - mu16) / sd,
 *              which is g (x - mu16) / sd16 + b where y = g (x - mu) / sd
 *              + b (gamma g = 1 and beta b = 0 where absent).
 * The scale and shift are applied in double and rounded once to
 * dtype_out. */
#include <math.h>
#include <stdlib.h>

#include "acc.h"
#include "calib_wrap_impl.h"

#define RN_SUM_BITS 16
#define LN_EPS 1e-5f

static const kcs_acc acc32 = {KCS_FMT_FP32, 0, 0}, acc16 = {KCS_FMT_FP32, RN_SUM_BITS, 0};

/* S32 / S16 of a row: its fp32 and 16-bit sums of exp(x - max). */
static double softmax_scale(const double *x, int64_t k)
{
    float mx = -INFINITY;
    for (int64_t t = 0; t < k; t++)
        mx = fmaxf(mx, (float)x[t]);
    double s32 = 0.0, s16 = 0.0;
    for (int64_t t = 0; t < k; t++) {
        float e = expf((float)x[t] - mx);
        s32 = kcs_acc_add(&acc32, s32, e);
        s16 = kcs_acc_add(&acc16, s16, e);
    }
    return s32 / s16;
}

int kcs_wrap_rows_rn_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->op != KCS_OP_SOFTMAX && c->op != KCS_OP_LAYERNORM)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: C-PRC-06 has no %s kernel",
                        kcs_op_name(c->op));
    int rc = kcs_wrap_forward(w, c, NULL, NULL, err);
    if (rc)
        return rc;
    size_t k = (size_t)c->k;
    const double *G = c->in[1], *B = c->in[2];
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        double *y = c->out + (size_t)i * k;
        if (c->op == KCS_OP_SOFTMAX) {
            double scale = softmax_scale(x, c->k);
            for (size_t t = 0; t < k; t++)
                y[t] = kcs_wrap_round(c->dtype_out, y[t] * scale);
            continue;
        }
        float mu, sd, mu16, sd16;
        kcs_acc_moments(x, c->k, &acc32, LN_EPS, &mu, &sd);
        kcs_acc_moments(x, c->k, &acc16, LN_EPS, &mu16, &sd16);
        double ratio = (double)sd / sd16, shift = ((double)mu - mu16) / sd;
        for (size_t t = 0; t < k; t++) {
            double g = G ? G[t] : 1.0, b = B ? B[t] : 0.0;
            y[t] = kcs_wrap_round(c->dtype_out, b + ratio * (y[t] - b) + ratio * g * shift);
        }
    }
    return 0;
}
