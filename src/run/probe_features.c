/* kcs probe: the corner features (probe_features.h). Each vector is a 1×k
 * by k×1 gemm with C given (inside a T×T×k gemm under the first part's
 * tile T, zeros elsewhere, as probe.c does), built from the corner it targets
 * (docs/profiles.md, "Corner features"):
 *
 * zero_exp (global, late c; not an exact block): all products zero, b at the format's largest
 *   power of two, c = +-(2^-126 + 2^(-149 - min(neab, 0))). A unit that
 *   ignores zero products keeps c (c alone is exact at its own grid); one
 *   that gives a zero operand the exponent -126 aligns c to
 *   2^(-126 + e(b) - 23 - neab), which drops c's low bit: d != c.
 * zero_sign (global, late c with neab >= 1; formats reaching 2^-77):
 *   c = 2^-148 and the product -(2^-74 + 2^-76) * 2^-74 = -1.25 * 2^-148:
 *   the sum -2^-150 rounds to a zero whose sign is the feature (neab >= 2
 *   also: c = 2^-149 and -1.25 * 2^-149, sum -2^-151). With neab <= 0 every
 *   term is a multiple of 2^-149 and no non-zero sum rounds to zero.
 * prod_ovf (global, late c; formats reaching 2^100): products +-2^130 and
 *   c = 1: NaN when products overflow before alignment, finite otherwise.
 * inf_path (pairwise; formats reaching 2^100): c = +-Inf and one product
 *   -+2^200: IEEE double keeps c's Inf, fp32 steps give Inf - Inf = NaN.
 * flush_sign (flushing pairwise): 64 products -tiny * 1 (tiny the format's
 *   smallest subnormal) and c = -2^-140: every operand is flushed; d is -0
 *   when flushed inputs keep their sign, +0 when they become +0. */
#include "probe_features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_gemm.h"
#include "tensor.h"

#define K_MAX 64

typedef struct fprobe {
    const kcs_backend_ops *ops;
    kcs_backend_ctx *ctx;
    kcs_format in;
    kcs_tensor out;
    kcs_error *err;
    long calls;
    int tile;             /* as the first part: the vector in a tile × tile × k gemm */
    double *tA, *tB, *tC; /* tile > 1: A, B, C of that gemm (zeros elsewhere) */
} fprobe;

static int gemm(fprobe *p, double c, const double *a, const double *b, int k, double *d_p)
{
    for (int i = 0; i < k; i++)
        if (!kcs_format_exact(p->in, a[i]) || !kcs_format_exact(p->in, b[i]))
            return kcs_fail(p->err, KCS_E_INTERNAL, "probe: a feature vector is not exact in %s",
                            kcs_format_name(p->in));
    const kcs_probe_gemm g = {.ops = p->ops, .ctx = p->ctx, .in = p->in, .tile = p->tile,
                              .tA = p->tA, .tB = p->tB, .tC = p->tC, .out = &p->out,
                              .err = p->err, .who = "probe features"};
    p->calls++;
    return kcs_probe_gemm_run(&g, c, a, b, k, d_p);
}

/* Combine the verdicts of a feature's vectors: -1 inconsistent. */
static void verdict(kcs_probe_features *f, kcs_probe_feature which, const int *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] != v[0]) {
            f->st[which] = KCS_PROBE_INCONSISTENT;
            return;
        }
    f->st[which] = KCS_PROBE_EXACT;
    f->value[which] = v[0];
}

static double big_pow2(kcs_format in)
{
    const kcs_format_info *fi = kcs_format_get(in);
    int e = fi->max_finite >= ldexp(1.0, fi->emax) ? fi->emax : fi->emax - 1;
    return ldexp(1.0, e);
}

