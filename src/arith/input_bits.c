#include "input_bits.h"

#include <math.h>


#define SAMPLE 64

/* x rounded to nearest with 53 - s significand bits, sig = 2^s + 1
 * (Veltkamp splitting; contraction off for this file), exponent unbounded. */
static inline double rb(double x, double sig)
{
    double c = x * sig;
    return c - (c - x);
}

int kcs_input_rounded_bits(const kcs_call *c, const double *y, const double *ref, size_t n)
{
    int64_t k = c->k, m = c->m, nn = c->n, nb = c->batch > 0 ? c->batch : 1;
    int gemm = c->op == KCS_OP_GEMM || c->op == KCS_OP_BATCHED_GEMM;
    if (k < 1 || n == 0 || !c->in[0] || !c->in[1] || (!gemm && c->op != KCS_OP_DOT))
        return 0;
    if (gemm && (m < 1 || nn < 1))
        return 0;
    static const int widths[2] = {11, 8};
    const double sig[2] = {ldexp(1.0, 53 - 11) + 1.0, ldexp(1.0, 53 - 8) + 1.0};
    double sse = 0.0, sse_w[2] = {0, 0};
    size_t step = n > SAMPLE ? n / SAMPLE : 1;
    for (size_t o = 0; o < n; o += step) {
        if (!isfinite(y[o]) || !isfinite(ref[o]))
            continue;
        const double *A = c->in[0], *B = c->in[1];
        int64_t ai = 0, as = 1, bi = 0, bs = 1;
        if (gemm) {
            int64_t b = (int64_t)o / (m * nn), i = ((int64_t)o / nn) % m, l = (int64_t)o % nn;
            if (b >= nb)
                return 0;
            ai = b * m * k + i * k;
            bi = b * k * nn + l;
            bs = nn;
        }
        double d = y[o] - ref[o];
        sse += d * d;
        for (int w = 0; w < 2; w++) {
            double s = 0.0;
            for (int64_t j = 0; j < k; j++)
                s += rb(A[ai + j * as], sig[w]) * rb(B[bi + j * bs], sig[w]);
            double e = y[o] - s;
            sse_w[w] += e * e;
        }
    }
    if (!(sse > 0.0))
        return 0;
    for (int w = 0; w < 2; w++)
        if (sse_w[w] < sse / 16.0) /* RMS below a quarter */
            return widths[w];
    return 0;
}
