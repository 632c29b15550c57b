/* The shape of an output's error, for signatures that name a mechanism
 * rather than a size (contracts/README.md, "Signatures"): over the outputs
 * where y and y_ref are finite and judged (absref >= 0),
 *   zero_frac   the fraction of outputs with y_ref != 0 that are exactly 0
 *               (a kernel that returned zeros or never accumulated);
 *   ref_corr    Pearson's correlation of y with y_ref (a computed result,
 *               however imprecise, is near 1; an output computed from
 *               other inputs (stale, another buffer) near 0);
 *   peak_share  the share of the squared error in the single worst output,
 *               max d^2 / sum d^2 (one corrupted element near 1; an error
 *               spread over the outputs, as any rounding's, near 1/n);
 *   scale_fit   the share of the squared error that one relative scale of
 *               the reference explains, 1 - sum (d - c y_ref)^2 / sum d^2
 *               with c = sum d y_ref / sum y_ref^2 (y = (1 + c) y_ref: a
 *               scaled output, 1; rounding errors are uncorrelated with
 *               y_ref on zero-mean data, near 0).
 *   ref_scale   that c; mixed_signs 1 when y_ref takes both signs.
 * A sum kept too narrow on data of one sign loses magnitude (increments
 * below half an ulp of the running sum vanish), an error close to a
 * negative scale of y_ref when the outputs are alike; on mixed-sign data
 * rounding errors do not follow y_ref. So a scale is evidence of a scaled
 * output when c > 0 or the reference has both signs.
 * d = y - y_ref. All are 0 when no output has a nonzero error (and
 * ref_corr 1). */
#ifndef KCS_ERROR_SHAPE_H
#define KCS_ERROR_SHAPE_H

#include <stddef.h>
#include <stdint.h>

typedef struct kcs_error_shape {
    double zero_frac, ref_corr, peak_share, scale_fit, ref_scale, mixed_signs;
} kcs_error_shape;

void kcs_error_shape_compute(const double *y, const double *ref, const double *absref, size_t n,
                             kcs_error_shape *e);

/* gemm outputs (batch x m x n, row-major): the share of the squared error
 * (finite outputs) in the remainder rows and columns of 16-wide tiles, i
 * >= m - m mod 16 or j >= n - n mod 16 (0 when m and n are multiples of
 * 16, or nothing errs). A kernel whose remainder (edge) tiles are wrong
 * puts nearly all of it there; an error spread evenly puts there only the
 * edge's share of the outputs. */
double kcs_edge_share(const double *y, const double *ref, size_t len, int64_t m, int64_t n);

#endif
