/* Statistics of the reducer: least-squares fits from streamed points
 * (co-moments, mergeable), Student t quantiles for their confidence
 * intervals, and log-binned histograms for quantiles over populations too
 * large to keep. Everything here is O(1) memory per accumulator. */
#ifndef KCS_STATS_H
#define KCS_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Running co-moments of (x, y) points (Welford / Chan et al. updates):
 * merge two of them without revisiting the points. */
typedef struct kcs_fit_acc {
    double n;
    double mx, my;        /* means */
    double cxx, cxy, cyy; /* sums of centred products */
} kcs_fit_acc;

void kcs_fit_add(kcs_fit_acc *a, double x, double y);
void kcs_fit_merge(kcs_fit_acc *a, const kcs_fit_acc *b);

/* y = intercept + slope * x by ordinary least squares, with the slope's
 * standard error s / sqrt(Sxx) (s^2 = residual sum of squares / (n - 2))
 * and the two-sided interval slope +- t_{(1+conf)/2, n-2} * se. */
typedef struct kcs_fit {
    int64_t n;
    double slope, intercept;
    double se;     /* standard error of the slope (NaN when n < 3) */
    double t;      /* the t quantile used */
    double lo, hi; /* confidence interval of the slope (NaN when n < 3) */
    double r2;
} kcs_fit;

/* 0, or -1 when the points do not determine a line (n < 2 or all x equal;
 * f is then filled with NaN). */
int kcs_fit_solve(const kcs_fit_acc *a, double conf, kcs_fit *f);

/* Student t with df degrees of freedom: CDF and quantile (p in (0, 1)). */
double kcs_t_cdf(double t, double df);
double kcs_t_quantile(double p, double df);
/* Regularized incomplete beta I_x(a, b). */
double kcs_betainc(double a, double b, double x);

/* Histogram of positive values in bins of ratio 2^(1/KCS_LOGHIST_PER_OCTAVE)
 * between 2^KCS_LOGHIST_MIN_EXP and 2^KCS_LOGHIST_MAX_EXP; zeros and values
 * below the range go to an underflow count, values above to an overflow
 * count; the exact maximum is kept. */
#define KCS_LOGHIST_PER_OCTAVE 16
#define KCS_LOGHIST_MIN_EXP (-110)
#define KCS_LOGHIST_MAX_EXP 40
#define KCS_LOGHIST_BINS ((KCS_LOGHIST_MAX_EXP - KCS_LOGHIST_MIN_EXP) * KCS_LOGHIST_PER_OCTAVE)

typedef struct kcs_loghist {
    uint64_t n;          /* values added (NaN excluded) */
    uint64_t under, over;
    double max;          /* exact maximum (-inf when empty) */
    uint32_t bin[KCS_LOGHIST_BINS];
} kcs_loghist;

void kcs_loghist_init(kcs_loghist *h);
void kcs_loghist_add(kcs_loghist *h, double v);
void kcs_loghist_merge(kcs_loghist *h, const kcs_loghist *o);
/* An upper bound of the q-quantile (q in (0, 1]): the upper edge of the bin
 * holding the value of rank ceil(q n) (at most 2^(1/16) above it); q = 1
 * gives the exact maximum. NaN when empty. */
double kcs_loghist_quantile(const kcs_loghist *h, double q);
/* The q-quantile of v[0..n) with linear interpolation between order
 * statistics (numpy's default); sorts v. NaN when n == 0. */
double kcs_quantile(double *v, size_t n, double q);

/* Clopper-Pearson interval of k successes in n trials at level conf. */
void kcs_clopper_pearson(int64_t k, int64_t n, double conf, double *lo_p, double *hi_p);

#endif