static int zero_exp(fprobe *p, const kcs_probe_result *base, kcs_probe_features *f)
{
    int neab = base->neab.lo == KCS_PROBE_INF ? 0 : base->neab.lo;
    double low = ldexp(1.0, -149 - (neab < 0 ? neab : 0));
    double a[2] = {0.0, 0.0}, b[2] = {big_pow2(p->in), 1.0};
    int v[2];
    for (int s = 0; s < 2; s++) {
        double c = (s ? -1.0 : 1.0) * (0x1p-126 + low), d;
        int rc = gemm(p, c, a, b, 2, &d);
        if (rc)
            return rc;
        v[s] = d == c ? KCS_ZEXP_IGNORE : isfinite(d) ? KCS_ZEXP_MIN : -1;
    }
    verdict(f, KCS_PF_ZERO_EXP, v, 2);
    return 0;
}

static int zero_sign(fprobe *p, int neab, kcs_probe_features *f)
{
    int v[2], n = neab >= 2 ? 2 : 1;
    for (int s = 0; s < n; s++) {
        /* s = 0: sum -2^-150 (multiples of q = 2^-150 from neab = 1 on);
         * s = 1: sum -2^-151 (neab >= 2) */
        double a = -(0x1p-75 + 0x1p-77) * (s ? 1.0 : 2.0), b = 0x1p-74, c = 0x1p-149 * (2 - s), d;
        int rc = gemm(p, c, &a, &b, 1, &d);
        if (rc)
            return rc;
        v[s] = d != 0.0 ? -1 : signbit(d) ? KCS_ZSIGN_SUM : KCS_ZSIGN_POSITIVE;
    }
    verdict(f, KCS_PF_ZERO_SIGN, v, n);
    return 0;
}

static int prod_ovf(fprobe *p, kcs_probe_features *f)
{
    int v[2];
    for (int s = 0; s < 2; s++) {
        double a[2] = {0x1p100, 0x1p100}, b[2] = {s ? -0x1p30 : 0x1p30, s ? 0x1p30 : -0x1p30}, d;
        int rc = gemm(p, 1.0, a, b, 2, &d);
        if (rc)
            return rc;
        v[s] = isnan(d) ? KCS_POVF_INF : isfinite(d) ? KCS_POVF_EXACT : -1;
    }
    verdict(f, KCS_PF_PROD_OVF, v, 2);
    return 0;
}

static int inf_path(fprobe *p, kcs_probe_features *f)
{
    int v[2];
    for (int s = 0; s < 2; s++) {
        double c = s ? -INFINITY : INFINITY, a = s ? 0x1p100 : -0x1p100, b = 0x1p100, d;
        int rc = gemm(p, c, &a, &b, 1, &d);
        if (rc)
            return rc;
        v[s] = isnan(d) ? KCS_INF_STEP : d == c ? KCS_INF_DOUBLE : -1;
    }
    verdict(f, KCS_PF_INF_PATH, v, 2);
    return 0;
}

static int flush_sign(fprobe *p, kcs_probe_features *f)
{
    const kcs_format_info *fi = kcs_format_get(p->in);
    double tiny = ldexp(1.0, fi->emin - fi->p + 1); /* smallest subnormal */
    double a[K_MAX], b[K_MAX], d;
    for (int i = 0; i < K_MAX; i++) {
        a[i] = -tiny;
        b[i] = 1.0;
    }
    int rc = gemm(p, -0x1p-140, a, b, K_MAX, &d);
    if (rc)
        return rc;
    int v = d != 0.0 ? -1 : signbit(d) ? KCS_FSIGN_KEEP : KCS_FSIGN_POSITIVE;
    verdict(f, KCS_PF_FLUSH_SIGN, &v, 1);
    return 0;
}

