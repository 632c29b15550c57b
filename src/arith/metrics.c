#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "error_shape.h"
#include "output_evidence.h"
#include "format_fast.h"

void kcs_metrics_compute(const double *y, const double *ref, const double *absref, size_t n,
                         kcs_format out_fmt, double scale, int64_t k, double sentinel,
                         kcs_metrics *m)
{
    memset(m, 0, sizeof *m);
    double sum_sq = 0.0, sum_ulp = 0.0, sum_scaled_sq = 0.0;
    size_t n_finite = 0, n_scaled = 0;
    for (size_t i = 0; i < n; i++) {
        double a = y[i], b = ref[i];
        if (absref && absref[i] < 0.0)
            continue; /* undefined by the declared semantics (oob=undefined): not judged */
        if (isnan(a))
            m->nan_count++;
        else if (isinf(a))
            m->inf_count++;
        if (a == sentinel)
            m->sentinel_count++;
        if (!isfinite(a) || !isfinite(b)) {
            /* Equal non-finite values (NaN where NaN is due, same-signed
             * Inf) agree; anything else is a mismatch. */
            bool same = (isnan(a) && isnan(b)) || (isinf(a) && isinf(b) && (a > 0) == (b > 0));
            if (!same)
                m->mismatch_nonfinite++;
            continue;
        }
        double d = fabs(a - b);
        n_finite++;
        sum_sq += d * d;
        if (d > m->max_abs)
            m->max_abs = d;
        if (b != 0.0) {
            double r = d / fabs(b);
            if (r > m->max_rel)
                m->max_rel = r;
        } else if (d > 0.0) {
            m->max_rel = INFINITY;
        }
        double u = kcs_format_ulp_distance(out_fmt, a, b);
        sum_ulp += u;
        if (u > m->max_ulp)
            m->max_ulp = u;
        if (absref && absref[i] > 0.0) {
            double s = d / absref[i];
            sum_scaled_sq += s * s;
            n_scaled++;
            if (s > m->max_scaled)
                m->max_scaled = s;
        }
    }
    if (m->mismatch_nonfinite > 0) {
        /* A NaN/Inf where a finite value is due is an unbounded error in
         * every structure's measure. */
        m->max_abs = m->max_rel = m->max_ulp = INFINITY;
        m->max_scaled = INFINITY;
    }
    m->mean_ulp = n_finite ? sum_ulp / (double)n_finite : 0.0;
    m->backward_err = scale > 0.0 ? sqrt(sum_sq) / scale : sqrt(sum_sq);
    if (m->mismatch_nonfinite > 0)
        m->backward_err = INFINITY;
    m->rms_scaled = n_scaled ? sqrt(sum_scaled_sq / (double)n_scaled) : 0.0;
    /* A p-bit accumulator summing k terms leaves a componentwise error of
     * about sqrt(k) * 2^-p relative to (|A||B|)_ij (random-walk rounding);
     * invert that to estimate the bits the accumulation really kept. */
    if (m->rms_scaled > 0.0 && k > 0)
        m->effective_acc_bits = -log2(m->rms_scaled / sqrt((double)k));
    else
        m->effective_acc_bits = 64.0;
    if (m->effective_acc_bits > 64.0)
        m->effective_acc_bits = 64.0;
    /* (effective_acc_bits describes the finite outputs only) */
    if (m->mismatch_nonfinite > 0)
        m->rms_scaled = INFINITY;
    kcs_error_shape es;
    kcs_error_shape_compute(y, ref, absref, n, &es);
    m->zero_frac = es.zero_frac;
    m->ref_corr = es.ref_corr;
    m->peak_share = es.peak_share;
    m->scale_fit = es.scale_fit;
    m->ref_scale = es.ref_scale;
    m->mixed_signs = es.mixed_signs;
    m->const_output = kcs_constant_output(y, ref, n);
    m->offset_share = kcs_offset_share(y, ref, n);
}

uint64_t kcs_digest_bytes(const void *p, size_t n, uint64_t seed)
{
    return XXH3_64bits_withSeed(p, n, seed);
}

uint64_t kcs_digest_values(const double *x, size_t n, kcs_format fmt)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return 0;
    XXH3_64bits_reset(st);
    uint64_t buf[512];
    /* Values not exact in fmt (a kernel that wrote something else) are
     * digested as their fp64 bits ^ 0xA5..., so they still change the
     * digest (kcs_format_digest_words). */
    for (size_t i = 0; i < n; i += 512) {
        size_t len = n - i < 512 ? n - i : 512;
        kcs_format_digest_words(fmt, x + i, buf, len);
        XXH3_64bits_update(st, buf, len * sizeof buf[0]);
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}
