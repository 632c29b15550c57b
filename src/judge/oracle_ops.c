/* fp64 references of reduce_sum, dot, softmax, layernorm, rmsnorm, gather,
 * allreduce and norm (attention: oracle_attention.c), and the exact reference of
 * dot and reduce_sum. Every value is computed in double from the exact
 * inputs; references are not rounded to dtype_out.
 *
 * absref (the magnitudes that scale componentwise errors, |y - ref| /
 * absref) and scale (the normwise denominator) per op:
 *   reduce_sum  absref_i = sum_t |x_it|; scale = ||X||_F sqrt(k)
 *               (the gemm form ||A||_F ||B||_F with B a column of ones).
 *   dot         absref = sum_t |x_t y_t|; scale = ||x||_2 ||y||_2.
 *   softmax     absref_j = max(y_j, lambda): the sum of exps has positive
 *               terms, so its rounding errors are relative to y_j,
 *               |y^_j - y_j| <~ (k + 2 + |x_j - max|) u y_j; lambda is the
 *               smallest normal of the output (or the working fp32) format,
 *               below which the standard model's errors are absolute
 *               (underflow of exp). scale = ||y||_F.
 *   layernorm   the first-order change of y_j when every x_i moves by its
 *               own magnitude |x_i| (relative perturbations):
 *               absref_j = |g_j| ((|x_j| + mean|x|) + |xh_j| rms(x)) / sigma
 *                          + |b_j|,
 *               xh = (x - mu)/sigma, sigma = sqrt(var + eps); derivation:
 *               |d mu| <= mean|x|, |d sigma|/sigma <= rms(x)/sigma by
 *               Cauchy-Schwarz on d var = (2/k) sum (x_i - mu) dx_i.
 *               scale = ||absref||_F.
 *   rmsnorm     likewise, r = sqrt(ms + eps), d r / r <= ms / r^2:
 *               absref_j = |g_j| |x_j| (1 + ms / r^2) / r; scale = ||absref||_F.
 *   gather      absref = |y| (a copy: any difference is an error);
 *               scale = ||y||_F. Under oob=raise an out-of-range index
 *               makes the reference itself raise: KCS_E_RAISED with the
 *               first bad index and position (the kernel is expected to
 *               raise); a non-integer index is KCS_E_INVAL.
 *   allreduce   one process (the kernel's MPI_COMM_SELF semantics): y = x,
 *               absref = |x|, scale = ||x||_2.
 *   elementwise oracle_elementwise.c: absref = max(|f(x)|, lambda).
 *   norm        y_i = ||x_i||_2 in fp64: every square of an input exact in
 *               fp32 (or narrower) is exact in double (48 <= 53 bits), the
 *               sum of k of them errs by at most (k-1) 2^-53 relative (one
 *               sign: Higham 2002, eq. (3.5) with Sum|x| = Sum x), the sqrt
 *               by 2^-53 more, and no fp32 input over- or underflows in
 *               double; absref_i = y_i (the terms have one sign, so the
 *               relative error is the condition-aware one); scale =
 *               ||X||_F.
 * eps = 1e-5 as in the kernels. */
#include "oracle_ops.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "exact.h"
#include "metrics.h"

#define NORM_EPS 1e-5

static void sums(const kcs_call *c, double *ref, double *absref, double *scale_p)
{
    size_t k = (size_t)c->k;
    if (c->op == KCS_OP_DOT) {
        double s = 0.0, a = 0.0;
        for (size_t t = 0; t < k; t++) {
            double p = c->in[0][t] * c->in[1][t];
            s += p;
            a += fabs(p);
        }
        ref[0] = s;
        if (absref)
            absref[0] = a;
        *scale_p = kcs_norm_fro(c->in[0], k) * kcs_norm_fro(c->in[1], k);
        return;
    }
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        double s = 0.0, a = 0.0;
        for (size_t t = 0; t < k; t++) {
            s += x[t];
            a += fabs(x[t]);
        }
        ref[i] = s;
        if (absref)
            absref[i] = a;
    }
    *scale_p = kcs_norm_fro(c->in[0], (size_t)c->m * k) * sqrt((double)k);
}

