/* The tolerance model of the reducer (pure functions, no I/O).
 *
 * Data: one point per conforming trial: the reduction length n, the
 * trial's divergence d (the max over its N outputs of a metric, e.g.
 * max_scaled), the implementation it came from and its number of outputs.
 * A tolerance eta0(n) for N0 outputs is fitted so that a conforming trial
 * is flagged (d > eta) with probability about p (the false-alarm target):
 *
 *   1. alpha: least squares of ln d on ln n over every point with d > 0
 *      (zeros are counted, never flagged), with a cluster-robust (CR1)
 *      standard error, implementations as clusters, and a t interval with
 *      G - 1 degrees of freedom (G implementations);
 *   2. the upper envelope U(n_j) = max d over the points at n_j;
 *   3. tail margin m = ln(2 N0 / p) / ln(2 N0): a typical maximum of N0
 *      errors with an exponential tail (P(|e| > t) <= 2 exp(-t / b)) is
 *      about b ln 2N0, the level a maximum exceeds with probability p is
 *      b ln(2 N0 / p) (union bound). The scaled errors of a sum are a
 *      Gaussian scale mixture, heavier-tailed than a Gaussian (for which
 *      the margin would be the square root of this);
 *   4. power form eta0(n) = c n^a u with c = m max_j U(n_j) / (n_j^a u):
 *      a = the pooled alpha when that power law fits the envelope (its
 *      looseness over U spreads by at most KCS_TOL_SHAPE_SPREAD across the
 *      n_j, and the envelope's own slope lies inside alpha's interval), else
 *      a = the envelope's slope (OLS of ln U(n_j) on ln n_j, interval with
 *      J - 2 degrees of freedom, the n_j as units) when that fits within
 *      the same spread; otherwise the envelope form eta0(n_j) = m U(n_j),
 *      log-log interpolation between the n_j;
 *   5. valid for n in [n_min, n_max]; a power form extrapolates up to a
 *      factor KCS_TOL_EXTRAPOLATE beyond it (the judge reports such trials
 *      apart), an envelope never;
 *   6. N outputs (rule "log_power"): eta(n, N) = eta0(n) max(1, (ln(2N/p) /
 *      ln(2 N0/p))^gamma). For per-output errors with a Weibull-type tail
 *      P(|e| > t) ~ exp(-(t/b)^(1/gamma)) the largest of N is typically
 *      b (ln 2N)^gamma and exceeds b (ln(2N/p))^gamma with probability p
 *      (union bound): gamma = 1/2 is a Gaussian tail (the old "sqrt_log"
 *      rule), gamma = 1 an exponential one. gamma is fitted where the
 *      points' output counts vary: OLS of ln d on ln ln(2N) within cells of
 *      one implementation and one n (so neither enters the slope),
 *      implementations as clusters (CR1, t with G - 1 d.f.), clamped to
 *      [1/2, 3]; with one output count it is assumed 1 (gamma_fitted 0).
 *      Points are brought to N0 (the fewest outputs) by this factor before
 *      steps 2-4, so the fit uses every output count;
 *   7. eta0's uncertainty (kcs_tolfit_bootstrap): a two-stage cluster
 *      bootstrap (implementations with replacement, then trials with
 *      replacement within each drawn implementation's (n, N) cells) refits
 *      the whole procedure; the statistic is the factor by which the
 *      replicate's eta0 exceeds the fit's at the worst fitted n. Its upper
 *      bound scales the recommendation (kcs_tolfit_scale).
 */
#ifndef KCS_TOLMODEL_H
#define KCS_TOLMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/* Minimum data for a recommendation (the reducer's report states them). */
#define KCS_TOL_MIN_IMPLS 2     /* conforming implementations */
#define KCS_TOL_MIN_NVALUES 3   /* distinct n */
#define KCS_TOL_MIN_TRIALS 30   /* conforming trials with d > 0 */
#define KCS_TOL_SHAPE_SPREAD 3.0
#define KCS_TOL_FOLDS 4         /* trial-split cross-validation */
#define KCS_TOL_P 0.01          /* default false-alarm target */
#define KCS_TOL_EXTRAPOLATE 4.0 /* power form: n in [n_min / 4, 4 n_max] */

enum { KCS_TOLFORM_NONE = 0, KCS_TOLFORM_POWER, KCS_TOLFORM_ENVELOPE };
enum { KCS_TOLBASIS_POOLED = 0, KCS_TOLBASIS_ENVELOPE };

typedef struct kcs_tolpt {
    double n;          /* reduction length */
    double d;          /* divergence of the trial (max over its outputs) */
    double outputs;    /* outputs of the trial */
    int32_t impl;      /* implementation index (cluster) */
    int32_t fold;      /* cross-validation fold */
} kcs_tolpt;

