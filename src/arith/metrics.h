/* Metrics of one output against its reference, and digests (XXH3). */
#ifndef KCS_METRICS_H
#define KCS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

typedef struct kcs_metrics {
    double max_abs;      /* max |y - y_ref| */
    double max_rel;      /* max |y - y_ref| / |y_ref| over y_ref != 0 */
    double max_ulp;      /* max ULP distance in the output format */
    double mean_ulp;
    double backward_err; /* ||y - y_ref||_F / scale (gemm: ||A||_F ||B||_F) */
    double max_scaled;   /* max |y - y_ref| / (|A||B|)_ij (componentwise) */
    double rms_scaled;   /* rms of the same */
    double effective_acc_bits; /* -log2(rms_scaled / sqrt(k)), capped at 64 */
    int64_t nan_count;
    int64_t inf_count;
    int64_t sentinel_count; /* outputs never written */
    int64_t mismatch_nonfinite; /* NaN/Inf where the reference is finite or vice versa */
    int input_bits; /* 11 or 8: inputs rounded to that width before the sum (input_bits.h) */
    int p_bits;     /* attention: 11 or 8: P rounded to that width (input_bits.h) */
    int input_rz;   /* 1: the inputs were truncated toward zero, not rounded (input_bits.h) */
    int out_bits;   /* 8 or 11: the output is y_ref rounded once to that width (output_evidence.h) */
    int out_rz;     /* 1: that rounding was toward zero */
    double const_output, offset_share; /* output_evidence.h */
    double zero_frac, ref_corr, peak_share, scale_fit, ref_scale, mixed_signs; /* error_shape.h */
    double edge_share; /* gemm: error share in remainder tiles (error_shape.h) */
    double cancel_bits, row_scale_fit; /* layernorm, rmsnorm (norm_evidence.h) */
} kcs_metrics;

/* y, ref, absref (the |A||B| magnitudes, may be NULL) of length n; scale is
 * the normwise denominator of the backward error; k the reduction length. */
void kcs_metrics_compute(const double *y, const double *ref, const double *absref, size_t n,
                         kcs_format out_fmt, double scale, int64_t k, double sentinel,
                         kcs_metrics *m);

/* XXH3-64 of the values encoded in fmt (so the digest names the bits the
 * kernel produced, independent of how kcs carries them). */
uint64_t kcs_digest_values(const double *x, size_t n, kcs_format fmt);
uint64_t kcs_digest_bytes(const void *p, size_t n, uint64_t seed);

/* Frobenius norm, summed by fixed chunks (norm_fro.h, where it is defined). */
double kcs_norm_fro(const double *x, size_t n);

#endif
