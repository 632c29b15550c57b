/* Output-fault evidence (output_evidence.h). */
#include "output_evidence.h"

#include <math.h>

double kcs_evidence_round(double x, int w, int rz)
{
    if (!isfinite(x) || x == 0.0)
        return x;
    int e;
    double f = frexp(x, &e); /* |f| in [0.5, 1) */
    double s = ldexp(f, w);
    return ldexp(rz ? trunc(s) : nearbyint(s), e - w);
}

int kcs_output_rounded_bits(const double *y, const double *ref, size_t n, int *rz)
{
    static const int widths[2] = {8, 11};
    double sse = 0.0, sse_w[2][2] = {{0, 0}, {0, 0}};
    int exact[2] = {1, 1};
    size_t used = 0;
    *rz = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        used++;
        double d = y[i] - ref[i];
        sse += d * d;
        for (int w = 0; w < 2; w++) {
            exact[w] &= kcs_evidence_round(y[i], widths[w], 0) == y[i];
            for (int r = 0; r < 2; r++) {
                double e = y[i] - kcs_evidence_round(ref[i], widths[w], r);
                sse_w[w][r] += e * e;
            }
        }
    }
    if (used == 0 || !(sse > 0.0))
        return 0;
    int best = -1, best_r = 0;
    for (int w = 0; w < 2; w++)
        for (int r = 0; r < 2; r++)
            if (exact[w] && sse_w[w][r] < sse / 16.0 &&
                (best < 0 || sse_w[w][r] < sse_w[best][best_r])) {
                best = w;
                best_r = r;
            }
    if (best < 0)
        return 0;
    *rz = best_r;
    return widths[best];
}

int kcs_constant_output(const double *y, const double *ref, size_t n)
{
    int have = 0, ref_varies = 0;
    double y0 = 0.0, r0 = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        if (!have) {
            y0 = y[i];
            r0 = ref[i];
            have = 1;
            continue;
        }
        if (y[i] != y0)
            return 0;
        ref_varies |= ref[i] != r0;
    }
    return have && ref_varies;
}

double kcs_offset_share(const double *y, const double *ref, size_t n)
{
    double s = 0.0, s2 = 0.0;
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i]) || !isfinite(ref[i]))
            continue;
        double d = y[i] - ref[i];
        s += d;
        s2 += d * d;
        used++;
    }
    if (used < 8 || !(s2 > 0.0)) /* a shift of a handful of outputs says nothing */
        return 0.0;
    double mean = s / (double)used;
    return mean * mean / (s2 / (double)used);
}