typedef struct kcs_tolfit {
    int form;                   /* KCS_TOLFORM_*; NONE: see missing */
    char missing[200];          /* what data is missing (form NONE) */
    double u, p;
    double alpha, alpha_se, alpha_lo, alpha_hi; /* pooled, cluster-robust */
    double alpha_env, alpha_env_lo, alpha_env_hi; /* OLS slope of ln U(n_j) on ln n_j */
    int basis;                  /* KCS_TOLBASIS_*: which exponent the power form uses */
    double power_alpha, power_lo, power_hi; /* the power form's exponent and interval */
    double c;                   /* power form */
    double margin;              /* tail margin */
    double spread, spread_env;  /* looseness spread of the pooled / envelope power law */
    double extrapolate;         /* factor beyond [n_min, n_max] (power: 4, envelope: 1) */
    int n_env;
    double *env_n, *env_u, *env_eta; /* n_j, U(n_j), eta0(n_j) of the chosen form */
    double n_min, n_max, outputs0;
    double outputs_max;         /* the most outputs of a fitted point */
    double gamma;               /* outputs exponent (rule log_power) */
    double gamma_hat, gamma_lo, gamma_hi; /* its fit before clamping (NaN: not fitted) */
    int gamma_fitted;           /* 1: fitted from varying output counts, 0: assumed 1 */
    double scale;               /* factor applied by kcs_tolfit_scale (1: none) */
    double c_fit;               /* c before kcs_tolfit_scale */
    int64_t n_points, n_zero;   /* fitted (d > 0), zeros */
    int n_impls;
} kcs_tolfit;

#define KCS_TOL_GAMMA_MIN 0.5
#define KCS_TOL_GAMMA_MAX 3.0
#define KCS_TOL_GAMMA_DEFAULT 1.0

/* Fit on the points whose use[i] != 0 (use NULL: all). strict: the
 * minimum data above applies (else only >= 1 implementation, >= 2 n values,
 * >= 8 points: the folds of a cross-validation). Returns 0, or -1 out of
 * memory. f->form == NONE when the data do not suffice. */
int kcs_tolfit_make(const kcs_tolpt *pts, size_t n, const unsigned char *use, double u, double p,
                    int strict, kcs_tolfit *f);
void kcs_tolfit_free(kcs_tolfit *f);

/* eta0 at n (outputs0 outputs); NaN outside [n_min / extrapolate,
 * n_max * extrapolate] or no form. */
double kcs_tolfit_eta0(const kcs_tolfit *f, double n);
/* The outputs rule factor max(1, sqrt(ln(2N/p) / ln(2 N0/p))) (gamma 1/2). */
double kcs_tol_outputs_factor(double outputs, double outputs0, double p);
/* max(1, (ln(2N/p) / ln(2 N0/p))^gamma). */
double kcs_tol_outputs_factor_g(double outputs, double outputs0, double p, double gamma);
/* eta(n, N) of a fit: eta0(n) times the fit's outputs factor (NaN outside). */
double kcs_tolfit_eta(const kcs_tolfit *f, double n, double outputs);

/* Bootstrap of eta0 (step 7): B replicates (seeded, deterministic) of the
 * non-strict fit; *lo, *hi: the (1-conf)/2 and (1+conf)/2 quantiles of
 * max_j eta0_b(n_j) / eta0(n_j) over f's fitted n_j; *used: replicates
 * with a fit. Returns 0, or -1 out of memory. */
int kcs_tolfit_bootstrap(const kcs_tolpt *pts, size_t n, const unsigned char *use,
                         const kcs_tolfit *f, int B, uint64_t seed, double conf, double *lo,
                         double *hi, int *used);
/* Multiplies eta0 (c and the envelope) by s (>= 1 keeps it conservative). */
void kcs_tolfit_scale(kcs_tolfit *f, double s);
#define KCS_TOL_BOOT_B 200
#define KCS_TOL_BOOT_CONF 0.95
/* Envelope evaluation: log-log interpolation in (xs, ys), n_pts points in
 * increasing xs; NaN outside. */
double kcs_tol_loglog(const double *xs, const double *ys, int n_pts, double x);
/* Flagged: d not within eta (NaN and Inf divergences are flagged). */
static inline int kcs_tol_flags(double d, double eta) { return !(d <= eta); }

/* Cluster-robust (CR1) OLS slope of y on x with clusters g[i] in [0, G):
 * slope, standard error and the t interval with G - 1 degrees of freedom.
 * Returns -1 (NaN outputs) when x does not vary; se/interval NaN when G < 2. */
int kcs_ols_cluster(const double *x, const double *y, const int32_t *g, size_t n, int G,
                    double conf, double *slope_p, double *se_p, double *lo_p, double *hi_p);

#endif
