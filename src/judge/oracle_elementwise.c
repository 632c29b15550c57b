/* fp64 reference of the elementwise op (oracle_ops.h): y_i = f(x_i) with f
 * from the call's attrs (fn=, default exp; src/arith/elementwise.h).
 *
 * ref_i = kcs_ew_ref(f, x_i): stable double forms, relative error below
 * 2^-40 (checked against MPFR by tests/unit/backends/test_elementwise.c),
 * not rounded to dtype_out, except at the ends of its range: a value that
 * rounds to +-Inf or to +-0 in dtype_out is that value, the correctly
 * rounded result (IEEE 754 overflow and underflow under round-to-nearest).
 * So a kernel that returns Inf for exp(100) or 0 for exp(-110) in fp32 is
 * right, one that saturates at FLT_MAX or returns NaN is not, and an
 * output of 0 counts in zero_frac only where the rounded result is not 0
 * (a flushed subnormal result).
 *
 * absref_i = max(|ref_i|, lambda), lambda the smallest normal of dtype_out
 * (and of fp32, the working format, for inputs other than fp64), as for
 * softmax. Derivation: the functions are one-argument maps whose library
 * accuracy is stated as a forward error relative to the result (ulps of
 * f(x): OpenCL, CUDA, glibc), so the componentwise measure is the relative
 * error |y - f(x)| / |f(x)|; below lambda the standard model's errors are
 * absolute (gradual underflow adds at most u lambda), hence the floor.
 * The alternative, the function's condition number |x f'(x) / f(x)| as a
 * mixed forward-backward scale, would excuse exactly the failure a fast
 * exp has (the argument rounded, an error growing with |x|), so it is not
 * used. scale = ||ref||_2 over the finite outputs. */
#include <math.h>

#include "elementwise.h"
#include "format.h"
#include "oracle_ops.h"

int kcs_oracle_elementwise(const kcs_call *c, double *ref, double *absref, double *scale_p,
                           kcs_error *err)
{
    kcs_ew_fn f;
    int rc = kcs_ew_fn_of(c->attrs, &f, err);
    if (rc)
        return rc;
    double lambda = ldexp(1.0, kcs_format_get(c->dtype_out)->emin);
    if (c->dtype_in != KCS_FMT_FP64)
        lambda = fmax(lambda, ldexp(1.0, kcs_format_get(KCS_FMT_FP32)->emin));
    size_t n = (size_t)c->m * (size_t)c->k;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double y = kcs_ew_ref(f, c->in[0][i]);
        double yr = kcs_format_round(c->dtype_out, y, KCS_ROUND_DEFAULT);
        if (isinf(yr) || yr == 0.0)
            y = yr;
        ref[i] = y;
        if (absref)
            absref[i] = fmax(fabs(y), lambda);
        if (isfinite(y))
            ss += y * y;
    }
    *scale_p = sqrt(ss);
    return 0;
}
