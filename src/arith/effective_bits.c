#include "effective_bits.h"

#include <math.h>

/* sum_j s_j^2 over the partial sums of the terms t(j), j = 0..k-1. */
#define WALK(expr)                                                                             \
    do {                                                                                       \
        double s_ = 0.0;                                                                       \
        w2 = 0.0;                                                                              \
        for (int64_t j = 0; j < k; j++) {                                                      \
            s_ += (expr);                                                                      \
            w2 += s_ * s_;                                                                     \
        }                                                                                      \
    } while (0)

double kcs_effective_acc_bits(const kcs_call *c, const double *y, const double *ref, size_t n,
                              double fallback)
{
    int64_t k = c->k, m = c->m, nn = c->n, nb = c->batch > 0 ? c->batch : 1;
    if (k < 1)
        return fallback;
    double sum = 0.0;
    size_t used = 0;
    for (size_t o = 0; o < n; o++) {
        if (!isfinite(y[o]) || !isfinite(ref[o]))
            continue;
        double w2;
        switch (c->op) {
        case KCS_OP_GEMM:
        case KCS_OP_BATCHED_GEMM: {
            if (!c->in[0] || !c->in[1] || nn < 1 || m < 1)
                return fallback;
            int64_t b = (int64_t)o / (m * nn), i = ((int64_t)o / nn) % m, l = (int64_t)o % nn;
            if (b >= nb)
                return fallback;
            const double *A = c->in[0] + (size_t)(b * m * k), *B = c->in[1] + (size_t)(b * k * nn);
            WALK(A[i * k + j] * B[j * nn + l]);
            break;
        }
        case KCS_OP_DOT:
            if (!c->in[0] || !c->in[1])
                return fallback;
            WALK(c->in[0][j] * c->in[1][j]);
            break;
        case KCS_OP_REDUCE_SUM: {
            if (!c->in[0])
                return fallback;
            const double *x = c->in[0] + o * (size_t)k;
            WALK(x[j]);
            break;
        }
        default:
            return fallback;
        }
        if (!(w2 > 0.0))
            continue;
        double e = (y[o] - ref[o]) / sqrt(w2 / 3.0);
        sum += e * e;
        used++;
    }
    if (used == 0)
        return fallback;
    double rms = sqrt(sum / (double)used);
    if (!(rms > 0.0))
        return 64.0;
    double bits = -log2(rms);
    return bits > 64.0 ? 64.0 : bits;
}
