/* Evidence for the normalisations (layernorm, rmsnorm) that names a
 * cancelled variance apart from other errors, from one call's own inputs:
 *   cancel_bits    log2(E[x^2] / var(x)), the median over rows: the bits
 *                  that E[x^2] - E[x]^2 loses to cancellation in the
 *                  variance of these inputs (0 for rmsnorm, which has no
 *                  mean to remove; 53 for a constant row);
 *   row_scale_fit  the share of the squared error that one scale per row
 *                  of y_ref - beta explains: a wrong variance (the row's
 *                  normaliser) scales every output of a row, while a wrong
 *                  mean shifts it (error proportional to gamma), and
 *                  rounding noise is neither. */
#ifndef KCS_NORM_EVIDENCE_H
#define KCS_NORM_EVIDENCE_H

#include <stddef.h>

#include "op.h"

double kcs_norm_cancel_bits(const kcs_call *c);
double kcs_norm_row_scale_fit(const kcs_call *c, const double *y, const double *ref, size_t n);

#endif
