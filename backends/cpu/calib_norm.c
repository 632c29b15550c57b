/* C-PRC-08's calibration kernels (cpu/calib.h): the 2-norm of each row.
 *   good: the fp32 kernel: each square added to an fp32 running sum with
 *         one rounding (an FMA, s = fl(s + x_t^2)), in order, then one
 *         sqrtf: bit for bit the own kernel with acc fp32, sequential.
 *   bad:  the same, except that for k > 64 the running sum is rounded to
 *         bf16 after every add (a 16-bit accumulator while fp32 is
 *         declared; the own kernel with acc bf16). Rows of at most 64
 *         elements are the good kernel's, so the plain test (small k)
 *         cannot tell them apart, and neither can any check there. */
#include <math.h>
#include <stdlib.h>

#include "calib.h"
#include "cpu.h"
#include "work.h"

#define PRC08_K_FAST 64

int kcs_cpu_calib_norm(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    if (c->op != KCS_OP_NORM)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no %s calibration kernel", id,
                        kcs_op_name(c->op));
    const kcs_schedule seq = {KCS_SCHED_SEQUENTIAL, 0};
    const kcs_acc fp32 = {KCS_FMT_FP32, 0, 0}, bf16 = {KCS_FMT_BF16, 0, 0};
    const kcs_acc *acc = state == KCS_CALIB_BAD && c->k > PRC08_K_FAST ? &bf16 : &fp32;
    size_t k = (size_t)c->k;
    double *sq, *scratch;
    if (kcs_cpu_alloc2(k, &sq, &scratch))
        return kcs_fail(err, KCS_E_NOMEM, "cpu: %s norm: out of memory (k=%zu)", id, k);
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        for (size_t t = 0; t < k; t++)
            sq[t] = x[t] * x[t]; /* exact: fp32 inputs square into 48 bits */
        double s = kcs_cpu_sum(sq, c->k, &seq, acc, 0, scratch);
        c->out[i] = kcs_cpu_out(c, kcs_cpu_wsqrt(KCS_FMT_FP32, s));
    }
    free(sq);
    free(scratch);
    return 0;
}
