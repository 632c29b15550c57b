/* C-PRC-07's bad state around a backend's own kernels (calib_wrap.h; good
 * is the backend's attention, untouched): the scores by the backend's
 * gemm (Q K^T, scaled in fp32), the probabilities by its softmax, and the
 * PV sums on the host in a round-to-nearest accumulator of 16 significant
 * bits (kcs_acc bits:16), in key order: the CPU bad kernel's PV defect
 * (backends/cpu/calib_attention_rn.c), an error that accumulates along
 * the sum (about 2^-16 sqrt(n / 3) of sum_j P_ij |V_jc| on positive
 * values), unlike P rounded to bf16, which averages over the keys. */
#include <stdlib.h>

#include "acc.h"
#include "calib_wrap_impl.h"

#define RN_SUM_BITS 16

int kcs_wrap_attention_rn_bad(kcs_backend_ctx *w, const kcs_call *c, kcs_error *err)
{
    if (c->op != KCS_OP_ATTENTION)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "calibration wrapper: C-PRC-07 has no %s kernel",
                        kcs_op_name(c->op));
    const kcs_acc acc16 = {KCS_FMT_FP32, RN_SUM_BITS, 0};
    size_t m = (size_t)c->m, n = (size_t)c->n, k = (size_t)c->k;
    size_t nb = c->batch > 0 ? (size_t)c->batch : 1;
    double *Kt = kcs_wrap_alloc(k * n, err), *S = kcs_wrap_alloc(m * n, err);
    double *P = kcs_wrap_alloc(m * n, err);
    int rc = !Kt || !S || !P ? KCS_E_NOMEM : 0;
    for (size_t bi = 0; !rc && bi < nb; bi++) {
        const double *V = c->in[2] + bi * n * k;
        rc = kcs_wrap_attention_probs(w, c, bi, Kt, S, P, err);
        for (size_t i = 0; !rc && i < m; i++)
            for (size_t col = 0; col < k; col++) {
                double o = 0.0;
                for (size_t j = 0; j < n; j++) /* P fp32, V <= 24 bits: exact products */
                    o = kcs_acc_add(&acc16, o, P[i * n + j] * V[j * k + col]);
                c->out[(bi * m + i) * k + col] = kcs_wrap_round(c->dtype_out, o);
            }
    }
    free(Kt);
    free(S);
    free(P);
    return rc;
}
