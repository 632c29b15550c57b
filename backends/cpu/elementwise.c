/* CPU elementwise op: y_i = f(x_i), f from attrs fn= (src/arith/elementwise.h),
 * every step in the working format (cpu/work.h: fp32 for fp32 and narrower
 * inputs, fp64 for fp64), then rounded to dtype_out.
 *   native: libm's float functions (expf, tanhf, sqrtf; exp, tanh, sqrt for
 *           fp64) in the formulas ML frameworks write (PyTorch's CPU
 *           kernels): silu = x / (1 + exp(-x)), gelu_tanh = 0.5 x (1 +
 *           tanh(c0 (x + c1 x^3))), rsqrt = 1 / sqrt(x). gelu_tanh's 1 + tanh
 *           cancels for x below about -3 (the relative error grows to
 *           thousands of ulps; tests/unit/backends/test_elementwise.c
 *           measures it) and silu(-Inf) = -Inf / Inf = NaN, as in PyTorch.
 *   own:    the stable forms kcs's reference uses, in the working format:
 *           silu = x / (1 + exp(-x)), gelu_tanh = x / (1 + exp(-2 c0 (x +
 *           c1 x^3))), with the limits at -Inf (-0); exp, tanh, rsqrt as
 *           native.
 * The fp32 constants are c0 = (float)sqrt(2/pi), c1 = 0.044715f. */
#include <math.h>

#include "cpu.h"
#include "elementwise.h"
#include "work.h"

#define C0F ((float)KCS_EW_GELU_C0)
#define C1F ((float)KCS_EW_GELU_C1)

static float ew_f32(kcs_ew_fn f, int own, float x)
{
    switch (f) {
    case KCS_EW_EXP: return expf(x);
    case KCS_EW_TANH: return tanhf(x);
    case KCS_EW_RSQRT: return 1.0f / sqrtf(x);
    case KCS_EW_SILU:
        if (own && isinf(x))
            return x > 0 ? x : -0.0f;
        return x / (1.0f + expf(-x));
    case KCS_EW_GELU_TANH: {
        float x3 = x * x * x;
        float in = x + C1F * x3;
        if (!own)
            return 0.5f * x * (1.0f + tanhf(C0F * in));
        if (isinf(x))
            return x > 0 ? x : -0.0f;
        float s = 2.0f * C0F * in;
        return x / (1.0f + expf(-s));
    }
    default: return NAN;
    }
}

static double ew_f64(kcs_ew_fn f, int own, double x)
{
    const double c0 = KCS_EW_GELU_C0, c1 = KCS_EW_GELU_C1;
    switch (f) {
    case KCS_EW_EXP: return exp(x);
    case KCS_EW_TANH: return tanh(x);
    case KCS_EW_RSQRT: return 1.0 / sqrt(x);
    case KCS_EW_SILU:
        if (own && isinf(x))
            return x > 0 ? x : -0.0;
        return x / (1.0 + exp(-x));
    case KCS_EW_GELU_TANH:
        if (!own)
            return 0.5 * x * (1.0 + tanh(c0 * (x + c1 * x * x * x)));
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return x / (1.0 + exp(-2.0 * c0 * (x + c1 * x * x * x)));
    default: return NAN;
    }
}

double kcs_cpu_elementwise_one(kcs_ew_fn f, int own, kcs_format w, double x)
{
    return w == KCS_FMT_FP64 ? ew_f64(f, own, x) : (double)ew_f32(f, own, (float)x);
}

int kcs_cpu_elementwise(kcs_backend_ctx *ctx, const kcs_call *c, kcs_error *err)
{
    (void)ctx;
    int v = kcs_cpu_variant(c, 0, err);
    if (v < 0)
        return v;
    kcs_ew_fn f;
    int rc = kcs_ew_fn_of(c->attrs, &f, err);
    if (rc)
        return rc;
    kcs_format w = kcs_cpu_work_fmt(c->dtype_in);
    size_t n = (size_t)c->m * (size_t)c->k;
    for (size_t i = 0; i < n; i++)
        c->out[i] = kcs_cpu_out(c, kcs_cpu_elementwise_one(f, v == 1, w, c->in[0][i]));
    return 0;
}
