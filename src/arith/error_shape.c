#include "error_shape.h"

#include <math.h>

void kcs_error_shape_compute(const double *y, const double *ref, const double *absref, size_t n,
                             kcs_error_shape *e)
{
    double sy = 0, sr = 0, nn = 0, zeros = 0, nonzero = 0;
    int neg = 0, pos = 0;
    for (size_t i = 0; i < n; i++) {
        if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        sy += y[i];
        sr += ref[i];
        nn++;
        neg |= ref[i] < 0.0;
        pos |= ref[i] > 0.0;
        if (ref[i] != 0.0) {
            nonzero++;
            zeros += y[i] == 0.0;
        }
    }
    e->zero_frac = nonzero > 0 ? zeros / nonzero : 0.0;
    e->ref_corr = 1.0;
    e->peak_share = e->scale_fit = e->ref_scale = 0.0;
    e->mixed_signs = neg && pos;
    if (nn == 0)
        return;
    double my = sy / nn, mr = sr / nn;
    double cyy = 0, crr = 0, cyr = 0, sdd = 0, maxd = 0, sdr = 0, srr = 0;
    for (size_t i = 0; i < n; i++) {
        if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        double a = y[i] - my, b = ref[i] - mr, d = y[i] - ref[i];
        cyy += a * a;
        crr += b * b;
        cyr += a * b;
        sdd += d * d;
        maxd = d * d > maxd ? d * d : maxd;
        sdr += d * ref[i];
        srr += ref[i] * ref[i];
    }
    if (!(sdd > 0.0))
        return;
    e->ref_corr = cyy > 0.0 && crr > 0.0 ? cyr / sqrt(cyy * crr) : 0.0;
    e->peak_share = maxd / sdd;
    if (srr > 0.0) {
        double c = sdr / srr, res = 0.0;
        for (size_t i = 0; i < n; i++) {
            if ((absref && absref[i] < 0.0) || !isfinite(y[i]) || !isfinite(ref[i]))
                continue;
            double r = (y[i] - ref[i]) - c * ref[i];
            res += r * r;
        }
        e->scale_fit = 1.0 - res / sdd;
        e->ref_scale = c;
    }
}

double kcs_edge_share(const double *y, const double *ref, size_t len, int64_t m, int64_t n)
{
    int64_t mt = m - m % 16, nt = n - n % 16;
    if (m < 1 || n < 1 || (mt == m && nt == n))
        return 0.0;
    /* the batch count from the output's length: a gemm case may carry a
     * batch in its shape that the op does not use */
    int64_t batch = (int64_t)(len / (size_t)(m * n));
    double all = 0.0, edge = 0.0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                size_t o = (size_t)((b * m + i) * n + j);
                if (!isfinite(y[o]) || !isfinite(ref[o]))
                    continue;
                double d = y[o] - ref[o];
                all += d * d;
                if (i >= mt || j >= nt)
                    edge += d * d;
            }
    return all > 0.0 ? edge / all : 0.0;
}