static double min_normal(kcs_format f)
{
    return ldexp(1.0, kcs_format_get(f)->emin);
}

static void softmax(const kcs_call *c, double *ref, double *absref, double *scale_p)
{
    size_t k = (size_t)c->k;
    double lambda = min_normal(c->dtype_out);
    if (c->dtype_in != KCS_FMT_FP64)
        lambda = fmax(lambda, min_normal(KCS_FMT_FP32));
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        double *y = ref + (size_t)i * k;
        double mx = -INFINITY, s = 0.0;
        for (size_t t = 0; t < k; t++)
            mx = fmax(mx, x[t]);
        for (size_t t = 0; t < k; t++) {
            y[t] = exp(x[t] - mx);
            s += y[t];
        }
        for (size_t t = 0; t < k; t++) {
            y[t] /= s;
            if (absref)
                absref[(size_t)i * k + t] = fmax(y[t], lambda);
        }
    }
    *scale_p = kcs_norm_fro(ref, (size_t)c->m * k);
}

static void norm(const kcs_call *c, int rms, double *ref, double *absref, double *scale_p)
{
    size_t k = (size_t)c->k;
    const double *G = c->in[1], *B = rms ? NULL : c->in[2];
    double ss = 0.0;
    for (int64_t i = 0; i < c->m && k; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        double *y = ref + (size_t)i * k;
        double mu = 0.0, mabs = 0.0, ms = 0.0, var = 0.0;
        for (size_t t = 0; t < k; t++) {
            mu += x[t];
            mabs += fabs(x[t]);
            ms += x[t] * x[t];
        }
        mu /= (double)k;
        mabs /= (double)k;
        ms /= (double)k;
        if (rms) {
            var = ms;
            mu = 0.0;
        } else {
            for (size_t t = 0; t < k; t++)
                var += (x[t] - mu) * (x[t] - mu);
            var /= (double)k;
        }
        double sigma = sqrt(var + NORM_EPS);
        for (size_t t = 0; t < k; t++) {
            double g = G ? G[t] : 1.0, b = B ? B[t] : 0.0;
            double xh = (x[t] - mu) / sigma;
            y[t] = xh * g + b;
            double a = rms ? fabs(g) * fabs(x[t]) * (1.0 + ms / (sigma * sigma)) / sigma
                           : fabs(g) * ((fabs(x[t]) + mabs) + fabs(xh) * sqrt(ms)) / sigma +
                                 fabs(b);
            ss += a * a;
            if (absref)
                absref[(size_t)i * k + t] = a;
        }
    }
    *scale_p = sqrt(ss);
}

/* norm: the 2-norm of each row (see the header comment). */
static void row_norms(const kcs_call *c, double *ref, double *absref, double *scale_p)
{
    size_t k = (size_t)c->k;
    for (int64_t i = 0; i < c->m; i++) {
        const double *x = c->in[0] + (size_t)i * k;
        double s = 0.0;
        for (size_t t = 0; t < k; t++)
            s += x[t] * x[t];
        ref[i] = sqrt(s);
        if (absref)
            absref[i] = ref[i];
    }
    *scale_p = kcs_norm_fro(c->in[0], (size_t)c->m * k);
}

