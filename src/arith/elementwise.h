/* The elementwise op's functions: y_i = f(x_i), f named by the call's
 * attribute fn (attrs "fn=gelu_tanh"; absent: exp). The definitions, for
 * real x:
 *   exp        e^x
 *   tanh       tanh x
 *   silu       x / (1 + e^-x)                       (x * sigmoid(x))
 *   gelu_tanh  x/2 (1 + tanh(c0 (x + c1 x^3))),     c0 = sqrt(2/pi), c1 = 0.044715
 *              (the tanh approximation of GELU: PyTorch gelu(approximate="tanh"))
 *   rsqrt      1 / sqrt(x)
 * At +-Inf each takes its limit (exp(-Inf) = 0, silu(-Inf) = gelu_tanh(-Inf)
 * = -0, tanh(+-Inf) = +-1, rsqrt(+Inf) = +0), rsqrt(+-0) = +-Inf (IEEE 754
 * rSqrt), rsqrt(x < 0) = NaN, and NaN gives NaN. */
#ifndef KCS_ELEMENTWISE_H
#define KCS_ELEMENTWISE_H

#include "error.h"

typedef enum kcs_ew_fn {
    KCS_EW_EXP = 0,
    KCS_EW_TANH,
    KCS_EW_SILU,
    KCS_EW_GELU_TANH,
    KCS_EW_RSQRT,
    KCS_EW_COUNT
} kcs_ew_fn;

/* gelu_tanh's constants as doubles (c0 = sqrt(2/pi) rounded to double). */
#define KCS_EW_GELU_C0 0.79788456080286535588
#define KCS_EW_GELU_C1 0.044715

const char *kcs_ew_name(kcs_ew_fn f);
int kcs_ew_parse(const char *name, kcs_ew_fn *f_p);
/* The function a call's attrs name (key fn; absent: exp). KCS_E_INVAL
 * with a message listing the names for malformed attrs or an unknown name. */
int kcs_ew_fn_of(const char *attrs, kcs_ew_fn *f_p, kcs_error *err);

/* f(x) in double, from stable forms (silu = x / (1 + e^-x), gelu_tanh =
 * x / (1 + e^(-2 c0 (x + c1 x^3))), identical in real arithmetic to the
 * definitions above): a relative error below 2^-40 wherever the result is
 * a normal double (tests/unit/backends/test_elementwise.c checks it against
 * MPFR), i.e. below 2^-16 of an fp32 ulp. */
double kcs_ew_ref(kcs_ew_fn f, double x);

#endif
