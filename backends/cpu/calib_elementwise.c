/* Calibration kernels of C-PRC-05 (cpu/calib.h): elementwise exp in fp32.
 *   good  expf (glibc: under 1 ulp, gradual underflow)
 *   bad   the argument path of the fast-math exponential of GPU
 *         intrinsics (CUDA __expf: ex2.approx(x * log2 e)): x scaled to
 *         base 2 in fp32, so the product's rounding (about |x| 2^-24
 *         absolute) becomes a relative error of about |x| ulp in the
 *         result; exp2f itself is accurate, and subnormal results are kept
 *         (the intrinsic also flushes them: one mechanism per calibration
 *         kernel, so that its signature names it). On torch.randn inputs
 *         it is within torch's fp32 assert_close defaults
 *         (tests/unit/calibrate).
 * Other fn= values are refused (the contract measures exp). */
#include <math.h>

#include "calib.h"
#include "cpu.h"
#include "work.h"

#define LOG2E_F 1.44269504088896340736f

int kcs_cpu_calib_elementwise(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    kcs_ew_fn f;
    int rc = kcs_ew_fn_of(c->attrs, &f, err);
    if (rc)
        return rc;
    if (f != KCS_EW_EXP)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s calibration kernels compute fn=exp, "
                        "not fn=%s", id, kcs_ew_name(f));
    size_t n = (size_t)c->m * (size_t)c->k;
    for (size_t i = 0; i < n; i++) {
        float x = (float)c->in[0][i], y;
        if (state == KCS_CALIB_GOOD) {
            y = expf(x);
        } else {
            y = exp2f(x * LOG2E_F);
        }
        c->out[i] = kcs_cpu_out(c, y);
    }
    return 0;
}
