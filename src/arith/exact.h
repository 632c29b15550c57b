/* Exact sums and dot products (MPFR), correctly rounded to a number format:
 * the `exact` oracle. Every term is held exactly (a product of two doubles
 * needs at most 106 bits), mpfr_sum adds them with a single correct
 * rounding, and the result reaches the output format with one rounding:
 *   fp64:        mpfr_sum rounds to nearest-even at 53 bits;
 *   p <= 51 bits: mpfr_sum rounds to odd at 53 bits (toward zero, then the
 *                last bit set when inexact), then kcs_format_round to
 *                nearest-even: rounding to odd at >= p + 2 bits followed by
 *                rounding to nearest at p bits equals one correct rounding
 *                (Boldo & Melquiond, "Emulation of FMA and correctly rounded
 *                sums: proved algorithms using rounding to odd", IEEE TC
 *                57(4), 2008), subnormal targets included.
 * Limits: an fp64 result below 2^-1022 in magnitude (fp64 subnormal) is
 * rounded twice. NaN/Inf terms give the IEEE result (NaN, or +-Inf). */
#ifndef KCS_EXACT_H
#define KCS_EXACT_H

#include <stdint.h>

#include "error.h"
#include "format.h"

typedef struct kcs_exact kcs_exact; /* reusable MPFR workspace */

/* Workspace for up to cap terms (a dot of length n with c needs n + 1). */
int kcs_exact_new(int64_t cap, kcs_exact **e_p, kcs_error *err);
void kcs_exact_free(kcs_exact *e);

/* sum_{i<n} t[i], correctly rounded to out. n <= cap. */
double kcs_exact_sum(kcs_exact *e, const double *t, int64_t n, kcs_format out);
/* c + sum_{i<n} x[i]*y[i*incy], correctly rounded to out. n + 1 <= cap. */
double kcs_exact_dot(kcs_exact *e, const double *x, const double *y, int64_t incy, int64_t n,
                     double c, kcs_format out);

#endif
