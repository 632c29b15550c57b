/* C-PRC-08's bad norm around a backend's native kernels (calib_wrap.h):
 * k <= 64 the backend's norm untouched; k > 64 the backend's norm of each
 * 16-element block of a row (zero padding is exact), the blocks' squares
 * (fp32) accumulated in bf16 on the host, one fp32 sqrt: a sum of squares
 * narrower than the declared fp32. */
#include <math.h>
#include <stdlib.h>

#include "calib_wrap_impl.h"

#define PRC08_K_FAST 64
#define PRC08_BLOCK 16

int kcs_wrap_norm_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->k <= PRC08_K_FAST)
        return kcs_wrap_forward(w, c, NULL, NULL, err);
    size_t m = (size_t)c->m, nb;
    double *p;
    int rc = kcs_wrap_blocks(w, c, KCS_OP_NORM, PRC08_BLOCK, &p, &nb, err);
    for (size_t i = 0; !rc && i < m; i++) {
        double s = 0.0; /* a bf16 value */
        for (size_t b = 0; b < nb; b++) {
            float y = (float)p[i * nb + b];
            s = kcs_wrap_round(KCS_FMT_BF16, s + (double)(y * y));
        }
        c->out[i] = kcs_wrap_round(c->dtype_out, sqrtf((float)s));
    }
    free(p);
    return rc;
}
