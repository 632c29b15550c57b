/* Softmax and layernorm kernels for C-PRC-06 (probabilistic error of
 * round-to-nearest sums), built only against kcs_plugin.h. fp32 inputs
 * and output; every elementwise step in fp32 (expf, sqrtf); the row sums
 * (softmax denominator, layernorm mean and variance) in index order. One
 * library per mode (NORM_MODE):
 *   RN          fp32 sums that round to nearest; declares round_to_nearest
 *   SUM16       each partial sum rounded to 16 significant bits (to
 *               nearest, ties to even); declares round_to_nearest: a
 *               narrow running sum that passes allclose at 1e-3
 *   TRUNC       fp32 sums truncated toward zero (a truncating adder);
 *               declares round_to_nearest, which it does not keep
 *   TRUNC_UNDECLARED  TRUNC's arithmetic without the declaration:
 *               C-PRC-06 does not bind it (NOT-CLAIMED) */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugin_common.h"

#define MODE_RN 1
#define MODE_SUM16 2
#define MODE_TRUNC 3
#define MODE_TRUNC_UNDECLARED 4
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MODE CAT(MODE_, NORM_MODE)

#if MODE == MODE_SUM16
/* x rounded to p significant bits, to nearest, ties to even (|x| normal,
 * p <= 24): a multiple of the spacing 2^(e - p), scaled exactly. */
static float round_bits(double x, int p)
{
    if (x == 0.0 || !isfinite(x))
        return (float)x;
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    double ulp = ldexp(1.0, e - p);
    return (float)(nearbyint(x / ulp) * ulp);
}
#elif MODE == MODE_TRUNC || MODE == MODE_TRUNC_UNDECLARED
/* a + b in fp32, truncated toward zero: the exact sum in double (exact
 * for two floats of similar magnitude; otherwise within 2^-53 relative,
 * below fp32's spacing), then the fp32 value of the same sign nearest
 * zero. */
static float add_trunc(float a, float b)
{
    double s = (double)a + (double)b;
    float f = (float)s;
    if ((double)f != s && fabs((double)f) > fabs(s))
        f = nextafterf(f, 0.0f);
    return f;
}
#endif

static float add(float s, float t)
{
#if MODE == MODE_SUM16
    return round_bits((double)s + (double)t, 16);
#elif MODE == MODE_TRUNC || MODE == MODE_TRUNC_UNDECLARED
    return add_trunc(s, t);
#else
    return s + t;
#endif
}

static void softmax_row(const float *x, int64_t k, float *y)
{
    float mx = -INFINITY, s = 0.0f;
    for (int64_t t = 0; t < k; t++)
        mx = fmaxf(mx, x[t]);
    for (int64_t t = 0; t < k; t++) {
        y[t] = expf(x[t] - mx);
        s = add(s, y[t]);
    }
    for (int64_t t = 0; t < k; t++)
        y[t] = y[t] / s;
}

static void layernorm_row(const float *x, const float *g, const float *b, int64_t k, float *y)
{
    float s = 0.0f, q = 0.0f;
    for (int64_t t = 0; t < k; t++)
        s = add(s, x[t]);
    float mu = s / (float)k;
    for (int64_t t = 0; t < k; t++) {
        float d = x[t] - mu;
        q = add(q, d * d);
    }
    float den = sqrtf(q / (float)k + 1e-5f);
    for (int64_t t = 0; t < k; t++) {
        float z = (x[t] - mu) / den;
        if (g)
            z = z * g[t];
        if (b)
            z = z + b[t];
        y[t] = z;
    }
}

static int run(const kcs_plugin_call *c, char *msg, size_t msg_len)
{
    int sm = strcmp(c->op, "softmax") == 0, ln = strcmp(c->op, "layernorm") == 0;
    if ((!sm && !ln) || c->dtype_in != KCS_DT_F32 || c->dtype_out != KCS_DT_F32) {
        snprintf(msg, msg_len, "only fp32 softmax and layernorm");
        return -1;
    }
    const float *X = c->in[0], *G = c->in[1], *B = c->in[2];
    float *Y = c->out;
    for (int64_t i = 0; i < c->m; i++) {
        if (sm)
            softmax_row(X + i * c->k, c->k, Y + i * c->k);
        else
            layernorm_row(X + i * c->k, G, B, c->k, Y + i * c->k);
    }
    return 0;
}

KCS_TEST_PLUGIN(NORM_NAME, "softmax,layernorm", run)

#if MODE != MODE_TRUNC_UNDECLARED
KCS_PLUGIN_EXPORT const char *kcs_plugin_declares(void)
{
    return "round_to_nearest";
}
#endif
