/* Exact sums and dot products with MPFR (see exact.h). */
#include "exact.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

struct kcs_exact {
    int64_t cap;
    mpfr_t *t;
    mpfr_ptr *ptr;
    mpfr_t r53;
};

int kcs_exact_new(int64_t cap, kcs_exact **e_p, kcs_error *err)
{
    if (cap < 1)
        cap = 1;
    kcs_exact *e = calloc(1, sizeof *e);
    if (!e)
        return kcs_fail(err, KCS_E_NOMEM, "exact: out of memory");
    e->t = malloc((size_t)cap * sizeof *e->t);
    e->ptr = malloc((size_t)cap * sizeof *e->ptr);
    if (!e->t || !e->ptr) {
        free(e->t);
        free(e->ptr);
        free(e);
        return kcs_fail(err, KCS_E_NOMEM, "exact: out of memory for %lld terms", (long long)cap);
    }
    for (int64_t i = 0; i < cap; i++) {
        mpfr_init2(e->t[i], 106); /* a product of two doubles is exact at 106 bits */
        e->ptr[i] = e->t[i];
    }
    mpfr_init2(e->r53, 53);
    e->cap = cap;
    *e_p = e;
    return 0;
}

void kcs_exact_free(kcs_exact *e)
{
    if (!e)
        return;
    for (int64_t i = 0; i < e->cap; i++)
        mpfr_clear(e->t[i]);
    mpfr_clear(e->r53);
    free(e->t);
    free(e->ptr);
    free(e);
}

/* Round the sum of the first n terms to out (one correct rounding). */
static double finish(kcs_exact *e, int64_t n, kcs_format out)
{
    if (out == KCS_FMT_FP64) {
        mpfr_sum(e->r53, e->ptr, (unsigned long)n, MPFR_RNDN);
        return mpfr_get_d(e->r53, MPFR_RNDN);
    }
    int inexact = mpfr_sum(e->r53, e->ptr, (unsigned long)n, MPFR_RNDZ);
    double d = mpfr_get_d(e->r53, MPFR_RNDZ); /* exact: 53 bits in double range */
    if (inexact && isfinite(d) && d != 0.0) {
        uint64_t b;
        memcpy(&b, &d, sizeof b);
        if (!(b & 1u)) /* round to odd: the sticky bit becomes the last bit */
            d = nextafter(d, d > 0 ? INFINITY : -INFINITY);
    }
    return kcs_format_round(out, d, KCS_ROUND_DEFAULT);
}

double kcs_exact_sum(kcs_exact *e, const double *t, int64_t n, kcs_format out)
{
    if (n > e->cap)
        return NAN;
    for (int64_t i = 0; i < n; i++)
        mpfr_set_d(e->t[i], t[i], MPFR_RNDN);
    return finish(e, n, out);
}

double kcs_exact_dot(kcs_exact *e, const double *x, const double *y, int64_t incy, int64_t n,
                     double c, kcs_format out)
{
    if (n + 1 > e->cap)
        return NAN;
    for (int64_t i = 0; i < n; i++) {
        mpfr_set_d(e->t[i], x[i], MPFR_RNDN);
        mpfr_mul_d(e->t[i], e->t[i], y[i * incy], MPFR_RNDN); /* exact at 106 bits */
    }
    mpfr_set_d(e->t[n], c, MPFR_RNDN);
    return finish(e, n + 1, out);
}
