/* The elementwise op's functions and their fp64 reference (elementwise.h). */
#include "elementwise.h"

#include <math.h>
#include <string.h>

#include "attrs.h"

static const char *const names[KCS_EW_COUNT] = {
    [KCS_EW_EXP] = "exp",         [KCS_EW_TANH] = "tanh",   [KCS_EW_SILU] = "silu",
    [KCS_EW_GELU_TANH] = "gelu_tanh", [KCS_EW_RSQRT] = "rsqrt",
};

const char *kcs_ew_name(kcs_ew_fn f)
{
    return (f >= 0 && f < KCS_EW_COUNT) ? names[f] : "?";
}

int kcs_ew_parse(const char *name, kcs_ew_fn *f_p)
{
    for (int i = 0; i < KCS_EW_COUNT; i++)
        if (strcmp(name, names[i]) == 0) {
            *f_p = (kcs_ew_fn)i;
            return 0;
        }
    return KCS_E_INVAL;
}

int kcs_ew_fn_of(const char *attrs, kcs_ew_fn *f_p, kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(attrs, "fn", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "elementwise: attrs '%s' are malformed", attrs);
    if (rc == 0) {
        *f_p = KCS_EW_EXP;
        return 0;
    }
    if (kcs_ew_parse(v, f_p))
        return kcs_fail(err, KCS_E_INVAL,
                        "elementwise: fn=%s is not a function kcs knows (exp, tanh, silu, "
                        "gelu_tanh, rsqrt)", v);
    return 0;
}

/* x / (1 + e^-s): silu (s = x) and gelu_tanh (s = 2 c0 (x + c1 x^3)).
 * For s -> -Inf the quotient is x / Inf = -0 for finite negative x; x =
 * -Inf takes the limit -0 (not Inf / Inf). */
static double x_sigmoid(double x, double s)
{
    if (isinf(x))
        return x > 0 ? x : -0.0;
    return x / (1.0 + exp(-s));
}

double kcs_ew_ref(kcs_ew_fn f, double x)
{
    switch (f) {
    case KCS_EW_EXP: return exp(x);
    case KCS_EW_TANH: return tanh(x);
    case KCS_EW_SILU: return x_sigmoid(x, x);
    case KCS_EW_GELU_TANH:
        return x_sigmoid(x, 2.0 * KCS_EW_GELU_C0 * (x + KCS_EW_GELU_C1 * x * x * x));
    case KCS_EW_RSQRT: return 1.0 / sqrt(x); /* +-0 -> +-Inf, +Inf -> +0, x < 0 -> NaN */
    default: return NAN;
    }
}