int kcs_probe_features_run(const kcs_backend_ops *ops, kcs_backend_ctx *ctx,
                           const kcs_probe_result *base, kcs_probe_features *f_p,
                           kcs_error *err)
{
    kcs_probe_features f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < KCS_PF_COUNT; i++)
        f.st[i] = KCS_PROBE_NA;
    int T = base->tile < 1 ? 1 : base->tile;
    fprobe pr = {.ops = ops, .ctx = ctx, .in = base->in, .err = err, .tile = T};
    const kcs_format_info *fi = kcs_format_get(base->in);
    if (!fi || base->in == KCS_FMT_FP64)
        return kcs_fail(err, KCS_E_UNSUPPORTED, "probe: input format %s is not probed",
                        fi ? fi->name : "?");
    if (T > 1) {
        size_t tk = (size_t)T * K_MAX;
        pr.tA = malloc(tk * sizeof *pr.tA);
        pr.tB = malloc(tk * sizeof *pr.tB);
        pr.tC = malloc((size_t)T * (size_t)T * sizeof *pr.tC);
        if (!pr.tA || !pr.tB || !pr.tC) {
            free(pr.tA), free(pr.tB), free(pr.tC);
            return kcs_fail(err, KCS_E_NOMEM, "probe features: out of memory for a %d tile", T);
        }
    }
    int rc = kcs_tensor_alloc(&pr.out, (size_t)T * (size_t)T, KCS_FMT_FP32, err);
    if (rc) {
        free(pr.tA), free(pr.tB), free(pr.tC);
        return rc;
    }
    bool known = base->step_st == KCS_PROBE_EXACT && base->rounding_st == KCS_PROBE_EXACT;
    bool aligned = known &&
                   (base->step == KCS_PROBE_STEP_GLOBAL || base->step == KCS_PROBE_STEP_LATE_C) &&
                   base->neab.st == KCS_PROBE_EXACT;
    bool pairwise = known && base->step == KCS_PROBE_STEP_PAIRWISE;
    bool tiny_range = fi->emin <= -77, wide_range = fi->emax >= 100;
    /* an exact block truncates nothing: no alignment for zeros to join */
    bool truncates = aligned && base->neab.lo != KCS_PROBE_INF;
    int neab = base->neab.lo;
    if (truncates)
        rc = zero_exp(&pr, base, &f);
    /* a non-zero sum below 2^-149 needs a grid finer than 2^-149 (neab >= 1) */
    if (!rc && aligned && tiny_range && neab >= 1)
        rc = zero_sign(&pr, neab, &f);
    if (!rc && aligned && wide_range)
        rc = prod_ovf(&pr, &f);
    if (!rc && pairwise && wide_range)
        rc = inf_path(&pr, &f);
    if (!rc && pairwise && base->flush_st == KCS_PROBE_EXACT && base->flush)
        rc = flush_sign(&pr, &f);
    kcs_tensor_free(&pr.out);
    free(pr.tA), free(pr.tB), free(pr.tC);
    f.calls = pr.calls;
    if (!rc)
        *f_p = f;
    return rc;
}

const char *kcs_probe_feature_name(kcs_probe_feature f)
{
    static const char *const n[] = {"zero_exp", "zero_sign", "prod_ovf", "inf_path",
                                    "flush_sign"};
    return f < KCS_PF_COUNT ? n[f] : "unknown";
}

const char *kcs_probe_feature_value_str(const kcs_probe_features *f, kcs_probe_feature which)
{
    static const char *const v[KCS_PF_COUNT][2] = {
        {"ignore", "min"}, {"sum", "positive"}, {"exact", "inf"}, {"double", "step"},
        {"keep", "positive"}};
    if (which >= KCS_PF_COUNT)
        return "unknown";
    if (f->st[which] == KCS_PROBE_NA)
        return "n/a";
    if (f->st[which] != KCS_PROBE_EXACT || f->value[which] < 0 || f->value[which] > 1)
        return "inconsistent";
    return v[which][f->value[which]];
}

int kcs_probe_feature_of_row(const kcs_profile_params *p, kcs_probe_feature which)
{
    switch (which) {
    case KCS_PF_ZERO_EXP: return (int)p->zero_exp;
    case KCS_PF_ZERO_SIGN: return (int)p->zero_sign;
    case KCS_PF_PROD_OVF: return (int)p->prod_ovf;
    case KCS_PF_INF_PATH: return (int)p->inf_path;
    case KCS_PF_FLUSH_SIGN: return (int)p->flush_sign;
    default: return -1;
    }
}
