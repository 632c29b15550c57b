/* C-PRC-07's calibration kernels: attention that declares round_to_nearest
 * (cpu_declares), held to fp32's probabilistic (random-walk) error.
 *   good  the CPU backend's own unfused composition (attention.c): the
 *         scores, the softmax denominator and the PV sums in fp32,
 *         rounded to nearest, each sum in index order.
 *   bad   the same composition with every sum in a round-to-nearest
 *         accumulator of 16 significant bits (kcs_acc bits:16: one
 *         correctly rounded addition per term). Its error, about
 *         2^-16 sqrt(n / 3) relative on the PV sums and the denominator,
 *         passes a plain allclose at rtol 1e-3 and is several times the
 *         random-walk bound of C-PRC-07. */
#include "cpu.h"
#include "calib.h"

#define RN_SUM_BITS 16 /* the bad kernel's accumulator */

int kcs_cpu_calib_attention_rn(const kcs_call *c, const char *id, int state, kcs_error *err)
{
    if (c->op != KCS_OP_ATTENTION)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "cpu: %s has no %s calibration kernel", id,
                        kcs_op_name(c->op));
    kcs_call own = *c;
    own.variant = "own";
    own.acc = (kcs_acc){KCS_FMT_FP32, state == KCS_CALIB_BAD ? RN_SUM_BITS : 0, 0};
    own.schedule.kind = KCS_SCHED_SEQUENTIAL;
    own.schedule.param = 0;
    return kcs_cpu_attention(NULL, &own, err);
}