static int gather(const kcs_call *c, double *ref, double *absref, double *scale_p,
                  kcs_error *err)
{
    char v[32];
    int rc = kcs_attrs_get(c->attrs, "oob", v, sizeof v);
    if (rc < 0)
        return kcs_fail(err, KCS_E_INVAL, "oracle gather: attrs '%s' are malformed", c->attrs);
    int clamp = rc == 1 && strcmp(v, "clamp") == 0;
    int zero = rc == 1 && strcmp(v, "zero") == 0;
    /* oob=undefined: a row read through an out-of-range index may hold
     * anything (it is not judged: absref < 0 marks it for the metrics) */
    int undef = rc == 1 && strcmp(v, "undefined") == 0;
    if (rc == 1 && !clamp && !zero && !undef && strcmp(v, "raise") != 0)
        return kcs_fail(err, KCS_E_INVAL, "oracle gather: oob=%s (raise|clamp|zero|undefined)", v);
    size_t k = (size_t)c->k;
    double m = (double)c->m;
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        if (!(x == floor(x)) || isinf(x))
            return kcs_fail(err, KCS_E_INVAL, "oracle gather: index %g at position %lld is not "
                            "an integer", x, (long long)r);
        if ((x < 0 || x >= m) && ((!clamp && !zero && !undef) || (clamp && c->m == 0)))
            return kcs_fail(err, clamp ? KCS_E_INVAL : KCS_E_RAISED,
                            "oracle gather: index %.0f at position %lld is out of range [0, %lld)",
                            x, (long long)r, (long long)c->m);
    }
    for (int64_t r = 0; r < c->n; r++) {
        double x = c->in[1][r];
        double *y = ref + (size_t)r * k;
        if ((x < 0 || x >= m) && undef) {
            for (size_t t = 0; t < k; t++)
                y[t] = absref ? 0.0 : NAN;
            if (absref)
                for (size_t t = 0; t < k; t++)
                    absref[(size_t)r * k + t] = -1.0;
            continue;
        }
        if ((x < 0 || x >= m) && zero) {
            memset(y, 0, k * sizeof *y);
        } else {
            int64_t row = x < 0 ? 0 : x >= m ? c->m - 1 : (int64_t)x;
            memcpy(y, c->in[0] + (size_t)row * k, k * sizeof *y);
        }
        if (absref)
            for (size_t t = 0; t < k; t++)
                absref[(size_t)r * k + t] = fabs(y[t]);
    }
    *scale_p = kcs_norm_fro(ref, (size_t)c->n * k);
    return 0;
}

int kcs_oracle_fp64_op(const kcs_call *c, double *ref, double *absref, double *scale_p,
                       kcs_error *err)
{
    switch (c->op) {
    case KCS_OP_REDUCE_SUM:
    case KCS_OP_DOT:
        sums(c, ref, absref, scale_p);
        return 0;
    case KCS_OP_SOFTMAX:
        softmax(c, ref, absref, scale_p);
        return 0;
    case KCS_OP_LAYERNORM:
    case KCS_OP_RMSNORM:
        norm(c, c->op == KCS_OP_RMSNORM, ref, absref, scale_p);
        return 0;
    case KCS_OP_ATTENTION:
        return kcs_oracle_attention(c, ref, absref, scale_p, err);
    case KCS_OP_GATHER:
        return gather(c, ref, absref, scale_p, err);
    case KCS_OP_ELEMENTWISE:
        return kcs_oracle_elementwise(c, ref, absref, scale_p, err);
    case KCS_OP_NORM:
        row_norms(c, ref, absref, scale_p);
        return 0;
    case KCS_OP_ALLREDUCE: { /* sum of the m contributions, in fp64 */
        int64_t P = c->m > 1 ? c->m : 1;
        for (int64_t i = 0; i < c->k; i++) {
            double s = 0.0, a = 0.0;
            for (int64_t r = 0; r < P; r++) {
                s += c->in[0][r * c->k + i];
                a += fabs(c->in[0][r * c->k + i]);
            }
            ref[i] = s;
            if (absref)
                absref[i] = a;
        }
        *scale_p = kcs_norm_fro(c->in[0], (size_t)(P * c->k));
        return 0;
    }
    default:
        return kcs_fail(err, KCS_E_UNSUPPORTED, "oracle: no fp64 reference for op %s",
                        kcs_op_name(c->op));
    }
}

int kcs_oracle_exact_sum(const kcs_call *c, double *ref, kcs_error *err)
{
    kcs_exact *e;
    int rc = kcs_exact_new(c->k + 1, &e, err);
    if (rc)
        return rc;
    if (c->op == KCS_OP_DOT) {
        ref[0] = kcs_exact_dot(e, c->in[0], c->in[1], 1, c->k, 0.0, c->dtype_out);
    } else {
        for (int64_t i = 0; i < c->m; i++)
            ref[i] = kcs_exact_sum(e, c->in[0] + (size_t)i * (size_t)c->k, c->k, c->dtype_out);
    }
    kcs_exact_free(e);
    return 0;
}
