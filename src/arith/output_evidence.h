/* Evidence for the signatures that tell an output's fault from an
 * accumulator's (contracts/README.md, "Signatures"), over the outputs
 * where y and y_ref are finite:
 *   kcs_output_rounded_bits  8 or 11 when the output is the reference
 *       rounded once to an 8-bit (bf16) or 11-bit (fp16) significand: every
 *       finite y is exact at that width and the RMS of y - round_w(y_ref)
 *       is below a quarter of that of y - y_ref (an fp32 sum whose result
 *       was stored through bf16/fp16 while fp32 was declared); *rz = 1 when
 *       the rounding was toward zero (truncation), 0 to nearest. A running
 *       sum kept in bf16 is bf16-exact too, but it differs from the once-
 *       rounded reference by the k roundings it made, so it is not
 *       explained. 0 when neither width explains the error.
 *   kcs_constant_output      1 when every finite output is one value while
 *       the reference takes more than one (a broadcast scalar, a cleared
 *       buffer filled with one value).
 *   kcs_offset_share         (mean d)^2 / mean(d^2), d = y - y_ref: 1 for a
 *       constant offset added to every output (a bias added twice, a
 *       wrong zero point), near 0 for rounding errors on mixed-sign data;
 *       0 on fewer than 8 finite outputs (two long row sums say nothing).
 * Thresholds are fixed here, not fitted (contracts/README.md reports their
 * specificity on a seed they were not chosen on). */
#ifndef KCS_OUTPUT_EVIDENCE_H
#define KCS_OUTPUT_EVIDENCE_H

#include <stddef.h>

int kcs_output_rounded_bits(const double *y, const double *ref, size_t n, int *rz);
int kcs_constant_output(const double *y, const double *ref, size_t n);
double kcs_offset_share(const double *y, const double *ref, size_t n);

/* x rounded to a w-bit significand (exponent unbounded): to nearest, ties
 * to even (rz 0), or toward zero (rz 1). */
double kcs_evidence_round(double x, int w, int rz);

#endif
